#pragma once
// The collectives part of a profile fit: per-op scales, the profile-wide latency scale, link
// efficiencies and PCIe duplex budget they imply, each op refitted on top, its size correction
// and the derived alpha-beta view (profile_fit.h describes the method).

#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"

namespace traincast::calibrate {

/// Fits m's collective samples (none: nothing is set) into out's latency_scale, link_efficiency,
/// pcie_duplex_efficiency and collectives; appends one note per op (and per clipped efficiency)
/// to `notes` when given. Throws std::invalid_argument as op_groups (collective_points.h) and
/// check_link_fraction (link_fraction_check.h).
void fit_collectives(const models::MeasurementSet& m, const FitOptions& o, models::CalibrationProfile& out,
                     std::vector<std::string>* notes);

}  // namespace traincast::calibrate
