#pragma once
// Builds the op graph of a scenario's training job: plans it (training_plan.h), builds every
// worker's ops (worker_graph.h) and merges them into one TrainingGraph.

#include "models/executor/training_graph.h"
#include "models/hardware/cluster.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Builds the op graph of `scenario`'s training job on `cluster` (built from scenario.cluster).
/// Replicas are folded when scenario.options.fold_symmetric allows it (DESIGN §3). Throws
/// std::invalid_argument for scenarios the models cannot run (tp*pp*dp != GPUs, a precision the
/// GPU lacks, a graph too large to hold).
/// storage_stall_s > 0: every worker's compute stream starts each iteration with an idle op of
/// that length (Role::storage_stall: the data loader and checkpoint stall per iteration, from
/// storage_stall_per_iteration_s), so power, temperature, utilisation and the iteration time see it.
TrainingGraph build_training_graph(const Scenario& scenario, const Cluster& cluster, double storage_stall_s = 0.0);

}  // namespace traincast::models
