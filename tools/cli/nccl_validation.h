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

/// The problems of the nccl-tests cases' fields against their logs, each at the field's position
/// ("FILE:LINE:COL: case[i].nccl_tests.run: ..."): a run index past the log's tables, an op the
/// log contradicts or none where the log names none, a GPU list that does not parse, names a GPU
/// the cluster lacks, or selects another count than the log's ranks. A log that does not parse,
/// and every simulation problem, are left to run_nccl_validation (reported per case). For the
/// validate command to refuse such a file (exit 2) before it simulates anything.
std::vector<std::string> nccl_case_field_errors(const std::vector<models::ValidationCase>& cases);

/// Runs cases[i] for every i with nccl_tests set (case_file[i]: the file it came from), `jobs`
/// at a time (output identical for any value). Log and simulation problems, and the field
/// problems nccl_case_field_errors finds (same check), are reported per case (and count as
/// failed), never thrown.
NcclValidationReport run_nccl_validation(const std::vector<models::ValidationCase>& cases,
                                         const std::vector<std::string>& case_file, int jobs);

}  // namespace traincast::cli
