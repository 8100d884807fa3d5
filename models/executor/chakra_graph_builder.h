#pragma once
// Building the op graph of a Chakra trace (one worker per rank), before it runs; the semantics
// (node kinds, dependencies, matching, errors) are described in models/executor/chakra_executor.h.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/executor/chakra_executor.h"
#include "models/executor/op_graph.h"
#include "models/hardware/cluster.h"
#include "models/spec/scenario.h"
#include "models/workload/chakra_trace.h"

namespace traincast::models {

/// What the graph builder records per op and per task for simulate_chakra's breakdown, report
/// and trace (chakra_graph_builder.cc writes them, chakra_executor.cc reads them).
namespace chakra_graph {

/// Communication kinds, in report order.
enum CommKind : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kBarrier,
  kSendRecv,
  kNumCommKinds
};
/// Report names of CommKind, in its order (ChakraCommTime::kind).
constexpr std::array<const char*, kNumCommKinds> kCommKindNames = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "barrier", "send_recv"};

/// What an op is for the breakdown and the trace.
enum Category : std::uint8_t { kCatCompute, kCatCpu, kCatMemory, kCatNone, kCatComm };

}  // namespace chakra_graph

/// A trace as an op graph, before it runs (simulate_chakra = build_chakra_graph, run_op_graph,
/// then the report), with the mapping back to the trace.
struct ChakraGraph {
  OpGraph graph;
  std::vector<std::vector<std::uint32_t>> node_op;  ///< [rank][node index in file] -> op id
  std::vector<std::string> labels;                  ///< op.label -> node name
  std::vector<std::uint8_t> op_category;            ///< per op: a chakra_graph::Category
  std::vector<std::uint8_t> task_kind;              ///< per task: a chakra_graph::CommKind
  std::vector<std::uint32_t> join_ops;              ///< zero-time barriers (one op for all ranks)
  ChakraRunReport counts;                           ///< node counts filled in; times not yet
};

/// Builds the op graph of `ranks` (rank r on GPU r of `cluster`, built from scenario.cluster).
/// Throws std::invalid_argument as described in chakra_executor.h.
ChakraGraph build_chakra_graph(const Scenario& scenario, const Cluster& cluster,
                               const std::vector<ChakraRankTrace>& ranks, const ChakraRunOptions& options = {});

}  // namespace traincast::models
