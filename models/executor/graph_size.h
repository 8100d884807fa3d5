#pragma once
// The op graph's size from the scenario alone, before any Cluster or graph is built: the early
// form of training_plan.cc's check_graph_size, so that a job too large to simulate is refused in
// milliseconds instead of after its topology (about 3 GB for 2^20 GPUs) is built.

#include "models/spec/scenario.h"

namespace traincast::models {

/// Ops the training graph may hold at most (about 100 bytes per op with its edges: ~4 GB), the
/// limit of training_plan.cc's check_graph_size.
inline constexpr double kMaxGraphOps = 40e6;

/// The op count check_graph_size computes for `sc`, from the scenario alone: ops of one
/// micro-batch through the fullest stage (its layers' forward, recompute and backward segments,
/// embedding and head, 2 for the sends, ZeRO-3's gathers) x micro-batches x iterations x
/// simulated data ranks x pp. The replicas are counted folded whenever the scenario allows
/// folding (fold_symmetric, whole nodes per replica, no oversubscription); the executor may still
/// unfold (a GPU at another place in its node under clock feedback), so this is a lower bound of
/// the executor's count. Throws std::invalid_argument as parallel_layout_of and the program
/// generators do, and for an unknown node template or GPU.
double estimate_graph_ops(const Scenario& sc);

/// Throws std::invalid_argument with check_graph_size's message when estimate_graph_ops(sc) >
/// kMaxGraphOps; a scenario estimate_graph_ops throws for passes (the executor then reports it
/// with its own message). simulate_training calls it before it builds the cluster.
void check_graph_size_early(const Scenario& sc);

}  // namespace traincast::models
