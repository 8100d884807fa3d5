#pragma once
// What a training job meets beyond one iteration (DESIGN §4.5), applied to the simulated report:
// storage stalls (data loader and checkpoints) added to the iteration time and its breakdown,
// failures and goodput (Monte-Carlo), and cost. Each part only when the scenario has its section.

#include "models/hardware/cluster.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// The storage stall of one iteration [s]: the data loader's read time beyond
/// `compute_iteration_s` (the iteration without storage) plus the checkpoint stall averaged over
/// the iterations between checkpoints. 0 without a storage section. The executor puts it in the
/// simulated timeline (build_training_graph), where the GPUs wait idle. Throws
/// std::overflow_error when it makes an iteration longer than the simulator's range.
double storage_stall_per_iteration_s(const Scenario& sc, const Cluster& cluster, double compute_iteration_s);

/// Fills r.storage, r.reliability and r.cost from the scenario's storage, reliability and cost
/// sections. `r` is the simulated job with the storage stall already in its timeline (its
/// iteration time, rates, breakdown.storage_stall_s, power and utilisation include it);
/// `compute_iteration_s` is the iteration without storage that the stall was derived from.
/// `facility_power_w` is the power model's facility draw while training (0 = not modelled: cost
/// leaves energy out).
void apply_job_effects(const Scenario& sc, const Cluster& cluster, Report& r, double facility_power_w,
                       double compute_iteration_s);

}  // namespace traincast::models
