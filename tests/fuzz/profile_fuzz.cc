// libFuzzer target: arbitrary bytes as a calibration profile (models/io/profile_io.h). The only
// acceptable outcomes are a profile, which must print and load back to the same text
// (profile_to_text's documented round trip), or an io::ScenarioError with at least one message;
// anything else (crash, sanitizer report, other exception, hang) is a bug. Format by the first byte
// (fuzz_input.h). Seeds: tests/golden/data, the profiles under tests/golden/expected.

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/io/profile_io.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = traincast::io;
  const auto text = traincast::fuzz::input_text(data, size);
  try {
    const auto profile = io::load_profile_text(text, "fuzz.profile", traincast::fuzz::input_format(text));
    const std::string printed = io::profile_to_text(*profile);
    std::string again;
    try {
      again = io::profile_to_text(*io::load_profile_text(printed, "round-trip", io::Format::text));
    } catch (const io::ScenarioError&) {
      __builtin_trap();  // a loaded profile must load back from its own text
    }
    if (again != printed) __builtin_trap();  // ... and print the same
  } catch (const io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
