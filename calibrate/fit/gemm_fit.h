#pragma once
// The GEMM part of a profile fit: per dtype, a robust quadratic surface of ln efficiency in
// (ln m, ln n, ln k) and the kept points' residuals around it (profile_fit.h describes the method).

#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"

namespace traincast::calibrate {

/// Fits m's GEMM samples (none: nothing is set) into out.gemm (one surface per dtype and the
/// points kept); appends one note per dtype to `notes` when given. Throws std::invalid_argument
/// without o.gpu, for a dtype the GPU has no peak for, and when most of a dtype's points are
/// above models::kMaxGemmPeakFraction x its dense peak.
void fit_gemm(const models::MeasurementSet& m, const FitOptions& o, models::CalibrationProfile& out,
              std::vector<std::string>* notes);

}  // namespace traincast::calibrate
