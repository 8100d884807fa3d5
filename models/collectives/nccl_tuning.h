#pragma once
// NCCL's tuner model (NVIDIA/nccl src/graph/tuning.cc and topo.h): per-protocol and per-algorithm
// latency and bandwidth figures, the graph and comm channel counts, and the protocol of least
// predicted time for a plan. Pure functions of the cluster and the plan.

#include <array>
#include <cstdint>
#include <span>

#include "models/collectives/collective_plan.h"
#include "models/collectives/nccl_versions.h"
#include "models/hardware/cluster.h"
#include "models/spec/collective_op.h"
#include "models/spec/scenario.h"
#include "sim/flow_network.h"

namespace traincast::models {

/// NCCL's protocol indices (NCCL_PROTO_LL 0, NCCL_PROTO_LL128 1, NCCL_PROTO_SIMPLE 2; the order of
/// CollectiveProtocol), as the tuning and chunking code index their per-protocol tables.
inline constexpr int kNcclLl = static_cast<int>(CollectiveProtocol::ll);
inline constexpr int kNcclLl128 = static_cast<int>(CollectiveProtocol::ll128);
inline constexpr int kNcclSimple = static_cast<int>(CollectiveProtocol::simple);

/// NCCL's log2i (src/include/utils.h): floor(log2 n) for n >= 1, 0 for n <= 1.
inline int nccl_log2i(std::int64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

/// What the engine would run for a call, and its closed-form time (no simulation).
struct CollectiveChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;  ///< resolved (never automatic)
  CollectiveProtocol protocol = CollectiveProtocol::simple;
  int channels = 1;  ///< parallel rings/trees (1 for all_to_all/send_recv)
  /// all_to_all / send_recv: NCCL runs them as grouped send/recv (its p2p path), which NCCL_ALGO
  /// and NCCL_PROTO do not govern; `algorithm` then holds the plan's internal ring tag only.
  bool point_to_point = false;
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
  /// The bandwidth term as NCCL's tuner predicts it: every channel of the comm, without the
  /// fabric's switch-to-switch links (CollectivePhase::tuner_seconds_per_byte) [s]. Reported, not
  /// chosen on (choice_seconds).
  double tuner_bandwidth_s = 0;
  /// NVLS / NVLS tree: the chunk pipeline's fill (nvls_pipeline_fill_s), summed over phases [s],
  /// at the bandwidth term (pipeline_fill_s) and at the tuner's (tuner_pipeline_fill_s).
  /// NCCL's tuner has no such term; the choice counts it all the same, so that an NVLS tree whose
  /// fill makes it slower than the tree it replaces is not chosen when a NIC gets faster (physics
  /// never answers backwards; the fabric property test found a 33% step without it).
  double pipeline_fill_s = 0;
  double tuner_pipeline_fill_s = 0;
  double seconds() const { return latency_s + bandwidth_s + pipeline_fill_s; }
  /// NCCL's own tuner's prediction [s]: every channel of the comm, no spine.
  double tuner_seconds() const { return latency_s + tuner_bandwidth_s + tuner_pipeline_fill_s; }
  /// The bandwidth term the choice weighs [s]: at the channels NCCL's cut keeps at this size
  /// (nccl_channel_share), over the node's links as NCCL's tuner sees them (no switch-to-switch
  /// link: a spine's load depends on what else runs, which a per-call choice cannot know).
  double choice_bandwidth_s = 0;
  /// What the choice compares between protocols and algorithms [s]. Departs from NCCL's tuner,
  /// which weighs every channel of the comm (src/graph/tuning.cc ncclTopoTuneModel, src/enqueue.cc
  /// topoGetAlgoInfo chooses, then cuts): choosing at channels the call does not run on made a
  /// bigger message or more NICs slower (docs/hardware.md, "Choosing at the channels the call runs
  /// on").
  double choice_seconds() const { return latency_s + choice_bandwidth_s + tuner_pipeline_fill_s; }
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
  /// CollNet (NVIDIA/nccl src/graph/tuning.cc of 2.20.3, commit b6475625): baseLat 0; hwLat
  /// CollNetDirect Simple NVLink 3.7, PCI 3.7, NET 31; CollNetChain Simple NVLink 2.8, PCI 2.8,
  /// NET 30; CollNet Direct adds 0.4 us "arity serialization latency" per local peer.
  static constexpr double intra_collnet_direct = 3.7;
  static constexpr double net_collnet_direct = 31.0;
  static constexpr double collnet_direct_arity = 0.4;
  static constexpr double intra_collnet_chain = 2.8;
  static constexpr double net_collnet_chain = 30.0;
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

/// NCCL's NVLS chunking (NVIDIA/nccl src/enqueue.cc calcCollChunking, 2.2x; src/transport/nvls.cc):
/// NVLS and NVLS tree run on nvls_channels channels (NCCL_NVLS_NCHANNELS, default 16), each
/// channel's data split over its heads (one per GPU of the node for NVLS, one per graph channel
/// for NVLS tree), every (channel, head) lane moving one chunk per pipeline step. The chunk starts
/// at NCCL_NVLS_CHUNKSIZE (128 KiB; NVLS tree on >= 4 nodes: NCCL_NVLSTREE_MAX_CHUNKSIZE's default
/// 64 KiB) and is cut for small per-channel sizes B = bytes / nvls_channels, with H heads:
///   NVLS:      B < 64 H c and c > 64 KiB -> 64 KiB; B < 8 H c and c > 32 KiB -> 32 KiB;
///              B < 2 H c and c > 16 KiB -> 16 KiB;
///   NVLS tree: B < 32 H c and c > 256 KiB -> 256 KiB; B < 16 H c and c > 128 KiB -> 128 KiB;
///              B < 4 H c and c > 64 KiB -> 64 KiB; B < H c and c > 32 KiB -> 32 KiB.
/// The pipeline's fill, in chunk times of one lane (nvls_lane_seconds_per_byte): a chunk passes
/// the NVLS reduction, the tree's network hops and the multicast one after the other, and the
/// stages before the bottleneck hold one chunk each while the first chunk drains.
///  - fill_chunks (NVLS inside one node): 2.3 chunk times of a lane at its share of the phase's
///    bottleneck (16 x GPUs lanes share every NVLink port). Fitted on the even-indexed sizes of the
///    n04b log (2 x 8 H100, NDR 400, NVLS tree; 1 MiB, 4 MiB, ..., 4 GiB) with NVLS tree's fill
///    taken the same way: its fill there is 2.0-2.5 such chunk times at every size from 4 MiB to
///    512 MiB while the chunk doubles twice (4 MiB: 32 KiB, 16 MiB: 64 KiB, 64 MiB: 128 KiB),
///    which is what ties it to the chunk. Kept for NVLS in one node (r02, r04 check it).
///  - tree_fill_chunks (NVLS tree): chunk times of a lane at its own slowest stage, where a
///    head's lanes cross the GPUs' NVLink ports one head after another (NCCL's scatter and
///    gather, src/device/prims_simple.h ScatterGatherOp, copy each slice to one head, then the
///    next: "Loop over peers") and the head's NIC carries that head's 16 lanes. Refitted on the
///    same even-indexed n04b sizes (docs/properties.md, "NVLS tree's pipeline fill"): on n04b the
///    NIC stage is the lane's slowest (48 GB/s / 16 lanes against the NVLink port's 280 GB/s / 16)
///    and the fill is unchanged there; it no longer grows with the heads where NVLink binds.
struct NcclNvlsChunking {
  static constexpr int nvls_channels = 16;
  static constexpr double chunk_bytes = 128.0 * 1024;
  static constexpr double tree_max_chunk_bytes_4_nodes = 64.0 * 1024;
  static constexpr double fill_chunks = 2.3;
  static constexpr double tree_fill_chunks = 3.15;
};

/// NCCL's chunk [bytes] for an NVLS (tree) plan at nccl-tests size `bytes` (NcclNvlsChunking);
/// 0 for other algorithms.
double nvls_chunk_bytes(const CollectivePlan& plan, double bytes);
/// Time one lane (channel, head) of an NVLS or NVLS-tree phase takes per byte of its own data at
/// protocol factor 1 [s/byte], at the lanes' own stages (the phase's tuner_seconds_per_byte
/// parts: GPU links and NICs, no switch-to-switch link; a spine link every lane crosses is the
/// shared bottleneck the pipeline streams through, busy from the first chunks on: it adds
/// bytes / its bandwidth but no fill). 0 for other algorithms.
///  - NVLS (one node): lanes x tuner_seconds_per_byte, lanes = nvls_channels x heads: each lane's
///    share of the phase's bottleneck.
///  - NVLS tree (H heads, one per NIC up): nvls_channels x max(nvlink, H x other), the phase's
///    NVLink and other tuner times per byte (CollectivePhase). A GPU's NVLink port moves the
///    heads' slices one head after another (ScatterGatherOp), so a lane crosses it at its
///    channel's share whatever H; the head's NIC (and its PCIe path) carries that head's lanes,
///    H x other its time per byte of one head's data. So more heads (NICs) never lengthen the
///    fill, and a NIC carrying two heads' lanes (a failed NIC's rail moved to it) doubles its stage.
double nvls_lane_seconds_per_byte(const CollectivePlan& plan, const CollectivePhase& phase);
/// Fill of NVLS's chunk pipeline [s] for a phase at nccl-tests size `bytes`, its rates divided by
/// `rate_factor` (the protocol factor and any calibration scales, > 0):
/// chunks x min(chunk, bytes / lanes) x nvls_lane_seconds_per_byte / rate_factor, chunks =
/// fill_chunks (NVLS) or tree_fill_chunks (NVLS tree), lanes = nvls_channels x heads (below one
/// chunk per lane the lanes hold what there is). 0 for other algorithms, for bytes <= 0 and for a
/// phase that moves nothing.
double nvls_pipeline_fill_s(const CollectivePlan& plan, const CollectivePhase& phase, double bytes, double rate_factor);

/// busbw factor of nccl-tests for op over n ranks (n >= 1): all_reduce 2(n-1)/n;
/// all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce, send_recv 1.
/// Throws std::invalid_argument "busbw_factor: n must be >= 1 (got 0)".
double busbw_factor(CollectiveOp op, int n);
/// true for the ops NCCL runs as rings (and trees, NVLS, PAT): all_reduce, all_gather,
/// reduce_scatter, broadcast, reduce; false for all_to_all and send_recv.
bool is_ring_op(CollectiveOp op);
/// Bytes each ring edge carries, as a fraction of the nccl-tests size S, for n ranks: all_reduce
/// 2(n-1)/n, all_gather and reduce_scatter (n-1)/n, the others 1 (broadcast/reduce chain edges).
double ring_edge_fraction(CollectiveOp op, int n);

/// The GPU NCCL tunes a plan's communicator for: NCCL takes the communicator's lowest compute
/// capability (comm->minCompCap, NVIDIA/nccl src/init.cc; ncclTopoTuneModel's llMaxBws and
/// per-channel tables, LL128 and NVLS enablement go by it), so on a mixed cluster the plan's
/// ranks' oldest GPU (lowest NVLink generation: the catalog's stand-in for the capability class),
/// else the cluster's one GPU. Every collective of a mixed-cluster job lies within one node group.
const GpuSpec& tuned_gpu(const Cluster& cluster, const CollectivePlan& plan);
/// NCCL's NVLink efficiency for a GPU's NVLink generation (LinkEfficiency above; AMD's xGMI for
/// generation 0).
double nvlink_efficiency(const GpuSpec& gpu);
/// Default efficiency of a link kind (LinkEfficiency; NVLink by node_group[0]'s GPU generation),
/// before any profile.
double default_link_efficiency(const Cluster& cluster, LinkKind kind);
/// Efficiency applied to resource r: the profile's link_efficiency for its kind, else
/// default_link_efficiency (a mixed cluster's NVLink: its own node's GPU generation).
double link_efficiency(const Cluster& cluster, sim::ResourceId r);
/// Both-direction budget of GPU PCIe resource r (up + down, as a fraction of one direction's
/// capacity): the profile's pcie_duplex_efficiency, else 2 x link_efficiency(r).
double pcie_duplex_efficiency(const Cluster& cluster, sim::ResourceId r);
/// NVLS's extra efficiency on NVLink (LinkEfficiency: Hopper, or Blackwell for NVLink5+).
double nvls_link_scale(const Cluster& cluster);

/// Latency per protocol [s] (index LL, LL128, Simple) of a ring over n ranks on `nodes` nodes,
/// NCCL tuning.cc (Ring); nvlink: every edge inside a node is NVLink (else the PCI figures).
/// broadcast/reduce: a chain of n-1 hops; all_to_all/send_recv: one concurrent exchange step.
/// version: before NCCL 2.23 (nccl_pat_era_ring_latency false) all_reduce counts 2 nNodes
/// inter-node steps and one GPU per node pays the NET Ring figure.
std::array<double, 3> ring_latency_s(CollectiveOp op, int n, int nodes, bool nvlink,
                                     const NcclVersion& version = kNewestNcclVersion);
/// Latency per protocol [s] of NCCL's Tree all_reduce with ppn GPUs per node on `nodes` nodes.
std::array<double, 3> tree_latency_s(int ppn, int nodes, bool nvlink);
/// Latency [s] (same for every protocol; Simple is the only one allowed) of NVLS on one node.
std::array<double, 3> nvls_latency_s();
/// Latency [s] of NVLS tree across `nodes` nodes: NVLSTree hwLat + 2 log2(nodes) x NET NVLSTree.
std::array<double, 3> nvls_tree_latency_s(int nodes);
/// Latency [s] of PAT over n ranks on `nodes` nodes (NcclLatencyUs, PAT).
std::array<double, 3> pat_latency_s(int nodes, int n);
/// Latency [s] (Simple; the other protocols are not run) of NCCL's CollNet all_reduce with ppn
/// GPUs per node (tuning.cc 2.20.3): Direct 2 (min(1, ppn - 1) x 3.7 + (ppn - 1) x 0.4) + 31 us;
/// Chain 2 (ppn - 1) x 2.8 + 30 us. The switches' reduction is in the NET figure: one network
/// round trip whatever the node count (no log2(nodes) term, unlike tree and NVLS tree).
std::array<double, 3> collnet_direct_latency_s(int ppn);
std::array<double, 3> collnet_chain_latency_s(int ppn);

/// NCCL's CollNet Direct bandwidth refinement on Hopper and later (tuning.cc 2.20.3: "if
/// (minCompCap >= 90) busBw *= .85"), applied to the protocol factor.
inline constexpr double kCollNetDirectHopperFactor = 0.85;

/// NCCL's comm->nChannels before NCCL_MIN/MAX_NCHANNELS (ncclTopoPostset), from the ring graph's
/// channels (after the dup) and its per-channel bandwidth bwIntra [GB/s] (nccl_topo_search.h).
int nccl_comm_channels(const Cluster& cluster, int graph_channels, double bw_intra_gb_per_s);
/// The graph channels NCCL's per-channel maxima multiply for `plan` across nodes (the ring's,
/// which the tree graph shares); 0 on one node or without rails.
int nccl_graph_channels(const CollectivePlan& plan);

/// Bandwidth factor of protocol p (0 LL, 1 LL128, 2 Simple) for `plan` at `bytes`: NCCL's
/// per-protocol busBw factors, its per-channel and llMaxBw caps and, for trees, its pattern and
/// size correction factors. (0, 1]. `share`: the share of the comm's channels that runs
/// (nccl_channel_share; 1 for NCCL's tuner, which weighs every channel). llMaxBw caps the whole
/// call's LL busBw, so it is applied to the busBw of the channels that run (share x the uncapped
/// busBw): with one channel of 16 running, the cap of all 16 together is not charged to it (issue:
/// 2 x DGX H100 all_gather 32 KiB ring/LL/1 took 36.63 us at 4 NICs and 34.27 us at 2, the cap
/// binding only on the 4-NIC comm's 16-channel busBw). The per-channel maxima scale with the
/// channels and need no share. The call's rate is then factor x share x the link rate.
double protocol_factor(const Cluster& cluster, const CollectivePlan& plan, int p, double bytes, double share = 1.0);
/// The channels and threads a ring, tree or PAT call runs on: NCCL cuts them for small sizes
/// after its tuner has chosen (NVIDIA/nccl src/enqueue.cc topoGetAlgoInfo, 2.28.3, "Ring/Tree
/// channel tuning"; the same loop since 2.12): nc = comm->nChannels, lowered by one while
/// nBytes < nc x nt x threadThreshold and nc >= 2; then, ring only, nt halved while that still
/// holds and nt is a multiple of 128 (tree and PAT take NCCL_MAX_NTHREADS whatever the size).
/// nBytes: the larger buffer, nccl-tests' size. nt starts at maxThreads (src/graph/tuning.cc
/// ncclTopoTuneModel; src/include/device.h): LL NCCL_LL_MAX_NTHREADS 512, LL128
/// NCCL_LL128_MAX_NTHREADS 640, Simple NCCL_SIMPLE_MAX_NTHREADS 512 (ring:
/// CollectivePlan::ring_simple_threads). threadThreshold (tuning.cc, device.h):
/// NCCL_LL_THREAD_THRESHOLD 8 (x nRanks for ring), NCCL_LL128_THREAD_THRESHOLD 8,
/// NCCL_SIMPLE_THREAD_THRESHOLD 64. {nccl_channels, maxThreads} when nothing is cut, for other
/// algorithms, p2p plans and plans without nccl_channels ({0, 0} there).
struct NcclChannelCut {
  int channels = 0;  ///< nc
  int threads = 0;   ///< nt
};
NcclChannelCut nccl_channel_cut(const CollectivePlan& plan, int p, double bytes);
/// The share of the comm's rate a call keeps after nccl_channel_cut: nc / nChannels, in (0, 1].
/// NCCL's tuner weighs bandwidth at the full channel count (its busBw is the graph's channels x
/// the search's per-channel bandwidth, which comm->nChannels runs twice over), so each channel
/// moves 1 / nChannels of that rate and nc channels nc / nChannels of it. Applied to the time and
/// (session 34, unlike NCCL, which chooses before it cuts) to the choice (choice_seconds). 1 where
/// nothing is cut. The threads cut
/// below one channel are not charged: scaling a channel's rate with its threads (an assumption,
/// not NCCL's figure) made n11a's <= 64 KiB band 6 points worse and moved n06's odd-size refit
/// from 4.7 to 8.5% (docs/accuracy.md, "NCCL's channel cut").
double nccl_channel_share(const CollectivePlan& plan, int p, double bytes);
/// NCCL's latency of one phase for protocol p at `bytes` (the ring plateau applied) [s].
double phase_latency_s(const CollectivePlan& plan, const CollectivePhase& phase, int p, double bytes);
/// Latency of a phase with the profile applied (profile-wide scale, the plan's fit) [s].
double calibrated_latency_s(const Cluster& cluster, const CollectivePlan& plan, const CollectivePhase& phase, int p,
                            double bytes);
/// The protocol of least predicted time for `plan` at `bytes` (among those it allows and the
/// cluster's NCCL_PROTO lets through), with that time; latency_s infinite when none is left.
/// `honour_forced_protocol` false: NCCL_PROTO is not applied (NCCL's grouped send/recv, which
/// chooses its own protocol: all_to_all and send_recv).
CollectiveChoice choose_protocol(const Cluster& cluster, const CollectivePlan& plan, double bytes,
                                 bool honour_forced_protocol = true);
/// The algorithms NCCL's tuner weighs against ring for op (tuning.cc): all_reduce: tree, NVLS,
/// NVLS tree, CollNet Direct and CollNet Chain (with SHARP); all_gather / reduce_scatter: PAT and
/// NVLS; others: none. NCCL's algorithms only: the model's hierarchical all-reduce runs only
/// when forced.
std::span<const CollectiveAlgorithm> tuner_candidates(CollectiveOp op);

/// NCCL's name of an algorithm ("ring", "tree", "nvls", ...) and of a protocol ("LL", "LL128",
/// "Simple"), as NCCL_ALGO / NCCL_PROTO spell them (lower-case for algorithms). Never throws.
const char* algorithm_name(CollectiveAlgorithm a);
const char* protocol_name(CollectiveProtocol p);
/// What a choice ran, as --show-algorithm and the nccl-tests/validation tables label it: "p2p"
/// for all_to_all / send_recv (CollectiveChoice::point_to_point), else algorithm_name.
const char* choice_algorithm_name(const CollectiveChoice& c);

/// NCCL's p2p planner (nccl_p2p.h) for a one-node p2p plan (plan.p2p_channels.channels > 0) at
/// `bytes`, the nccl-tests size: all_to_all S (a share S / n to each rank), send_recv the message.
NcclP2pPlan p2p_plan_at(const CollectivePlan& plan, double bytes);

}  // namespace traincast::models
