#pragma once
// Consistency checks of one nccl-tests data row's results (used by the log parser,
// nccl_tests_log.cc): the numbers nccl-tests derives from each other must agree as printed.

#include <string>

#include "calibrate/nccl_tests_log.h"

namespace traincast::calibrate {

/// "" when both halves of `row` (out-of-place, and in-place when present) are what nccl-tests
/// prints: #wrong 0 or N/A (a count > 0 is its data check finding corrupted results), algbw =
/// size / time (skipped in a `cputime` table: nccl-tests -C 1 prints the CPU time but computes
/// algbw from the GPU time) and busbw = algbw x the op's factor (only where `run` names its
/// operation and rank count); a half whose time is 0 (size 0 rows) has algbw and busbw 0 (not
/// checked in a `cputime` table). Else the first problem, "at" + "out-of-place algbw: got X
/// (expected ...)". `at` is "path:line: ".
std::string check_row_results(const NcclTestsRow& row, const NcclTestsRun& run, const std::string& at);

}  // namespace traincast::calibrate
