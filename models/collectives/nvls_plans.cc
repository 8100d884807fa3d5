// NVLS plans: NVLS inside one node (NVLink SHARP: the NVSwitch reduces and multicasts) and NVLS
// tree across nodes (NVLS inside each node, NCCL's double binary tree between the nodes' heads).
// See collective_plans.h.

#include <algorithm>
#include <span>
#include <vector>

#include "models/collectives/collective_plans.h"
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

/// NCCL's NVLS heads (NVIDIA/nccl src/graph/search.cc, 2.19+): the NVLS graph is searched with
/// maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs of the node) (ncclTopoCompute, "NVLS and
/// COLLNET_DIRECT search must have ngpus heads at most"), and its search "only tries to find
/// NIC:GPU combinations to compute the heads" (ncclTopoSearchRecNet, NVLS pattern): one channel
/// per NIC, in the NICs' order, headed by the GPU next to it (ncclTopoGetLocalGpu), a GPU already
/// a head skipped ("check whether there is duplicate head when one GPU connects with multiple
/// NICs"). So heads = the NICs with their own GPU, at most min(32, ppn): 32 on a 36-GPU NVLink
/// domain with a NIC per GPU, 8 on a DGX H100 with 8 or 16 NICs. A NIC down on any of the group's
/// nodes heads nothing (NCCL's ranks keep the channels every node found). Heads whose GPU is not
/// in the group at the same local place on every node are not taken; empty when none is.
std::vector<NvlsHead> nvls_heads(const Cluster& cluster, const RankGroups& g) {
  std::vector<NvlsHead> heads;
  const int max_heads = std::min(kNcclMaxNvlsArity, g.ppn());
  for (int nic = 0; nic < cluster.nics_per_node() && static_cast<int>(heads.size()) < max_heads; ++nic) {
    if (!std::all_of(g.node_ids.begin(), g.node_ids.end(), [&](int node) { return cluster.nic_up(node, nic); }))
      continue;
    const int local = cluster.gpu_of_nic(nic);
    const std::vector<int>& first = g.per_node[0];
    const auto it = std::find_if(first.begin(), first.end(), [&](int r) { return cluster.local_rank(r) == local; });
    if (it == first.end()) continue;
    const int pos = static_cast<int>(it - first.begin());
    const bool same_place = std::all_of(g.per_node.begin(), g.per_node.end(), [&](const std::vector<int>& on) {
      return cluster.local_rank(on[static_cast<std::size_t>(pos)]) == local;
    });
    const bool taken = std::any_of(heads.begin(), heads.end(), [&](const NvlsHead& h) { return h.pos == pos; });
    if (same_place && !taken) heads.push_back({pos, nic});
  }
  return heads;
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
