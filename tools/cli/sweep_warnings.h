#pragma once
// The warnings a sweep prints before its first point (traincast sweep, docs/sweeps.md): those
// `traincast run` prints about each system the sweep loads, once per distinct line, each naming the
// systems that raised it where not all did.

#include <ostream>

#include "models/io/sweep.h"

namespace traincast::cli {

/// The warnings `traincast run` prints for a system, for a sweep: a calibration profile fitted on
/// other hardware (warn_profile_hardware), and the file's and cluster's settings without effect
/// (warn_settings_without_effect: unused node templates, a `storage.local` nothing uses, the
/// cluster's notes, NICs spread unevenly over a node's PCIe switches); once per distinct line over the sweep's systems.
/// Points that differ only on axes outside `cluster.`, `storage.`, `thermal.` and `profile` share a system, so one
/// point per combination of those axes' values is loaded (a sweep over 1,000 layouts on one cluster loads one). A
/// point that fails its checks is skipped here (its row says why) and the next point of its system is tried. A line
/// that only some systems raise names them once, by their axis values, after the line: " (at cluster.num_nodes=1)",
/// several joined by "; ", the first 3 and "and N more" (fresh user 38: a warning raised at one --vary value did not
/// say which). The workload's notes are not printed: they depend on each point's layout.
void warn_sweep_systems(const models::Sweep& sweep, std::ostream& err);

}  // namespace traincast::cli
