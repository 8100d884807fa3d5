#pragma once
// What a training job meets beyond one iteration (DESIGN §4.5), applied to the simulated report:
// storage stalls (data loader and checkpoints) added to the iteration time and its breakdown,
// failures and goodput (Monte-Carlo), and cost. Each part only when the scenario has its section.

#include "models/hardware/cluster.h"
#include "models/report.h"
#include "models/scenario.h"

namespace traincast::models {

/// Fills r.storage, r.reliability and r.cost from the scenario's storage, reliability and cost
/// sections and the simulated iteration in `r`. With storage, the stall is added to
/// r.iteration_time_s and r.breakdown.storage_stall_s, and the rates derived from the iteration
/// time (tokens/s, TFLOP/s, MFU, HFU, time to train) are recomputed. `facility_power_w` is the
/// power model's facility draw while training (0 = not modelled: cost leaves energy out).
void apply_job_effects(const Scenario& sc, const Cluster& cluster, Report& r, double facility_power_w = 0.0);

}  // namespace traincast::models
