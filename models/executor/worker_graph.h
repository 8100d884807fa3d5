#pragma once
// One worker's part of a training job's op graph (a TP group of one stage of one replica) and
// its builder: per-layer forward/backward, pipeline sends/receives, gradient buckets, optimizer.

#include <cstdint>
#include <utility>
#include <vector>

#include "models/executor/op_graph.h"
#include "models/executor/training_plan.h"

namespace traincast::models {

/// Dependency on another worker's pipeline send, resolved after all graphs are built.
struct RemoteDep {
  std::uint32_t src_worker;
  std::uint32_t slot;      ///< index into the source worker's send table
  std::uint32_t local_op;  ///< dependent op (local index)
};

/// One bucket of gradients launched after backward item `after_item` of a chunk.
struct Bucket {
  int after_item = 0;
  double params = 0;         ///< DP-replicated parameters (per TP rank)
  double expert_params = 0;  ///< routed-expert parameters (per GPU), reduced over dp / ep ranks
  std::vector<int> layers;   ///< chunk-local layers whose parameters it holds (for param gather)
};

/// Everything one worker (a TP group of one stage of one replica) builds on its own.
struct WorkerGraph {
  std::vector<Op> ops;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  ///< (dep, op), local indices
  std::vector<RemoteDep> remote;
  std::vector<Task> tasks;                  ///< private tasks (TP, PP); group ids global
  std::vector<std::uint32_t> sends;         ///< local op of each send slot (kNone if absent)
  std::vector<std::uint32_t> barrier_deps;  ///< local ops the iteration barrier waits for, per iteration
  std::vector<std::uint32_t> barrier_dep_iteration;
  std::vector<std::uint32_t> optimizer_ops;                     ///< per iteration: op that waits for the barrier
  std::vector<std::pair<std::uint32_t, std::uint32_t>> dp_ops;  ///< (global dp task, local op)
  /// Local tasks of the expert-parallel all-to-alls in emission order: the i-th of every worker
  /// of one EP group (same stage) is the same collective; the group's first replica owns it.
  std::vector<std::uint32_t> ep_tasks;
  std::vector<std::uint32_t> ep_ops;  ///< the local op of each entry of ep_tasks
  /// The same for the context-parallel ring send/recvs: the i-th of every worker of one CP group
  /// (same stage) is the same ring step; the group's first replica owns it.
  std::vector<std::uint32_t> cp_tasks;
  std::vector<std::uint32_t> cp_ops;
};

/// Builds the op graph of worker (replica, stage) of `plan` into `g` (which starts empty): for
/// every iteration the storage stall, the pipeline schedule's forward and backward steps with
/// their sends, receives, gradient buckets and parameter gathers, then the optimizer step. Ops,
/// edges and private tasks use local indices; shared DP tasks are plan.dp_tasks indices.
void build_worker_graph(const TrainingPlan& plan, int replica, int stage, WorkerGraph& g);

}  // namespace traincast::models
