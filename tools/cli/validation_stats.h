#pragma once
// The bias view of `traincast validate` (issue 17): the split rule, signed errors per source,
// OLS trends of signed error against log2 of a size, OOM flags, and the table that prints them.

#include <string>
#include <string_view>
#include <vector>

#include "models/io/validation_case.h"

namespace traincast::cli {

/// The half of the documented split (docs/accuracy_split.md) a case is in.
enum class SplitHalf { fit, held, none };

/// The split rule, one for every source: a case's data_row "FILE.csv:INDEX" (0-based data row of
/// that shared table, header not counted) is in the fit half when INDEX is even and in the held half
/// when it is odd, as the even/odd-size rule of `calibrate validate --holdout` for nccl-tests logs.
/// Every case of one row shares the row's half. data_row "" (or not of that form) = SplitHalf::none.
SplitHalf split_half(std::string_view data_row);

/// "fit", "held" or "none".
std::string_view split_half_name(SplitHalf half);

/// The mean of `values`; 0 when empty.
double signed_mean(const std::vector<double>& values);

/// Ordinary least squares of y on log2(x) (every x > 0, x.size() == y.size()).
struct Log2Trend {
  int rows = 0;
  double doublings = 0;    ///< log2(max x / min x)
  double slope = 0;        ///< change of y per doubling of x, in y's unit (0 when not computed)
  bool computed = false;   ///< at least 2 distinct x
  bool qualifies = false;  ///< rows >= 10 and doublings >= 3 (issue 17's trend rule)
};
/// Throws std::invalid_argument when sizes differ or an x is not finite and > 0.
Log2Trend log2_trend(const std::vector<double>& x, const std::vector<double>& y);

/// Whether `metric` measures throughput or time (the run ran: a predicted OOM is an error) rather
/// than memory.
bool is_run_metric(std::string_view metric);

/// Signed error of a case as throughput, +: predicted faster than measured. Time metrics
/// (iteration_time_s, time_to_train_s): measured / predicted - 1; every other metric (throughput,
/// MFU/HFU, memory): predicted / measured - 1. A fraction, not %.
double signed_throughput_error(std::string_view metric, double measured, double predicted);

/// What validate keeps of each simulated case for the bias table.
struct CaseOutcome {
  double predicted = 0;  ///< in the case's metric unit
  std::string failure;   ///< non-empty: the simulation failed (why)
  bool oom = false;      ///< the memory model's verdict
  double peak_gib = 0, capacity_gib = 0;
  double gpus = 0, seq_length = 0, parameters = 0;
  std::string precision;  ///< "bf16", "fp8", ...
};

/// The bias section: per source group (ValidationCase::group, else the case file's stem) and kind
/// (run metrics apart from memory): rows, MAPE, signed mean, share over-predicted, largest error
/// with its case, OOM-flagged rows, rows with assumptions; then the trends (seq length, GPUs, model
/// size per doubling; fp8 minus bf16), the assumptions per case and a FAIL line per run case
/// predicted OOM. `half` names the half scored. Sets `oom_failures` to that count.
std::string format_bias_report(const std::vector<models::ValidationCase>& cases,
                               const std::vector<std::string>& case_file, const std::vector<CaseOutcome>& outcome,
                               std::string_view half, int& oom_failures);

/// The per-case table of `traincast validate`.
struct ValidationTable {
  std::string text;                  ///< aligned table + MAPE lines (per metric and overall)
  std::string csv;                   ///< file,case,metric,measured,predicted,error_pct,source
  double mape_pct = 0;               ///< over all cases
  double worst_metric_mape_pct = 0;  ///< the largest per-metric MAPE (metrics are not mixed)
  double max_abs_error_pct = 0;
  int failed_cases = 0;      ///< cases whose simulation failed
  int out_of_tolerance = 0;  ///< cases with a tolerance that their error exceeds
};

/// predicted[i] for cases[i]; failure[i] non-empty when that case could not be simulated.
ValidationTable make_validation_table(const std::vector<models::ValidationCase>& cases,
                                      const std::vector<std::string>& case_file, const std::vector<double>& predicted,
                                      const std::vector<std::string>& failure);

}  // namespace traincast::cli
