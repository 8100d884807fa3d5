// libFuzzer target: arbitrary bytes as a measurement CSV (calibrate::read_measurement_csv in
// calibrate/fit/inputs.h: collectives, GEMMs or bandwidth by the header). The only acceptable
// outcomes are a measurement set in its documented ranges (measurement_checks.h) or a
// calibrate::InputError with at least one message; anything else (crash, sanitizer report, other
// exception, hang) is a bug. When the first line is "#device=NAME", NAME is the device filter (as
// --device); else "" (the only device). Seeds: ../shared/data/{gemm,collectives,memory-bandwidth}.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "calibrate/fit/inputs.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/measurement_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = traincast::fuzz::input_text(data, size);
  std::string device;
  if (text.substr(0, 8) == "#device=") device = std::string(text.substr(8, text.find('\n') - 8));
  traincast::calibrate::InputNotes notes;
  try {
    traincast::fuzz::check_measurements(traincast::calibrate::read_measurement_csv(text, "fuzz.csv", device, notes));
  } catch (const traincast::calibrate::InputError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
