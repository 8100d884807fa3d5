#pragma once
// `traincast calibrate fit` as a library call (DESIGN §5): measured points in, a
// CalibrationProfile out (`traincast calibrate validate`: profile_validate.h).
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
// The parts: collective_fit.h, gemm_fit.h, bandwidth_fit.h and power_fit.h (burns).

#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"

namespace traincast::calibrate {

/// Fits a profile. sources: recorded as given (their points_used/skipped are not changed).
/// Throws std::invalid_argument for points the base cannot take: collectives without a cluster,
/// GEMM/bandwidth without a GPU, a dtype the GPU has no peak for, an unknown op, a log's rank
/// count different from the selected GPUs.
models::CalibrationProfile fit_profile(const models::MeasurementSet& m, const FitOptions& options,
                                       std::vector<std::string>* notes = nullptr);

}  // namespace traincast::calibrate
