// libFuzzer target: arbitrary bytes as nccl-tests output (calibrate/nccl_tests_log.h), then the
// parsed log as collective samples (calibrate::samples_from_nccl_log, calibrate/fit/inputs.h), as
// `traincast calibrate fit` reads a log. The only acceptable outcomes are samples in their
// documented ranges (measurement_checks.h), a calibrate::NcclTestsLogError or calibrate::InputError
// with at least one message; anything else (crash, sanitizer report, other exception, hang) is a
// bug. Seeds: ../shared/data/nccl-tests (and its raw/).

#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/fit/inputs.h"
#include "calibrate/nccl_tests_log.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/measurement_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cal = traincast::calibrate;
  cal::NcclTestsLog log;
  try {
    log = cal::parse_nccl_tests_log(traincast::fuzz::input_text(data, size), "fuzz.txt");
  } catch (const cal::NcclTestsLogError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
    return 0;
  }
  if (log.runs.empty()) __builtin_trap();  // documented: at least one run, each with a row
  for (const cal::NcclTestsRun& run : log.runs) {
    if (run.rows.empty()) __builtin_trap();
    for (const cal::NcclTestsRow& row : run.rows) cal::row_time_us(row);
  }
  // A log naming no operation is refused without --op; with one, every run gives samples.
  for (const std::string op : {"", "all_reduce"}) {
    cal::InputNotes notes;
    try {
      traincast::fuzz::check_measurements(cal::samples_from_nccl_log(log, "fuzz.txt", op, notes));
    } catch (const cal::InputError& e) {
      if (e.errors().empty()) __builtin_trap();
    }
  }
  return 0;
}
