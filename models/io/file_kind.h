#pragma once
// Telling which traincast file a document is when it did not read as the one a command expected
// (`traincast run` given a sweep file, `traincast sweep` given a scenario, ...). Internal to
// models/io (includes protobuf headers).

#include <optional>
#include <string>
#include <string_view>

#include <google/protobuf/descriptor.h>

#include "models/io/scenario_io.h"

namespace traincast::io::detail {

/// For a document `text` (from `origin`, in `format`) that failed to read as message `expected`
/// (Scenario, Sweep, ValidationCases, Profile or Measurements): when it has top-level fields that
/// only one of the other four kinds has, and none that only `expected` has, one message
///   "origin:line:col: field: this is a sweep file, not a scenario (top-level fields scenario,
///    axis); run it with `traincast sweep origin --out RESULTS.csv`"
/// positioned at the first such field; std::nullopt otherwise (then the reader's own errors
/// stand). Reads the text again as each kind (a few kB; only on the error path). Never throws for
/// bad input.
std::optional<std::string> wrong_kind_message(std::string_view text, std::string_view origin, Format format,
                                              const google::protobuf::Descriptor* expected);

}  // namespace traincast::io::detail
