#pragma once
// Chakra execution traces on the op-graph runner (op_graph.h): one worker per rank, the same
// runner, collective engine and network as the transformer generator, no second executor.
// The op graph is built by chakra_graph_builder.h; the reverse, a generated training job
// (TrainingGraph) as one Chakra trace per GPU, is chakra_export.h.
//
// How a trace becomes an op graph (rank r runs on GPU r of the scenario's cluster):
//  - Every node becomes one op; its data_deps become dependencies ("must finish first"). ctrl_deps
//    are not waited for by default: in traces from PyTorch they record the calling op (a caller
//    ends after its callees, so waiting on it inverts the order and the feeder test trace becomes
//    cyclic), and ASTRA-sim's Chakra feeder resolves data_deps only. ChakraRunOptions::
//    wait_on_ctrl_deps makes them dependencies too (for traces that use them as such).
//    Each rank's nodes are ordered topologically, file order breaking ties.
//  - COMP on the GPU (is_cpu_op false) runs on the rank's compute stream, COMP with is_cpu_op on
//    its host (cpu) stream: one op at a time each, in that order (a CUDA stream and the Python
//    thread). Duration: the trace's measured one (duration_ns attribute, else duration_micros);
//    when absent, the compute model (models/compute) of the scenario's GPU and precision:
//    a node with num_ops as a GEMM of num_ops FLOPs and tensor_size bytes, a node with only
//    tensor_size as a streaming kernel; a node with neither takes no time (counted in the report).
//  - COMM_* nodes with is_cpu_op are host-side launches (PyTorch's c10d::all_reduce etc.; the
//    GPU kernel is its own node): replayed as CPU ops for their measured duration.
//  - MEM_LOAD / MEM_STORE: measured duration, else tensor_size bytes at the GPU's HBM streaming
//    rate (compute model, copy kernel); concurrent with compute. METADATA: no time.
//  - COMM_COLL: the k-th collective a rank issues on process group G (pg_name; all ranks when
//    absent) meets the k-th of every other member of G; it starts when all members have issued
//    it and runs on the CollectiveEngine (NCCL semantics, flows on the network) over the
//    members' GPUs. comm_size is the nccl-tests size (all-gather: gathered output per rank;
//    reduce-scatter: input per rank; all-to-all: send buffer per rank). REDUCE_SCATTER_BLOCK runs
//    as REDUCE_SCATTER. BARRIER with comm_size > 0 runs as an all-reduce of comm_size bytes
//    (PyTorch's NCCL barrier all-reduces a one-element tensor); without comm_size (or 0) it is a
//    rendezvous that takes no time. GATHER and SCATTER are refused (no model).
//  - COMM_SEND / COMM_RECV: matched in order per (src, dst, comm_tag); the transfer starts when
//    both are issued (NCCL send/recv rendezvous) and ends both.
// Errors (std::invalid_argument, naming file, byte offset, node and the cause): more ranks than
// GPUs, a rank outside a process group it uses, an undefined process group, mismatched
// collectives (type or size differ between ranks, or a rank issues fewer), an unmatched send or
// receive, a dependency cycle.

#include <cstdint>
#include <string>
#include <vector>

#include "models/spec/report.h"
#include "models/spec/scenario.h"
#include "models/workload/chakra_trace.h"
#include "sim/trace.h"

namespace traincast::models {

/// Exposed (not hidden under compute) time of one kind of communication.
struct ChakraCommTime {
  std::string kind;  ///< "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "barrier",
                     ///< "send_recv"
  double exposed_s = 0;  ///< on the reference rank, GPU compute idle while this kind was in flight (transfer,
                         ///< not waiting for slower ranks: ChakraRunReport::straggler_wait_s)
  int calls = 0;         ///< collectives / transfers of this kind (each counted once, not per rank)
  double bytes = 0;      ///< sum of their comm_size [bytes]
};

/// The result of running a trace: Report-like, for one traced step.
struct ChakraRunReport {
  std::string scenario;
  std::string gpu;
  int ranks = 0;
  int num_gpus = 0;  ///< of the scenario's cluster (ranks use GPUs 0..ranks-1)
  std::int64_t nodes = 0;
  std::int64_t comp_nodes = 0, cpu_nodes = 0, comm_coll_nodes = 0, comm_p2p_nodes = 0, mem_nodes = 0,
               metadata_nodes = 0;
  std::int64_t modelled_nodes = 0;   ///< COMP/MEM nodes timed by the compute model (no measured duration)
  std::int64_t zero_time_nodes = 0;  ///< COMP/MEM nodes with neither a duration nor FLOPs/bytes: no time
  std::int64_t dropped_deps = 0;     ///< dependencies the reader dropped (absent ctrl parents, self-deps)
  double iteration_time_s = 0;       ///< first op start (0) to the last op's end, over all ranks
  /// Breakdown on the reference rank (the one whose last op ends last; among ranks ending
  /// together the one with the least GPU compute time, then the lowest: rank 0 when all are
  /// alike, a healthy rank when one is slower); the
  /// fields add up to iteration_time_s. Priority when several things run at once: GPU compute,
  /// then memory nodes, then communication transfers (split evenly among the kinds in flight),
  /// then waiting for slower ranks, then CPU ops.
  int reference_rank = 0;
  double compute_s = 0;  ///< GPU COMP ops running
  double memory_s = 0;   ///< MEM_LOAD/STORE running, no GPU compute
  /// Waiting for slower GPUs: a collective of the reference rank (not send/recv) waiting for a
  /// later member of its group, from the rank's own arrival to the last member's (the same
  /// critical-path walk as `traincast run`'s breakdown.straggler_wait_s:
  /// models/executor/straggler.h), when no GPU compute, memory node or transfer ran. ~0 when the
  /// ranks are alike; a slower rank's extra compute shows here on the others. Not in comm[].
  double straggler_wait_s = 0;
  /// Whom the reference rank waited for (found when straggler_wait_s > 0): gpu (= the rank),
  /// node, local_gpu; slowest_replica is that rank and breakdown_replica the reference rank;
  /// slowest_kernel_s / breakdown_kernel_s their GPU compute (COMP op) time over the step [s];
  /// cause "other" (a trace carries no clocks or temperatures: its measured durations already
  /// include any throttling); the clock and temperature fields stay 0.
  StragglerReport straggler;
  double cpu_s = 0;                      ///< only host (is_cpu_op) ops running
  double idle_s = 0;                     ///< nothing running
  std::vector<ChakraCommTime> comm;      ///< kinds that occur, in the order of the list above
  std::vector<LinkUsage> busiest_links;  ///< top 3 by utilisation over the step
  std::uint64_t events = 0;
};

/// How a trace is read into an op graph (simulate_chakra, build_chakra_graph).
struct ChakraRunOptions {
  bool wait_on_ctrl_deps = false;  ///< treat ctrl_deps as dependencies like data_deps
};

/// Runs `ranks` (ranks 0..N-1 in order) on `scenario`'s cluster. `trace`, when given, receives
/// one span per op that takes time (process per rank, threads compute / cpu / collectives /
/// send-recv / memory). Deterministic. Throws std::invalid_argument as described above (and for
/// a cluster.overrides clock_factor: trace durations take no clock), and std::overflow_error
/// beyond the engine's time range. bandwidth_factor overrides apply (the network's).
ChakraRunReport simulate_chakra(const Scenario& scenario, const std::vector<ChakraRankTrace>& ranks,
                                sim::TraceRecorder* trace = nullptr, const ChakraRunOptions& options = {});

}  // namespace traincast::models
