// libFuzzer target: arbitrary bytes as a Measurements text file (traincast-bench output,
// io::load_measurements_text in models/io/profile_io.h). The only acceptable outcomes are a
// measurement set in its documented ranges (measurement_checks.h) or an io::ScenarioError with at
// least one message; anything else (crash, sanitizer report, other exception, hang) is a bug.
// Seeds: tests/calibrate/data.

#include <cstddef>
#include <cstdint>

#include "models/io/profile_io.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/measurement_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    traincast::fuzz::check_measurements(
        traincast::io::load_measurements_text(traincast::fuzz::input_text(data, size), "fuzz.textproto"));
  } catch (const traincast::io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
