#pragma once
// Reading validation cases files (message ValidationCases in models/io/traincast.proto) into
// models::ValidationCase structs (models/io/validation_case.h), each with its scenario loaded.

#include <string>
#include <string_view>
#include <vector>

#include "models/io/validation_case.h"

namespace traincast::io {

enum class Format;  // models/io/scenario_io.h (which includes this header)

/// Reads a validation cases file (message ValidationCases; text or JSON by extension). Each case's
/// scenario path is resolved relative to the cases file's directory and loaded with the case's
/// `set` overrides (whose errors name the cases file position of that `set` entry); the loaded
/// scenario is stored in the case. A case without its own source takes the file-level source.
/// Throws ScenarioError (models/io/scenario_io.h) collecting the errors of the cases file and of
/// every scenario it names.
/// `cli_overrides` ("field.path=value", as `traincast validate --set` gives them) apply to every
/// case's scenario after the case's own `set` entries (their errors name "--set"); nccl-tests
/// cases, read for their cluster only, take them too.
std::vector<models::ValidationCase> load_validation_cases(const std::string& path,
                                                          const std::vector<std::string>& cli_overrides = {});

/// As load_validation_cases, for text in memory: origin names the text in messages, and each
/// case's scenario and nccl-tests log path is resolved relative to base_dir ("" = the working
/// directory).
std::vector<models::ValidationCase> load_validation_cases_text(std::string_view text, std::string_view origin,
                                                               Format format, const std::string& base_dir,
                                                               const std::vector<std::string>& cli_overrides = {});

}  // namespace traincast::io
