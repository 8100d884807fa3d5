#pragma once
// `traincast calibrate fit` and `traincast calibrate validate` as library calls (DESIGN §5):
// measured points in, a CalibrationProfile out; and measured vs re-simulated per point.
//
// What is fitted, and how (robust: Huber IRLS, calibrate/fit/robust.h):
//  - GEMM: per dtype, eta = 2mnk / (time x dense peak); ln eta fitted by a quadratic surface in
//    (ln m, ln n, ln k) (linear below 20 points, constant below 4); points more than 3.5 robust
//    sigmas off the surface are dropped as outliers; the kept points' residuals are interpolated
//    around the surface (GemmEfficiencyTable).
//  - HBM: memory_efficiency = median over hbm_* samples of >= 64 MiB (else the largest quarter)
//    of measured GB/s / datasheet bandwidth. PCIe: h2d/d2h the same against the GPU's PCIe link;
//    d2d_peer against its NVLinks (both only where no collective fit set that link kind).
//    Launch: kernel_fixed_s = the back-to-back empty-kernel time.
//  - Collectives (one fit per nccl-tests operation): the flow model's time with the op's latency
//    scaled by a and bandwidth by b, (a, b) by Levenberg-Marquardt on ln(time) with Huber weights,
//    from the best point of a coarse grid. Across ops, the median b of the ops bounded by each
//    link kind becomes that kind's link efficiency (default x b) and the median a the profile's
//    latency scale: what another collective on the same system uses. Each op's (a, b) is then
//    refitted on top, and its size correction is measured / simulated time at the fit sizes,
//    Hampel-filtered in size order (a point more than 3 robust sigmas from the median of a window
//    with the same number of neighbours, up to 2, on each side takes the median: an isolated
//    outlier does not pass; the rest, and the first and last fit sizes, where a departure cannot
//    be told from a trend, are kept).
// Hold-out: per op (collectives, by increasing size), per dtype (GEMM, in input order) and per
// kind (bandwidth, by size), `odd` holds out the odd-indexed points (fits on 0, 2, 4, ...),
// `even` the even-indexed ones.

#include <optional>
#include <string>
#include <vector>

#include "models/calibration_profile.h"
#include "models/measurements.h"
#include "models/scenario.h"

namespace traincast::calibrate {

enum class Holdout { none, odd, even };

struct FitOptions {
  std::string base;                            ///< recorded in the profile (--base as given)
  std::optional<models::ClusterSpec> cluster;  ///< needed for collective points
  std::string gpu;                             ///< catalog GPU name; needed for GEMM/bandwidth points
  std::vector<int> gpus;                       ///< ranks of the collectives (empty = every GPU)
  Holdout holdout = Holdout::none;
  /// validate_profile: inputs (paths as in the points' `where`, "path:line") the profile was not
  /// fitted from (not among its sources by SHA-256): their points are never fit points, whatever
  /// the holdout.
  std::vector<std::string> unfitted_files;
};

/// Fits a profile. sources: recorded as given (their points_used/skipped are not changed).
/// Throws std::invalid_argument for points the base cannot take: collectives without a cluster,
/// GEMM/bandwidth without a GPU, a dtype the GPU has no peak for, an unknown op, a log's rank
/// count different from the selected GPUs.
models::CalibrationProfile fit_profile(const models::MeasurementSet& m, const FitOptions& options,
                                       std::vector<std::string>* notes = nullptr);

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
/// fit_profile.
Validation validate_profile(const std::shared_ptr<const models::CalibrationProfile>& profile,
                            const models::MeasurementSet& m, const FitOptions& options);

/// "holdout=odd; gpus=0,8" and back (the profile's fit_options).
std::string fit_options_text(const FitOptions& o);
/// Reads holdout and gpus from a profile's fit_options (other keys ignored); unknown values
/// leave the defaults.
void apply_fit_options_text(const std::string& text, FitOptions& o);

}  // namespace traincast::calibrate
