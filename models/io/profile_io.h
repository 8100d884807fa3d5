#pragma once
// Reading and writing calibration profiles (message Profile) and measurement files (message
// Measurements) of models/io/traincast.proto, as plain structs (models/calibration/calibration_profile.h,
// models/calibration/measurements.h). Errors as the scenario loader's (scenario_io.h): every problem collected,
// each "file:line:col: field.path: what is wrong (expected ...)", thrown as one ScenarioError.

#include <memory>
#include <string>
#include <string_view>

#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"
#include "models/io/scenario_io.h"

namespace traincast::io {

/// Reads a profile (text format; .json also accepted). Checks every field's range (see the
/// schema), dtypes and GPU names against the catalog, ops by nccl-tests name, link kinds, the
/// 10 coefficients of a GEMM surface, GEMM points of a dtype without a surface, size corrections
/// in increasing size. origin of the result = path. Throws ScenarioError with every problem.
std::shared_ptr<const models::CalibrationProfile> load_profile_file(const std::string& path);
/// Where profile `p` was fitted on other hardware than cluster `cs`: its fitted_on (or, for an
/// older profile, its compute `gpu`) against cs's GPU, node template and compute NIC. One line
/// per difference, naming both sides, for a warning on stderr (the fields still apply: an
/// efficiency is a fraction of whatever the scenario's links and GPU are). Throws ScenarioError
/// (exit 2) when a field cannot apply: a gemm_surface for a dtype cs's GPU has no dense peak for.
std::vector<std::string> profile_hardware_mismatch(const models::CalibrationProfile& p, const models::ClusterSpec& cs);
/// As load_profile_file for text in memory; origin names it in messages.
std::shared_ptr<const models::CalibrationProfile> load_profile_text(std::string_view text, std::string_view origin,
                                                                    Format format = Format::text);

/// The profile as text format (fields in schema order, doubles with 17 significant digits so
/// load_profile_text(profile_to_text(p)) gives p back), after a comment header `header_comment`
/// (each line prefixed with "# ").
std::string profile_to_text(const models::CalibrationProfile& profile, const std::string& header_comment = "");
/// The profile as JSON (proto field names, the fields profile_to_text prints), for a profile
/// file named .json: load_profile_text(profile_to_json(p), origin, Format::json) gives p back.
std::string profile_to_json(const models::CalibrationProfile& profile);

/// Reads a Measurements text file (traincast-bench output) into plain samples; every sample's
/// `where` is "path:line". Checks: GEMM dtype known and m, n, k, time > 0; bandwidth kind set and
/// bytes, time > 0; collective op known (nccl-tests names), size >= 0 and time > 0. Points with
/// size 0 are kept out (nccl-tests prints them; nothing moves). Throws ScenarioError.
models::MeasurementSet load_measurements_file(const std::string& path);
models::MeasurementSet load_measurements_text(std::string_view text, std::string_view origin);

}  // namespace traincast::io
