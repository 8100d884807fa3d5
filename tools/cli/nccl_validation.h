#pragma once
// `traincast validate` for nccl-tests cases (ValidationCase::nccl_tests): every size of a real
// nccl-tests log simulated on the case's cluster, busbw compared per size, and the geometric-mean
// error over large (>= 32 MiB) and small (<= 64 KiB) sizes checked against the case's limits.

#include <string>
#include <vector>

#include "models/io/validation_case.h"

namespace traincast::cli {

struct NcclValidationReport {
  std::string text;    ///< per-case tables, then the summary table
  std::string csv;     ///< rows "file,case,busbw_gbps@SIZE,measured,predicted,error_pct,source" (no header)
  int failed = 0;      ///< cases over a limit (without known_gap) or that could not be run
  int known_gaps = 0;  ///< cases over a limit that name a known gap
  int passed = 0;
};

/// Runs cases[i] for every i with nccl_tests set (case_file[i]: the file it came from), `jobs`
/// at a time (output identical for any value). Log and simulation problems are reported per case
/// (and count as failed), never thrown.
NcclValidationReport run_nccl_validation(const std::vector<models::ValidationCase>& cases,
                                         const std::vector<std::string>& case_file, int jobs);

}  // namespace traincast::cli
