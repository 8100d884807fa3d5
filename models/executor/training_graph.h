#pragma once
// The transformer (or ResNet) training job of a scenario as a ready-to-run op graph, with the
// shape its report needs (built by graph_builder.h, run by training_run.h).

#include <cstdint>
#include <string>
#include <vector>

#include "models/executor/folding.h"
#include "models/executor/op_graph.h"

namespace traincast::models {

/// The transformer job of a scenario as a ready-to-run op graph, with what its report needs.
/// A worker is the TP group of one pipeline stage of one simulated replica (its GPUs act in
/// lockstep); worker w = replica * pp + stage. After the workers' ops come `iterations` barrier
/// ops (Role::barrier, no stream): the global sync before each optimizer step.
struct TrainingGraph {
  OpGraph graph;
  std::vector<std::string> labels;            ///< op.label -> name (trace span names)
  std::vector<std::vector<int>> worker_gpus;  ///< [worker] global GPU ids in TP-rank order, size tp each
  std::vector<std::uint32_t> op_base;         ///< first op of each worker, size workers + 1
  int tp = 1, pp = 1;
  int dp = 1;              ///< data-parallel size of the scenario (workload.parallel.dp)
  int dp_cp = 1;           ///< the data-parallel replicas of the graph: dp x cp
  int cp = 1;              ///< context parallel size (replicas dp_rank * cp + j, j < cp, share a ring)
  int virtual_stages = 1;  ///< model chunks per stage (interleaved 1F1B), else 1
  int micro_batches = 1;   ///< per iteration per replica
  int replicas = 1;        ///< simulated replicas: ep x cp when folded, else dp_cp
  int iterations = 1;      ///< simulated iterations (the report uses the last)
  bool folded = false;
  /// Classes, simulated data ranks (replica_ids: worker w is data rank replica_ids[w / pp]) and
  /// whom each data rank's representative is (sim_index), folding.h.
  FoldingPlan folding;
  bool input_copies = false;      ///< host-to-device input copies (workload.data_loader)
  bool ep_stream = false;         ///< EP all-to-alls beside compute on kEp (parallel.moe_shared_expert_overlap)
  std::vector<int> stage_layers;  ///< [stage] transformer layers
  std::vector<std::vector<int>> chunk_layers;  ///< [stage][chunk] layers
};

}  // namespace traincast::models
