#pragma once
// NCCL-semantics collectives executed as flows on the FlowNetwork plus per-step latency.
// Sizes follow nccl-tests: `bytes` is the per-rank buffer size as nccl-tests prints it
// (all_reduce: the buffer; all_gather: the gathered output per rank; reduce_scatter: the input
// per rank; send_recv: the message; all_to_all: the send buffer per rank, S/n to each peer;
// broadcast/reduce: the buffer). busbw factors: DESIGN.md §4.3.
//
// Model (see collective.cc for the derivations):
//  - Every algorithm is CONCURRENT flows on the FlowNetwork, one per edge per channel, each
//    carrying that edge's total bytes (NCCL pipelines in chunks, so in steady state every edge is
//    busy at once and the slowest link bounds the time), then a latency term from NCCL's tuning
//    model (src/graph/tuning.cc, 2.24-2.26 tables: base + per-step latencies per algorithm and
//    protocol). time = latency + bytes / bandwidth, as NCCL's tuner predicts it.
//  - ring (all_reduce, all_gather, reduce_scatter, broadcast, reduce): one node: one ring in rank
//    order (NVSwitch) or one ring per stride coprime with n on a full mesh. Several nodes: one
//    channel per NIC of the group's GPUs (the rails, NodeTemplate's GPU-NIC rule); channel c's
//    ring enters every node at the GPU that owns rail c and crosses each node boundary through
//    that NIC (NCCL's rail-aligned rings; PXN from Cluster::route).
//    Edge bytes: all_reduce 2(n-1)/n S/C, all_gather/reduce_scatter (n-1)/n S/C, broadcast/reduce
//    S/C on the n-1 chain edges from/to the root = ranks[0].
//  - tree (all_reduce, > 1 node; NCCL Tree): per rail two channels, one on each of NCCL's two
//    complementary binary trees over the nodes (ncclGetDtree: mirror for even, shift for odd
//    node counts); inside a node a chain from the rail's GPU through the others. Each tree edge
//    carries S/C up (reduce) and S/C down (broadcast) at once: a GPU inside a chain sends 2 S in
//    total (NCCL's algbw = busbw / 2).
//  - nvls (all_reduce, one node, NVSwitch with NVLink4+): NVLink SHARP: each GPU sends its buffer
//    to the switch for reduction and S/n of results back for multicast: S (1 + 1/n) per port per
//    direction, at the NVLink efficiency x NCCL's nvlsEfficiency (Hopper 0.85, Blackwell 0.74).
//    all_gather: S/n up (own chunk, multicast by the switch) and S down per port; reduce_scatter:
//    S up (read by the switch's reductions) and S/n down (one node only, as NCCL).
//  - pat (all_gather, reduce_scatter; one GPU per node, NCCL 2.23+): reversed-dimension Bruck:
//    each rank sends #{j < n : lowbit(j) = 2^k} chunks of S/n to the rank 2^k away (all_gather
//    +2^k, reduce_scatter -2^k), over its NICs; (n-1)/n S per rank in all; Simple only, NCCL's
//    PAT busBw factor 0.75 and latency 8 + log2(nodes) x 14 / 3.5 + 2.8 n us.
//  - nvls_tree (all_reduce, > 1 node, NVSwitch NVLink4+): NVLS inside each node, and per rail a
//    double binary tree across nodes between the rail's GPUs (S/C up and down per tree edge).
//    busbw at most heads x NCCL's perChMaxNVLSTreeBw (Hopper 57.7 GB/s on 2 nodes, 45.5 on more;
//    Blackwell 96.0 / 80.0), heads = one per rail, at most the GPUs of a node.
//  - hierarchical (all_reduce, every node holding the same p > 1 group GPUs, > 1 node):
//    intra-node reduce-scatter, then p concurrent inter-node all-reduces of S/p (one per local
//    position, over its rail), then intra-node all-gather; each phase pays its own latency.
//  - all_to_all: direct, one flow of S/n per ordered pair; send_recv: one flow on the route.
//  - Achievable bandwidth: each flow is capped so that the flows of one collective together get
//    at most efficiency(link type) x capacity on every link, times the protocol's bandwidth
//    factor (and NCCL's tree correction factor for medium tree sizes). Across nodes NCCL's
//    per-channel maxima cap ring LL128 (perChMaxRingLL128Bw) and tree (perChMaxTreeBw,
//    perChMaxTreeLL128Bw) busBw at graph channels x the figure (graph channels: one per NIC
//    rail, doubled by NCCL's ncclTopoDupChannels rule); a tree over nodes holding one GPU each
//    pays NCCL's x0.85 (pattern TREE). LL (ring and tree) moves
//    at most NCCL's llMaxBw of busBw (one node: by GPU generation; across nodes: by CPU vendor). A GPU's own PCIe link
//    loaded in both directions by one phase is also bounded in sum: up + down <= the profile's
//    pcie_duplex_efficiency x capacity (default 2 x the PCIe efficiency: no extra bound).
//  - channel counts (ClusterSpec::collectives min_channels / max_channels, NCCL_MIN_NCHANNELS /
//    NCCL_MIN_CTAS and NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS): across nodes NCCL runs a collective
//    on comm->nChannels channels: the graph's channels, doubled (ncclTopoPostset), doubled again
//    on Hopper+ when a channel carries > 45 GB/s and fewer than 16 run, then cut to max_channels
//    (the first ones kept) and copied up to min_channels. Channel c runs graph channel
//    (c mod channels-after-max) mod graph channels, whose NIC is rail (that mod rails); the data
//    splits evenly over the channels, so a ring's rail carries (its channels / nChannels) of the
//    ring's bytes (24 channels over 8 rails: 3 each, as the default 16: 2 each; 20: 3 on rails 0-3,
//    2 on 4-7, so rails 0-3 bound the time), and a rail with no channel carries nothing. NCCL's
//    tuner reads comm->nChannels only in the ring Simple plateau test (bytes / (nChannels x ranks)
//    >= 64); its bandwidths and per-channel maxima use the graph's channels, which neither setting
//    changes. Only the ring across nodes is modelled (tree, NVLS, PAT and one node: unchanged).
//  - calibration (ClusterSpec::profile, models/calibration_profile.h): its link efficiencies
//    replace LinkEfficiency, its latency_scale multiplies every latency term, and a CollectiveFit
//    for the call's (op, group size) scales that call's latency and bandwidth and multiplies its
//    time by the fit's size correction (in choose() and in the simulated flows alike).
//  - automatic: the algorithm and protocol with the least estimate_seconds(), as NCCL's tuner.
//    A call's algorithm, else ClusterSpec::collectives (NCCL_ALGO / NCCL_PROTO), forces them;
//    a forced algorithm that cannot run the call falls back to automatic.

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "models/calibration_profile.h"
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
  /// automatic: least predicted time (or the cluster's forced NCCL_ALGO); others force it when it
  /// applies to the call (see the model above), else automatic.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic;
};

/// What the engine would run for a call, and its closed-form time (no simulation).
struct CollectiveChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;  ///< resolved (never automatic)
  CollectiveProtocol protocol = CollectiveProtocol::simple;
  int channels = 1;      ///< parallel rings/trees (1 for all_to_all/send_recv)
  double latency_s = 0;  ///< sum over phases of NCCL's latency term [s]
  /// Sum over phases of max over links of bytes / (efficiency x capacity x protocol factor) [s].
  double bandwidth_s = 0;
  /// Kind of the link that bounds the bandwidth term (of the phase with the largest one);
  /// LinkKind::other when nothing moves.
  LinkKind bottleneck = LinkKind::other;
  /// true when that bound is a GPU PCIe link's both-direction budget (pcie_duplex_efficiency).
  bool bottleneck_duplex = false;
  /// Of the phase with the largest bandwidth term: its time per byte of `bytes` at protocol
  /// factor 1 and without a CollectiveFit's scales [s/byte]; and the largest (bytes up + bytes
  /// down) / line rate over the GPU PCIe links it loads in both directions [s/byte] (the
  /// both-direction time at a budget of 1; 0 when no GPU PCIe link carries traffic both ways).
  double link_seconds_per_byte = 0;
  double duplex_load_seconds_per_byte = 0;
  double seconds() const { return latency_s + bandwidth_s; }
};

/// NCCL's latency model [us], NVIDIA/nccl src/graph/tuning.cc (2.24-2.26): baseLat Tree {LL 6.8,
/// LL128 14.0, Simple 8.4}, Ring {6.6, 14.0, 8.4}, NVLS/NVLSTree 0; hwLat NVLink: Tree {.6, 1.25,
/// 4.0}, Ring {.6, 1.9, 3.4}, NVLS 25, NVLSTree 25; PCI: Tree {1.0, 1.9, 4.0}, Ring {1.0, 2.5,
/// 5.7}; NET: Tree {5.0, 8.5, 14}, Ring {2.7, 4.0, 14.0}, NVLS 18, NVLSTree 14. Network post
/// overhead 1 us per inter-node ring step (x3 for Simple; Intel CPU value). Ring Simple all_reduce
/// across nodes: latency x 1.4 (NCCL's "plateau effect of ring", compute capability >= 8.0).
/// Ring steps across nodes: 2 (nodes - 1) for all_reduce, nodes - 1 for all_gather and
/// reduce_scatter, each at the NET Ring figure, or the NET Tree figure when the group has one GPU
/// per node ("with ppn=1 latencies are fully exposed", tuning.cc of the PAT releases).
struct NcclLatencyUs {
  static constexpr std::array<double, 3> base_ring{6.6, 14.0, 8.4};
  static constexpr std::array<double, 3> base_tree{6.8, 14.0, 8.4};
  static constexpr std::array<double, 3> nvlink_ring{0.6, 1.9, 3.4};
  static constexpr std::array<double, 3> pci_ring{1.0, 2.5, 5.7};
  static constexpr std::array<double, 3> net_ring{2.7, 4.0, 14.0};
  static constexpr std::array<double, 3> nvlink_tree{0.6, 1.25, 4.0};
  static constexpr std::array<double, 3> pci_tree{1.0, 1.9, 4.0};
  static constexpr std::array<double, 3> net_tree{5.0, 8.5, 14.0};
  static constexpr double nvlink_nvls = 25.0;
  static constexpr double nvlink_nvls_tree = 25.0;
  static constexpr double net_nvls_tree = 14.0;
  static constexpr double net_overhead = 1.0;
  static constexpr double ring_plateau = 1.4;
  /// PAT (NCCL 2.23+ tuning.cc): baseLat 8.0; hwLat NET PAT Simple 14; latency = 8.0 +
  /// log2i(nNodes) x 14 / 3.5 + nRanks x 2.8.
  static constexpr double base_pat = 8.0;
  static constexpr double net_pat = 14.0;
  static constexpr double pat_log_divisor = 3.5;
  static constexpr double pat_per_rank = 2.8;
};

/// Achievable fraction of line rate per link type: NCCL's own per-link bandwidth assumptions in
/// NVIDIA/nccl src/graph/topo.h (2.19+): SM70/SM80_NVLINK_BW 20.0 GB/s per 25 GB/s NVLink2/3
/// link -> 0.80; SM90_NVLINK_BW 20.6 per 25 GB/s NVLink4 link -> 0.824; SM100_NVLINK_BW 40.1 per
/// 50 GB/s NVLink5 link -> 0.802; PCI_BW 12.0 GB/s for PCIe gen3 x16 (15.75 GB/s) -> 0.762;
/// NET_BW 12.0 GB/s for a 100 Gb/s (12.5 GB/s) NIC -> 0.96 (used for NICs and fabric links);
/// socket links: the catalog already holds NCCL's achievable figure -> 1.0.
/// xGMI (AMD mesh): no NCCL figure; 0.80 assumed like NVLink. NVLS: NCCL's nvlsEfficiency
/// (src/graph/tuning.cc 2.23+: Hopper 0.85, Blackwell 0.74) on top of the NVLink figure.
/// Not fitted to any measurement.
struct LinkEfficiency {
  static constexpr double nvlink_gen2_3 = 20.0 / 25.0;
  static constexpr double nvlink_gen4 = 20.6 / 25.0;
  static constexpr double nvlink_gen5 = 40.1 / 50.0;
  static constexpr double xgmi = 0.80;
  static constexpr double pcie = 12.0 / (8.0 * 16 * 128.0 / 130.0 / 8.0);  // 12 / 15.754 (gen3 x16)
  static constexpr double network = 12.0 / 12.5;
  static constexpr double nvls_hopper = 0.85;
  static constexpr double nvls_blackwell = 0.74;
};

/// Where the host buffers of one kind of host copy lie, and which GPUs make that copy at the same
/// time (every rank's optimizer-offload copy, every replica's input batch): socket_of_gpu[g] is the
/// CPU socket of GPU g's node whose memory holds g's buffer, -1 when g makes no such copy. Empty:
/// every GPU of the cluster copies, each to/from its own socket (Cluster::socket_of_gpu), as
/// ZeRO-Offload's pinned buffers do.
struct HostBuffers {
  std::vector<int> socket_of_gpu;
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
  /// The network the collectives run on (for other traffic that shares it, e.g. host copies).
  sim::FlowNetwork& network() const { return net_; }
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
  /// Default efficiency of a link kind (LinkEfficiency; NVLink by the cluster's GPU generation),
  /// before any profile.
  double default_efficiency(LinkKind kind) const;
  /// Both-direction budget of GPU PCIe resource r (up + down, as a fraction of one direction's
  /// capacity): the profile's pcie_duplex_efficiency, else 2 x efficiency(r).
  double duplex_efficiency(sim::ResourceId r) const;
  /// Host copies (cudaMemcpyAsync of pinned memory: CPU offload, input batches): every GPU of
  /// `gpus` copies `bytes_per_gpu` to (to_host) or from its host buffer at once, one flow each on
  /// Cluster::host_route from/to the socket `buffers` names for it; tells `listener` with `tag`
  /// when all are done. Each flow is capped at its share of every link's achievable rate (PCIe:
  /// LinkEfficiency::pcie or the profile's fitted one; socket links: 1) x capacity / the node's
  /// GPUs of `buffers` whose host route crosses the link): the copies of one kind run on all those
  /// GPUs at once (data-parallel ranks offload together, replicas load their batches together), so
  /// GPUs under one PCIe switch split its uplink, and GPUs reading another socket's memory split
  /// that socket link. Copy latency (a few us per cudaMemcpyAsync) is not charged: these copies are
  /// MBs and up. Throws std::invalid_argument for an empty list, bytes < 0 or not finite, `buffers`
  /// not empty and not one entry per cluster GPU, or a GPU of `gpus` without a buffer there;
  /// std::out_of_range for a GPU outside the cluster or a socket outside its node.
  void start_host_copy(std::span<const int> gpus, double bytes_per_gpu, bool to_host, CollectiveListener* listener,
                       std::uint64_t tag, const HostBuffers& buffers = {});
  /// Closed-form time of start_host_copy() on an idle network [s]: bytes / the slowest cap.
  double host_copy_seconds(std::span<const int> gpus, double bytes_per_gpu, bool to_host,
                           const HostBuffers& buffers = {}) const;
  /// The rate cap of GPU `gpu`'s host copy [bytes/s] (see start_host_copy).
  double host_copy_rate_cap(int gpu, bool to_host, const HostBuffers& buffers = {}) const;

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
    std::array<double, 3> latency_s{};        // per protocol (before size-dependent adjustments)
    double seconds_per_byte = 0;              // bottleneck time per byte of call.bytes at protocol factor 1
    double nvlink_scale = 1.0;                // extra efficiency on NVLink resources (NVLS)
    bool ring_plateau = false;                // NCCL: ring Simple all_reduce across nodes, latency x 1.4
    LinkKind bottleneck = LinkKind::other;    // kind of the link with the largest time per byte
    bool bottleneck_duplex = false;           // that bound is a GPU PCIe link's both-way budget
    double duplex_load_seconds_per_byte = 0;  // max (up + down) / capacity over both-way GPU PCIe links
  };
  struct Plan {
    CollectiveOp op{};
    CollectiveAlgorithm algorithm{};
    std::vector<int> ranks;
    int channels = 1;
    int num_nodes = 1;
    std::vector<Phase> phases;
    std::vector<FlowTemplate> flows;
    std::array<bool, 3> protocol_allowed{true, true, true};
    bool applicable = true;              // false: the algorithm cannot run this call (plan is empty)
    int rails = 0;                       // > 1 node: the group's NICs on a node (NCCL's graph channels before dup)
    int graph_channels = 0;              // ring across nodes: NCCL's ring graph channels (after dup); else 0
    int comm_channels = 0;               // ring across nodes: NCCL's comm->nChannels; else 0
    bool single_gpu_node = false;        // > 1 node and some node holds one GPU of the group
    const CollectiveFit* fit = nullptr;  // the profile's fit for (op, group size), or null
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
  struct Groups;  // ranks grouped by node (collective.cc)

  void validate(const CollectiveCall& call) const;
  const Plan& plan_for(CollectiveOp op, CollectiveAlgorithm algorithm, std::span<const int> ranks) const;
  void build_plan(Plan& plan) const;
  void build_ring(Plan& plan, const Groups& g) const;
  void build_hierarchical(Plan& plan, const Groups& g) const;
  void build_tree(Plan& plan, const Groups& g, bool nvls) const;
  void build_nvls(Plan& plan, const Groups& g) const;
  void build_pat(Plan& plan, const Groups& g) const;
  void finish_phase(Plan& plan, Phase& phase, std::span<const std::span<const sim::ResourceId>> paths,
                    std::span<const double> fractions) const;
  std::array<double, 3> ring_latency_s(CollectiveOp op, int n, int nodes, bool nvlink) const;
  std::array<double, 3> tree_latency_s(int ppn, int nodes, bool nvlink) const;
  bool all_nvlink(const Groups& g) const;
  double protocol_factor(const Plan& plan, int protocol, double bytes) const;
  double ll_max_factor(const Plan& plan, double factor, double bytes_per_rank) const;
  double nvls_tree_max_factor(const Plan& plan) const;
  int nccl_graph_channels(const Plan& plan) const;
  int nccl_graph_channels_for(double ring_busbw_gb_per_s, int rails) const;
  int nccl_comm_channels(int graph_channels, int rails, double ring_busbw_gb_per_s) const;
  double per_channel_cap_factor(const Plan& plan, double factor, double bytes_per_rank,
                                const std::array<std::array<double, 3>, 4>& per_channel_gb_per_s) const;
  double phase_latency_s(const Plan& plan, const Phase& phase, int protocol, double bytes) const;
  CollectiveChoice evaluate(const Plan& plan, double bytes) const;
  CollectiveChoice choose_plan(const CollectiveCall& call, const Plan** plan) const;
  void start_phase(std::uint32_t slot);
  /// Latency of a phase with the profile applied (profile-wide scale, the plan's fit).
  double calibrated_latency_s(const Plan& plan, const Phase& phase, int protocol, double bytes) const;
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
  /// A free (reset) slot in active_, reusing finished ones.
  std::uint32_t acquire_slot();
  std::size_t in_flight_ = 0;
};

/// NCCL's name of an algorithm ("ring", "tree", "nvls", ...) and of a protocol ("LL", "LL128",
/// "Simple"), as NCCL_ALGO / NCCL_PROTO spell them (lower-case for algorithms). Never throws.
const char* algorithm_name(CollectiveAlgorithm a);
const char* protocol_name(CollectiveProtocol p);

}  // namespace traincast::models
