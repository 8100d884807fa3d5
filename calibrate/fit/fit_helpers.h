#pragma once
// Small helpers shared by the profile fit and validation files: the holdout rule, the median and
// link-kind names.

#include <cstddef>
#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/hardware/cluster.h"

namespace traincast::calibrate {

/// Whether index i (in a group's order) is a fit point under `h`.
bool is_fit(Holdout h, std::size_t i);

/// Median of v (the mean of the middle two for an even count); 1.0 when v is empty.
double median(std::vector<double> v);

/// GPU ids joined by commas ("0,8"; "" when empty), as --gpus takes them.
std::string gpu_list_text(const std::vector<int>& gpus);

/// "NVLink", "PCIe", ... for a link kind (in the fit's notes and refusals).
const char* link_name(models::LinkKind k);

}  // namespace traincast::calibrate
