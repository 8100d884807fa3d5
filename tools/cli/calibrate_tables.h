#pragma once
// The tables `traincast calibrate fit` and `validate` print: measured vs predicted per point and
// the geometric-mean error per group, and the burn's temperature and power.

#include <string>

#include "calibrate/fit/power_fit.h"
#include "calibrate/fit/profile_validate.h"

namespace traincast::cli {

/// 100 x f with one decimal and a percent sign ("12.3%").
std::string percent(double f);

/// The validation table: every point, then a summary per group (held out vs fit, split at 1 MiB
/// for collectives), and with holdout the model-free neighbour reference per collective.
std::string format_validation(const calibrate::Validation& v, bool holdout);

/// The burn's measured vs predicted temperature and power: every `stride`-th sample of each GPU
/// (and the last), then RMS and largest error per GPU over all samples, fit vs held out.
std::string format_burn_validation(const calibrate::BurnValidation& v, bool holdout);

}  // namespace traincast::cli
