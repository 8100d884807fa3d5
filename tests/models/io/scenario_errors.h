#pragma once
// For scenario-loader tests: the positioned errors a scenario text gives (file name
// "t.textproto", text format; or "t.json" for JSON, with --set overrides), or a test failure when
// it loads without error.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"

namespace traincast::io::test_support {

/// The errors load_scenario_text throws for `text` in `format` (file name "t.textproto" or
/// "t.json") with `--set` overrides; a failed expectation when it loads without error.
inline std::vector<std::string> errors_of(const std::string& text, Format format = Format::text,
                                          const std::vector<std::string>& overrides = {}) {
  try {
    load_scenario_text(text, format == Format::text ? "t.textproto" : "t.json", format, overrides);
  } catch (const ScenarioError& e) {
    return e.errors();
  }
  ADD_FAILURE() << "no ScenarioError for:\n" << text;
  return {};
}

}  // namespace traincast::io::test_support
