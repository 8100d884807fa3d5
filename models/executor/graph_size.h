#pragma once
// The op graph's size from the scenario alone, before any Cluster or graph is built: the early
// form of training_plan.cc's check_graph_size, so that a job too large to simulate is refused in
// milliseconds instead of after its topology (about 3 GB for 2^20 GPUs) is built.

#include <vector>

#include "models/spec/scenario.h"
#include "models/workload/layer_program.h"

namespace traincast::models {

/// Ops the training graph may hold at most (about 100 bytes per op with its edges: ~4 GB), the
/// limit of training_plan.cc's check_graph_size.
inline constexpr double kMaxGraphOps = 40e6;

/// The factors of the training graph's op count, kept apart so that a refusal can name each with
/// the field that drives it.
struct GraphOpsTerms {
  double per_microbatch = 0;  ///< ops of one micro-batch through the fullest stage
  int stage_layers = 0;       ///< layers on the fullest stage
  double microbatches = 0;    ///< micro-batches per iteration
  int iterations = 0;         ///< iterations simulated
  int replicas = 0;           ///< data-parallel (x context-parallel) replicas simulated
  int pp = 0;                 ///< pipeline stages
  /// per_microbatch x microbatches x iterations x replicas x pp.
  double ops() const { return per_microbatch * microbatches * iterations * static_cast<double>(replicas) * pp; }
};

/// Ops of the training graph: one micro-batch through the fullest stage of `stage_layers` (its
/// layers' forward, recompute and backward segments, embedding and head, 2 for the sends, ZeRO-3's
/// gathers) x `microbatches` x `iterations` x `replicas` x `pp`. The one formula of
/// check_graph_size (training_plan.cc) and estimate_graph_ops. stage_layers non-empty.
GraphOpsTerms graph_ops_terms(const ModelPrograms& programs, const std::vector<int>& stage_layers, int zero_stage,
                              double microbatches, int iterations, int replicas, int pp);
/// graph_ops_terms(...).ops().
double graph_ops(const ModelPrograms& programs, const std::vector<int>& stage_layers, int zero_stage,
                 double microbatches, int iterations, int replicas, int pp);
/// Throws std::invalid_argument "the job would need about N million ops to simulate (limit 40
/// million): <each factor with the field that drives it and its value in `sc`>: reduce ..." when
/// t.ops() > kMaxGraphOps; it advises turning options.fold_symmetric on only when it is off in `sc`
/// (issue 21: it advised it when it was already on). `data_ranks`: the job's data-parallel ranks
/// (the divisor of the micro-batch count besides micro_batch_size).
void refuse_graph_ops_over_limit(const GraphOpsTerms& t, const Scenario& sc, int data_ranks);

/// The op count check_graph_size computes for `sc`, from the scenario alone: ops of one
/// micro-batch through the fullest stage (its layers' forward, recompute and backward segments,
/// embedding and head, 2 for the sends, ZeRO-3's gathers) x micro-batches x iterations x
/// simulated data ranks x pp. The replicas are counted folded whenever the scenario allows
/// folding (fold_candidate, folding.h); the executor may still unfold (replicas sharing links,
/// folding.h; a GPU at another place in its node under clock feedback), so this is a lower bound of
/// the executor's count. Throws std::invalid_argument as parallel_layout_of and the program
/// generators do, and for an unknown node template or GPU.
double estimate_graph_ops(const Scenario& sc);

/// Throws std::invalid_argument with check_graph_size's message when estimate_graph_ops(sc) >
/// kMaxGraphOps; a scenario estimate_graph_ops throws for passes (the executor then reports it
/// with its own message). simulate_training calls it before it builds the cluster.
void check_graph_size_early(const Scenario& sc);

}  // namespace traincast::models
