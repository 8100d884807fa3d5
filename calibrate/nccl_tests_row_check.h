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

/// "" when `run` names its operation, or each row's out-of-place
/// busbw / algbw (rows with algbw > 0) is `op`'s factor on run.num_ranks ranks (as
/// check_row_results allows); else "at<line>: busbw / algbw is R, the factor of <ops> for N ranks,
/// not <op_field> <op>'s F (...)" for the first row that differs (an all_reduce log fitted as
/// all_gather gave "0.0 % error" and a profile 1.66x slow). Where the rank count is unknown (no
/// "#  Rank" lines), each row's ratio must be a factor `op` has on some rank count (all_reduce
/// 1..2, all_gather / reduce_scatter / alltoall 0.5..1, broadcast / reduce / sendrecv 1), else "at<line>:
/// busbw / algbw is R, a factor <op_field> <op> has on no rank count (...)". First, where the log
/// has a redop column, each row's redop must be what nccl-tests prints for `op` ("none" for
/// all_gather, alltoall and broadcast; the reduction, e.g. "sum", for all_reduce, reduce_scatter,
/// reduce, and "sum" for sendrecv): all_gather and reduce_scatter share their bus factor, so an
/// all_gather log fitted as reduce_scatter is told only there ("at<line>: redop is none, ...").
/// `at` is "path:".
std::string check_op_bus_factor(const NcclTestsRun& run, const std::string& op, const std::string& at,
                                const std::string& op_field);

}  // namespace traincast::calibrate
