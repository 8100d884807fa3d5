// The all-to-all plans (collective_plans.h): flat, NCCL's every rank to every other
// (build_all_to_all_plan), and DeepEP's deduplicated dispatch (build_deepep_plan).

#include <span>
#include <stdexcept>
#include <vector>

#include "models/collectives/collective_plans.h"
#include "models/collectives/moe_dispatch.h"
#include "models/collectives/nccl_tuning.h"
#include "models/spec/enums.h"
#include "models/spec/run_control.h"

namespace traincast::models {

// DeepEP's dispatch (moe_dispatch.h): the smallest change that carries it is other byte fractions
// on the flat plan's own routes, in one phase. Each GPU sends its tokens once per remote node to
// the GPU of its own local index there (Cluster::route to a GPU of the same local rank takes that
// GPU's rail, so no PXN hop: RDMA only), and each pair inside a node carries the sender's own
// tokens for the receiver plus those it forwards for its rail (NVLink only). Flat's PXN route
// (NVLink to the rail's GPU, then RDMA) already had the same links per byte, mirrored; what
// changes is how many bytes each link carries. Same latency terms as flat (NCCL's; DeepEP's own
// are not modelled).
void build_deepep_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  if (!g.same_size)
    throw std::invalid_argument(
        "deepep all-to-all: the expert-parallel group needs the same number of GPUs on every node");
  const int nodes = g.nodes(), ppn = g.ppn();
  const DeepEpFanout f = deepep_fanout(plan.moe.experts, plan.moe.top_k, plan.moe.max_nodes_per_token, nodes, ppn);
  const DeepEpFractions d = deepep_fractions(f, plan.moe.top_k);
  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  for (int a = 0; a < nodes; ++a) {
    for (int l = 0; l < ppn; ++l) {
      throw_if_interrupted("all-to-all plan setup");  // Ctrl-C, once per sender (models/spec/run_control.h)
      const int src = g.per_node[a][l];
      for (int m = 0; m < ppn; ++m) {
        if (m == l) continue;
        paths.push_back(cluster.route(src, g.per_node[a][m]));
        fractions.push_back(d.nvlink_pair);
      }
      for (int b = 0; b < nodes; ++b) {
        if (b == a) continue;
        paths.push_back(cluster.route(src, g.per_node[b][l]));
        fractions.push_back(d.rdma_peer);
      }
    }
  }
  const bool nvlink = cluster.has_scale_up() && all_nvlink(cluster, g);
  CollectivePhase ph;
  ph.latency_s = ring_latency_s(plan.op, static_cast<int>(plan.ranks.size()), nodes, nvlink, g.version);
  finish_phase(plan, ph, paths, fractions, in);
  plan.phases.push_back(ph);
}

void build_all_to_all_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  if (plan.moe.kind == EpAllToAll::deepep) return build_deepep_plan(plan, g, in);
  const Cluster& cluster = in.cluster;
  const std::vector<int>& ranks = plan.ranks;
  const int n = static_cast<int>(ranks.size());
  const bool nvlink = cluster.has_scale_up() && all_nvlink(cluster, g);
  std::vector<std::span<const sim::ResourceId>> paths;
  std::vector<double> fractions;
  for (int i = 0; i < n; ++i) {
    // n^2 routes: minutes for a large expert-parallel group, so Ctrl-C is polled as the network
    // build polls it (models/spec/run_control.h), once per sender.
    throw_if_interrupted("all-to-all plan setup");
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      add_p2p_paths(cluster, g, ranks[i], ranks[j], 1.0 / n, paths, fractions);
    }
  }
  CollectivePhase ph;
  ph.latency_s = ring_latency_s(plan.op, n, g.nodes(), nvlink, g.version);
  finish_phase(plan, ph, paths, fractions, in);
  plan.phases.push_back(ph);
}

}  // namespace traincast::models
