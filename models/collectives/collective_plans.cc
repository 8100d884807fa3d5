// Plans for every algorithm: the concurrent flows of each phase on the cluster's routes. See collective_plans.h; the
// model: collective_engine.h.
//
// Why concurrent flows per edge: NCCL pipelines a collective in chunks, so in steady state every edge of every channel
// is busy at once and the collective takes (bytes each edge must carry) / (bandwidth that edge gets). A flow per
// (channel, edge) with the edge's total bytes reproduces exactly that, lets the FlowNetwork find the slowest link, and
// makes other traffic on the same links slow the collective down. NCCL's chunk-level latency is added after the flows
// drain, as NCCL's tuner adds it: time = latency + bytes / bandwidth.

#include "models/collectives/collective_plans.h"

#include <algorithm>
#include <array>
#include <bit>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <utility>

#include "models/collectives/nccl_tuning.h"
#include "models/collectives/nccl_versions.h"

namespace traincast::models {
namespace {
// NCCL's binary tree (src/graph/trees.cc ncclGetBtree): the parent of `rank`, -1 for the root.
int btree_parent(int n, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}
}  // namespace

int dtree_parent(int n, int rank, int tree) {
  if (tree == 0) return btree_parent(n, rank);
  if (n % 2 == 1) {
    const int u = btree_parent(n, (rank - 1 + n) % n);
    return u == -1 ? -1 : (u + 1) % n;
  }
  const int u = btree_parent(n, n - 1 - rank);
  return u == -1 ? -1 : n - 1 - u;
}

namespace {
using Paths = std::vector<std::span<const sim::ResourceId>>;

// Orders of the rings over GPUs `local` of one node: the search channels of NCCL's ring graph on that node
// (nccl_topo_search.h; ncclTopoDupChannels only copies them), channels with the same order merged into one ring
// carrying their share (weights: fraction of the data, summing to 1); two GPUs: one ring.
void single_node_rings(const PlanInputs& in, std::span<const int> local, std::vector<std::vector<int>>& rings,
                       std::vector<double>& weights) {
  rings.clear();
  weights.clear();
  if (local.size() <= 2) {
    rings.emplace_back(local.begin(), local.end());
    weights.push_back(1.0);
    return;
  }
  const NcclTopoGraph& graph = in.scratch.topo.ring_graph(in.cluster, in.net, local, -1);
  const int channels = graph.search_channels;
  for (int c = 0; c < channels; ++c) {  // weights count the channels first
    std::vector<int> order;
    for (int pos : graph.channels[static_cast<std::size_t>(c)].order)
      order.push_back(local[static_cast<std::size_t>(pos)]);
    const auto same = std::find(rings.begin(), rings.end(), order);
    if (same == rings.end()) {
      rings.push_back(std::move(order));
      weights.push_back(1.0);
    } else {
      weights[static_cast<std::size_t>(same - rings.begin())] += 1.0;
    }
  }
  for (double& w : weights) w /= channels;
}

}  // namespace

std::vector<std::vector<std::vector<int>>> rail_chains(const RankGroups& g) {
  if (g.graph == nullptr) return {{g.per_node[0]}};  // one node: one chain in rank order
  const NcclTopoGraph& graph = *g.graph;
  const int channels = graph.search_channels;
  std::vector<std::vector<std::vector<int>>> chains(channels);  // [channel][node] -> GPUs, head first
  for (int c = 0; c < channels; ++c) {
    const std::vector<int>& order = graph.channels[static_cast<std::size_t>(c)].order;
    for (const auto& local : g.per_node) {
      std::vector<int> chain;
      chain.reserve(local.size());
      if (local.size() == order.size()) {
        for (int pos : order) chain.push_back(local[static_cast<std::size_t>(pos)]);
      } else {
        chain.assign(local.begin(), local.end());  // a node holding another count: rank order
      }
      chains[c].push_back(std::move(chain));
    }
  }
  return chains;
}

int channel_nic(const RankGroups& g, int c) { return g.graph->channels[static_cast<std::size_t>(c)].nic_out; }

std::span<const int> p2p_rails(const Cluster& cluster, const RankGroups& g, int src, int dst) {
  if (g.graph == nullptr || cluster.node_of(src) == cluster.node_of(dst)) return {};
  // The receiver's position among the first node's GPUs of the group (the graph's): the GPU with
  // its device index, as NCCL's sender looks it up on its own node (ncclTopoDevToRank).
  const std::vector<int>& first = g.per_node[0];
  for (std::size_t q = 0; q < first.size() && q < g.graph->p2p_nics.size(); ++q)
    if (cluster.local_rank(first[q]) == cluster.local_rank(dst)) return g.graph->p2p_nics[q];
  return {};
}

namespace {
/// NCCL's comm->nChannels of a group across nodes (collective_engine.h, "channel counts"): the
/// ring graph's channels doubled (nccl_comm_channels), cut to max_channels (the first `kept`
/// channels stay), then copied up to min_channels (channel c runs channel c mod kept).
struct CommChannels {
  int kept = 0;
  int total = 0;
};
CommChannels comm_channels(const RankGroups& g, const PlanInputs& in) {
  const CollectiveSpec& spec = in.cluster.spec().collectives;
  const NcclTopoGraph& graph = *g.graph;
  CommChannels c;
  c.kept = nccl_comm_channels(in.cluster, static_cast<int>(graph.channels.size()), graph.bw_gb_per_s);
  if (spec.max_channels > 0) c.kept = std::min(c.kept, spec.max_channels);
  c.total = std::max(c.kept, spec.min_channels);
  return c;
}

/// NCCL's channels of a ring across nodes (collective_engine.h, "channel counts"): the ring
/// graph's channels (after ncclTopoDupChannels), comm->nChannels after NCCL_MAX/MIN_NCHANNELS
/// (and _CTAS), and each search channel's share of the data: its comm channels / nChannels.
/// `ph` was finished with the search channels' equal shares; rebuilt when the shares are uneven.
/// path_ring: search channel of each path.
void split_ring_channels(CollectivePlan& plan, CollectivePhase& ph, const Paths& paths,
                         const std::vector<int>& path_ring, const RankGroups& g, const PlanInputs& in) {
  const int n = static_cast<int>(plan.ranks.size());
  const NcclTopoGraph& graph = *g.graph;
  const int searched = graph.search_channels;
  plan.graph_channels = static_cast<int>(graph.channels.size());
  const CommChannels comm = comm_channels(g, in);
  const int kept = comm.kept;
  plan.comm_channels = comm.total;
  std::vector<int> count(searched, 0);
  for (int c = 0; c < plan.comm_channels; ++c) ++count[((c % kept) % plan.graph_channels) % searched];
  if (std::none_of(count.begin(), count.end(), [&](int k) { return k != count[0]; })) return;
  // Uneven: rebuild the phase with each channel's share (channels without a comm channel carry nothing).
  Paths used;
  std::vector<double> shares;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const int k = count[static_cast<std::size_t>(path_ring[i])];
    if (k == 0) continue;
    used.push_back(paths[i]);
    shares.push_back(ring_edge_fraction(plan.op, n) * k / plan.comm_channels);
  }
  plan.flows.resize(ph.first_flow);
  CollectivePhase uneven;
  uneven.latency_s = ph.latency_s;
  uneven.ring_plateau = ph.ring_plateau;
  finish_phase(plan, uneven, used, shares, in);
  ph = uneven;
  plan.channels = static_cast<int>(std::count_if(count.begin(), count.end(), [](int k) { return k > 0; }));
}

/// getLocalNetCountByBw (NVIDIA/nccl src/graph/topo.cc, 2.19-2.28) over the group's GPUs on its
/// first node, the fewest: a GPU's own NICs (Cluster::gpu_of_nic), taken until their line rates
/// reach its PCIe link's ("assuming BW to CPU reflects the GPU bandwidth"; all of them for a GPU
/// without PCIe), at least 1.
int nics_by_bandwidth(const Cluster& cluster, const RankGroups& g) {
  int fewest = std::numeric_limits<int>::max();
  for (int r : g.per_node[0]) {
    const GpuSpec& gpu = cluster.gpu_spec(r);
    const double gpu_bytes_per_s = gpu.pcie_generation > 0 ? pcie_bytes_per_s(gpu.pcie_generation, gpu.pcie_lanes)
                                                           : std::numeric_limits<double>::infinity();
    int count = 0;
    double total = 0;
    for (int nic = 0; nic < cluster.nics_per_node() && total < gpu_bytes_per_s; ++nic) {
      if (cluster.gpu_of_nic(nic) != cluster.local_rank(r)) continue;
      ++count;
      total += cluster.nic().bytes_per_s;
    }
    fewest = std::min(fewest, std::max(1, count));
  }
  return fewest;
}

}  // namespace

RankGroups group_ranks(const Cluster& cluster, std::span<const int> ranks, const PlanInputs& in) {
  RankGroups g;
  std::vector<int>& at = in.scratch.node_index;  // node -> its index in g (-1 between calls): linear in the ranks
  if (at.size() < static_cast<std::size_t>(cluster.num_nodes())) at.resize(cluster.num_nodes(), -1);
  for (int r : ranks) {
    int& i = at[cluster.node_of(r)];
    if (i < 0) {
      i = g.nodes();
      g.node_ids.push_back(cluster.node_of(r));
      g.per_node.emplace_back();
    }
    g.per_node[i].push_back(r);
  }
  for (int node : g.node_ids) at[node] = -1;
  for (const auto& local : g.per_node) g.same_size = g.same_size && local.size() == g.per_node[0].size();
  g.version = nccl_version_of(cluster.spec().collectives.nccl_version);
  // Rails: the NICs of NCCL's ring graph (nccl_topo_search.h), searched once per group shape and node class.
  if (g.nodes() > 1 && cluster.nics_per_node() > 0) {
    // Each node's own search, combined as NCCL's ranks combine them (NcclTopoCache::ring_graph_across);
    // nodes holding different counts: the first node's.
    g.graph = g.same_size ? &in.scratch.topo.ring_graph_across(cluster, in.net, g.per_node)
                          : &in.scratch.topo.ring_graph(cluster, in.net, g.per_node[0], g.per_node[1][0]);
    for (int c = 0; c < g.graph->search_channels; ++c) {
      const int nic = channel_nic(g, c);
      if (std::find(g.rails.begin(), g.rails.end(), nic) == g.rails.end()) g.rails.push_back(nic);
    }
  }
  return g;
}

bool all_nvlink(const Cluster& cluster, const RankGroups& g) {
  // Every ring edge inside a node is NVLink (NCCL's intra-node path type <= NVB).
  for (const auto& local : g.per_node) {
    const int m = static_cast<int>(local.size());
    for (int i = 0; i < (m > 2 ? m : m - 1); ++i) {
      if (!cluster.nvlink_between(cluster.local_rank(local[i]), cluster.local_rank(local[(i + 1) % m]))) {
        return false;
      }
    }
  }
  return true;
}

void build_ring_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const int n = static_cast<int>(plan.ranks.size());
  const int nodes = g.nodes();
  Paths paths;
  std::vector<double> fractions;
  // Ring orders with the rail each order's inter-node edges use.
  std::vector<std::vector<int>> rings;
  std::vector<int> ring_rail;
  std::vector<double> weights;  // share of the data per ring
  if (nodes == 1) {
    single_node_rings(in, g.per_node[0], rings, weights);
    ring_rail.assign(rings.size(), -1);
  } else {
    // NCCL's ring graph: per search channel, every node's GPUs in the channel's order, entering
    // and leaving each node through the channel's NIC.
    const auto chains = rail_chains(g);
    for (std::size_t c = 0; c < chains.size(); ++c) {
      std::vector<int> order;
      order.reserve(n);
      for (const auto& chain : chains[c]) order.insert(order.end(), chain.begin(), chain.end());
      rings.push_back(std::move(order));
      ring_rail.push_back(channel_nic(g, static_cast<int>(c)));
      weights.push_back(1.0 / static_cast<double>(chains.size()));
    }
  }
  plan.channels = static_cast<int>(rings.size());
  std::vector<int> path_ring;  // ring (rail) index of each path
  const double edge_fraction = ring_edge_fraction(plan.op, n);
  auto path = [&](int a, int b, int rail) {
    return rail < 0 || cluster.node_of(a) == cluster.node_of(b) ? cluster.route(a, b) : cluster.route(a, b, rail);
  };
  for (std::size_t k = 0; k < rings.size(); ++k) {
    const std::vector<int>& order = rings[k];
    const double fraction = edge_fraction * weights[k];
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
  CollectivePhase ph;
  ph.latency_s = ring_latency_s(plan.op, n, nodes, all_nvlink(cluster, g), g.version);
  ph.ring_plateau = plan.op == CollectiveOp::all_reduce && nodes > 1;
  finish_phase(plan, ph, paths, fractions, in);
  if (nodes > 1) split_ring_channels(plan, ph, paths, path_ring, g, in);
  plan.phases.push_back(ph);
}

void build_hierarchical_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const int p = g.ppn();
  const int nodes = g.nodes();
  const bool nvlink = all_nvlink(cluster, g);
  plan.channels = p;
  Paths paths;
  std::vector<double> fractions;
  std::vector<std::vector<int>> rings;
  std::vector<double> weights;
  auto add_phase = [&](const std::array<double, 3>& latency) {
    CollectivePhase ph;
    ph.latency_s = latency;
    finish_phase(plan, ph, paths, fractions, in);
    plan.phases.push_back(ph);
    paths.clear();
    fractions.clear();
  };
  auto add_rings = [&](CollectiveOp op) {
    for (const auto& local : g.per_node) {
      single_node_rings(in, local, rings, weights);
      for (std::size_t k = 0; k < rings.size(); ++k) {
        for (int i = 0; i < p; ++i) {
          paths.push_back(cluster.route(rings[k][i], rings[k][(i + 1) % p]));
          fractions.push_back(ring_edge_fraction(op, p) * weights[k]);
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
      paths.push_back(cluster.route(a, b));
      fractions.push_back(ring_edge_fraction(CollectiveOp::all_reduce, nodes) / p);
    }
  }
  add_phase(ring_latency_s(CollectiveOp::all_reduce, nodes, nodes, nvlink, g.version));
  // Phase 3: all-gather inside every node.
  add_rings(CollectiveOp::all_gather);
  add_phase(ring_latency_s(CollectiveOp::all_gather, p, 1, nvlink));
}

void build_tree_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const int nodes = g.nodes();
  Paths paths;
  std::vector<double> fractions;
  const auto chains = rail_chains(g);  // the ring graph's search channels (NCCL's tree graph shares them)
  const int rails = static_cast<int>(chains.size());
  // NCCL Tree: comm->nChannels channels, each carrying S / nChannels up and down one of the two
  // trees. src/graph/connect.cc (2.2x): ncclTopoPreset gives graph channel c (< G, the graph's
  // channels after the dup) its tree, connectTrees makes channel c tree 0 and channel c + G tree 1,
  // later copies (the Hopper doubling, min_channels) repeat channels in order, and
  // NCCL_MAX_NCHANNELS keeps the first ones (comm_channels). count[r][t]: the channels running
  // search channel r's chains on tree t.
  std::vector<std::array<int, 2>> count(static_cast<std::size_t>(rails), {0, 0});
  int total = 0;
  if (g.graph == nullptr) {
    // One node: both trees are the same chain; NCCL_MAX_NCHANNELS=1 leaves tree 0 only.
    const int max = in.cluster.spec().collectives.max_channels;
    count[0] = {1, max == 1 ? 0 : 1};
    total = max == 1 ? 1 : 2;
  } else {
    const CommChannels comm = comm_channels(g, in);
    const int graph_channels = static_cast<int>(g.graph->channels.size());
    total = comm.total;
    for (int c = 0; c < comm.total; ++c) {
      const int j = (c % comm.kept) % (2 * graph_channels);
      ++count[static_cast<std::size_t>((j % graph_channels) % rails)][static_cast<std::size_t>(j / graph_channels)];
    }
  }
  plan.channels = 0;
  for (int r = 0; r < rails; ++r) {
    for (int t = 0; t < 2; ++t) {
      const int runs = count[static_cast<std::size_t>(r)][static_cast<std::size_t>(t)];
      if (runs == 0) continue;
      ++plan.channels;
      const double f = static_cast<double>(runs) / total;
      for (int k = 0; k < nodes; ++k) {
        const std::vector<int>& chain = chains[r][k];
        for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
          paths.push_back(cluster.route(chain[i + 1], chain[i]));  // reduce: towards the head
          fractions.push_back(f);
          paths.push_back(cluster.route(chain[i], chain[i + 1]));  // broadcast: away from it
          fractions.push_back(f);
        }
        const int u = dtree_parent(nodes, k, t);
        if (u < 0) continue;
        const int head = chain[0], parent = chains[r][u][0];
        paths.push_back(cluster.route(head, parent, channel_nic(g, r)));
        fractions.push_back(f);
        paths.push_back(cluster.route(parent, head, channel_nic(g, r)));
        fractions.push_back(f);
      }
    }
  }
  CollectivePhase ph;
  ph.latency_s = tree_latency_s(g.ppn(), nodes, all_nvlink(cluster, g));
  finish_phase(plan, ph, paths, fractions, in);
  plan.phases.push_back(ph);
}

void build_pat_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  // PAT (Parallel Aggregated Trees; S. Jeaugey, "PAT: a new algorithm for all-gather and reduce-scatter
  // operations at scale", arXiv:2506.20252, 2025; NCCL 2.23+): Bruck's algorithm with the dimensions reversed
  // (far peers first). Rank o's chunk (S/n) reaches offset j (1..n-1) from offset j - lowbit(j), a transfer over
  // distance lowbit(j); each rank receives each chunk once. So every rank sends to its peer at distance 2^k the
  // chunks of the offsets j < n whose lowest set bit is 2^k: count_k = #{j in [1, n-1] : lowbit(j) = 2^k}, summing
  // to n-1 ((n-1)/n S per rank, as a ring). all_gather sends to rank + 2^k; reduce_scatter is its transpose
  // (partial sums to rank - 2^k). One GPU per node: every transfer crosses the network, spread over the GPU's NICs
  // (NCCL's channels over the rails). NCCL pipelines a channel's steps (collectives.h,
  // PatAGAlgorithm::getNextOp): one multi-path flow per rank and rail over its peers.
  const int n = static_cast<int>(plan.ranks.size());
  const int rails = plan.channels = static_cast<int>(g.rails.size());
  CollectivePhase ph;
  ph.latency_s = pat_latency_s(g.nodes(), n);
  plan.protocol_allowed = {false, false, true};
  if (in.pat_floor_only) {  // priced, never run: no flows (PlanInputs)
    ph.tuner_seconds_per_byte = pat_tuner_seconds_per_byte_floor(plan, g, in);
    return plan.phases.push_back(ph);
  }
  const int dims = std::bit_width(static_cast<unsigned>(n - 1));  // ceil(log2 n) paths per flow
  Paths paths(static_cast<std::size_t>(n * rails * dims));        // path k of group (i, r): (i x rails + r) x dims + k
  std::vector<double> fractions(paths.size());
  for (int d = 1, k = 0; d < n; d <<= 1, ++k) {   // distance first: Cluster::route's cache is fastest so
    const int count = (n - 1 - d) / (2 * d) + 1;  // j with lowbit(j) == d: d, 3d, 5d, ... < n
    auto at = static_cast<std::size_t>(k);
    for (int i = 0; i < n; ++i) {
      const int peer = plan.op == CollectiveOp::all_gather ? (i + d) % n : (i - d + n) % n;
      for (int r = 0; r < rails; ++r, at += static_cast<std::size_t>(dims)) {
        paths[at] = in.cluster.route(plan.ranks[i], plan.ranks[peer], g.rails[r]);
        fractions[at] = static_cast<double>(count) / n / rails;
      }
    }
  }
  finish_phase(plan, ph, paths, fractions, in, static_cast<std::size_t>(std::max(dims, 1)));
  plan.phases.push_back(ph);
}

void build_send_recv_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const bool nvlink = cluster.has_scale_up() && all_nvlink(cluster, g);
  Paths paths;
  std::vector<double> fractions;
  add_p2p_paths(cluster, g, plan.ranks[0], plan.ranks[1], 1.0, paths, fractions);
  CollectivePhase ph;
  ph.latency_s = ring_latency_s(plan.op, 2, g.nodes(), nvlink, g.version);
  finish_phase(plan, ph, paths, fractions, in);
  plan.phases.push_back(ph);
}

void build_plan(CollectivePlan& plan, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const int n = static_cast<int>(plan.ranks.size());
  const RankGroups g = group_ranks(cluster, plan.ranks, in);
  const int nodes = g.nodes();
  plan.num_nodes = nodes;
  if (nodes > 1) {
    plan.rails = g.graph != nullptr ? g.graph->search_channels : 0;
    for (const auto& local : g.per_node) plan.single_gpu_node = plan.single_gpu_node || local.size() == 1;
  }
  const GpuSpec& gpu = tuned_gpu(cluster, plan);  // a mixed cluster: the plan's group's GPU
  const bool nvlink = cluster.has_scale_up() && all_nvlink(cluster, g);
  // LL128 (NCCL tuning.cc, "Enable LL128 by default only on ..."): over NVLink between every ring
  // neighbour, Volta to Hopper (2.20.3: "switch (minCompCap) ... default: pEnable &= 0", so
  // Blackwell off); the releases with the Blackwell compCap rows (2.25+, the stored copy with
  // NCCL_PARAM(Ll128C2c) and "if (ncclParamLl128C2c() && minCompCap >= 90)") enable it on every
  // GPU from Hopper on, NVLink 5 included. The GB200 rows of openxla's table switch protocol
  // where NCCL's LL -> LL128 crossover falls (n = 8: 8-16 MiB; 36: 18-36 MiB; 64: 32-64 MiB;
  // 72: 36-72 MiB), not at LL -> Simple (about 2x larger), docs/hardware.md.
  const bool ll128 = nvlink && gpu.nvlink_generation >= 2 && (gpu.nvlink_generation <= 4 || g.version.at_least(2, 25));
  plan.protocol_allowed = {true, ll128, true};
  if (n == 1) return;  // completes immediately

  const bool nvls_hw = cluster.scale_up() == ScaleUp::nvswitch && gpu.nvlink_generation >= 4;
  const NcclVersion& version = g.version;
  auto check = [&](std::initializer_list<std::pair<bool, const char*>> conditions) {
    for (const auto& [ok, why] : conditions) {
      if (!ok) {
        plan.applicable = false;
        plan.why_not = why;
        return false;
      }
    }
    return true;
  };
  const bool has_nics = !g.rails.empty();
  switch (plan.algorithm) {
    case CollectiveAlgorithm::automatic:
    case CollectiveAlgorithm::ring:
      break;
    case CollectiveAlgorithm::hierarchical:
      if (check({{plan.op == CollectiveOp::all_reduce, "hierarchical runs only all_reduce"},
                 {nodes > 1, "hierarchical needs a group across nodes"},
                 {g.ppn() > 1 && g.same_size, "hierarchical needs the same number (> 1) of GPUs on every node"}})) {
        build_hierarchical_plan(plan, g, in);
      }
      return;
    case CollectiveAlgorithm::tree:
      // NCCL's tree: all_reduce only (tuning.cc: tree bandwidth 0 for other functions). On one
      // node a chain through the GPUs, run only when forced (not an automatic candidate there).
      if (check({{plan.op == CollectiveOp::all_reduce, "NCCL's tree runs only all_reduce"},
                 {nodes == 1 || has_nics, "the group's nodes have no NICs"}})) {
        plan.automatic_candidate = nodes > 1;
        build_tree_plan(plan, g, in);
      }
      return;
    case CollectiveAlgorithm::pat:
      // NCCL tuning.cc ncclPatEnable (2.23+): all_gather / reduce_scatter, Simple, only with one
      // GPU per node (nNodes == nRanks) and SM60+ (every GPU of the catalog).
      if (check({{nccl_has_pat(version), "PAT exists from NCCL 2.23 (cluster.collectives.nccl_version)"},
                 {plan.op == CollectiveOp::all_gather || plan.op == CollectiveOp::reduce_scatter,
                  "PAT runs only all_gather and reduce_scatter"},
                 {nodes == n && nodes > 1, "PAT needs one GPU per node on more than one node"},
                 {has_nics, "the group's nodes have no NICs"}})) {
        build_pat_plan(plan, g, in);
      }
      return;
    case CollectiveAlgorithm::nvls:
      // NCCL enables NVLS on NVSwitch systems with more than 2 GPUs (src/transport/nvls.cc, 2.17+);
      // all_gather / reduce_scatter over NVLS only inside one node (src/enqueue.cc: "we only
      // support single-node NVLS allgather and reducescatter") and, from 2.27, with at most
      // NCCL_MAX_NVLS_ARITY (32) GPUs there (nccl_nvls_gather_arity_limited).
      if (check({{nccl_has_nvls(version), "NVLS exists from NCCL 2.17 (cluster.collectives.nccl_version)"},
                 {plan.op == CollectiveOp::all_reduce || plan.op == CollectiveOp::all_gather ||
                      plan.op == CollectiveOp::reduce_scatter,
                  "NVLS runs only all_reduce, all_gather and reduce_scatter"},
                 {nvls_hw, "NVLS needs an NVSwitch of NVLink 4 or later"},
                 {nodes == 1, "the model's NVLS runs inside one node (across nodes: nvls_tree)"},
                 {n > 2, "NVLS needs more than 2 GPUs"},
                 {plan.op == CollectiveOp::all_reduce || n <= kNcclMaxNvlsArity ||
                      !nccl_nvls_gather_arity_limited(version),
                  "NVLS all_gather / reduce_scatter needs at most 32 GPUs on the node (NCCL_MAX_NVLS_ARITY, "
                  "NCCL 2.27+)"}})) {
        build_nvls_plan(plan, g, in);
      }
      return;
    case CollectiveAlgorithm::nvls_tree:
      if (check({{nccl_has_nvls_tree(version), "NVLS tree exists from NCCL 2.18 (cluster.collectives.nccl_version)"},
                 {plan.op == CollectiveOp::all_reduce, "NVLS tree runs only all_reduce"},
                 {nvls_hw, "NVLS tree needs an NVSwitch of NVLink 4 or later"},
                 {nodes > 1, "NVLS tree needs a group across nodes"},
                 {g.ppn() > 1 && g.same_size, "NVLS tree needs the same number (> 1) of GPUs on every node"},
                 {has_nics, "the group's nodes have no NICs"}})) {
        build_nvls_tree_plan(plan, g, in);
      }
      return;
    case CollectiveAlgorithm::collnet_direct:
    case CollectiveAlgorithm::collnet_chain: {
      // NCCL enables CollNet when the SHARP plugin connects the communicator (comm->collNetSupport:
      // NCCL_COLLNET_ENABLE=1 and nNodes >= NCCL_COLLNET_NODE_THRESHOLD, default 2; init.cc 2.2x);
      // tuning.cc (2.20.3) disables CollNet Direct without an NVSwitch (ncclTopoGetNvsCount) and
      // enqueue.cc beyond NCCL_MAX_DIRECT_ARITY + 1 = 8 local GPUs.
      const bool is_direct = plan.algorithm == CollectiveAlgorithm::collnet_direct;
      if (check({{cluster.spec().fabric.sharp, "CollNet needs SHARP switches (cluster.fabric.sharp: true)"},
                 {plan.op == CollectiveOp::all_reduce, "the model's CollNet runs only all_reduce"},
                 {nodes > 1, "CollNet needs a group across nodes (NCCL_COLLNET_NODE_THRESHOLD 2)"},
                 {g.same_size, "the model's CollNet needs the same number of GPUs on every node"},
                 {has_nics, "the group's nodes have no NICs"},
                 {!is_direct || cluster.scale_up() == ScaleUp::nvswitch, "CollNet Direct needs an NVSwitch node"},
                 {!is_direct || g.ppn() <= 8,
                  "CollNet Direct runs at most 8 GPUs per node (NCCL_MAX_DIRECT_ARITY 7)"}})) {
        build_collnet_plan(plan, g, in);
      }
      return;
    }
  }
  plan.algorithm = CollectiveAlgorithm::ring;
  if (plan.op == CollectiveOp::send_recv || plan.op == CollectiveOp::all_to_all) {
    (plan.op == CollectiveOp::send_recv ? build_send_recv_plan : build_all_to_all_plan)(plan, g, in);
    if (nodes == 1 && plan.moe.kind == EpAllToAll::flat) set_p2p_schedule(plan, g, in);  // NCCL's, not DeepEP's
    if (nodes > 1 && plan.moe.kind == EpAllToAll::flat && g.graph != nullptr) {
      plan.p2p_net_ll_bytes = nccl_p2p_net_ll_bytes(comm_channels(g, in).total, n, nics_by_bandwidth(cluster, g));
    }
  } else if (nodes > 1 && g.rails.empty()) {
    throw std::invalid_argument("collective: the group spans nodes without NICs");
  } else {
    build_ring_plan(plan, g, in);
  }
}

}  // namespace traincast::models
