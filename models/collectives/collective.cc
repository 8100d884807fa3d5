// Collectives as concurrent flows plus NCCL's latency model. See collective.h.
//
// Why concurrent flows per edge: NCCL pipelines a collective in chunks, so in steady state every
// edge of every channel is busy at once and the collective takes (bytes each edge must carry) /
// (bandwidth that edge gets). A flow per (channel, edge) with the edge's total bytes reproduces
// exactly that, lets the FlowNetwork find the slowest link, and makes other traffic on the same
// links slow the collective down. NCCL's chunk-level latency is added after the flows drain, as
// NCCL's tuner adds it: time = latency + bytes / bandwidth.

#include "models/collectives/collective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

namespace traincast::models {
namespace {

constexpr int kLL = 0;
constexpr int kLL128 = 1;
constexpr int kSimple = 2;

// NCCL src/graph/tuning.cc (2.23+, ncclTopoTuneModel): "if (a == NCCL_ALGO_PAT) busBw *= .75".
constexpr double kPatBandwidthFactor = 0.75;

// NCCL's MAXCHANNELS (src/include/device.h): 32 in 2.20, 64 in later releases; the model's graph
// channels are <= 16, so the default doubling stays <= 32 either way.
constexpr int kNcclMaxChannels = 64;

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t plan_hash(CollectiveOp op, CollectiveAlgorithm algorithm, std::span<const int> ranks) {
  std::uint64_t h = mix64(static_cast<std::uint64_t>(op) * 16 + static_cast<std::uint64_t>(algorithm));
  for (int r : ranks) h = mix64(h ^ static_cast<std::uint32_t>(r));
  return h;
}

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

bool is_ring_op(CollectiveOp op) {
  return op == CollectiveOp::all_reduce || op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter ||
         op == CollectiveOp::broadcast || op == CollectiveOp::reduce;
}

// Bytes each ring edge carries, as a fraction of the nccl-tests size S, for n ranks.
double edge_fraction(CollectiveOp op, int n) {
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

int log2i(std::int64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

// NCCL src/graph/tuning.cc (2.24-2.26) treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to
// 256 MB: "Trees are not perfectly sticking to the model for medium sizes."
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

// NCCL's double binary tree (src/graph/trees.cc, ncclGetBtree/ncclGetDtree): parent of `rank`
// in tree 0 (a binary tree whose leaves and inner nodes alternate, root 0) or tree 1 (the mirror
// of tree 0 for an even count, tree 0 shifted by one for an odd count). -1 for the root.
int btree_parent(int n, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}
int dtree_parent(int n, int rank, int tree) {
  if (tree == 0) return btree_parent(n, rank);
  if (n % 2 == 1) {
    const int u = btree_parent(n, (rank - 1 + n) % n);
    return u == -1 ? -1 : (u + 1) % n;
  }
  const int u = btree_parent(n, n - 1 - rank);
  return u == -1 ? -1 : n - 1 - u;
}

}  // namespace

/// Ranks grouped by node: nodes in order of first appearance, GPUs in rank order.
struct CollectiveEngine::Groups {
  std::vector<int> node_ids;
  std::vector<std::vector<int>> per_node;
  /// Local NICs the group's GPUs own on the first node, in GPU order (the rails).
  std::vector<int> rails;
  bool same_size = true;
  int ppn() const { return static_cast<int>(per_node[0].size()); }
  int nodes() const { return static_cast<int>(node_ids.size()); }
};

CollectiveEngine::CollectiveEngine(sim::Simulator& sim, sim::FlowNetwork& net, const Cluster& cluster)
    : sim_(sim), net_(net), cluster_(cluster) {
  rank_stamp_.assign(static_cast<std::size_t>(cluster.num_gpus()), 0);
}

double CollectiveEngine::busbw_factor(CollectiveOp op, int n) {
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

double CollectiveEngine::efficiency(sim::ResourceId r) const {
  const LinkKind kind = cluster_.link_kind(r);
  if (const CalibrationProfile* p = cluster_.spec().profile.get()) {
    if (const auto& e = p->link_efficiency[static_cast<std::size_t>(kind)]) return *e;
  }
  return default_efficiency(kind);
}

double CollectiveEngine::duplex_efficiency(sim::ResourceId r) const {
  if (const CalibrationProfile* p = cluster_.spec().profile.get()) {
    if (p->pcie_duplex_efficiency) return *p->pcie_duplex_efficiency;
  }
  return 2.0 * efficiency(r);
}

double CollectiveEngine::default_efficiency(LinkKind kind) const {
  switch (kind) {
    case LinkKind::nvlink: {
      const GpuSpec& g = cluster_.gpu_spec(0);
      if (g.nvlink_generation == 0) return LinkEfficiency::xgmi;
      if (g.nvlink_generation >= 5) return LinkEfficiency::nvlink_gen5;
      if (g.nvlink_generation == 4) return LinkEfficiency::nvlink_gen4;
      return LinkEfficiency::nvlink_gen2_3;
    }
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

void CollectiveEngine::validate(const CollectiveCall& call) const {
  if (call.ranks.empty()) throw std::invalid_argument("collective: empty group");
  if (!(call.bytes >= 0) || !std::isfinite(call.bytes)) {
    throw std::invalid_argument("collective: bytes must be finite and >= 0 (got " + fmt(call.bytes) + ")");
  }
  if (call.op == CollectiveOp::send_recv && call.ranks.size() != 2) {
    throw std::invalid_argument("collective: send_recv needs exactly 2 ranks (got " +
                                std::to_string(call.ranks.size()) + ")");
  }
  const int gpus = cluster_.num_gpus();
  if (++stamp_ == 0) {
    std::fill(rank_stamp_.begin(), rank_stamp_.end(), 0);
    stamp_ = 1;
  }
  for (int r : call.ranks) {
    if (r < 0 || r >= gpus) {
      throw std::invalid_argument("collective: rank " + std::to_string(r) + " outside [0, " + std::to_string(gpus) +
                                  ")");
    }
    if (rank_stamp_[r] == stamp_) throw std::invalid_argument("collective: duplicate rank " + std::to_string(r));
    rank_stamp_[r] = stamp_;
  }
}

std::array<double, 3> CollectiveEngine::ring_latency_s(CollectiveOp op, int n, int nodes, bool nvlink) const {
  // NCCL tuning.cc (Ring): latency = baseLat + (nsteps - nInterSteps) * intraLat +
  // nInterSteps * interLat, intraLat raised to the network post overhead (x3 for Simple) when
  // the ring spans nodes. As of the PAT releases (2.23+): nInterSteps = 2 (nNodes - 1) for
  // all_reduce (was 2 nNodes), and with one GPU per node ("latencies are fully exposed")
  // interLat is the NET Tree figure.
  int steps = 0, inter = 0;
  switch (op) {
    case CollectiveOp::all_reduce:
      steps = 2 * (n - 1);
      inter = nodes > 1 ? 2 * (nodes - 1) : 0;
      break;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      steps = n - 1;
      inter = nodes - 1;
      break;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
      // Pipelined chain of n-1 hops (we use the Ring hwLat per hop rather than NCCL's
      // Tree/Simple chunk figure).
      steps = n - 1;
      inter = nodes - 1;
      break;
    case CollectiveOp::all_to_all:
    case CollectiveOp::send_recv:
      // One concurrent exchange step (grouped send/recv).
      steps = 1;
      inter = nodes > 1 ? 1 : 0;
      break;
  }
  inter = std::min(inter, steps);
  const auto& intra_table = nvlink ? NcclLatencyUs::nvlink_ring : NcclLatencyUs::pci_ring;
  const auto& net_table = nodes > 1 && n == nodes ? NcclLatencyUs::net_tree : NcclLatencyUs::net_ring;
  std::array<double, 3> out{};
  for (int p = 0; p < 3; ++p) {
    double intra = intra_table[p];
    if (nodes > 1) intra = std::max(intra, NcclLatencyUs::net_overhead * (p == kSimple ? 3.0 : 1.0));
    const double us = NcclLatencyUs::base_ring[p] + (steps - inter) * intra + inter * net_table[p];
    out[p] = us * 1e-6;
  }
  return out;
}

std::array<double, 3> CollectiveEngine::tree_latency_s(int ppn, int nodes, bool nvlink) const {
  // NCCL tuning.cc (Tree): baseLat + 2 * ((ppn - 1) * intraLat + log2(nodes) * interLat).
  const auto& intra = nvlink ? NcclLatencyUs::nvlink_tree : NcclLatencyUs::pci_tree;
  std::array<double, 3> out{};
  for (int p = 0; p < 3; ++p) {
    out[p] =
        (NcclLatencyUs::base_tree[p] + 2 * ((ppn - 1) * intra[p] + log2i(nodes) * NcclLatencyUs::net_tree[p])) * 1e-6;
  }
  return out;
}

bool CollectiveEngine::all_nvlink(const Groups& g) const {
  // Every ring edge inside a node is NVLink (NCCL's intra-node path type <= NVB).
  for (const auto& local : g.per_node) {
    const int m = static_cast<int>(local.size());
    for (int i = 0; i < (m > 2 ? m : m - 1); ++i) {
      if (!cluster_.nvlink_between(cluster_.local_rank(local[i]), cluster_.local_rank(local[(i + 1) % m]))) {
        return false;
      }
    }
  }
  return true;
}

double CollectiveEngine::ll_max_factor(const Plan& plan, double factor, double bytes_per_rank) const {
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
    const int gen = cluster_.gpu_spec(0).nvlink_generation;
    cap_gb_per_s = gen >= 5 ? 282.0 : gen == 4 ? 141.0 : gen == 3 ? 87.7 : 39.0;
  } else {
    const bool amd = cluster_.node_template().cpu.rfind("AMD", 0) == 0;
    cap_gb_per_s = plan.num_nodes <= 2 ? (amd ? 22.5 : 39.0) : (amd ? 19.0 : 20.4);
  }
  const double fraction = plan.algorithm == CollectiveAlgorithm::tree
                              ? bytes_per_rank
                              : edge_fraction(plan.op, static_cast<int>(plan.ranks.size()));
  const double busbw = fraction * factor / plan.phases[0].seconds_per_byte;
  return busbw > cap_gb_per_s * 1e9 ? cap_gb_per_s * 1e9 / busbw : 1.0;
}

double CollectiveEngine::nvls_tree_max_factor(const Plan& plan) const {
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
  const bool blackwell = cluster_.gpu_spec(0).nvlink_generation >= 5;
  const double per_channel_gb_per_s = plan.num_nodes <= 2 ? (blackwell ? 96.0 : 57.7) : (blackwell ? 80.0 : 45.5);
  const double cap = heads * per_channel_gb_per_s * 1e9;
  const double busbw = busbw_factor(plan.op, n) / plan.phases[0].seconds_per_byte;
  return busbw > cap ? cap / busbw : 1.0;
}

namespace {
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
}  // namespace

int CollectiveEngine::nccl_graph_channels(const Plan& plan) const {
  // NCCL's ring graph across nodes (the tree graph has the ring's channel count: init.cc, treeGraph
  // min = max = ringGraph->nChannels), computed when the ring plan is built (build_ring). One
  // node: 0 (the model's single-node rings are not NCCL's graph; after the dup NCCL's single-node
  // channels carry <= 30 GB/s (sm90 60 / 2) or <= 24 (sm70/80), below every cap x its protocol
  // factor).
  if (plan.num_nodes < 2 || plan.rails < 1) return 0;
  const Plan& ring =
      plan.algorithm == CollectiveAlgorithm::ring ? plan : plan_for(plan.op, CollectiveAlgorithm::ring, plan.ranks);
  return ring.graph_channels > 0 ? ring.graph_channels : plan.rails;
}

int CollectiveEngine::nccl_graph_channels_for(double ring_busbw_gb_per_s, int rails) const {
  // One channel per NIC rail (the model's rails), then ncclTopoDupChannels (search.cc, 2.20.3)
  // doubles them, up to the ring's maxChannels = MAXCHANNELS / 2 = 16 (init.cc), when the
  // per-channel bandwidth is >= 25 GB/s, except on cc > 8.0 with < 50 GB/s and more than 4
  // channels. Per-channel bandwidth: the ring's link-bound busBw / rails (NCCL's search picks a
  // speed-array entry at most that). 0 or negative busbw (nothing measured): the rails.
  if (!(ring_busbw_gb_per_s > 0)) return rails;
  const double per_channel = ring_busbw_gb_per_s / rails;
  const bool cc_above_80 = cluster_.gpu_spec(0).nvlink_generation >= 4;
  if (per_channel < 25.0 || (cc_above_80 && per_channel < 50.0 && rails > 4)) return rails;
  return std::min(2 * rails, 16);
}

int CollectiveEngine::nccl_comm_channels(int graph_channels, int rails, double ring_busbw_gb_per_s) const {
  // comm->nChannels before NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS (applied in build_ring),
  // NVIDIA/nccl src/graph/connect.cc ncclTopoPostset (2.2x; step 2 as the releases whose test
  // reads "nChannels < 16" (later ones: "2*nChannels <= maxChannels")):
  //  1. "nChannels = comm->nChannels = std::min(MAXCHANNELS,nChannels*2)": every graph channel
  //     runs twice (rings duplicated, trees split over both), MAXCHANNELS >= 32.
  //  2. "Use 4 compute channels per search channel to reach peak BW on <8 PPN": minCompCap >= 90,
  //     nNodes > 1, graphs[RING]->bwIntra > 45.0 and nChannels < 16: doubled again (bwIntra: the
  //     graph's per-channel bandwidth after ncclTopoDupChannels divided it by the dup factor).
  //  3. "Honor NCCL_MIN_NRINGS/NCCL_MAX_NRINGS": nChannels = min(ncclMaxNchannels(), nChannels,
  //     maxCTAs), then copyChannels up to max(ncclMinNchannels(), minCTAs): the first channels
  //     are kept, then copied in order.
  // The graph (and so the tuner's bandwidths, tuning.cc "busBw = graphs[a]->nChannels * bw") is
  // computed before and is not changed by step 3.
  int c = std::min(kNcclMaxChannels, 2 * graph_channels);
  const double bw_intra = ring_busbw_gb_per_s / rails / (graph_channels > rails ? 2.0 : 1.0);
  if (cluster_.gpu_spec(0).nvlink_generation >= 4 && bw_intra > 45.0 && c < 16) c *= 2;
  return c;
}

double CollectiveEngine::per_channel_cap_factor(const Plan& plan, double factor, double bytes_per_rank,
                                                const std::array<std::array<double, 3>, 4>& table) const {
  // busBw (NCCL's: bytes each rank moves per byte of S / time; tree: 2, NCCL's algBw = busBw / 2)
  // at `factor` against graph channels x the per-channel maximum. Returns the factor <= 1 that
  // applies the cap (1 when no cap applies).
  const int channels = nccl_graph_channels(plan);
  if (channels == 0 || plan.phases.size() != 1 || plan.phases[0].seconds_per_byte <= 0) return 1.0;
  const int gen = cluster_.gpu_spec(0).nvlink_generation;
  const int cc = gen >= 5 ? 3 : gen == 4 ? 2 : gen == 3 ? 1 : 0;
  const double per_channel = table[cc][plan.num_nodes <= 2 ? plan.num_nodes - 1 : 2];
  if (per_channel <= 0) return 1.0;
  const double cap = channels * per_channel * 1e9;
  const double busbw = bytes_per_rank * factor / plan.phases[0].seconds_per_byte;
  return busbw > cap ? cap / busbw : 1.0;
}

double CollectiveEngine::protocol_factor(const Plan& plan, int p, double bytes) const {
  const int nodes = plan.num_nodes;
  const int ppn = static_cast<int>(plan.ranks.size()) / std::max(1, nodes);
  switch (plan.algorithm) {
    case CollectiveAlgorithm::tree: {
      // NCCL tuning.cc (Tree, 2.20.3 and 2.24+ alike): busBw = min(busBw x 0.92, nChannels x
      // perChMaxTreeBw); LL: min(busBw / 3.8, llMaxBw); LL128: min(busBw x (7/9 one node, else
      // 120/128), nChannels x perChMaxTreeLL128Bw); x 0.85 when a node holds one GPU (pattern
      // TREE); then the tree correction factor of the size.
      double f = 0.92;
      f *= per_channel_cap_factor(plan, f, 2.0, kPerChMaxTree);
      if (p == kLL) f = f / 3.8 * ll_max_factor(plan, f / 3.8, 2.0);
      if (p == kLL128) {
        f *= nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
        f *= per_channel_cap_factor(plan, f, 2.0, kPerChMaxTreeLL128);
      }
      if (plan.single_gpu_node) f *= kTreePatternFactor;
      const int log_size = log2i(static_cast<std::int64_t>(bytes) >> 6);
      if (log_size < 23) f *= kTreeCorrection[p][log_size];
      return f;
    }
    case CollectiveAlgorithm::nvls:
      return 1.0;  // Simple only; NVLS efficiency is on the links
    case CollectiveAlgorithm::nvls_tree:
      return nvls_tree_max_factor(plan);  // Simple only; NVLS efficiency is on the links
    case CollectiveAlgorithm::pat:
      return kPatBandwidthFactor;  // Simple only
    default:
      break;
  }
  // Ring (and hierarchical, direct): LL busBw x 1/4 (multi-node, all-reduce, reduce) else x 1/3,
  // capped at llMaxBw (ll_max_factor); LL128 x 0.92 (120/128 bytes of each line carry data; 0.7
  // with one GPU per node); Simple x 1.
  switch (p) {
    case kLL: {
      const double f =
          (nodes > 1 || plan.op == CollectiveOp::all_reduce || plan.op == CollectiveOp::reduce) ? 0.25 : 1.0 / 3.0;
      return f * ll_max_factor(plan, f, 1.0);
    }
    case kLL128: {
      // NCCL tuning.cc (2.20.3): min(busBw x (ppn < 2 ? 0.7 : 0.92), nChannels x
      // perChMaxRingLL128Bw), across nodes (graph channels: nccl_graph_channels).
      const double f = (nodes > 1 && ppn < 2) ? 0.7 : 0.92;
      if (plan.algorithm != CollectiveAlgorithm::ring) return f;
      return f * per_channel_cap_factor(plan, f, edge_fraction(plan.op, static_cast<int>(plan.ranks.size())),
                                        kPerChMaxRingLL128);
    }
    default:
      return 1.0;
  }
}

double CollectiveEngine::phase_latency_s(const Plan& plan, const Phase& phase, int p, double bytes) const {
  double lat = phase.latency_s[p];
  // NCCL: ring Simple all-reduce across nodes, once each rank's share of a channel reaches 64 B.
  // NCCL tuning.cc ncclTopoGetAlgoTime (2.20.3): "nBytes/(comm->nChannels*comm->nRanks) >= 64".
  const int channels = plan.comm_channels > 0 ? plan.comm_channels : plan.channels;
  if (phase.ring_plateau && p == kSimple && bytes / (channels * static_cast<double>(plan.ranks.size())) >= 64) {
    lat *= NcclLatencyUs::ring_plateau;
  }
  return lat;
}

double CollectiveEngine::calibrated_latency_s(const Plan& plan, const Phase& phase, int p, double bytes) const {
  double lat = phase_latency_s(plan, phase, p, bytes);
  if (const CalibrationProfile* prof = cluster_.spec().profile.get()) lat *= prof->latency_scale;
  if (plan.fit != nullptr) {
    lat *= plan.fit->latency_scale * plan.fit->protocol_latency_scale[static_cast<std::size_t>(p)] *
           plan.fit->correction(bytes);
  }
  return lat;
}

void CollectiveEngine::finish_phase(Plan& plan, Phase& phase, std::span<const std::span<const sim::ResourceId>> paths,
                                    std::span<const double> fractions) const {
  phase.first_flow = static_cast<std::uint32_t>(plan.flows.size());
  phase.num_flows = static_cast<std::uint32_t>(paths.size());
  const std::size_t nres = net_.num_resources();
  if (load_scratch_.size() < nres) {
    load_scratch_.resize(nres, 0.0);
    count_scratch_.resize(nres, 0);
  }
  auto eff = [&](sim::ResourceId r) {
    return efficiency(r) * (cluster_.link_kind(r) == LinkKind::nvlink ? phase.nvlink_scale : 1.0);
  };
  touched_scratch_.clear();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    FlowTemplate f;
    f.path = paths[i];
    f.byte_fraction = fractions[i];
    for (auto r : f.path) {
      if (count_scratch_[r] == 0) touched_scratch_.push_back(r);
      ++count_scratch_[r];
      load_scratch_[r] += f.byte_fraction;
    }
    plan.flows.push_back(f);
  }
  // Per-flow cap: the flows of this phase together get at most efficiency x capacity on each
  // link, shared in proportion to their bytes (a pipelined collective moves every edge's bytes
  // in step, so all flows on the bottleneck finish together); the bottleneck time per byte is
  // the largest load / (efficiency x capacity).
  // A GPU's PCIe link carrying this phase's bytes both ways is also bounded in sum (up + down <=
  // duplex_efficiency x capacity); reverse's load is 0 when untouched (the scratch is all zeros).
  auto duplex_load = [&](sim::ResourceId r) {
    const sim::ResourceId rev = cluster_.gpu_pcie_reverse(r);
    if (rev == Cluster::kNoResource || load_scratch_[r] <= 0 || load_scratch_[rev] <= 0) return 0.0;
    return load_scratch_[r] + load_scratch_[rev];
  };
  double spb = 0;
  for (auto r : touched_scratch_) {
    const double t = load_scratch_[r] / (eff(r) * net_.capacity(r));
    if (t > spb) {
      spb = t;
      phase.bottleneck = cluster_.link_kind(r);
      phase.bottleneck_duplex = false;
    }
    const double both = duplex_load(r);
    if (both > 0) {
      phase.duplex_load_seconds_per_byte = std::max(phase.duplex_load_seconds_per_byte, both / net_.capacity(r));
      const double td = both / (duplex_efficiency(r) * net_.capacity(r));
      if (td > spb) {  // strictly: with the default budget a symmetric load ties the one-way bound
        spb = td;
        phase.bottleneck = LinkKind::pcie;
        phase.bottleneck_duplex = true;
      }
    }
  }
  for (std::uint32_t i = phase.first_flow; i < plan.flows.size(); ++i) {
    FlowTemplate& f = plan.flows[i];
    double cap = std::numeric_limits<double>::infinity();
    for (auto r : f.path) {
      cap = std::min(cap, eff(r) * net_.capacity(r) * f.byte_fraction / load_scratch_[r]);
      const double both = duplex_load(r);
      if (both > 0) cap = std::min(cap, duplex_efficiency(r) * net_.capacity(r) * f.byte_fraction / both);
    }
    f.cap_bytes_per_s = cap;
  }
  for (auto r : touched_scratch_) {
    load_scratch_[r] = 0;
    count_scratch_[r] = 0;
  }
  phase.seconds_per_byte = spb;
}

namespace {

// Orders of the rings over GPUs `local` of one node: one ring in the given order, or on a
// full-mesh node one ring per stride s coprime with n (ring i -> i+s uses the direct links
// (i, i+s), so the rings use disjoint links).
void single_node_rings(const Cluster& cluster, std::span<const int> local, std::vector<std::vector<int>>& rings) {
  rings.clear();
  const int n = static_cast<int>(local.size());
  if (cluster.scale_up() != ScaleUp::mesh || n <= 2) {
    rings.emplace_back(local.begin(), local.end());
    return;
  }
  for (int s = 1; s < n; ++s) {
    if (std::gcd(s, n) != 1) continue;
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = local[(static_cast<long long>(i) * s) % n];
    rings.push_back(std::move(order));
  }
}

/// Position in `local` of the GPU owning local NIC `rail` (or c * size / channels if none owns it).
int owner_position(const Cluster& cluster, const std::vector<int>& local, int rail, int c, int channels) {
  const int owner = cluster.gpu_of_nic(rail);
  for (std::size_t i = 0; i < local.size(); ++i) {
    if (cluster.local_rank(local[i]) == owner) return static_cast<int>(i);
  }
  return static_cast<int>(static_cast<long long>(c) * static_cast<long long>(local.size()) / channels);
}

}  // namespace

void CollectiveEngine::build_ring(Plan& plan, const Groups& g) const {
  const int n = static_cast<int>(plan.ranks.size());
  const int nodes = g.nodes();
  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  // Ring orders with the rail each order's inter-node edges use.
  std::vector<std::vector<int>> rings;
  std::vector<int> ring_rail;
  if (nodes == 1) {
    single_node_rings(cluster_, g.per_node[0], rings);
    ring_rail.assign(rings.size(), -1);
  } else {
    const int channels = static_cast<int>(g.rails.size());
    for (int c = 0; c < channels; ++c) {
      std::vector<int> order;
      order.reserve(n);
      for (const auto& local : g.per_node) {
        const int pk = static_cast<int>(local.size());
        const int start = owner_position(cluster_, local, g.rails[c], c, channels);
        for (int i = 0; i < pk; ++i) order.push_back(local[(start + i) % pk]);
      }
      rings.push_back(std::move(order));
      ring_rail.push_back(g.rails[c]);
    }
  }
  plan.channels = static_cast<int>(rings.size());
  std::vector<int> path_ring;  // ring (rail) index of each path
  const double fraction = edge_fraction(plan.op, n) / rings.size();
  auto path = [&](int a, int b, int rail) {
    return rail < 0 || cluster_.node_of(a) == cluster_.node_of(b) ? cluster_.route(a, b) : cluster_.route(a, b, rail);
  };
  for (std::size_t k = 0; k < rings.size(); ++k) {
    const std::vector<int>& order = rings[k];
    const int m = static_cast<int>(order.size());
    if (plan.op == CollectiveOp::broadcast || plan.op == CollectiveOp::reduce) {
      // Chain: broadcast flows from the root (ranks[0]) onwards, reduce flows towards it.
      const int root_pos = static_cast<int>(std::find(order.begin(), order.end(), plan.ranks[0]) - order.begin());
      const int start = plan.op == CollectiveOp::broadcast ? root_pos : (root_pos + 1) % m;
      for (int i = 0; i + 1 < m; ++i) {
        paths.push_back(path(order[(start + i) % m], order[(start + i + 1) % m], ring_rail[k]));
        fractions.push_back(fraction);
        path_ring.push_back(static_cast<int>(k));
      }
      continue;
    }
    for (int i = 0; i < m; ++i) {
      paths.push_back(path(order[i], order[(i + 1) % m], ring_rail[k]));
      fractions.push_back(fraction);
      path_ring.push_back(static_cast<int>(k));
    }
  }
  Phase ph;
  ph.latency_s = ring_latency_s(plan.op, n, nodes, all_nvlink(g));
  ph.ring_plateau = plan.op == CollectiveOp::all_reduce && nodes > 1;
  finish_phase(plan, ph, paths, fractions);
  if (nodes > 1) {
    // NCCL's channels (collective.h, "channel counts"): the graph from the link-bound busBw of
    // one channel per rail, comm->nChannels after NCCL_MAX/MIN_NCHANNELS (and _CTAS), and each
    // rail's share of the data: its channels / nChannels.
    const int rails = static_cast<int>(rings.size());
    const double busbw_gb_per_s = ph.seconds_per_byte > 0 ? edge_fraction(plan.op, n) / ph.seconds_per_byte / 1e9 : 0;
    plan.graph_channels = nccl_graph_channels_for(busbw_gb_per_s, rails);
    const CollectiveSpec& spec = cluster_.spec().collectives;
    int kept = nccl_comm_channels(plan.graph_channels, rails, busbw_gb_per_s);
    if (spec.max_channels > 0) kept = std::min(kept, spec.max_channels);
    plan.comm_channels = std::max(kept, spec.min_channels);
    std::vector<int> count(rings.size(), 0);
    for (int c = 0; c < plan.comm_channels; ++c) ++count[((c % kept) % plan.graph_channels) % rails];
    if (std::any_of(count.begin(), count.end(), [&](int k) { return k != count[0]; })) {
      // Uneven: rebuild the phase with each rail's share (rails without a channel carry nothing).
      std::vector<std::span<const sim::ResourceId>> used;
      std::vector<double> shares;
      for (std::size_t i = 0; i < paths.size(); ++i) {
        const int k = count[static_cast<std::size_t>(path_ring[i])];
        if (k == 0) continue;
        used.push_back(paths[i]);
        shares.push_back(edge_fraction(plan.op, n) * k / plan.comm_channels);
      }
      plan.flows.resize(ph.first_flow);
      Phase uneven;
      uneven.latency_s = ph.latency_s;
      uneven.ring_plateau = ph.ring_plateau;
      finish_phase(plan, uneven, used, shares);
      ph = uneven;
      plan.channels = static_cast<int>(std::count_if(count.begin(), count.end(), [](int k) { return k > 0; }));
    }
  }
  plan.phases.push_back(ph);
}

void CollectiveEngine::build_hierarchical(Plan& plan, const Groups& g) const {
  const int p = g.ppn();
  const int nodes = g.nodes();
  const bool nvlink = all_nvlink(g);
  plan.channels = p;
  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  std::vector<std::vector<int>> rings;
  auto add_phase = [&](const std::array<double, 3>& latency) {
    Phase ph;
    ph.latency_s = latency;
    finish_phase(plan, ph, paths, fractions);
    plan.phases.push_back(ph);
    paths.clear();
    fractions.clear();
  };
  auto add_rings = [&](CollectiveOp op) {
    for (const auto& local : g.per_node) {
      single_node_rings(cluster_, local, rings);
      for (const auto& ring : rings) {
        for (int i = 0; i < p; ++i) {
          paths.push_back(cluster_.route(ring[i], ring[(i + 1) % p]));
          fractions.push_back(edge_fraction(op, p) / rings.size());
        }
      }
    }
  };
  // Phase 1: reduce-scatter inside every node (all nodes concurrently).
  add_rings(CollectiveOp::reduce_scatter);
  add_phase(ring_latency_s(CollectiveOp::reduce_scatter, p, 1, nvlink));
  // Phase 2: p inter-node all-reduces of S/p, one per local position (over its own rail).
  for (int q = 0; q < p; ++q) {
    for (int k = 0; k < nodes; ++k) {
      const int a = g.per_node[k][q], b = g.per_node[(k + 1) % nodes][q];
      paths.push_back(cluster_.route(a, b));
      fractions.push_back(edge_fraction(CollectiveOp::all_reduce, nodes) / p);
    }
  }
  add_phase(ring_latency_s(CollectiveOp::all_reduce, nodes, nodes, nvlink));
  // Phase 3: all-gather inside every node.
  add_rings(CollectiveOp::all_gather);
  add_phase(ring_latency_s(CollectiveOp::all_gather, p, 1, nvlink));
}

void CollectiveEngine::build_tree(Plan& plan, const Groups& g, bool nvls) const {
  const int nodes = g.nodes();
  const int rails = static_cast<int>(g.rails.size());
  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  // Chains / heads per rail on every node.
  std::vector<std::vector<std::vector<int>>> chains(rails);  // [rail][node] -> GPUs, head first
  for (int r = 0; r < rails; ++r) {
    for (const auto& local : g.per_node) {
      const int pk = static_cast<int>(local.size());
      const int start = owner_position(cluster_, local, g.rails[r], r, rails);
      std::vector<int> chain;
      for (int i = 0; i < pk; ++i) chain.push_back(local[(start + i) % pk]);
      chains[r].push_back(std::move(chain));
    }
  }
  Phase ph;
  if (!nvls) {
    // NCCL Tree: two channels per rail, one per tree; each carries S / C up and down.
    const int channels = 2 * rails;
    plan.channels = channels;
    const double f = 1.0 / channels;
    for (int r = 0; r < rails; ++r) {
      for (int t = 0; t < 2; ++t) {
        for (int k = 0; k < nodes; ++k) {
          const std::vector<int>& chain = chains[r][k];
          for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
            paths.push_back(cluster_.route(chain[i + 1], chain[i]));  // reduce: towards the head
            fractions.push_back(f);
            paths.push_back(cluster_.route(chain[i], chain[i + 1]));  // broadcast: away from it
            fractions.push_back(f);
          }
          const int u = dtree_parent(nodes, k, t);
          if (u < 0) continue;
          const int head = chain[0], parent = chains[r][u][0];
          paths.push_back(cluster_.route(head, parent, g.rails[r]));
          fractions.push_back(f);
          paths.push_back(cluster_.route(parent, head, g.rails[r]));
          fractions.push_back(f);
        }
      }
    }
    ph.latency_s = tree_latency_s(g.ppn(), nodes, all_nvlink(g));
  } else {
    // NVLS inside nodes: each GPU sends its buffer to the switch and receives the multicast
    // result; each rail's head also receives its reduced share and multicasts it.
    plan.channels = rails;
    for (const auto& local : g.per_node) {
      const int pk = static_cast<int>(local.size());
      for (int i = 0; i < pk; ++i) {
        const int a = local[i], b = local[(i + 1) % pk];
        paths.push_back(cluster_.route(a, b).subspan(0, 1));  // nvl_up(a)
        fractions.push_back(1.0);
        paths.push_back(cluster_.route(b, a).subspan(1, 1));  // nvl_down(a)
        fractions.push_back(1.0);
      }
    }
    for (int r = 0; r < rails; ++r) {
      for (int k = 0; k < nodes; ++k) {
        const std::vector<int>& chain = chains[r][k];
        const int head = chain[0], other = chain[1 % chain.size()];
        paths.push_back(cluster_.route(other, head).subspan(1, 1));  // reduced share into the head
        fractions.push_back(1.0 / rails);
        paths.push_back(cluster_.route(head, other).subspan(0, 1));  // head multicasts it
        fractions.push_back(1.0 / rails);
        for (int t = 0; t < 2; ++t) {
          const int u = dtree_parent(nodes, k, t);
          if (u < 0) continue;
          const int parent = chains[r][u][0];
          paths.push_back(cluster_.route(head, parent, g.rails[r]));
          fractions.push_back(0.5 / rails);
          paths.push_back(cluster_.route(parent, head, g.rails[r]));
          fractions.push_back(0.5 / rails);
        }
      }
    }
    ph.nvlink_scale =
        cluster_.gpu_spec(0).nvlink_generation >= 5 ? LinkEfficiency::nvls_blackwell : LinkEfficiency::nvls_hopper;
    const double us = NcclLatencyUs::nvlink_nvls_tree + 2 * log2i(nodes) * NcclLatencyUs::net_nvls_tree;
    ph.latency_s = {us * 1e-6, us * 1e-6, us * 1e-6};
    plan.protocol_allowed = {false, false, true};
  }
  finish_phase(plan, ph, paths, fractions);
  plan.phases.push_back(ph);
}

void CollectiveEngine::build_nvls(Plan& plan, const Groups& g) const {
  const std::vector<int>& local = g.per_node[0];
  const int n = static_cast<int>(local.size());
  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  // Bytes per GPU port, as fractions of S (NCCL src/device/all_reduce.h, all_gather.h,
  // reduce_scatter.h, NVLS variants: multimem.ld_reduce reads a chunk from every GPU of the
  // multicast group and returns the sum; multimem.st stores once and the switch replicates the
  // chunk to every member, the writer included):
  //   all_reduce: up S (reduction reads) + S/n (multicast of the own reduced share);
  //               down S/n (reduced share) + S (multicast results)       -> 1 + 1/n each way;
  //   all_gather: up S/n (own chunk stored once), down S (n chunks from the switch);
  //   reduce_scatter: up S (every chunk read for the reductions), down S/n (own reduced chunk).
  double up = 1.0 + 1.0 / n, down = 1.0 + 1.0 / n;
  if (plan.op == CollectiveOp::all_gather) {
    up = 1.0 / n;
    down = 1.0;
  } else if (plan.op == CollectiveOp::reduce_scatter) {
    up = 1.0;
    down = 1.0 / n;
  }
  for (int i = 0; i < n; ++i) {
    const int a = local[i], b = local[(i + 1) % n];
    paths.push_back(cluster_.route(a, b).subspan(0, 1));  // nvl_up(a)
    fractions.push_back(up);
    paths.push_back(cluster_.route(b, a).subspan(1, 1));  // nvl_down(a)
    fractions.push_back(down);
  }
  plan.channels = n;
  Phase ph;
  ph.nvlink_scale =
      cluster_.gpu_spec(0).nvlink_generation >= 5 ? LinkEfficiency::nvls_blackwell : LinkEfficiency::nvls_hopper;
  const double us = NcclLatencyUs::nvlink_nvls;
  ph.latency_s = {us * 1e-6, us * 1e-6, us * 1e-6};
  plan.protocol_allowed = {false, false, true};
  finish_phase(plan, ph, paths, fractions);
  plan.phases.push_back(ph);
}

void CollectiveEngine::build_pat(Plan& plan, const Groups& g) const {
  // PAT (Parallel Aggregated Trees; S. Jeaugey, "PAT: a new algorithm for all-gather and
  // reduce-scatter operations at scale", arXiv:2506.20252, 2025; NCCL 2.23+): Bruck's algorithm
  // with the dimensions reversed (far peers first). Rank o's chunk (S/n) reaches offset j (1..n-1)
  // from offset j - lowbit(j), a transfer over distance lowbit(j); each rank receives each chunk
  // once. So every rank sends to its peer at distance 2^k the chunks of the offsets j < n whose
  // lowest set bit is 2^k: count_k = #{j in [1, n-1] : lowbit(j) = 2^k}, summing to n-1
  // ((n-1)/n S per rank, as a ring). all_gather sends to rank + 2^k; reduce_scatter is its
  // transpose (partial sums to rank - 2^k). One GPU per node: every transfer crosses the network,
  // spread over the GPU's NICs (NCCL's channels over the rails).
  const std::vector<int>& ranks = plan.ranks;
  const int n = static_cast<int>(ranks.size());
  const int rails = static_cast<int>(g.rails.size());
  plan.channels = rails;
  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  for (int d = 1; d < n; d <<= 1) {
    int count = 0;
    for (int j = d; j < n; j += 2 * d) ++count;  // j with lowbit(j) == d: d, 3d, 5d, ...
    const double f = static_cast<double>(count) / n / rails;
    for (int i = 0; i < n; ++i) {
      const int peer = plan.op == CollectiveOp::all_gather ? (i + d) % n : (i - d + n) % n;
      for (int r = 0; r < rails; ++r) {
        paths.push_back(cluster_.route(ranks[i], ranks[peer], g.rails[r]));
        fractions.push_back(f);
      }
    }
  }
  Phase ph;
  // NCCL tuning.cc (2.23+): latency = baseLat PAT 8.0 + log2i(nNodes) x (interLat / 3.5) +
  // nRanks x 2.8 us ("still a linear part"), interLat = hwLat NET PAT Simple 14 us.
  const double us = NcclLatencyUs::base_pat +
                    log2i(g.nodes()) * NcclLatencyUs::net_pat / NcclLatencyUs::pat_log_divisor +
                    n * NcclLatencyUs::pat_per_rank;
  ph.latency_s = {us * 1e-6, us * 1e-6, us * 1e-6};
  plan.protocol_allowed = {false, false, true};
  finish_phase(plan, ph, paths, fractions);
  plan.phases.push_back(ph);
}

void CollectiveEngine::build_plan(Plan& plan) const {
  const std::vector<int>& ranks = plan.ranks;
  const int n = static_cast<int>(ranks.size());
  Groups g;
  for (int r : ranks) {
    const int node = cluster_.node_of(r);
    auto it = std::find(g.node_ids.begin(), g.node_ids.end(), node);
    if (it == g.node_ids.end()) {
      g.node_ids.push_back(node);
      g.per_node.emplace_back();
      it = g.node_ids.end() - 1;
    }
    g.per_node[it - g.node_ids.begin()].push_back(r);
  }
  const int nodes = g.nodes();
  plan.num_nodes = nodes;
  for (const auto& local : g.per_node) g.same_size = g.same_size && local.size() == g.per_node[0].size();
  // Rails: the NICs owned by the group's GPUs on the first node (NodeTemplate's GPU-NIC rule).
  if (cluster_.nics_per_node() > 0) {
    const int q = cluster_.nics_per_node(), gpn = cluster_.gpus_per_node();
    for (int r : g.per_node[0]) {
      const int l = cluster_.local_rank(r);
      const int first = cluster_.nic_of_local(l);
      const int count = q > gpn ? std::max(1, (l + 1) * q / gpn - first) : 1;
      for (int k = 0; k < count; ++k) {
        if (std::find(g.rails.begin(), g.rails.end(), first + k) == g.rails.end()) g.rails.push_back(first + k);
      }
    }
  }
  if (nodes > 1) {
    plan.rails = static_cast<int>(g.rails.size());
    for (const auto& local : g.per_node) plan.single_gpu_node = plan.single_gpu_node || local.size() == 1;
  }
  const GpuSpec& gpu = cluster_.gpu_spec(0);
  const bool nvlink = cluster_.has_scale_up() && all_nvlink(g);
  const bool ll128 = nvlink && gpu.nvlink_generation >= 2 && gpu.nvlink_generation <= 4;
  plan.protocol_allowed = {true, ll128, true};
  if (n == 1) return;  // completes immediately

  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  switch (plan.algorithm) {
    case CollectiveAlgorithm::automatic:
    case CollectiveAlgorithm::ring:
      break;
    case CollectiveAlgorithm::hierarchical:
      plan.applicable = plan.op == CollectiveOp::all_reduce && nodes > 1 && g.ppn() > 1 && g.same_size;
      if (plan.applicable) build_hierarchical(plan, g);
      return;
    case CollectiveAlgorithm::tree:
      plan.applicable = plan.op == CollectiveOp::all_reduce && nodes > 1 && !g.rails.empty();
      if (plan.applicable) build_tree(plan, g, false);
      return;
    case CollectiveAlgorithm::pat:
      // NCCL tuning.cc ncclPatEnable (2.23+): all_gather / reduce_scatter, Simple, only with one
      // GPU per node (nNodes == nRanks) and SM60+ (every GPU of the catalog).
      plan.applicable = (plan.op == CollectiveOp::all_gather || plan.op == CollectiveOp::reduce_scatter) &&
                        nodes == n && nodes > 1 && !g.rails.empty();
      if (plan.applicable) build_pat(plan, g);
      return;
    case CollectiveAlgorithm::nvls:
    case CollectiveAlgorithm::nvls_tree: {
      const bool nvls_hw = cluster_.scale_up() == ScaleUp::nvswitch && gpu.nvlink_generation >= 4;
      if (plan.algorithm == CollectiveAlgorithm::nvls) {
        // NCCL enables NVLS on NVSwitch systems with more than 2 GPUs (src/transport/nvls.cc);
        // all_gather / reduce_scatter over NVLS only inside one node (src/enqueue.cc: "we only
        // support single-node NVLS allgather and reducescatter").
        const bool op_ok = plan.op == CollectiveOp::all_reduce || plan.op == CollectiveOp::all_gather ||
                           plan.op == CollectiveOp::reduce_scatter;
        plan.applicable = op_ok && nvls_hw && nodes == 1 && n > 2;
        if (plan.applicable) build_nvls(plan, g);
      } else {
        plan.applicable = plan.op == CollectiveOp::all_reduce && nvls_hw && nodes > 1 && g.ppn() > 1 && g.same_size &&
                          !g.rails.empty();
        if (plan.applicable) build_tree(plan, g, true);
      }
      return;
    }
  }
  plan.algorithm = CollectiveAlgorithm::ring;
  if (plan.op == CollectiveOp::send_recv) {
    paths.push_back(cluster_.route(ranks[0], ranks[1]));
    fractions.push_back(1.0);
    Phase ph;
    ph.latency_s = ring_latency_s(plan.op, 2, nodes, nvlink);
    finish_phase(plan, ph, paths, fractions);
    plan.phases.push_back(ph);
    return;
  }
  if (plan.op == CollectiveOp::all_to_all) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        paths.push_back(cluster_.route(ranks[i], ranks[j]));
        fractions.push_back(1.0 / n);
      }
    }
    Phase ph;
    ph.latency_s = ring_latency_s(plan.op, n, nodes, nvlink);
    finish_phase(plan, ph, paths, fractions);
    plan.phases.push_back(ph);
    return;
  }
  if (nodes > 1 && g.rails.empty()) {
    throw std::invalid_argument("collective: the group spans nodes without NICs");
  }
  build_ring(plan, g);
}

const CollectiveEngine::Plan& CollectiveEngine::plan_for(CollectiveOp op, CollectiveAlgorithm algorithm,
                                                         std::span<const int> ranks) const {
  const std::uint64_t h = plan_hash(op, algorithm, ranks);
  auto& bucket = plan_index_[h];
  for (std::uint32_t idx : bucket) {
    const Plan& p = plans_[idx];
    if (p.op == op && p.algorithm == algorithm &&
        std::equal(p.ranks.begin(), p.ranks.end(), ranks.begin(), ranks.end())) {
      return p;
    }
  }
  Plan& plan = plans_.emplace_back();
  plan.op = op;
  plan.algorithm = algorithm == CollectiveAlgorithm::automatic ? CollectiveAlgorithm::ring : algorithm;
  plan.ranks.assign(ranks.begin(), ranks.end());
  build_plan(plan);
  plan.algorithm = algorithm == CollectiveAlgorithm::automatic ? CollectiveAlgorithm::ring : plan.algorithm;
  if (const CalibrationProfile* p = cluster_.spec().profile.get()) {
    plan.fit = p->collective(op, static_cast<int>(ranks.size()));
  }
  bucket.push_back(static_cast<std::uint32_t>(plans_.size() - 1));
  return plan;
}

CollectiveChoice CollectiveEngine::evaluate(const Plan& plan, double bytes) const {
  CollectiveChoice best;
  best.algorithm = plan.algorithm;
  best.channels = plan.channels;
  best.latency_s = std::numeric_limits<double>::infinity();
  const auto& forced = cluster_.spec().collectives.protocol;
  const double bw_scale = plan.fit != nullptr ? plan.fit->bandwidth_scale : 1.0;
  const double correction = plan.fit != nullptr ? plan.fit->correction(bytes) : 1.0;
  double max_phase_bw = -1;
  for (const Phase& ph : plan.phases) {
    if (ph.seconds_per_byte > max_phase_bw) {
      max_phase_bw = ph.seconds_per_byte;
      best.bottleneck = ph.bottleneck;
      best.bottleneck_duplex = ph.bottleneck_duplex;
      best.link_seconds_per_byte = ph.seconds_per_byte;
      best.duplex_load_seconds_per_byte = ph.duplex_load_seconds_per_byte;
    }
  }
  bool have = false;
  for (int p : {kSimple, kLL128, kLL}) {
    if (!plan.protocol_allowed[p]) continue;
    if (forced.has_value() && static_cast<int>(*forced) != p) continue;
    const double factor = protocol_factor(plan, p, bytes) *
                          (plan.fit != nullptr ? plan.fit->protocol_bandwidth_scale[static_cast<std::size_t>(p)] : 1.0);
    double lat = 0, bw = 0;
    for (const Phase& ph : plan.phases) {
      lat += calibrated_latency_s(plan, ph, p, bytes);
      bw += bytes * ph.seconds_per_byte / factor / bw_scale * correction;
    }
    if (!have || lat + bw < best.seconds()) {
      best.protocol = static_cast<CollectiveProtocol>(p);
      best.latency_s = lat;
      best.bandwidth_s = bw;
      have = true;
    }
  }
  return best;
}

CollectiveChoice CollectiveEngine::choose_plan(const CollectiveCall& call, const Plan** plan) const {
  validate(call);
  *plan = nullptr;
  if (call.ranks.size() == 1) return CollectiveChoice{};
  const Plan& ring = plan_for(call.op, CollectiveAlgorithm::ring, call.ranks);
  CollectiveChoice best = evaluate(ring, call.bytes);
  *plan = &ring;
  if (!is_ring_op(call.op)) return best;
  const CollectiveAlgorithm forced =
      call.algorithm != CollectiveAlgorithm::automatic ? call.algorithm : cluster_.spec().collectives.algorithm;
  if (forced != CollectiveAlgorithm::automatic) {
    const Plan& p = plan_for(call.op, forced, call.ranks);
    if (p.applicable) {
      const CollectiveChoice c = evaluate(p, call.bytes);
      if (std::isfinite(c.seconds())) {
        *plan = &p;
        return c;
      }
    }
    // Not applicable (or no allowed protocol): automatic, as NCCL falls back to what can run.
  }
  // Candidates besides ring, as NCCL's tuner (tuning.cc): all_reduce: tree, NVLS, NVLS tree (and
  // our hierarchical); all_gather / reduce_scatter: PAT and NVLS; broadcast / reduce: ring only.
  static constexpr std::array<CollectiveAlgorithm, 4> kAllReduce{CollectiveAlgorithm::hierarchical,
                                                                 CollectiveAlgorithm::tree, CollectiveAlgorithm::nvls,
                                                                 CollectiveAlgorithm::nvls_tree};
  static constexpr std::array<CollectiveAlgorithm, 2> kGatherScatter{CollectiveAlgorithm::pat,
                                                                     CollectiveAlgorithm::nvls};
  std::span<const CollectiveAlgorithm> candidates;
  if (call.op == CollectiveOp::all_reduce) candidates = kAllReduce;
  if (call.op == CollectiveOp::all_gather || call.op == CollectiveOp::reduce_scatter) candidates = kGatherScatter;
  for (CollectiveAlgorithm a : candidates) {
    const Plan& p = plan_for(call.op, a, call.ranks);
    if (!p.applicable) continue;
    const CollectiveChoice c = evaluate(p, call.bytes);
    if (c.seconds() < best.seconds()) {
      best = c;
      *plan = &p;
    }
  }
  if (!std::isfinite(best.seconds())) {
    // A forced protocol no algorithm allows: ignore it, as NCCL does for unsupported protocols.
    CollectiveChoice c = evaluate(ring, call.bytes);
    *plan = &ring;
    return c;
  }
  return best;
}

CollectiveChoice CollectiveEngine::choose(const CollectiveCall& call) const {
  const Plan* plan = nullptr;
  return choose_plan(call, &plan);
}

std::uint32_t CollectiveEngine::acquire_slot() {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(active_.size());
    active_.emplace_back();
  }
  active_[slot] = Active{};
  return slot;
}

void CollectiveEngine::start(const CollectiveCall& call, CollectiveListener* listener, std::uint64_t tag) {
  const Plan* plan = nullptr;
  const CollectiveChoice choice = choose_plan(call, &plan);  // validates
  const std::uint32_t slot = acquire_slot();
  Active& a = active_[slot];
  a.listener = listener;
  a.tag = tag;
  a.bytes = call.bytes;
  a.protocol = static_cast<std::uint8_t>(choice.protocol);
  ++in_flight_;
  if (call.ranks.size() == 1) {
    sim_.schedule_in(sim::Time::zero(), this, slot);
    return;
  }
  a.plan = plan;
  start_phase(slot);
}

void CollectiveEngine::start_phase(std::uint32_t slot) {
  Active& a = active_[slot];
  const Plan& plan = *a.plan;
  const Phase& ph = plan.phases[a.phase];
  if (a.bytes == 0 || ph.num_flows == 0) {
    sim_.schedule_in(sim::Time::from_seconds(calibrated_latency_s(plan, ph, a.protocol, a.bytes)), this, slot);
    return;
  }
  double factor = protocol_factor(plan, a.protocol, a.bytes);
  if (plan.fit != nullptr) {
    factor *=
        plan.fit->bandwidth_scale * plan.fit->protocol_bandwidth_scale[a.protocol] / plan.fit->correction(a.bytes);
  }
  a.pending = ph.num_flows;
  const double bytes = a.bytes;
  for (std::uint32_t i = 0; i < ph.num_flows; ++i) {
    const FlowTemplate& f = plan.flows[ph.first_flow + i];
    net_.start_flow(f.path, f.byte_fraction * bytes, this, slot, f.cap_bytes_per_s * factor);
  }
}

namespace {
void check_host_copy(std::span<const int> gpus, double bytes) {
  if (gpus.empty()) throw std::invalid_argument("host copy: empty GPU list");
  if (!std::isfinite(bytes) || bytes < 0)
    throw std::invalid_argument("host copy: bytes must be finite and >= 0 (got " + std::to_string(bytes) + ")");
}

/// The socket of GPU `gpu`'s host buffer in `buffers` (its own socket when `buffers` is empty), -1
/// when it makes no such copy. `gpu` must be inside the cluster.
int buffer_socket(const Cluster& cluster, const HostBuffers& buffers, int gpu) {
  if (buffers.socket_of_gpu.empty()) return cluster.socket_of_gpu(cluster.local_rank(gpu));
  if (buffers.socket_of_gpu.size() != static_cast<std::size_t>(cluster.num_gpus()))
    throw std::invalid_argument("host copy: " + std::to_string(buffers.socket_of_gpu.size()) +
                                " buffer sockets for a cluster of " + std::to_string(cluster.num_gpus()) + " GPUs");
  return buffers.socket_of_gpu[static_cast<std::size_t>(gpu)];
}

/// The route of GPU `gpu`'s copy with `buffers`; throws for a GPU outside the cluster or without a buffer.
std::vector<sim::ResourceId> buffer_route(const Cluster& cluster, const HostBuffers& buffers, int gpu, bool to_host) {
  if (gpu < 0 || gpu >= cluster.num_gpus())
    throw std::out_of_range("host copy: GPU " + std::to_string(gpu) + " outside [0, " +
                            std::to_string(cluster.num_gpus()) + ")");
  const int socket = buffer_socket(cluster, buffers, gpu);
  if (socket < 0) throw std::invalid_argument("host copy: GPU " + std::to_string(gpu) + " has no host buffer");
  return cluster.host_route(gpu, to_host, socket);
}
}  // namespace

double CollectiveEngine::host_copy_rate_cap(int gpu, bool to_host, const HostBuffers& buffers) const {
  // The GPUs of the node whose host copies cross each resource of this GPU's route (a PCIe switch
  // uplink serves every GPU under the switch, a socket link every GPU reading the other socket's
  // memory): each gets an equal share of its achievable rate.
  const auto route = buffer_route(cluster_, buffers, gpu, to_host);
  const int first = cluster_.node_of(gpu) * cluster_.gpus_per_node();
  std::vector<std::vector<sim::ResourceId>> others;
  for (int g = first; g < first + cluster_.gpus_per_node(); ++g)
    if (const int socket = buffer_socket(cluster_, buffers, g); socket >= 0)
      others.push_back(cluster_.host_route(g, to_host, socket));
  double cap = std::numeric_limits<double>::infinity();
  for (sim::ResourceId r : route) {
    int users = 0;
    for (const auto& path : others) users += std::find(path.begin(), path.end(), r) != path.end() ? 1 : 0;
    cap = std::min(cap, efficiency(r) * net_.capacity(r) / std::max(1, users));
  }
  return cap;
}

double CollectiveEngine::host_copy_seconds(std::span<const int> gpus, double bytes_per_gpu, bool to_host,
                                           const HostBuffers& buffers) const {
  check_host_copy(gpus, bytes_per_gpu);
  double seconds = 0;
  for (int g : gpus) seconds = std::max(seconds, bytes_per_gpu / host_copy_rate_cap(g, to_host, buffers));
  return seconds;
}

void CollectiveEngine::start_host_copy(std::span<const int> gpus, double bytes_per_gpu, bool to_host,
                                       CollectiveListener* listener, std::uint64_t tag, const HostBuffers& buffers) {
  check_host_copy(gpus, bytes_per_gpu);
  std::vector<std::vector<sim::ResourceId>> paths;
  std::vector<double> caps;
  for (int g : gpus) {  // validates every GPU before any flow starts
    paths.push_back(buffer_route(cluster_, buffers, g, to_host));
    caps.push_back(host_copy_rate_cap(g, to_host, buffers));
  }
  const std::uint32_t slot = acquire_slot();
  Active& a = active_[slot];
  a.listener = listener;
  a.tag = tag;
  a.bytes = bytes_per_gpu;
  a.pending = static_cast<std::uint32_t>(gpus.size());
  ++in_flight_;
  for (std::size_t i = 0; i < paths.size(); ++i) net_.start_flow(paths[i], bytes_per_gpu, this, slot, caps[i]);
}

void CollectiveEngine::on_flow_complete(sim::FlowId /*flow*/, std::uint64_t tag) {
  const auto slot = static_cast<std::uint32_t>(tag);
  Active& a = active_[slot];
  if (a.plan == nullptr) {  // host copy: done when every GPU's flow is
    if (--a.pending == 0) sim_.schedule_in(sim::Time::zero(), this, slot);
    return;
  }
  if (--a.pending == 0) {
    sim_.schedule_in(
        sim::Time::from_seconds(calibrated_latency_s(*a.plan, a.plan->phases[a.phase], a.protocol, a.bytes)), this,
        slot);
  }
}

void CollectiveEngine::on_event(std::uint64_t tag) {
  const auto slot = static_cast<std::uint32_t>(tag);
  Active& a = active_[slot];
  if (a.plan != nullptr && a.phase + 1u < a.plan->phases.size()) {
    ++a.phase;
    start_phase(slot);
    return;
  }
  CollectiveListener* listener = a.listener;
  const std::uint64_t user_tag = a.tag;
  release(slot);
  if (listener != nullptr) listener->on_collective_done(user_tag);
}

void CollectiveEngine::release(std::uint32_t slot) {
  active_[slot] = Active{};
  free_slots_.push_back(slot);
  --in_flight_;
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
  }
  return "?";
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
