#pragma once
// Running one sweep point: its scenario built (io::sweep_point_scenario) and simulated, the
// outcome (ok, oom, invalid, error) with its reason and report for the CSV row.

#include <cstddef>

#include "models/io/sweep.h"
#include "models/io/sweep_csv.h"

namespace traincast::cli {

/// Builds, validates and simulates point `point` (< sweep.num_points()). Never throws for a bad
/// point: failures are outcomes (statuses as io::SweepStatus says; an invalid point's reason is
/// its scenario errors joined by "; ", each "FILE:LINE:COL: field.path: what" at the axis value,
/// `set` entry or base field that wrote the field: io::sweep_point_scenario). Deterministic: the same sweep and
/// point give the same outcome. Rethrows models::Interrupted (Ctrl-C during its Monte-Carlo
/// draws): an interrupted point has no outcome.
io::SweepOutcome run_sweep_point(const models::Sweep& sweep, std::size_t point);

}  // namespace traincast::cli
