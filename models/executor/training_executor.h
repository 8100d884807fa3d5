#pragma once
// Runs one training job on the engine: builds every simulated GPU group's op graph (compute
// stream + TP/PP/DP communication streams with their dependencies) and executes it, so overlap,
// pipeline bubbles and exposed communication come out of the simulation (DESIGN.md §1, §3).
// Three pieces, so front ends can stop in between (e.g. export the graph as a Chakra trace):
// build_training_graph -> run_op_graph (op_graph.h) -> training_report; simulate_training does all.

#include <cstdint>
#include <string>
#include <vector>

#include "models/executor/op_graph.h"
#include "models/hardware/cluster.h"
#include "models/report.h"
#include "models/scenario.h"
#include "sim/flow_network.h"
#include "sim/trace.h"

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
  int tp = 1, pp = 1, dp = 1;
  int virtual_stages = 1;  ///< model chunks per stage (interleaved 1F1B), else 1
  int micro_batches = 1;   ///< per iteration per replica
  int replicas = 1;        ///< simulated DP replicas: 1 when folded, else dp
  int iterations = 1;      ///< simulated iterations (the report uses the last)
  bool folded = false;
  std::vector<int> stage_layers;               ///< [stage] transformer layers
  std::vector<std::vector<int>> chunk_layers;  ///< [stage][chunk] layers
};

/// Builds the op graph of `scenario`'s training job on `cluster` (built from scenario.cluster).
/// Replicas are folded when scenario.options.fold_symmetric allows it (DESIGN §3). Throws
/// std::invalid_argument for scenarios the models cannot run (tp*pp*dp != GPUs, a precision the
/// GPU lacks, a graph too large to hold).
TrainingGraph build_training_graph(const Scenario& scenario, const Cluster& cluster);

/// The report of a graph that run_op_graph has executed on `net` (the network `cluster` was built
/// on); `events` = the simulator's processed events. `trace`, when given, receives one span per
/// executed op (per worker, per stream).
Report training_report(const Scenario& scenario, const Cluster& cluster, const sim::FlowNetwork& net,
                       std::uint64_t events, const TrainingGraph& job, sim::TraceRecorder* trace = nullptr);

/// Simulates `scenario` and returns its report: build_training_graph, run_op_graph,
/// training_report. Deterministic: same scenario, same report, whatever options.threads.
/// Throws std::invalid_argument for scenarios the models cannot run (e.g. a precision the GPU
/// lacks, interleaving with micro-batches not divisible by PP).
Report simulate_training(const Scenario& scenario, sim::TraceRecorder* trace = nullptr);

}  // namespace traincast::models
