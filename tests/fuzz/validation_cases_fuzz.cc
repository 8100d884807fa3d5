// libFuzzer target: arbitrary bytes as a validation cases file (models/io/validation_cases_io.h).
// Scenario paths resolve against scenarios/nccl when the text mentions nccl_tests, else against
// scenarios/validation (run from the repository root), so the shipped cases files load as seeds.
// The only acceptable outcomes are the cases or an io::ScenarioError with at least one message;
// anything else (crash, sanitizer report, other exception, hang) is a bug. Format by the first byte
// (fuzz_input.h). Seeds: scenarios/validation, scenarios/nccl/shared_logs.cases.textproto,
// tests/models/io/data.

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/io/validation_cases_io.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = traincast::fuzz::input_text(data, size);
  const std::string base_dir = text.find("nccl_tests") != std::string::npos ? "scenarios/nccl" : "scenarios/validation";
  try {
    const auto cases = traincast::io::load_validation_cases_text(text, "fuzz.cases.textproto",
                                                                 traincast::fuzz::input_format(text), base_dir);
    if (cases.empty()) __builtin_trap();  // documented: at least one case
  } catch (const traincast::io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
