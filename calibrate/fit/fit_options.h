#pragma once
// What a profile fit is asked (FitOptions: base, system, GPUs, holdout) and the text form of it
// that a profile records (fit_options).

#include <optional>
#include <string>
#include <vector>

#include "models/spec/scenario.h"

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

/// "holdout=odd; gpus=0,8" and back (the profile's fit_options).
std::string fit_options_text(const FitOptions& o);
/// Reads holdout and gpus from a profile's fit_options (other keys ignored); unknown values
/// leave the defaults.
void apply_fit_options_text(const std::string& text, FitOptions& o);

}  // namespace traincast::calibrate
