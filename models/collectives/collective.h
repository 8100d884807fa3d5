#pragma once
// NCCL-semantics collectives executed as flows on the FlowNetwork plus per-step latency.
// Sizes follow nccl-tests: `bytes` is the per-rank buffer size as nccl-tests prints it
// (all_reduce: the buffer; all_gather: the gathered output per rank; reduce_scatter: the input
// per rank; send_recv: the message; all_to_all: the send buffer per rank, S/n to each peer;
// broadcast/reduce: the buffer). busbw factors: DESIGN.md §4.3.
//
// Model (see collective.cc for the derivations):
//  - A pipelined ring is CONCURRENT flows, one per ring edge per channel, each carrying that
//    edge's total bytes (all_reduce 2(n-1)/n·S/C, all_gather/reduce_scatter (n-1)/n·S/C,
//    broadcast/reduce S/C on the n-1 edges of the chain from/to the root = ranks[0]); the
//    slowest link bounds it. Then a latency term = NCCL's ring latency for the protocol:
//    baseLat + (steps - interSteps)·intraLat + interSteps·interLat (NCCL src/graph/tuning.cc).
//  - Channels: one node: one ring in rank order (NVSwitch: channels do not change the
//    bandwidth), or on a full mesh (xGMI) one ring per stride s coprime with n (ring i -> i+s).
//    Several nodes: C = min over nodes of (group GPUs on the node, distinct NICs they use);
//    channel c's ring enters every node at a different GPU, so each channel crosses each node
//    boundary once through a different NIC (NCCL's rail-aligned rings; PXN routing from
//    Cluster::route). One group GPU per node: a plain ring over the rail.
//  - hierarchical (all_reduce only, every node holding the same p > 1 group GPUs, > 1 node):
//    intra-node reduce-scatter, then p concurrent inter-node all-reduces of S/p (one per local
//    position, over its rail), then intra-node all-gather; each phase pays its own latency.
//  - all_to_all: direct, one flow of S/n per ordered pair; send_recv: one flow on the route.
//  - Achievable bandwidth: each flow is capped so that the flows of one collective together
//    get at most efficiency(link type) × capacity on every link (per-type fractions below),
//    times the protocol's bandwidth factor.
//  - automatic: the algorithm and protocol with the least estimate_seconds(), as NCCL's tuner.

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {

enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv };
// CollectiveAlgorithm and CollectiveProtocol: models/scenario.h (a scenario may force them).

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::all_reduce;
  std::vector<int> ranks;  ///< GPU ids in rank order; send_recv: {src, dst}; broadcast/reduce root = ranks[0]
  double bytes = 0;        ///< >= 0, nccl-tests size (see above)
  /// hierarchical applies to all_reduce on a regular multi-node group; otherwise ring is used.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic;
};

/// What the engine would run for a call, and its closed-form time (no simulation).
struct CollectiveChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;  ///< ring or hierarchical (resolved)
  CollectiveProtocol protocol = CollectiveProtocol::simple;
  int channels = 1;      ///< parallel rings (1 for all_to_all/send_recv)
  double latency_s = 0;  ///< sum over phases of NCCL's latency term [s]
  double bandwidth_s =
      0;  ///< max over links of bytes / (efficiency × capacity × protocol factor), summed over phases [s]
  double seconds() const { return latency_s + bandwidth_s; }
};

/// NCCL per-protocol latencies [us] for the Ring algorithm, from NVIDIA/nccl
/// src/graph/tuning.cc (v2.19/2.20, 2023, commit b6475625): baseLat Ring {LL 6.6, LL128 14.0,
/// Simple 8.4}; hwLat Ring NVLink {0.6, 1.9, 3.4}, PCI {1.0, 2.5, 5.7}, NET {2.7, 4.0, 14.0};
/// per inter-node step at least the network post overhead 1 us (x3 for Simple; Intel CPU value).
struct NcclLatencyUs {
  static constexpr std::array<double, 3> base_ring{6.6, 14.0, 8.4};
  static constexpr std::array<double, 3> nvlink_ring{0.6, 1.9, 3.4};
  static constexpr std::array<double, 3> pci_ring{1.0, 2.5, 5.7};
  static constexpr std::array<double, 3> net_ring{2.7, 4.0, 14.0};
  static constexpr double net_overhead = 1.0;
};

/// Achievable fraction of line rate per link type: NCCL's own per-link bandwidth assumptions in
/// NVIDIA/nccl src/graph/topo.h (2.19+): SM70/SM80_NVLINK_BW 20.0 GB/s per 25 GB/s NVLink2/3
/// link -> 0.80; SM90_NVLINK_BW 20.6 per 25 GB/s NVLink4 link -> 0.824; SM100_NVLINK_BW 40.1 per
/// 50 GB/s NVLink5 link -> 0.802; PCI_BW 12.0 GB/s for PCIe gen3 x16 (15.75 GB/s) -> 0.762;
/// NET_BW 12.0 GB/s for a 100 Gb/s (12.5 GB/s) NIC -> 0.96 (used for NICs and fabric links).
/// xGMI (AMD mesh): no NCCL figure; 0.80 assumed like NVLink. Not fitted to any measurement.
struct LinkEfficiency {
  static constexpr double nvlink_gen2_3 = 20.0 / 25.0;
  static constexpr double nvlink_gen4 = 20.6 / 25.0;
  static constexpr double nvlink_gen5 = 40.1 / 50.0;
  static constexpr double xgmi = 0.80;
  static constexpr double pcie = 12.0 / (8.0 * 16 * 128.0 / 130.0 / 8.0);  // 12 / 15.754 (gen3 x16)
  static constexpr double network = 12.0 / 12.5;
};

class CollectiveListener {
 public:
  virtual ~CollectiveListener() = default;
  virtual void on_collective_done(std::uint64_t tag) = 0;
};

class CollectiveEngine : public sim::FlowListener, public sim::EventHandler {
 public:
  /// sim, net and cluster must outlive the engine; cluster must be built on net.
  CollectiveEngine(sim::Simulator& sim, sim::FlowNetwork& net, const Cluster& cluster);
  CollectiveEngine(const CollectiveEngine&) = delete;
  CollectiveEngine& operator=(const CollectiveEngine&) = delete;

  /// Starts now; tells `listener` (may be null) with `tag` when every rank has its result.
  /// A single-rank group completes immediately (after zero time, via an event).
  /// Throws std::invalid_argument for an empty group, duplicate ranks, ranks out of range,
  /// bytes < 0 or not finite, send_recv without exactly 2 ranks. Messages, e.g.:
  /// "collective: empty group", "collective: duplicate rank 3",
  /// "collective: rank 17 outside [0, 16)", "collective: bytes must be finite and >= 0 (got -1)",
  /// "collective: send_recv needs exactly 2 ranks (got 3)".
  void start(const CollectiveCall& call, CollectiveListener* listener, std::uint64_t tag);

  /// Closed-form prediction of start()'s duration for `call` alone on an idle network, and
  /// what it would run. Same errors as start(). Plans are cached per (op, algorithm, ranks).
  CollectiveChoice choose(const CollectiveCall& call) const;
  /// choose(call).seconds(): predicted time [s], for algorithm choice and planners.
  double estimate_seconds(const CollectiveCall& call) const { return choose(call).seconds(); }

  /// busbw factor of nccl-tests for op over n ranks (n >= 1): all_reduce 2(n-1)/n;
  /// all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce, send_recv 1.
  static double busbw_factor(CollectiveOp op, int n);

  /// Efficiency applied to resource r (LinkEfficiency by the cluster's link kind).
  double efficiency(sim::ResourceId r) const;
  /// Collectives started and not yet reported done.
  std::size_t active() const { return in_flight_; }

  void on_flow_complete(sim::FlowId flow, std::uint64_t tag) override;
  void on_event(std::uint64_t tag) override;

 private:
  struct FlowTemplate {
    std::span<const sim::ResourceId> path;
    double byte_fraction = 0;    // flow bytes = byte_fraction × call.bytes
    double cap_bytes_per_s = 0;  // rate cap before the protocol factor
  };
  struct Phase {
    std::uint32_t first_flow = 0;
    std::uint32_t num_flows = 0;
    std::array<double, 3> latency_s{};  // per protocol
    double seconds_per_byte = 0;        // bottleneck time per byte of call.bytes at protocol factor 1
  };
  struct Plan {
    CollectiveOp op{};
    CollectiveAlgorithm algorithm{};
    std::vector<int> ranks;
    int channels = 1;
    int num_nodes = 1;
    std::vector<Phase> phases;
    std::vector<FlowTemplate> flows;
    bool ll128_allowed = false;
    bool hierarchical_ok = false;  // all_reduce, > 1 node, same p > 1 GPUs on every node
  };
  struct Active {
    const Plan* plan = nullptr;
    CollectiveListener* listener = nullptr;
    std::uint64_t tag = 0;
    double bytes = 0;
    std::uint32_t pending = 0;
    std::uint8_t phase = 0;
    std::uint8_t protocol = 0;
  };

  void validate(const CollectiveCall& call) const;
  const Plan& plan_for(CollectiveOp op, CollectiveAlgorithm algorithm, std::span<const int> ranks) const;
  void build_plan(Plan& plan) const;
  void finish_phase(Plan& plan, Phase& phase, std::span<const std::pair<int, int>> edges,
                    std::span<const double> fractions) const;
  std::array<double, 3> ring_latency_s(CollectiveOp op, int n, int nodes) const;
  CollectiveChoice evaluate(const Plan& plan, double bytes) const;
  CollectiveChoice choose_plan(const CollectiveCall& call, const Plan** plan) const;
  static double protocol_factor(CollectiveProtocol p, CollectiveOp op, int nodes);
  void start_phase(std::uint32_t slot);
  void release(std::uint32_t slot);

  sim::Simulator& sim_;
  sim::FlowNetwork& net_;
  const Cluster& cluster_;

  // Plan cache: hash of (op, algorithm, ranks) -> indices into plans_ (deque: stable addresses).
  mutable std::deque<Plan> plans_;
  mutable std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> plan_index_;
  // Scratch reused by plan building and validation.
  mutable std::vector<std::uint32_t> rank_stamp_;
  mutable std::uint32_t stamp_ = 0;
  mutable std::vector<double> load_scratch_;
  mutable std::vector<std::uint32_t> count_scratch_;
  mutable std::vector<sim::ResourceId> touched_scratch_;

  // Collectives in flight: slots reused through a free list.
  std::vector<Active> active_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t in_flight_ = 0;
};

}  // namespace traincast::models
