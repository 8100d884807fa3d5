#pragma once
// Framework-level constants (issue 17, "The fitting rule"): the only constants fitted on
// end-to-end training runs, at most 6, pooled over the fit half of the shared training tables
// (docs/accuracy_split.md). Their values, the rows used and the fit are listed in
// models/calibration/framework_constants.md; the values live in framework_constants.cc only.
// They apply with workload.training.compute_model: kernel; everything else in models/compute
// comes from datasheets and kernel measurements.

namespace traincast::models {

/// The fitted framework-level constants.
struct FrameworkConstants {
  /// Fraction of its stand-alone kernel speed a compute kernel reaches inside a training framework
  /// (Korthikanti et al. 2022, Table 4: per-layer times above the kernels' own; allocator, hooks
  /// and Python between ops, caches and SMs shared with communication), in (0, 1].
  double in_framework_efficiency = 1;
};

/// The shipped values (framework_constants.cc).
const FrameworkConstants& framework_constants();

/// Seconds of a compute segment whose stand-alone kernel times sum to `kernel_seconds` when it
/// runs inside a training framework (compute_model kernel): kernel_seconds / in_framework_efficiency.
double framework_segment_seconds(double kernel_seconds);

}  // namespace traincast::models
