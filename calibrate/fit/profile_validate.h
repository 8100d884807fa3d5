#pragma once
// `traincast calibrate validate` as a library call (DESIGN §5): every measured point against the
// profile's re-simulated prediction, with the geometric-mean error per group, fit points and
// held-out points apart (the hold-out rule: profile_fit.h).

#include <memory>
#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"

namespace traincast::calibrate {

/// One measured point against the profile's prediction.
struct ValidationPoint {
  std::string kind;   ///< "collective", "gemm", "bandwidth"
  std::string group;  ///< op name, dtype, bandwidth kind
  std::string label;  ///< size or shape
  std::string where;  ///< file:line
  double bytes = 0;   ///< collectives: size [bytes]
  std::string unit;   ///< "busbw GB/s", "TFLOP/s", "GB/s"
  double measured = 0, predicted = 0;
  double error = 0;  ///< predicted / measured - 1
  bool fit_point = false;
};

struct ValidationGroup {
  std::string kind, group;
  int held_large = 0, held_small = 0, fit_large = 0, fit_small = 0;
  /// Geometric-mean |error| (exp(mean |ln ratio|) - 1) of the held-out points >= 1 MiB and
  /// < 1 MiB (GEMM/bandwidth: all held-out in `held_large_error`), and of the fit points.
  double held_large_error = 0, held_small_error = 0, fit_large_error = 0, fit_small_error = 0;
  /// Collectives, model-free reference for the held-out error: each held-out size between two fit
  /// sizes predicted by interpolating the measured times of its nearest fit sizes below and above
  /// linearly in (ln size, ln time); geometric-mean |error| >= 1 MiB and < 1 MiB over those points
  /// (counts in neighbour_large / neighbour_small; held-out sizes beyond the fit range are not
  /// counted). It measures how rough the log itself is from size to size: a log whose neighbours
  /// miss by more than a limit cannot be met by any curve that is smooth between fit sizes.
  int neighbour_large = 0, neighbour_small = 0;
  double neighbour_large_error = 0, neighbour_small_error = 0;
};

struct Validation {
  std::vector<ValidationPoint> points;
  std::vector<ValidationGroup> groups;
};

/// Size at which the busbw error is split (1 MiB).
constexpr double kSplitBytes = 1024.0 * 1024.0;

/// Re-simulates every point with `profile` (collectives: simulate_nccl_tests on options.cluster
/// with the profile; GEMM: the compute model; bandwidth: efficiency x datasheet). Points are
/// marked as fit points by options.holdout (none: every point is a fit point). Throws as
/// fit_profile (profile_fit.h).
Validation validate_profile(const std::shared_ptr<const models::CalibrationProfile>& profile,
                            const models::MeasurementSet& m, const FitOptions& options);

}  // namespace traincast::calibrate
