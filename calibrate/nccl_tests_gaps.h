#pragma once
// Rows missing from an nccl-tests table (used by the log parser, nccl_tests_log.cc): nccl-tests
// steps sizes by a factor (-f) or an increment (-i); a step larger than the table's usual one is a
// row deleted, or one damaged into text the parser skips as noise.

#include <string>
#include <string_view>
#include <vector>

#include "calibrate/nccl_tests_log.h"

namespace traincast::calibrate {

/// One note per gap, "origin:line: size B follows A on line L, k steps of the table's usual one:
/// k-1 row(s) missing between them (...)", at the row after the gap. Per type, redop and root; a
/// table of fewer than 3 sizes > 0, or whose most frequent step occurs once, gets none.
std::vector<std::string> missing_row_notes(const NcclTestsRun& run, std::string_view origin);

}  // namespace traincast::calibrate
