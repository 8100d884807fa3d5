#pragma once
// Enum fields written in protobuf text as a number ("precision: 2"): protobuf's text parser reads
// any number for an open proto3 enum. A number is the schema's internal, not the user's word
// (`precision: 2`, meant as "2 bytes", read as fp16; `scale_up: 7` read as none): refused, names
// only, as the JSON reader and --set do (docs/scenarios.md). Internal to models/io.

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

namespace traincast::io::detail {

/// Appends one "origin:line:col: path: invalid value 9 (expected one of: ...)" to `errors` per
/// singular enum field of `message` (recursively) written in `text` as a number, positioned at the
/// number. `tree`: the locations the parser
/// recorded while reading `text` into `message`.
void enum_number_errors(const google::protobuf::Message& message,
                        const google::protobuf::TextFormat::ParseInfoTree& tree, std::string_view text,
                        std::string_view origin, std::vector<std::string>& errors);

}  // namespace traincast::io::detail
