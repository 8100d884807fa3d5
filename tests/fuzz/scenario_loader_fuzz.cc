// libFuzzer target: arbitrary bytes into the scenario loader. The only acceptable outcomes are a
// Scenario or an io::ScenarioError with at least one message; anything else (crash, sanitizer
// report, other exception, hang) is a bug.
//
// The input is the document itself, so the gallery files are seeds as they are (CI runs
//   scenario_loader_fuzz -max_total_time=60 CORPUS scenarios scenarios/validation).
// Format by the first byte: odd -> JSON, even -> protobuf text format, except '#' (odd, but a
// text-format comment, as every gallery file starts) -> text. So '{' reads as JSON, and arbitrary
// bytes alternate between the two parsers.
// When the last line starts with "--set ", the rest of it is split off and applied as an override.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/scenario_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json = (data[0] & 1) != 0 && data[0] != '#';
  const traincast::io::Format format = json ? traincast::io::Format::json : traincast::io::Format::text;
  std::string_view document(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  const std::size_t newline = document.rfind('\n');
  const std::size_t last_line = newline == std::string_view::npos ? 0 : newline + 1;
  if (document.substr(last_line, 6) == "--set ") {
    overrides.emplace_back(document.substr(last_line + 6));
    document = document.substr(0, last_line);
  }
  try {
    const traincast::models::Scenario scenario = traincast::io::load_scenario_text(document, "fuzz", format, overrides);
    // A loaded scenario must print and load back.
    traincast::io::load_scenario_text(traincast::io::scenario_to_text(scenario), "round-trip",
                                      traincast::io::Format::text);
  } catch (const traincast::io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
