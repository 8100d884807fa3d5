#pragma once
// What `traincast calibrate fit` and `validate` read: the measurement files, --base, --gpus and
// --holdout, as calibrate/fit's inputs and FitOptions.

#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"

namespace traincast::cli {

/// Whether a --base (or a profile's base) names a scenario file rather than a node template or
/// catalog GPU: by its extension, text format or JSON.
bool is_scenario_file(const std::string& base);

/// Reads every input (Measurements text by extension .textproto/.txtpb/.pbtxt, CSV by .csv,
/// anything else an nccl-tests log), one source per path (kind, SHA-256, points skipped) and the
/// readers' notes. Errors of every file are collected, then thrown as io::ScenarioError (exit 2);
/// a file with the same bytes as an earlier one is refused.
models::MeasurementSet read_inputs(const std::vector<std::string>& paths, const std::string& device,
                                   const std::string& op, std::vector<models::ProfileSource>& sources,
                                   std::vector<std::string>& notes);

/// --base: a scenario file (cluster and GPU), a node template (one node unless --nodes), or a
/// catalog GPU (compute points only); sets o.base, o.cluster and o.gpu. sets: --set overrides,
/// only with a scenario file (UsageError otherwise, and for a base that is none of the three).
void resolve_base(const std::string& base, int nodes, const std::vector<std::string>& sets, calibrate::FitOptions& o);

/// --gpus: the base's GPUs the collectives ran on, in rank order; each one of 0..N-1 of the base's
/// cluster (N its GPU count) and none twice. UsageError naming --gpus otherwise.
std::vector<int> parse_gpus_option(const std::string& text, const calibrate::FitOptions& o);

/// --holdout: odd, even or none (UsageError otherwise).
calibrate::Holdout parse_holdout(const std::string& s);

}  // namespace traincast::cli
