// libFuzzer target: arbitrary bytes into the scenario loader. The only acceptable outcomes are a
// Scenario or an io::ScenarioError; anything else (crash, sanitizer report, other exception, hang)
// is a bug.
//
// Input layout: byte 0 selects, the rest is the document.
//   bit 0 of byte 0: 0 = protobuf text format, 1 = JSON (so the fuzzer alternates between both)
//   bit 1 of byte 0: 1 = the document's last line is split off and applied as a --set override
// The seed corpus (built next to the binary, see CMakeLists.txt) is every scenarios/*.textproto
// prefixed with ' ' (text) and tests/models/io/data/*.json prefixed with '!' (JSON).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/scenario_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const traincast::io::Format format = (selector & 1) != 0 ? traincast::io::Format::json : traincast::io::Format::text;
  std::string_view document(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> overrides;
  if ((selector & 2) != 0) {
    const std::size_t newline = document.rfind('\n');
    if (newline != std::string_view::npos) {
      overrides.emplace_back(document.substr(newline + 1));
      document = document.substr(0, newline);
    }
  }
  try {
    const traincast::models::Scenario scenario =
        traincast::io::load_scenario_text(document, "fuzz", format, overrides);
    // A loaded scenario must print and load back.
    traincast::io::load_scenario_text(traincast::io::scenario_to_text(scenario), "round-trip",
                                      traincast::io::Format::text);
  } catch (const traincast::io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
