#pragma once
// What each cluster.overrides entry did in a run (Report::overrides, issue 18: the report names
// the element): the figures the run measured on the element the entry names, so a degraded NIC or
// link whose cost shows only as a slower collective is named with its traffic, beside the same
// element on the nodes without an override.

#include <cstdint>
#include <optional>
#include <vector>

#include "models/hardware/cluster.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"
#include "sim/flow_network.h"
#include "sim/trace.h"

namespace traincast::models {

/// Fills r.overrides.entries, one per cluster.overrides entry in order, from the run that built
/// `net` on `cluster` (`iterations` simulated, the last op ending at `end_ns`) and the report's power, thermal and
/// straggler sections (call after name_straggler; without a power model the GPU figures stay 0). Nothing when the
/// scenario has no overrides. NIC and link entries: bytes carried per iteration over the entry's resources and their
/// highest utilisation over the run; the peer is the same element on the node (of those without an override of that
/// element) whose element carried the most, which for a folded run is a simulated one. One pass over the resource
/// names: O(resources).
void report_override_effects(const Scenario& sc, const Cluster& cluster, const sim::FlowNetwork& net,
                             std::int64_t end_ns, int iterations,
                             const std::vector<std::vector<int>>& simulated_worker_gpus, Report& r);

/// The scenario without the overrides that change hardware (every entry but `missing: true`, whose
/// node stays drained, so the job runs on the same nodes); nullopt when no entry would go.
std::optional<Scenario> without_acting_overrides(const Scenario& sc);

/// Fills r.overrides.cost_s (r.iteration_time_s less that of the same job without its acting
/// overrides, simulated here: one more run, folded where the job folds) and cost_fraction (of the
/// latter); cost_known true. Nothing when no override acts. Then, for each switch-link entry with a
/// bandwidth_factor that acts (the first 4), one run with that link failed instead:
/// failed_instead_cost_s. `r` must be simulate_training(sc)'s. Throws as simulate_training.
void add_override_cost(const Scenario& sc, Report& r);

/// simulate_training(sc, trace) with add_override_cost's figures (`traincast run` and `compare`):
/// the job and the same job without its acting overrides are independent simulations, run side by
/// side on options.threads (worker_threads.h; 1 = one after the other on the calling thread), then
/// the failed-link runs, side by side. The report is the same bytes for any thread count; the
/// trace (may be null) records the job's run only. Peak memory is up to the two runs' together.
/// Throws as simulate_training: the job's error first, then the nominal run's.
Report simulate_training_with_override_cost(const Scenario& sc, sim::TraceRecorder* trace = nullptr);

}  // namespace traincast::models
