#pragma once
// One published measurement to compare a prediction against, as read from a validation cases
// file (scenarios/validation/*.textproto, message ValidationCases in models/io/traincast.proto)
// by io::load_validation_cases. Plain data, no protobuf.

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// A nccl-tests log used as measured values (ValidationCases.NcclTests in traincast.proto).
struct NcclTestsValidation {
  std::string log_path;           ///< resolved relative to the cases file
  std::string op;                 ///< "" = the log's own
  std::string gpus;               ///< GPU list ("0,8"); "" = every GPU of the cluster
  int run = 0;                    ///< table of a multi-run log, 0-based
  double max_large_error = 0.15;  ///< geometric-mean busbw error limit for sizes >= 32 MiB
  double max_small_error = 0.35;  ///< ... for sizes <= 64 KiB
  std::string known_gap;          ///< non-empty: reported, never fails the run
  /// Non-empty: why `traincast calibrate validate --cases --holdout` cannot meet its limits on this
  /// log (e.g. a measured glitch no fit can predict); reported, never fails that check.
  std::string holdout_known_gap;
  /// Where the case writes run, op and gpus, and the field ("FILE:LINE:COL: case[2].nccl_tests.run";
  /// the nccl_tests block's position where the field is not written), for the checks against the
  /// log (tools/cli/nccl_validation.h).
  std::string run_at, op_at, gpus_at;
};

struct ValidationCase {
  std::string name;                    ///< unique within its file
  std::string scenario_path;           ///< scenario file, resolved relative to the cases file
  std::vector<std::string> overrides;  ///< "field.path=value", applied to the scenario in order
  Scenario scenario;                   ///< the scenario loaded with the overrides, validated
  std::string metric;                  ///< one of validation_metrics()
  double measured = 0.0;               ///< measured value in the metric's unit, > 0
  double tolerance = 0.0;              ///< allowed |predicted - measured| / measured; 0 = no limit of its own
  std::string source;                  ///< citation (the file-level source when the case has none)
  std::string notes;
  /// The shared-table row scored, "FILE.csv:INDEX" (0-based data row); "" = none (ValidationCases
  /// data_row). Its half under the split rule: tools/cli/validation_stats.h, split_half.
  std::string data_row;
  std::string assumptions;  ///< what the case assumes that its source does not state; "" = nothing
  /// Non-empty: why the model predicts this run OOM although it ran; validate prints the verdict as
  /// a known gap instead of failing (ValidationCases.Case oom_known_gap).
  std::string oom_known_gap;
  std::string group;  ///< the file's source group for the bias table; "" = the file's name
  /// Set for a nccl-tests case (metric is then "nccl_tests_busbw", measured 0, and the scenario
  /// was loaded for its cluster only).
  std::optional<NcclTestsValidation> nccl_tests;
};

/// The metrics a validation case may name, with their unit:
/// iteration_time_s [s], tokens_per_s [tokens/s], tflops_per_gpu and hardware_tflops_per_gpu
/// [TFLOP/s = 1e12 FLOP/s], mfu and hfu [fraction 0..1], activation_memory_gib and
/// peak_memory_gib [GiB = 2^30 bytes, per GPU], time_to_train_s [s].
inline const std::vector<std::string_view>& validation_metrics() {
  static const std::vector<std::string_view> names = {
      "iteration_time_s",      "tokens_per_s",    "tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "hfu",
      "activation_memory_gib", "peak_memory_gib", "time_to_train_s"};
  return names;
}

/// The predicted value of `metric` in `report`, in the unit listed at validation_metrics().
/// Throws std::invalid_argument for a metric not in validation_metrics().
inline double metric_value(const Report& report, std::string_view metric) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  if (metric == "iteration_time_s") return report.iteration_time_s;
  if (metric == "tokens_per_s") return report.tokens_per_s;
  if (metric == "tflops_per_gpu") return report.tflops_per_gpu;
  if (metric == "hardware_tflops_per_gpu") return report.hardware_tflops_per_gpu;
  if (metric == "mfu") return report.mfu;
  if (metric == "hfu") return report.hfu;
  if (metric == "activation_memory_gib") return report.memory.activations_bytes / kGiB;
  if (metric == "peak_memory_gib") return report.memory.peak_bytes_per_gpu / kGiB;
  if (metric == "time_to_train_s") return report.time_to_train_s;
  throw std::invalid_argument("unknown validation metric \"" + std::string(metric) + "\"");
}

}  // namespace traincast::models
