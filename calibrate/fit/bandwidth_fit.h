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
/// Whether a copy of `size_bytes` is in the streaming regime the fitted efficiency describes:
/// >= 64 MiB, or >= 1/4 of the largest size measured for its kind (`max_size_bytes`). Smaller
/// copies are bound by the per-call launch cost and served partly from L2 (50-60 MB on H100/H200:
/// a 16 MiB read ran at 3.8 TB/s and a 32 MiB one at 5.3 TB/s, above the 4.8 TB/s of HBM, on the
/// H200 of tests/calibrate/data/h200_20261204), which one efficiency does not model.
bool streaming_size(double size_bytes, double max_size_bytes);

void fit_bandwidth_and_launch(const models::MeasurementSet& m, const FitOptions& o, models::CalibrationProfile& out,
                              std::vector<std::string>* notes);

}  // namespace traincast::calibrate
