#pragma once
// Enum fields written in protobuf text as a number that names no value ("precision: 9"):
// protobuf's text parser reads any number for an open proto3 enum, and a field holding no value
// of its enum would fall back to a default (a node template's scale_up: 7 read as none).
// docs/scenarios.md: a number must name a value (`precision: 3` is bf16). Internal to models/io.

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

namespace traincast::io::detail {

/// Appends one "origin:line:col: path: invalid value 9 (expected one of: ...)" to `errors` per
/// singular enum field of `message` (recursively) whose value names none of its enum and was
/// written in `text` as a number, positioned at the number. `tree`: the locations the parser
/// recorded while reading `text` into `message`.
void enum_number_errors(const google::protobuf::Message& message,
                        const google::protobuf::TextFormat::ParseInfoTree& tree, std::string_view text,
                        std::string_view origin, std::vector<std::string>& errors);

}  // namespace traincast::io::detail
