#pragma once
// The collectives runner: NCCL-semantics collectives executed as flows on the FlowNetwork plus
// per-step latency, from a cached plan per (op, algorithm, ranks), host copies and copy-engine
// copies between GPUs.
// Sizes follow nccl-tests: `bytes` is the per-rank buffer size as nccl-tests prints it
// (all_reduce: the buffer; all_gather: the gathered output per rank; reduce_scatter: the input
// per rank; send_recv: the message; all_to_all: the send buffer per rank, S/n to each peer;
// broadcast/reduce: the buffer). busbw factors: DESIGN.md §4.3.
//
// Model (derivations: collective_plans.cc for the flows, nccl_tuning.cc for NCCL's tuner):
//  - Every algorithm is CONCURRENT flows on the FlowNetwork, one per edge per channel, each
//    carrying that edge's total bytes (NCCL pipelines in chunks, so in steady state every edge is
//    busy at once and the slowest link bounds the time), then a latency term from NCCL's tuning
//    model (src/graph/tuning.cc, 2.24-2.26 tables: base + per-step latencies per algorithm and
//    protocol). time = latency + bytes / bandwidth, as NCCL's tuner predicts it.
//  - ring (all_reduce, all_gather, reduce_scatter, broadcast, reduce): one node: one ring in rank
//    order (NVSwitch) or one ring per stride coprime with n on a full mesh. Several nodes: the
//    channels of NCCL's ring graph search (nccl_topo_search.h: ncclTopoCompute over the node's
//    routes at the release's speed arrays, one search per group shape): each channel's GPU
//    order inside every node and the NIC it enters and leaves each node through (PXN from
//    Cluster::route).
//    Edge bytes: all_reduce 2(n-1)/n S/C, all_gather/reduce_scatter (n-1)/n S/C, broadcast/reduce
//    S/C on the n-1 chain edges from/to the root = ranks[0].
//  - tree (all_reduce, > 1 node; NCCL Tree): comm->nChannels channels (see channel counts), each on
//    one of NCCL's two
//    complementary binary trees over the nodes (ncclGetDtree: mirror for even, shift for odd
//    node counts); inside a node a chain in the channel's order from the GPU it enters at. Each tree edge
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
//  - nvls_tree (all_reduce, > 1 node, NVSwitch NVLink4+): NVLS inside each node, and per ring
//    graph channel a double binary tree across nodes between the channels' head GPUs (S/C up and down per tree edge).
//    busbw at most heads x NCCL's perChMaxNVLSTreeBw (Hopper 57.7 GB/s on 2 nodes, 45.5 on more;
//    Blackwell 96.0 / 80.0), heads = one per graph channel, at most the GPUs of a node.
//  - NVLS and NVLS tree pipeline chunks (NcclNvlsChunking, nccl_tuning.h): after the flows, the
//    pipeline's fill, a fitted number of chunk times of one of the 16 x heads lanes at its own
//    stages (nvls_lane_seconds_per_byte), with NCCL's chunk for the size (calcCollChunking:
//    32-128 KiB), is added to the latency. NCCL's tuner has no such
//    term; the choice counts it (CollectiveChoice::tuner_pipeline_fill_s) so that a faster link
//    never switches to an NVLS tree that is slower.
//  - hierarchical (all_reduce, every node holding the same p > 1 group GPUs, > 1 node; only when
//    forced: NCCL has no such algorithm, so the automatic choice never takes it):
//    intra-node reduce-scatter, then p concurrent inter-node all-reduces of S/p (one per local
//    position, over its rail), then intra-node all-gather; each phase pays its own latency.
//  - all_to_all: direct, one flow of S/n per ordered pair; send_recv: one flow on the route.
//    Inside one node both follow NCCL's p2p planner (nccl_p2p.h): the protocol by size (LL up to
//    p2pnChannelsPerPeer x 16 KiB per peer, else Simple; the tuner is not asked), each peer's
//    parts on the p2p channels round by round, and the busiest channel at one channel's rate (the
//    ring graph's bwIntra / 2) bounds the time when it is slower than the links. Across nodes:
//    one concurrent exchange at the tuner's protocol.
//  - Achievable bandwidth: each flow is capped so that the flows of one collective together get
//    at most efficiency(link type) x capacity on every link, times the protocol's bandwidth
//    factor (and NCCL's tree correction factor for medium tree sizes). Across nodes NCCL's
//    per-channel maxima cap ring LL128 (perChMaxRingLL128Bw) and tree (perChMaxTreeBw,
//    perChMaxTreeLL128Bw) busBw at graph channels x the figure (graph channels: the search's,
//    after NCCL's ncclTopoDupChannels rule); a tree over nodes holding one GPU each
//    pays NCCL's x0.85 (pattern TREE). LL (ring and tree) moves
//    at most NCCL's llMaxBw of busBw (one node: by GPU generation; across nodes: by CPU vendor). A GPU's own PCIe link
//    loaded in both directions by one phase is also bounded in sum: up + down <= the profile's
//    pcie_duplex_efficiency x capacity (default 2 x the PCIe efficiency: no extra bound).
//  - channel counts (ClusterSpec::collectives min_channels / max_channels, NCCL_MIN_NCHANNELS /
//    NCCL_MIN_CTAS and NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS): across nodes NCCL runs a collective
//    on comm->nChannels channels: the graph's channels, doubled (ncclTopoPostset), doubled again
//    on Hopper+ when a channel carries > 45 GB/s and fewer than 16 run, then cut to max_channels
//    (the first ones kept) and copied up to min_channels. Channel c runs graph channel
//    (c mod channels-after-max) mod graph channels, a copy of search channel (that mod the
//    search's channels); the data splits evenly over the channels, so a search channel carries
//    (its channels / nChannels) of the ring's bytes (24 channels over 8 search channels: 3 each,
//    as the default 16: 2 each; 20: 3 on channels 0-3, 2 on 4-7, so 0-3 bound the time), and a
//    search channel with no channel carries nothing. NCCL's
//    tuner reads comm->nChannels only in the ring Simple plateau test (bytes / (nChannels x ranks)
//    >= 64); its bandwidths and per-channel maxima use the graph's channels, which neither setting
//    changes. The tree across nodes runs the same channels (connectTrees): channel c is tree 0
//    when (c mod channels-after-max) mod 2G < G (G: graph channels), else tree 1, on graph
//    channel that mod G; a tree on one node keeps one chain when max_channels is 1. NVLS, PAT
//    and one-node rings: unchanged.
//  - calibration (ClusterSpec::profile, models/calibration/calibration_profile.h): its link efficiencies
//    replace LinkEfficiency, its latency_scale multiplies every latency term, and a CollectiveFit
//    for the call's (op, group size) scales that call's latency and bandwidth and multiplies its
//    time by the fit's size correction (in choose() and in the simulated flows alike).
//  - automatic: the algorithm and protocol with the least estimate_seconds(), as NCCL's tuner.
//    A call's algorithm, else ClusterSpec::collectives (NCCL_ALGO / NCCL_PROTO), forces them;
//    a forced algorithm (or protocol) that cannot run the call is refused, as NCCL refuses it
//    ("no algorithm/protocol available"): std::invalid_argument naming
//    cluster.collectives.algorithm (or .protocol), the op and why, after the field's
//    "file:line:col" (or "--set") when the scenario loader recorded it (CollectiveSpec
//    algorithm_origin / protocol_origin). The check needs the op and the group, so it runs when the
//    collective is issued, not when the scenario is loaded.

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/calibration/calibration_profile.h"
#include "models/collectives/collective_plan.h"
#include "models/collectives/collective_plans.h"
#include "models/collectives/nccl_tuning.h"
#include "models/hardware/cluster.h"
#include "models/spec/collective_op.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::all_reduce;
  std::vector<int> ranks;  ///< GPU ids in rank order; send_recv: {src, dst}; broadcast/reduce root = ranks[0]
  double bytes = 0;        ///< >= 0, nccl-tests size (see above)
  /// automatic: least predicted time (or the cluster's forced NCCL_ALGO); others force it when it
  /// applies to the call (see the model above), else automatic.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic;
  /// all_to_all of a MoE layer: flat (default) or DeepEP's deduplicated dispatch
  /// (models/collectives/moe_dispatch.h); kind deepep only with all_to_all.
  MoeDispatch moe{};
};

// CollectiveChoice (what the engine would run, and its closed-form time), NcclLatencyUs,
// LinkEfficiency, algorithm_name and protocol_name: models/collectives/nccl_tuning.h.

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

  /// What start() decides for one call before it starts flows: the plan, the algorithm and
  /// protocol NCCL's tuner picks, and the size. A pure function of the call (plans are built once
  /// and never change), so a caller that starts the same call many times (the op-graph runner: a
  /// tensor-parallel group's all-gathers, every micro-batch) prepares it once.
  struct Prepared {
    const CollectivePlan* plan = nullptr;  ///< null for a one-rank group
    CollectiveChoice choice;
    double bytes = 0;
    /// Its flows' rate caps' factor (protocol, channel share and fit; a function of the plan, the
    /// protocol and the size alone), computed here once rather than at every phase's start and
    /// end; 0 when no flow starts (one rank, no bytes, or no phase with flows).
    double flow_factor = 0;
    /// The share of the comm's channels NCCL keeps at this size (nccl_channel_share; 1 when
    /// nothing is cut or no flow starts): it scales the node's links' caps, not a spine's.
    double channel_share = 1.0;
  };
  /// Validates `call` and chooses as start() does. Same errors as start().
  Prepared prepare(const CollectiveCall& call) const;
  /// start() of the call `prepared` was made from: the same flows, events and timing.
  void start(const Prepared& prepared, CollectiveListener* listener, std::uint64_t tag);

  /// Closed-form prediction of start()'s duration for `call` alone on an idle network, and
  /// what it would run. Same errors as start(). Plans are cached per (op, algorithm, ranks).
  CollectiveChoice choose(const CollectiveCall& call) const;
  /// Thread blocks (CTAs) the call's NCCL kernel launches on each GPU of the group: one per
  /// channel (NVIDIA/nccl src/enqueue.cc ncclLaunchKernel: "int nChannels =
  /// countOneBits(plan->channelMask); dim3 grid = {(unsigned)nChannels, 1, 1};"), each resident
  /// on one SM for the kernel's whole run (NCCL's blocks take up to 640 threads and its shared
  /// memory, so a compute kernel's CTA does not share the SM). Channels: rings and trees across
  /// nodes, comm->nChannels of the ring graph (CollectivePlan::comm_channels, the tree shares
  /// the ring's channels); on one node, the ring graph searched on the node (nccl_topo_search.h),
  /// doubled by ncclTopoPostset (at most MAXCHANNELS), then NCCL_MAX/MIN_NCHANNELS; NVLS and
  /// NVLS tree, NCCL_NVLS_NCHANNELS (NcclNvlsChunking::nvls_channels, 16); all-to-all and
  /// send/recv inside one node, the channels NCCL's p2p planner puts work on (p2p_plan_at's
  /// busy_channels); across nodes, send/recv NCCL's 2 channels per network peer
  /// (NCCL_NCHANNELS_PER_NET_PEER, 2.12-2.19 default, src/graph/paths.cc) and all-to-all the
  /// group's ring channels. Rings, trees and PAT below NCCL's size thresholds: the channels it
  /// keeps (nccl_channel_cut, nccl_tuning.h).
  /// 0 for a one-rank group (no kernel). Same errors as start().
  int kernel_ctas(const CollectiveCall& call) const;
  /// choose(call).seconds(): predicted time [s], for algorithm choice and planners.
  double estimate_seconds(const CollectiveCall& call) const { return choose(call).seconds(); }

  /// busbw factor of nccl-tests for op over n ranks (n >= 1): all_reduce 2(n-1)/n;
  /// all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce, send_recv 1
  /// (models::busbw_factor, nccl_tuning.h).
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

  /// Copy-engine copies between GPUs (cudaMemcpyAsync from a peer's memory: PyTorch async TP's
  /// symmetric-memory pulls, torch/distributed/_symmetric_memory `copy_shard`): for every pair
  /// (src, dst) of `pairs` one flow of `bytes_per_pair` from src to dst on Cluster::route(src, dst),
  /// all at once, no SM and no NCCL protocol, each capped at its share of every link's copy-engine
  /// rate: kCopyEngineNvlinkEfficiency x capacity on NVLink, efficiency(r) x capacity elsewhere (a
  /// PCIe peer path), over the pairs of the call whose route crosses the link (as host copies
  /// share theirs). Other traffic on those links shares them through the network. Copy latency
  /// (a few us per cudaMemcpyAsync) is not charged, as for host copies. Tells `listener` with
  /// `tag` when every pair's flow is done. Throws std::invalid_argument for no pairs, bytes < 0 or
  /// not finite, or src == dst; std::out_of_range for a GPU outside the cluster.
  struct PeerCopy {
    std::vector<std::span<const sim::ResourceId>> paths;  ///< per pair: Cluster::route(src, dst)
    std::vector<double> caps_bytes_per_s;                 ///< per pair: its rate cap
  };
  /// The flows and caps of start_peer_copy(pairs, ...), a pure function of the pairs (a caller
  /// that starts the same copy many times prepares it once). Same errors as start_peer_copy.
  PeerCopy prepare_peer_copy(std::span<const std::pair<int, int>> pairs) const;
  void start_peer_copy(const PeerCopy& copy, double bytes_per_pair, CollectiveListener* listener, std::uint64_t tag);
  /// Closed-form time of start_peer_copy() on an idle network [s]: bytes / the slowest cap.
  double peer_copy_seconds(std::span<const std::pair<int, int>> pairs, double bytes_per_pair) const;
  /// peer_copy_seconds() of the one pair (src, dst).
  double peer_copy_seconds(int src, int dst, double bytes) const {
    const std::pair<int, int> pair{src, dst};
    return peer_copy_seconds(std::span<const std::pair<int, int>>(&pair, 1), bytes);
  }
  /// Copy engines' achievable fraction of one NVLink direction, measured: nvbandwidth on 8 x H800
  /// SXM5 (../shared/data/memory-bandwidth/nvbandwidth_h800_8gpu.csv, from liguodongiot/llm-action),
  /// device_to_device_bidirectional_memcpy_read_ce (each GPU pulls from a peer while that peer
  /// pulls from it, as every TP rank does in one async-TP step): median 170.54 GB/s over the 56
  /// pairs, of the H800's 200 GB/s per direction (8 NVLink4 links x 25 GB/s, catalog). The one-way
  /// read (device_to_device_memcpy_read_ce) gives 172.17 GB/s (0.861). Cross-check on H100 SXM5
  /// (18 links, 450 GB/s): p2pBandwidthLatencyTest (cudaMemcpyPeerAsync, copy engines) in
  /// NVIDIA/nccl#1264 gives 371-380 GB/s one way (0.82-0.84) and 740-749 GB/s both ways (0.82-0.83
  /// per direction): 2-4 % below this figure. Not measured here on NVLink3 (A100) or NVLink5.
  static constexpr double kCopyEngineNvlinkEfficiency = 170.54 / 200.0;

  /// Collectives started and not yet reported done.
  std::size_t active() const { return in_flight_; }
  /// Plans built and cached so far (every algorithm the tuner priced, and those forced).
  std::size_t plans_built() const { return plans_.size(); }
  /// Whether the tuner may skip building a PAT plan it cannot choose (on by default): before it
  /// builds one for an all_gather / reduce_scatter, it prices PAT from a lower bound on its time
  /// (pat_tuner_seconds_per_byte_floor, collective_plans.h) and builds nothing when that bound
  /// already is no faster than the best algorithm priced so far. The choice, the plan run and
  /// every output are the same either way; off is the oracle of the tests.
  void set_pat_price_floor(bool on) { pat_price_floor_ = on; }

  void on_flow_complete(sim::FlowId flow, std::uint64_t tag) override;
  void on_event(std::uint64_t tag) override;

 private:
  struct Active {
    const CollectivePlan* plan = nullptr;
    CollectiveListener* listener = nullptr;
    std::uint64_t tag = 0;
    double bytes = 0;
    double flow_factor = 0;    ///< Prepared::flow_factor of its call
    double channel_share = 1;  ///< Prepared::channel_share of its call
    std::uint32_t pending = 0;
    std::uint8_t phase = 0;
    std::uint8_t protocol = 0;
  };

  void validate(const CollectiveCall& call) const;
  /// The cached plan of (op, algorithm, ranks), built (collective_plans.h) on first use.
  /// moe: all_to_all's dispatch kind (part of the key; flat for every other op).
  const CollectivePlan& plan_for(CollectiveOp op, CollectiveAlgorithm algorithm, std::span<const int> ranks,
                                 const MoeDispatch& moe = {}) const;
  /// The cached plan of (op, algorithm, ranks, moe); find_only: null when none is cached, else
  /// built and cached when missing.
  const CollectivePlan* cached_plan(CollectiveOp op, CollectiveAlgorithm algorithm, std::span<const int> ranks,
                                    const MoeDispatch& moe, bool find_only) const;
  /// The cached plan of (op, algorithm, ranks) with the flat dispatch, or null; builds nothing.
  const CollectivePlan* find_plan(CollectiveOp op, CollectiveAlgorithm algorithm, std::span<const int> ranks) const;
  /// Fills `plan` for (op, algorithm, ranks, moe) as plan_for caches it (build_plan, the profile's
  /// fit, NCCL's channels); pat_floor_only: PlanInputs::pat_floor_only.
  void build_and_finish(CollectivePlan& plan, CollectiveOp op, CollectiveAlgorithm algorithm,
                        std::span<const int> ranks, const MoeDispatch& moe, bool pat_floor_only) const;
  /// true when the tuner provably would not choose PAT for `call` over `best` (the best choice
  /// priced so far) and no PAT plan of the call is cached (set_pat_price_floor).
  bool pat_cannot_win(const CollectiveCall& call, const CollectiveChoice& best) const;
  CollectiveChoice choose_plan(const CollectiveCall& call, const CollectivePlan** plan) const;
  /// Sets plan.nccl_channels and ring_simple_threads (ring, tree, PAT; CollectivePlan).
  void set_nccl_channels(CollectivePlan& plan) const;
  void start_phase(std::uint32_t slot);
  void release(std::uint32_t slot);

  sim::Simulator& sim_;
  sim::FlowNetwork& net_;
  const Cluster& cluster_;

  // Plan cache: hash of (op, algorithm, ranks) -> indices into plans_ (deque: stable addresses).
  mutable std::deque<CollectivePlan> plans_;
  mutable std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> plan_index_;
  // Scratch reused by plan building and validation.
  mutable std::vector<std::uint32_t> rank_stamp_;
  mutable std::uint32_t stamp_ = 0;
  mutable PlanScratch plan_scratch_;
  bool pat_price_floor_ = true;  ///< set_pat_price_floor

  // Collectives in flight: slots reused through a free list.
  std::vector<Active> active_;
  std::vector<std::uint32_t> free_slots_;
  /// A free (reset) slot in active_, reusing finished ones.
  std::uint32_t acquire_slot();
  std::size_t in_flight_ = 0;
};

}  // namespace traincast::models
