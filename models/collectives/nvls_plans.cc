// NVLS plans: NVLS inside one node (NVLink SHARP: the NVSwitch reduces and multicasts) and NVLS
// tree across nodes (NVLS inside each node, NCCL's double binary tree between the nodes' heads).
// See collective_plans.h.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "models/collectives/collective_plans.h"
#include "models/collectives/nccl_topo_search.h"
#include "models/collectives/nccl_tuning.h"
#include "models/collectives/nccl_versions.h"

namespace traincast::models {
namespace {

using Paths = std::vector<std::span<const sim::ResourceId>>;

/// One NVLS head of a group across nodes: the place of its GPU among each node's GPUs of the
/// group (RankGroups::per_node) and the local NIC it sends and receives through.
struct NvlsHead {
  int pos = 0;
  int nic = 0;
};

/// A net of the NVLS search: a NIC up on every node of the group, the place of its local GPU among
/// the group's GPUs on each node (-1 where that GPU is not in the group at the same place on every
/// node: NCCL's localGpu -1, never a head) and NCCL's net.bw for it [GB/s].
struct NvlsNet {
  int nic = 0;
  int pos = -1;
  double gb_per_s = 0;
};

/// One NVLS graph search at inter-node speed `inter` and intra-node speed `intra` [GB/s], at most
/// `max_channels` channels (NVIDIA/nccl src/graph/search.cc, ncclTopoSearchRecNet, NVLS pattern,
/// 2.19+): channel c tries the nets from the c-th on, skipping a net whose bandwidth left is below
/// the speed ("if (net->net.bw < bw) continue", bw the int of bwInter) or whose local GPU is none
/// or a head already ("check whether there is duplicate head"); the first other one is the only
/// one tried ("graphFound"), its speed taken off it. ncclTopoSearchTryNvls then takes bwIntra off
/// every GPU's NVLink to and from the NVSwitch, twice on the head's: the channel fails, and the
/// search stops, where channel c's head has no (c + 2) x intra left of `nvlink_gb_per_s` (the
/// GPU's NVLink sum, system->totalBw; every GPU was a non-head of the c channels before). NCCL's
/// NIC <-> GPU PCIe paths (bwInter) are not budgeted here: the NIC's own speed bounds them on the
/// templates modelled. Also "if (graph->nChannels < netCount)".
std::vector<NvlsHead> search_nvls(std::span<const NvlsNet> nets, double inter, double intra, std::size_t max_channels,
                                  double nvlink_gb_per_s) {
  std::vector<NvlsHead> heads;
  std::vector<double> left;
  for (const NvlsNet& n : nets) left.push_back(n.gb_per_s);
  const double speed = std::trunc(inter);
  const std::size_t count = nets.size();
  while (heads.size() < max_channels && heads.size() < count) {
    const std::size_t c = heads.size();
    std::size_t tried = count;
    for (std::size_t i = 0; i < count && tried == count; ++i) {
      const std::size_t k = (c + i) % count;
      const int pos = nets[k].pos;
      const bool taken = std::any_of(heads.begin(), heads.end(), [&](const NvlsHead& h) { return h.pos == pos; });
      if (left[k] >= speed && pos >= 0 && !taken) tried = k;
    }
    if (tried == count || static_cast<double>(c + 2) * intra > nvlink_gb_per_s + 1e-9) break;
    left[tried] -= speed;
    heads.push_back({nets[tried].pos, nets[tried].nic});
  }
  return heads;
}

/// NCCL's NVLS heads (NVIDIA/nccl src/graph/search.cc, 2.19+): the NVLS graph is searched with
/// maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs of the node) (ncclTopoCompute, "NVLS and
/// COLLNET_DIRECT search must have ngpus heads at most"), and its search "only tries to find
/// NIC:GPU combinations to compute the heads" (search_nvls): one channel per NIC, in the NICs'
/// order, headed by the GPU next to it (net.localGpu), a GPU already a head skipped. So heads =
/// the NICs with their own GPU, at most min(32, ppn): 32 on a 36-GPU NVLink domain with a NIC per
/// GPU, 8 on a DGX H100 with 8 or 16 NICs. The speeds: ncclTopoCompute over the ring search's
/// speed array (nccl_speed_array, inter-node), from the first <= system->maxBw down while there
/// is no graph or speedArray[next] / best bwInter > .49 (pass 1), stopping at a graph of
/// maxChannels; ncclTopoCompareGraphs keeps a graph of more channels (NVLS: "the more the better")
/// or more channels x bwInter. Pass 2 raises bwInter alone (bwIntra kept, while bwInter < 2 x
/// bwIntra) with the channels fixed (minChannels = maxChannels). A slow NIC (cluster.overrides
/// bandwidth_factor, as the ring search sees it: NcclTopoGraph::net_gb_per_s) thus stays a head
/// where the speeds reach down to it before the .49 stop (on a DGX H100, NICs at 48 GB/s: one at
/// 0.5 heads at 24 GB/s; one at 0.4 is left out, 7 heads at 45 then 48 GB/s). NCCL searches each
/// node's own system and its ranks keep the fewest channels, each node its own heads (src/init.cc,
/// allGather3Data); the model runs a head at the same place on every node, so the nets are the
/// ring graph's system, whose links are each at the slowest over the group's nodes
/// (ring_graph_across): a head is usable on every node. A NIC down on any of the group's nodes
/// heads nothing. Before 2.19 (search.cc "NVLS needs to balance on all NICs": channel c headed by
/// the c-th net's GPU whatever that net's speed), and without a ring graph: every NIC up heads.
/// Empty when no NIC's own GPU is in the group at the same local place on every node.
std::vector<NvlsHead> nvls_heads(const Cluster& cluster, const RankGroups& g) {
  const auto max_heads = static_cast<std::size_t>(std::min(kNcclMaxNvlsArity, g.ppn()));
  const NcclTopoGraph* system = g.graph;
  std::vector<NvlsNet> nets;
  for (int nic = 0; nic < cluster.nics_per_node(); ++nic) {
    if (!std::all_of(g.node_ids.begin(), g.node_ids.end(), [&](int node) { return cluster.nic_up(node, nic); }))
      continue;
    NvlsNet n{nic, -1, 0.0};
    if (system != nullptr && static_cast<std::size_t>(nic) < system->net_gb_per_s.size())
      n.gb_per_s = system->net_gb_per_s[static_cast<std::size_t>(nic)];
    const int local = cluster.gpu_of_nic(nic);
    const std::vector<int>& first = g.per_node[0];
    const auto it = std::find_if(first.begin(), first.end(), [&](int r) { return cluster.local_rank(r) == local; });
    const int pos = static_cast<int>(it - first.begin());
    if (it != first.end() && std::all_of(g.per_node.begin(), g.per_node.end(), [&](const std::vector<int>& on) {
          return cluster.local_rank(on[static_cast<std::size_t>(pos)]) == local;
        }))
      n.pos = pos;
    nets.push_back(n);
  }
  if (system == nullptr || !g.version.at_least(2, 19)) {
    std::vector<NvlsHead> heads;
    for (const NvlsNet& n : nets) {
      const bool taken = std::any_of(heads.begin(), heads.end(), [&](const NvlsHead& h) { return h.pos == n.pos; });
      if (n.pos >= 0 && !taken && heads.size() < max_heads) heads.push_back({n.pos, n.nic});
    }
    return heads;
  }
  int cc = 100;  // ccMin
  for (const std::vector<int>& on : g.per_node) cc = std::min(cc, nccl_cc_class(cluster.gpu_spec(on[0])));
  const std::span<const double> speeds = nccl_speed_array(g.version, cc, false);
  const double nvlink = system->total_bw_gb_per_s;
  std::size_t si = 0;
  while (si + 1 < speeds.size() && speeds[si] > system->max_bw_gb_per_s) ++si;
  std::vector<NvlsHead> best;
  double best_gb_per_s = 0;
  for (;;) {  // pass 1
    std::vector<NvlsHead> heads = search_nvls(nets, speeds[si], speeds[si], max_heads, nvlink);
    const double n = static_cast<double>(heads.size()), best_n = static_cast<double>(best.size());
    if (n > best_n || n * speeds[si] > best_n * best_gb_per_s) {
      best = std::move(heads);
      best_gb_per_s = speeds[si];
    }
    if (best.size() == max_heads || static_cast<double>(best.size()) * best_gb_per_s >= nvlink) break;
    if (si + 1 < speeds.size() && (best.empty() || speeds[si + 1] / best_gb_per_s > .49)) {
      ++si;
      continue;
    }
    break;
  }
  if (best.empty()) return best;
  const double intra = best_gb_per_s;  // pass 2
  si = 0;
  while (si + 1 < speeds.size() && speeds[si] > best_gb_per_s) ++si;
  while (si > 0 && best_gb_per_s < 2 * intra) {
    std::vector<NvlsHead> heads = search_nvls(nets, speeds[si - 1], intra, best.size(), nvlink);
    if (heads.size() < best.size()) break;  // the bwIntra raise that follows keeps bwInter: no better graph
    best = std::move(heads);
    best_gb_per_s = speeds[--si];
  }
  return best;
}

}  // namespace

void build_nvls_tree_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const int nodes = g.nodes();
  Paths paths;
  std::vector<double> fractions;
  // The heads: NCCL's NVLS graph (nvls_heads); where it finds none (no NIC's own GPU in the
  // group), the ring graph's search channels, each headed by the GPU its ring enters the node at.
  std::vector<NvlsHead> heads = nvls_heads(cluster, g);
  if (heads.empty()) {
    const auto chains = rail_chains(g);
    for (int r = 0; r < static_cast<int>(chains.size()); ++r) {
      const std::vector<int>& first = g.per_node[0];
      const int pos = static_cast<int>(std::find(first.begin(), first.end(), chains[r][0][0]) - first.begin());
      heads.push_back({pos, channel_nic(g, r)});
    }
  }
  const double h = static_cast<double>(heads.size());
  // NVLS inside nodes: each GPU sends its buffer to the switch and receives the multicast
  // result; each head also receives its reduced share and multicasts it.
  plan.channels = static_cast<int>(heads.size());
  for (const auto& local : g.per_node) {
    const int pk = static_cast<int>(local.size());
    for (int i = 0; i < pk; ++i) {
      const int a = local[i], b = local[(i + 1) % pk];
      paths.push_back(cluster.route(a, b).subspan(0, 1));  // nvl_up(a)
      fractions.push_back(1.0);
      paths.push_back(cluster.route(b, a).subspan(1, 1));  // nvl_down(a)
      fractions.push_back(1.0);
    }
  }
  for (const NvlsHead& hd : heads) {
    for (int k = 0; k < nodes; ++k) {
      const std::vector<int>& local = g.per_node[static_cast<std::size_t>(k)];
      const auto pos = static_cast<std::size_t>(hd.pos);
      const int head = local[pos], other = local[(pos + 1) % local.size()];
      paths.push_back(cluster.route(other, head).subspan(1, 1));  // reduced share into the head
      fractions.push_back(1.0 / h);
      paths.push_back(cluster.route(head, other).subspan(0, 1));  // head multicasts it
      fractions.push_back(1.0 / h);
      for (int t = 0; t < 2; ++t) {
        const int u = dtree_parent(nodes, k, t);
        if (u < 0) continue;
        const int parent = g.per_node[static_cast<std::size_t>(u)][pos];
        paths.push_back(cluster.route(head, parent, hd.nic));
        fractions.push_back(0.5 / h);
        paths.push_back(cluster.route(parent, head, hd.nic));
        fractions.push_back(0.5 / h);
      }
    }
  }
  CollectivePhase ph;
  ph.nvlink_scale = nvls_link_scale(cluster);
  ph.latency_s = nvls_tree_latency_s(nodes);
  plan.protocol_allowed = {false, false, true};
  finish_phase(plan, ph, paths, fractions, in);
  plan.phases.push_back(ph);
}

void build_nvls_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const std::vector<int>& local = g.per_node[0];
  const int n = static_cast<int>(local.size());
  Paths paths;
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
    paths.push_back(cluster.route(a, b).subspan(0, 1));  // nvl_up(a)
    fractions.push_back(up);
    paths.push_back(cluster.route(b, a).subspan(1, 1));  // nvl_down(a)
    fractions.push_back(down);
  }
  plan.channels = n;
  CollectivePhase ph;
  ph.nvlink_scale = nvls_link_scale(cluster);
  ph.latency_s = nvls_latency_s();
  plan.protocol_allowed = {false, false, true};
  finish_phase(plan, ph, paths, fractions, in);
  plan.phases.push_back(ph);
}

}  // namespace traincast::models
