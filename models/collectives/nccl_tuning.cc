// NCCL's tuner model: latency tables, protocol bandwidth factors and caps, channel counts, and the
// protocol of least predicted time. See nccl_tuning.h.

#include "models/collectives/nccl_tuning.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "models/collectives/nccl_chunking.h"
#include "models/collectives/nccl_p2p.h"

namespace traincast::models {
namespace {

// NCCL src/graph/tuning.cc (2.23+, ncclTopoTuneModel): "if (a == NCCL_ALGO_PAT) busBw *= .75".
constexpr double kPatBandwidthFactor = 0.75;

// NCCL's MAXCHANNELS (src/include/device.h): 32 in 2.20, 64 in later releases; the model's graph
// channels are <= 16, so the default doubling stays <= 32 either way.
constexpr int kNcclMaxChannels = 64;

// NCCL src/graph/tuning.cc (2.24-2.26) treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to
// 256 MB: "Trees are not perfectly sticking to the model for medium sizes."
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

// NCCL's measured per-channel maxima [GB/s], NVIDIA/nccl src/graph/tuning.cc of 2.20.3 (commit
// b6475625, makefiles/version.mk 2.20.3; the Volta-Hopper rows are unchanged in the 2.24-2.26
// tables), [compCapIndex: Volta, Ampere, Hopper, Blackwell][index2: 1 node, 2 nodes, more]:
// perChMaxRingLL128Bws, perChMaxTreeBws, perChMaxTreeLL128Bws. 2.20.3 has no Blackwell row (it
// indexes cc 10.0 as Hopper); later releases scale it, differently by release, so Blackwell gets
// no cap here (0 = none).
constexpr std::array<std::array<double, 3>, 4> kPerChMaxRingLL128{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {0, 0, 0}}};
constexpr std::array<std::array<double, 3>, 4> kPerChMaxTree{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {0, 0, 0}}};
constexpr std::array<std::array<double, 3>, 4> kPerChMaxTreeLL128{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {0, 0, 0}}};
// NCCL tuning.cc (2.20.3; 2.24+ tests comm->maxTreePattern): "if (a == NCCL_ALGO_TREE &&
// graphs[a]->pattern == NCCL_TOPO_PATTERN_TREE) busBw *= .85"; search.cc ncclTopoCompute (2.20.3):
// "if (ngpus == 1) if (graph->pattern != NCCL_TOPO_PATTERN_RING) graph->pattern =
// NCCL_TOPO_PATTERN_TREE", so a tree over nodes holding one GPU each pays it.
constexpr double kTreePatternFactor = 0.85;

// The factor <= 1 by which the busiest p2p channel slows a one-node p2p plan at `bytes` (before
// the protocol's factor, which both bounds share): link time (the phase's bottleneck at factor 1)
// over the busiest channel's bytes at one channel's rate, when the channel is slower.
double p2p_channel_factor(const CollectivePlan& plan, double bytes) {
  if (plan.p2p_channels.channels == 0 || plan.phases.size() != 1 || !(bytes > 0)) return 1.0;
  const NcclP2pPlan p2p = p2p_plan_at(plan, bytes);
  const double link_s = bytes * plan.phases[0].seconds_per_byte;
  const double channel_s = p2p.max_channel_bytes / plan.p2p_channel_bytes_per_s;
  return channel_s > link_s ? link_s / channel_s : 1.0;
}

// The time per byte of S the call runs at when `share` of the comm's channels run (the cut,
// nccl_channel_share): the node's links at that share, a switch-to-switch link whole (the call's
// bytes cross it whatever the channels). choose_protocol's and the engine's bandwidth term; NCCL's
// caps are taken on the busBw of this same time (per_channel_cap_factor, ll_max_factor).
// spine false: the same over the node's links alone (the choice's view, choose_protocol).
double run_seconds_per_byte(const CollectivePhase& ph, double share, bool spine) {
  if (!spine) return ph.tuner_seconds_per_byte / share;
  return share < 1.0 && ph.fabric_seconds_per_byte > ph.tuner_seconds_per_byte
             ? std::max(ph.tuner_seconds_per_byte / share, ph.fabric_seconds_per_byte)
             : ph.seconds_per_byte / share;
}

double ll_max_factor(const Cluster& cluster, const CollectivePlan& plan, double factor, double bytes_per_rank,
                     double share, bool spine) {
  // NCCL tuning.cc llMaxBws [GB/s] (2.19+; the Hopper/Blackwell one-node figures of the 2.23+
  // tables): ring LL busBw = min(llMaxBw, busBw x factor), tree LL min(busBw / 3.8, llMaxBw).
  // One node by GPU generation (Volta 39.0, Ampere 87.7, Hopper 141.0, Blackwell 282.0; GPUs
  // without NVLink take the Volta row: the catalog has no compute capability); across nodes by
  // CPU vendor (Intel: 2 nodes 39.0, more 20.4; AMD: 22.5, 19.0). Collectives only (not
  // send/recv, all-to-all). busBw here = bytes each rank moves per byte of S (ring: the edge
  // fraction; tree: 2, as NCCL's algBw = busBw / 2) / time per byte at `factor`.
  // Returns the factor <= 1 that applies the cap.
  if (!is_ring_op(plan.op) || plan.phases.size() != 1 || plan.phases[0].seconds_per_byte <= 0) return 1.0;
  double cap_gb_per_s = 0;
  if (plan.num_nodes == 1) {
    const int gen = tuned_gpu(cluster, plan).nvlink_generation;
    cap_gb_per_s = gen >= 5 ? 282.0 : gen == 4 ? 141.0 : gen == 3 ? 87.7 : 39.0;
  } else {
    const bool amd = cluster.node_template().cpu.rfind("AMD", 0) == 0;
    cap_gb_per_s = plan.num_nodes <= 2 ? (amd ? 22.5 : 39.0) : (amd ? 19.0 : 20.4);
  }
  const double fraction = plan.algorithm == CollectiveAlgorithm::tree
                              ? bytes_per_rank
                              : ring_edge_fraction(plan.op, static_cast<int>(plan.ranks.size()));
  // The busBw of the `share` of channels that run (the node's links at their share, a spine whole).
  const double busbw = fraction * factor / run_seconds_per_byte(plan.phases[0], share, spine);
  return busbw > cap_gb_per_s * 1e9 ? cap_gb_per_s * 1e9 / busbw : 1.0;
}

double nvls_tree_max_factor(const Cluster& cluster, const CollectivePlan& plan) {
  // NCCL's measured per-channel NVLSTree maximum, NVIDIA/nccl src/tuning (2.28+; tuning.cc
  // ncclTunerConstantsDefaults.perChMaxNVLSTreeBws, used by ncclTuningNvlsModelInit): per channel
  // bw = min(intra, inter, perChMaxNVLSTreeBw) and nccl-tests busBw = bw x graphs[NVLS].nChannels
  // (NCCL's algBw = bw x nChannels x nRanks / (2 (nRanks - 1))). perChMaxNVLSTreeBws [GB/s], by
  // nodes 2 / 3 or more (index2 = nNodes <= 2 ? nNodes - 1 : 2): Hopper 57.7 / 45.5, Blackwell
  // 96.0 / 80.0. graphs[NVLS].nChannels = the NVLS heads, at most the GPUs of a node
  // (search.cc: maxChannels = min(NCCL_MAX_NVLS_ARITY, nGPUs)), one per NIC rail here: HGX H100
  // with 8 NICs: 8 heads, busbw <= 461.6 GB/s on 2 nodes, 364 GB/s on more. Returns the factor
  // <= 1 that applies the cap to the phase's link-bound busbw.
  if (plan.phases.size() != 1 || plan.phases[0].seconds_per_byte <= 0 || plan.num_nodes < 2) return 1.0;
  const int n = static_cast<int>(plan.ranks.size());
  const int ppn = n / plan.num_nodes;
  const int heads = std::min(plan.channels, std::max(1, ppn));
  const bool blackwell = tuned_gpu(cluster, plan).nvlink_generation >= 5;
  const double per_channel_gb_per_s = plan.num_nodes <= 2 ? (blackwell ? 96.0 : 57.7) : (blackwell ? 80.0 : 45.5);
  const double cap = heads * per_channel_gb_per_s * 1e9;
  const double busbw = busbw_factor(plan.op, n) / plan.phases[0].seconds_per_byte;
  return busbw > cap ? cap / busbw : 1.0;
}

double per_channel_cap_factor(const Cluster& cluster, const CollectivePlan& plan, double factor, double bytes_per_rank,
                              const std::array<std::array<double, 3>, 4>& table, double share, bool spine) {
  // busBw (NCCL's: bytes each rank moves per byte of S / time; tree: 2, NCCL's algBw = busBw / 2)
  // at `factor` against graph channels x the per-channel maximum. Returns the factor <= 1 that
  // applies the cap (1 when no cap applies). Both on the channels that run (`share` of them, the
  // cut): their busBw at the run's time per byte (run_seconds_per_byte: a spine whole) against
  // share x the cap. Taken on every channel's busBw with the spine while the cut call runs on the
  // node's links per channel, the cap moved with a spine the call did not wait on: a 1:1 fabric
  // or a faster NIC ran tree/LL at 4 KiB 0.5 % slower, 5 NICs 1.4-5 % slower than 4 (session 34).
  const int channels = nccl_graph_channels(plan);
  if (channels == 0 || plan.phases.size() != 1 || plan.phases[0].seconds_per_byte <= 0) return 1.0;
  const int gen = tuned_gpu(cluster, plan).nvlink_generation;
  const int cc = gen >= 5 ? 3 : gen == 4 ? 2 : gen == 3 ? 1 : 0;
  const double per_channel = table[cc][plan.num_nodes <= 2 ? plan.num_nodes - 1 : 2];
  if (per_channel <= 0) return 1.0;
  const double cap = share * channels * per_channel * 1e9;
  const double busbw = bytes_per_rank * factor / run_seconds_per_byte(plan.phases[0], share, spine);
  return busbw > cap ? cap / busbw : 1.0;
}

double tree_protocol_factor(const Cluster& cluster, const CollectivePlan& plan, int p, double bytes, double share,
                            bool spine) {
  // NCCL tuning.cc (Tree, 2.20.3 and 2.24+ alike): busBw = min(busBw x 0.92, nChannels x
  // perChMaxTreeBw); LL: min(busBw / 3.8, llMaxBw); LL128: min(busBw x (7/9 one node, else
  // 120/128), nChannels x perChMaxTreeLL128Bw); x 0.85 when a node holds one GPU (pattern
  // TREE); then the tree correction factor of the size.
  const int nodes = plan.num_nodes;
  double f = 0.92;
  f *= per_channel_cap_factor(cluster, plan, f, 2.0, kPerChMaxTree, share, spine);
  if (p == kNcclLl) f = f / 3.8 * ll_max_factor(cluster, plan, f / 3.8, 2.0, share, spine);
  if (p == kNcclLl128) {
    f *= nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    f *= per_channel_cap_factor(cluster, plan, f, 2.0, kPerChMaxTreeLL128, share, spine);
  }
  if (plan.single_gpu_node) f *= kTreePatternFactor;
  const int log_size = nccl_log2i(static_cast<std::int64_t>(bytes) >> 6);
  if (log_size < 23) f *= kTreeCorrection[p][log_size];
  return f;
}

}  // namespace

double nvls_chunk_bytes(const CollectivePlan& plan, double bytes) {
  // NVIDIA/nccl src/enqueue.cc calcCollChunking (2.2x), per channel (nChannels = 1 there, nBytes
  // the channel's bytes), concurrentOps = nvls.nHeads.
  const bool tree = plan.algorithm == CollectiveAlgorithm::nvls_tree;
  if (!tree && plan.algorithm != CollectiveAlgorithm::nvls) return 0;
  const double heads = std::max(1, plan.channels);
  const double per_channel = bytes / NcclNvlsChunking::nvls_channels;
  double c = NcclNvlsChunking::chunk_bytes;
  if (tree) {
    if (plan.num_nodes >= 4) c = std::min(c, NcclNvlsChunking::tree_max_chunk_bytes_4_nodes);
    if (per_channel < 32 * heads * c && c > 262144) c = 262144;
    if (per_channel < 16 * heads * c && c > 131072) c = 131072;
    if (per_channel < 4 * heads * c && c > 65536) c = 65536;
    if (per_channel < 1 * heads * c && c > 32768) c = 32768;
  } else {
    if (per_channel < 64 * heads * c && c > 65536) c = 65536;
    if (per_channel < 8 * heads * c && c > 32768) c = 32768;
    if (per_channel < 2 * heads * c && c > 16384) c = 16384;
  }
  return c;
}

double nvls_lane_seconds_per_byte(const CollectivePlan& plan, const CollectivePhase& phase) {
  const double heads = std::max(1, plan.channels);
  const double channels = NcclNvlsChunking::nvls_channels;
  if (plan.algorithm == CollectiveAlgorithm::nvls) return channels * heads * phase.tuner_seconds_per_byte;
  if (plan.algorithm == CollectiveAlgorithm::nvls_tree) {
    return channels * std::max(phase.nvlink_tuner_seconds_per_byte, heads * phase.other_tuner_seconds_per_byte);
  }
  return 0;
}

double nvls_pipeline_fill_s(const CollectivePlan& plan, const CollectivePhase& phase, double bytes,
                            double rate_factor) {
  const double chunk = nvls_chunk_bytes(plan, bytes);
  const double lane_spb = nvls_lane_seconds_per_byte(plan, phase);
  if (chunk <= 0 || !(bytes > 0) || !(lane_spb > 0) || !(rate_factor > 0)) return 0;
  const double lanes = NcclNvlsChunking::nvls_channels * static_cast<double>(std::max(1, plan.channels));
  const double chunks = plan.algorithm == CollectiveAlgorithm::nvls_tree ? NcclNvlsChunking::tree_fill_chunks
                                                                         : NcclNvlsChunking::fill_chunks;
  return chunks * std::min(chunk, bytes / lanes) * lane_spb / rate_factor;
}

double busbw_factor(CollectiveOp op, int n) {
  if (n < 1) throw std::invalid_argument("busbw_factor: n must be >= 1 (got " + std::to_string(n) + ")");
  switch (op) {
    case CollectiveOp::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_to_all:
      return static_cast<double>(n - 1) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
    case CollectiveOp::send_recv:
      return 1.0;
  }
  return 1.0;
}

bool is_ring_op(CollectiveOp op) {
  return op == CollectiveOp::all_reduce || op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter ||
         op == CollectiveOp::broadcast || op == CollectiveOp::reduce;
}

double ring_edge_fraction(CollectiveOp op, int n) {
  switch (op) {
    case CollectiveOp::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

double link_efficiency(const Cluster& cluster, sim::ResourceId r) {
  const LinkKind kind = cluster.link_kind(r);
  if (const CalibrationProfile* p = cluster.spec().profile.get()) {
    if (const auto& e = p->link_efficiency[static_cast<std::size_t>(kind)]) return *e;
  }
  // A mixed cluster's NVLink runs at its own node's GPU generation: the node is the link's
  // endpoint "node<slot>.…" (NVLink never leaves a node).
  if (kind == LinkKind::nvlink && cluster.mixed()) {
    const std::string& from = cluster.resource(r).from;
    if (from.rfind("node", 0) == 0) {
      const int node = cluster.node_at_slot(std::atoi(from.c_str() + 4));
      if (node >= 0) return nvlink_efficiency(cluster.gpu_spec(node * cluster.gpus_per_node()));
    }
  }
  return default_link_efficiency(cluster, kind);
}

double pcie_duplex_efficiency(const Cluster& cluster, sim::ResourceId r) {
  if (const CalibrationProfile* p = cluster.spec().profile.get()) {
    if (p->pcie_duplex_efficiency) return *p->pcie_duplex_efficiency;
  }
  return 2.0 * link_efficiency(cluster, r);
}

const GpuSpec& tuned_gpu(const Cluster& cluster, const CollectivePlan& plan) {
  if (!cluster.mixed() || plan.ranks.empty()) return cluster.gpu_spec(0);
  const GpuSpec* g = &cluster.gpu_spec(plan.ranks.front());
  for (int r : plan.ranks)
    if (cluster.gpu_spec(r).nvlink_generation < g->nvlink_generation) g = &cluster.gpu_spec(r);
  return *g;
}

double nvlink_efficiency(const GpuSpec& g) {
  if (g.nvlink_generation == 0) return LinkEfficiency::xgmi;
  if (g.nvlink_generation >= 5) return LinkEfficiency::nvlink_gen5;
  if (g.nvlink_generation == 4) return LinkEfficiency::nvlink_gen4;
  return LinkEfficiency::nvlink_gen2_3;
}

double default_link_efficiency(const Cluster& cluster, LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink:
      return nvlink_efficiency(cluster.gpu_spec(0));
    case LinkKind::pcie:
      return LinkEfficiency::pcie;
    case LinkKind::nic:
    case LinkKind::fabric:
      return LinkEfficiency::network;
    case LinkKind::socket:
    case LinkKind::other:
      return 1.0;
  }
  return 1.0;
}

double nvls_link_scale(const Cluster& cluster) {
  return cluster.gpu_spec(0).nvlink_generation >= 5 ? LinkEfficiency::nvls_blackwell : LinkEfficiency::nvls_hopper;
}

int nccl_graph_channels(const CollectivePlan& plan) {
  // NCCL's ring graph across nodes (the tree graph has the ring's channel count: init.cc, treeGraph
  // min = max = ringGraph->nChannels), computed when the ring plan is built (build_ring_plan). One
  // node: 0 (the model's single-node rings are not NCCL's graph; after the dup NCCL's single-node
  // channels carry <= 30 GB/s (sm90 60 / 2) or <= 24 (sm70/80), below every cap x its protocol
  // factor).
  if (plan.num_nodes < 2 || plan.rails < 1) return 0;
  const int ring = plan.algorithm == CollectiveAlgorithm::ring ? plan.graph_channels : plan.ring_graph_channels;
  return ring > 0 ? ring : plan.rails;
}

int nccl_comm_channels(const Cluster& cluster, int graph_channels, double bw_intra_gb_per_s) {
  // comm->nChannels before NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS (applied in
  // build_ring_plan), NVIDIA/nccl src/graph/connect.cc ncclTopoPostset (2.2x; step 2 as the
  // releases whose test reads "nChannels < 16" (later ones: "2*nChannels <= maxChannels")):
  //  1. "nChannels = comm->nChannels = std::min(MAXCHANNELS,nChannels*2)": every graph channel
  //     runs twice (rings duplicated, trees split over both), MAXCHANNELS >= 32.
  //  2. "Use 4 compute channels per search channel to reach peak BW on <8 PPN": minCompCap >= 90,
  //     nNodes > 1, graphs[RING]->bwIntra > 45.0 and nChannels < 16: doubled again (bwIntra: the
  //     graph's per-channel bandwidth after ncclTopoDupChannels divided it by the dup factor, as
  //     the search returns it).
  //  3. "Honor NCCL_MIN_NRINGS/NCCL_MAX_NRINGS": nChannels = min(ncclMaxNchannels(), nChannels,
  //     maxCTAs), then copyChannels up to max(ncclMinNchannels(), minCTAs): the first channels
  //     are kept, then copied in order.
  // The graph (and so the tuner's bandwidths, tuning.cc "busBw = graphs[a]->nChannels * bw") is
  // computed before and is not changed by step 3.
  int c = std::min(kNcclMaxChannels, 2 * graph_channels);
  if (cluster.gpu_spec(0).nvlink_generation >= 4 && bw_intra_gb_per_s > 45.0 && c < 16) c *= 2;
  return c;
}

namespace {
// protocol_factor; spine false: its caps on the busBw over the node's links alone (the choice's view).
double protocol_factor_at(const Cluster& cluster, const CollectivePlan& plan, int p, double bytes, double share,
                          bool spine) {
  const int nodes = plan.num_nodes;
  const int ppn = static_cast<int>(plan.ranks.size()) / std::max(1, nodes);
  switch (plan.algorithm) {
    case CollectiveAlgorithm::tree:
      return tree_protocol_factor(cluster, plan, p, bytes, share, spine);
    case CollectiveAlgorithm::nvls:
      return 1.0;  // Simple only; NVLS efficiency is on the links
    case CollectiveAlgorithm::nvls_tree:
      return nvls_tree_max_factor(cluster, plan);  // Simple only; NVLS efficiency is on the links
    case CollectiveAlgorithm::pat:
      return kPatBandwidthFactor;  // Simple only
    case CollectiveAlgorithm::collnet_direct:
      // Simple only; NCCL's GPU/NIC-ratio refinement is left to the flows (a node with fewer
      // NICs than GPUs loads each head NIC with more bytes).
      return tuned_gpu(cluster, plan).nvlink_generation >= 4 ? kCollNetDirectHopperFactor : 1.0;
    case CollectiveAlgorithm::collnet_chain:
      return 1.0;  // Simple only; NCCL applies no refinement to CollNet Chain
    default:
      break;
  }
  // p2p inside one node: the busiest channel of NCCL's schedule (nccl_p2p.h), with the protocol's factor.
  const double p2p = p2p_channel_factor(plan, bytes);
  // Ring (and hierarchical, direct): LL busBw x 1/4 (multi-node, all-reduce, reduce) else x 1/3,
  // capped at llMaxBw (ll_max_factor; at the busBw of the `share` of channels that run); LL128 x
  // 0.92 (120/128 bytes of each line carry data; 0.7 with one GPU per node); Simple x 1.
  switch (p) {
    case kNcclLl: {
      const double f =
          (nodes > 1 || plan.op == CollectiveOp::all_reduce || plan.op == CollectiveOp::reduce) ? 0.25 : 1.0 / 3.0;
      return p2p * f * ll_max_factor(cluster, plan, f, 1.0, share, spine);
    }
    case kNcclLl128: {
      // NCCL tuning.cc (2.20.3): min(busBw x (ppn < 2 ? 0.7 : 0.92), nChannels x
      // perChMaxRingLL128Bw), across nodes (graph channels: nccl_graph_channels).
      const double f = (nodes > 1 && ppn < 2) ? 0.7 : 0.92;
      if (plan.algorithm != CollectiveAlgorithm::ring) return p2p * f;
      return f * per_channel_cap_factor(cluster, plan, f,
                                        ring_edge_fraction(plan.op, static_cast<int>(plan.ranks.size())),
                                        kPerChMaxRingLL128, share, spine);
    }
    default:
      return p2p;
  }
}
}  // namespace

double protocol_factor(const Cluster& cluster, const CollectivePlan& plan, int p, double bytes, double share) {
  return protocol_factor_at(cluster, plan, p, bytes, share, /*spine=*/true);
}

NcclChannelCut nccl_channel_cut(const CollectivePlan& plan, int p, double bytes) {
  // NCCL's constants (src/include/device.h, src/graph/tuning.cc; sources in nccl_tuning.h).
  constexpr int kLlMaxThreads = 512;             // NCCL_LL_MAX_NTHREADS
  constexpr int kLl128MaxThreads = 640;          // NCCL_LL128_MAX_NTHREADS
  constexpr int kSimpleMaxThreads = 512;         // NCCL_SIMPLE_MAX_NTHREADS
  constexpr double kLlThreadThreshold = 8;       // NCCL_LL_THREAD_THRESHOLD
  constexpr double kLl128ThreadThreshold = 8;    // NCCL_LL128_THREAD_THRESHOLD
  constexpr double kSimpleThreadThreshold = 64;  // NCCL_SIMPLE_THREAD_THRESHOLD
  const bool ring = plan.algorithm == CollectiveAlgorithm::ring;
  const bool cut = ring || plan.algorithm == CollectiveAlgorithm::tree || plan.algorithm == CollectiveAlgorithm::pat;
  if (!cut || plan.nccl_channels < 1 || plan.p2p_channels.channels > 0 || !is_ring_op(plan.op)) return {};
  const int max_threads = p == kNcclLl      ? kLlMaxThreads
                          : p == kNcclLl128 ? kLl128MaxThreads
                          : ring            ? plan.ring_simple_threads
                                            : kSimpleMaxThreads;
  double threshold = p == kNcclLl      ? kLlThreadThreshold
                     : p == kNcclLl128 ? kLl128ThreadThreshold
                                       : kSimpleThreadThreshold;
  if (ring && p == kNcclLl) threshold *= static_cast<double>(plan.ranks.size());
  NcclChannelCut c{plan.nccl_channels, max_threads};
  while (bytes < c.channels * static_cast<double>(c.threads) * threshold && c.channels >= 2) --c.channels;
  while (ring && bytes < c.channels * static_cast<double>(c.threads) * threshold && c.threads % 128 == 0)
    c.threads /= 2;
  return c;
}

double nccl_channel_share(const CollectivePlan& plan, int p, double bytes) {
  const NcclChannelCut c = nccl_channel_cut(plan, p, bytes);
  if (c.channels < 1) return 1.0;
  return c.channels / static_cast<double>(plan.nccl_channels);
}

double phase_latency_s(const CollectivePlan& plan, const CollectivePhase& phase, int p, double bytes) {
  double lat = phase.latency_s[p];
  // NCCL: ring Simple all-reduce across nodes, once each rank's share of a channel reaches 64 B.
  // NCCL tuning.cc ncclTopoGetAlgoTime (2.20.3): "nBytes/(comm->nChannels*comm->nRanks) >= 64".
  const int channels = plan.comm_channels > 0 ? plan.comm_channels : plan.channels;
  if (phase.ring_plateau && p == kNcclSimple && bytes / (channels * static_cast<double>(plan.ranks.size())) >= 64) {
    lat *= NcclLatencyUs::ring_plateau;
  }
  return lat;
}

double calibrated_latency_s(const Cluster& cluster, const CollectivePlan& plan, const CollectivePhase& phase, int p,
                            double bytes) {
  double lat = phase_latency_s(plan, phase, p, bytes);
  if (const CalibrationProfile* prof = cluster.spec().profile.get()) lat *= prof->latency_scale;
  if (plan.fit != nullptr) {
    lat *= plan.fit->latency_scale * plan.fit->protocol_latency_scale[static_cast<std::size_t>(p)] *
           plan.fit->correction(bytes);
  }
  return lat;
}

CollectiveChoice choose_protocol(const Cluster& cluster, const CollectivePlan& plan, double bytes,
                                 bool honour_forced_protocol) {
  CollectiveChoice best;
  best.algorithm = plan.algorithm;
  best.channels = plan.channels;
  best.latency_s = std::numeric_limits<double>::infinity();
  const std::optional<CollectiveProtocol>& forced = cluster.spec().collectives.protocol;
  const bool use_forced = honour_forced_protocol && forced.has_value();
  const double bw_scale = plan.fit != nullptr ? plan.fit->bandwidth_scale : 1.0;
  const double correction = plan.fit != nullptr ? plan.fit->correction(bytes) : 1.0;
  double max_phase_bw = -1;
  for (const CollectivePhase& ph : plan.phases) {
    if (ph.seconds_per_byte > max_phase_bw) {
      max_phase_bw = ph.seconds_per_byte;
      best.bottleneck = ph.bottleneck;
      best.bottleneck_duplex = ph.bottleneck_duplex;
      best.link_seconds_per_byte = ph.seconds_per_byte;
      best.duplex_load_seconds_per_byte = ph.duplex_load_seconds_per_byte;
    }
  }
  bool have = false;
  // p2p: the protocol NCCL's planner picks by size (addP2pToPlan: LL up to nChannelsMax x
  // NCCL_P2P_LL_THRESHOLD a peer, else Simple; never LL128), not the tuner's; inside one node by
  // its schedule, across nodes at p2p_net_ll_bytes a peer (all_to_all: S / n to each).
  int p2p_protocol = plan.p2p_channels.channels > 0 ? (p2p_plan_at(plan, bytes).ll ? kNcclLl : kNcclSimple) : -1;
  if (plan.p2p_net_ll_bytes > 0) {
    const double peer_bytes =
        plan.op == CollectiveOp::all_to_all ? bytes / static_cast<double>(plan.ranks.size()) : bytes;
    p2p_protocol = peer_bytes <= plan.p2p_net_ll_bytes ? kNcclLl : kNcclSimple;
  }
  for (int p : {kNcclSimple, kNcclLl128, kNcclLl}) {
    if (!plan.protocol_allowed[p]) continue;
    if (p2p_protocol >= 0 && p != p2p_protocol) continue;
    if (use_forced && static_cast<int>(*forced) != p) continue;
    const double fit_scale = plan.fit ? plan.fit->protocol_bandwidth_scale[static_cast<std::size_t>(p)] : 1.0;
    const double factor = protocol_factor(cluster, plan, p, bytes) * fit_scale;
    const double share = nccl_channel_share(plan, p, bytes);
    // The cut call (share of the channels; protocol_factor): llMaxBw on its own busBw, the
    // node's links at its share, a spine link whole (the bytes cross it whatever the channels).
    const double run_factor = share < 1.0 ? protocol_factor(cluster, plan, p, bytes, share) * fit_scale : factor;
    // The choice's view of the same call: the cut's channels on the node's links (no spine).
    const double choice_factor = protocol_factor_at(cluster, plan, p, bytes, share, /*spine=*/false) * fit_scale;
    double lat = 0, bw = 0, tuner_bw = 0, choice_bw = 0, fill = 0, tuner_fill = 0, tree_fill = 0;
    for (const CollectivePhase& ph : plan.phases) {
      lat += calibrated_latency_s(cluster, plan, ph, p, bytes);
      // The call then runs on the channels NCCL keeps at this size (nccl_channel_share): in the
      // time and the choice's figure, not in NCCL's tuner's.
      const double phase_bw = share < 1.0 && ph.fabric_seconds_per_byte > ph.tuner_seconds_per_byte
                                  ? bytes * std::max(ph.tuner_seconds_per_byte / share, ph.fabric_seconds_per_byte) /
                                        run_factor / bw_scale * correction
                                  : bytes * ph.seconds_per_byte / run_factor / bw_scale * correction / share;
      bw += phase_bw;
      tuner_bw += bytes * ph.tuner_seconds_per_byte / factor / bw_scale * correction;
      choice_bw += bytes * ph.tuner_seconds_per_byte / share / choice_factor / bw_scale * correction;
      // The fill at the lanes' own stages (GPU links, the head's NIC; no switch-to-switch link,
      // nvls_lane_seconds_per_byte): a spine link every lane crosses is the shared bottleneck the
      // pipeline streams through, busy from the first chunks on, and adds no fill of its own.
      // Counted at the spine's per-lane share instead, the fill grew with the heads, so one NIC
      // fewer ran faster (issue 16: 754.5 vs 788.0 us, docs/properties.md); counted at the
      // NVLink port's share of all heads' lanes, it grew with the heads where NVLink binds.
      const double phase_fill = nvls_pipeline_fill_s(plan, ph, bytes, factor * bw_scale / correction);
      fill += phase_fill;
      // NCCL's tuner has no fill term. It is counted for NVLS tree (across nodes: a faster NIC
      // must not switch to an NVLS tree its fill makes slower, nccl_tuning.h) but not for NVLS
      // inside one node, where NCCL's cost (latency + bytes / bandwidth) decides alone: else the
      // fill of 32 heads x 16 channels x 128 KiB lanes moves NVL72 all_gather off NVLS at 4-256 MiB
      // where NCCL keeps it (tests/models/collectives/nccl_nvl_domain_choice_test.cc).
      if (plan.algorithm != CollectiveAlgorithm::nvls) tuner_fill += phase_fill;
      if (NcclChunking::in_time) tree_fill += tree_pipeline_fill_s(plan, ph, p, bytes);
    }
    // Tree across nodes: the chunk pipeline's fill (tree_pipeline_fill_s; off unless
    // NcclChunking::in_time) is in the time only, as the channel cut: NCCL's tuner has no such
    // term, and NCCL runs the tree it chose. Counted in the protocol's and the algorithm's choice
    // (as NVLS tree's fill), it moved n04b's 1-16 MiB (2 x 8 H100) from NCCL's tree/LL128 to ring
    // and NVLS tree, n04a's 8-16 MiB to tree/Simple, and failed 5 fabric property draws; in the
    // algorithm's choice only, 3 draws beyond the 2 % of a tuner switch (more_nics 7.4 %,
    // less_oversubscription 10.8 %); in the time only, 2 (fabric-0216 55.8 %, fabric-0004 2.8 %;
    // docs/hardware.md).
    // The choice weighs the call at the channels it runs on (choice_seconds), not NCCL's tuner's
    // figure at every channel (docs/hardware.md, "Choosing at the channels the call runs on").
    if (!have || lat + choice_bw + tuner_fill < best.choice_seconds()) {
      best.protocol = static_cast<CollectiveProtocol>(p);
      best.latency_s = lat;
      best.bandwidth_s = bw;
      best.tuner_bandwidth_s = tuner_bw;
      best.choice_bandwidth_s = choice_bw;
      best.pipeline_fill_s = fill + tree_fill;
      best.tuner_pipeline_fill_s = tuner_fill;
      have = true;
    }
  }
  return best;
}

std::span<const CollectiveAlgorithm> tuner_candidates(CollectiveOp op) {
  // Candidates besides ring, NCCL's own algorithms only, as its tuner weighs them (tuning.cc
  // ncclTopoTuneModel / enqueue.cc updateCollCostTable: NCCL_ALGO_TREE, RING, COLLNET_DIRECT,
  // COLLNET_CHAIN, NVLS, NVLS_TREE, PAT): all_reduce: tree, NVLS, NVLS tree, CollNet Direct and
  // Chain; all_gather / reduce_scatter: PAT and NVLS; broadcast / reduce: ring only. A plan that
  // the NCCL version or the topology cannot run is not applicable and skipped (CollNet without
  // cluster.fabric.sharp). The model's hierarchical all-reduce is not NCCL's and runs only when
  // forced (issue 16: every automatic choice goes through NCCL's search and tuner).
  static constexpr std::array<CollectiveAlgorithm, 5> kAllReduce{
      CollectiveAlgorithm::tree, CollectiveAlgorithm::nvls, CollectiveAlgorithm::nvls_tree,
      CollectiveAlgorithm::collnet_direct, CollectiveAlgorithm::collnet_chain};
  static constexpr std::array<CollectiveAlgorithm, 2> kGatherScatter{CollectiveAlgorithm::pat,
                                                                     CollectiveAlgorithm::nvls};
  if (op == CollectiveOp::all_reduce) return kAllReduce;
  if (op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter) return kGatherScatter;
  return {};
}

const char* algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::automatic:
      return "automatic";
    case CollectiveAlgorithm::ring:
      return "ring";
    case CollectiveAlgorithm::hierarchical:
      return "hierarchical";
    case CollectiveAlgorithm::tree:
      return "tree";
    case CollectiveAlgorithm::nvls:
      return "nvls";
    case CollectiveAlgorithm::nvls_tree:
      return "nvls_tree";
    case CollectiveAlgorithm::pat:
      return "pat";
    case CollectiveAlgorithm::collnet_direct:
      return "collnet_direct";
    case CollectiveAlgorithm::collnet_chain:
      return "collnet_chain";
  }
  return "?";
}

const char* choice_algorithm_name(const CollectiveChoice& c) {
  return c.point_to_point ? "p2p" : algorithm_name(c.algorithm);
}

const char* protocol_name(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::ll:
      return "LL";
    case CollectiveProtocol::ll128:
      return "LL128";
    case CollectiveProtocol::simple:
      return "Simple";
  }
  return "?";
}

}  // namespace traincast::models
