#pragma once
// The bandwidth and launch part of a profile fit: HBM memory efficiency, PCIe and NVLink peer
// link efficiencies from copy samples, and the kernel launch overhead (profile_fit.h describes
// the method).

#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"

namespace traincast::calibrate {

/// Sets out.kernel_fixed_s from m's back-to-back launch time (when measured), and from m's
/// bandwidth samples out.memory_efficiency and the PCIe / NVLink link efficiencies that no
/// collective fit set; appends one note per kind to `notes` when given. Throws
/// std::invalid_argument for bandwidth samples without o.gpu, and for a kind whose median is
/// above models::kMaxLinkFraction of the datasheet rate.
void fit_bandwidth_and_launch(const models::MeasurementSet& m, const FitOptions& o, models::CalibrationProfile& out,
                              std::vector<std::string>* notes);

}  // namespace traincast::calibrate
