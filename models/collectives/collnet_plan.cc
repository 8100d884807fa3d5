// CollNet plans: an all_reduce across nodes reduced by the fabric's SHARP switches
// (cluster.fabric.sharp), as NCCL's CollNet Direct and CollNet Chain. See collective_plans.h and
// docs/fabric.md.

#include <cstddef>
#include <span>
#include <vector>

#include "models/collectives/collective_plans.h"
#include "models/collectives/nccl_tuning.h"

namespace traincast::models {

namespace {

using Paths = std::vector<std::span<const sim::ResourceId>>;

/// The part of `route` (between GPUs on different nodes) from its source GPU up to and including
/// the first NIC resource (the source NIC's tx: what leaves the node), or from the last NIC
/// resource on (the destination NIC's rx onwards: what enters it).
std::span<const sim::ResourceId> to_fabric(const Cluster& cluster, std::span<const sim::ResourceId> route) {
  for (std::size_t i = 0; i < route.size(); ++i)
    if (cluster.link_kind(route[i]) == LinkKind::nic) return route.subspan(0, i + 1);
  return route;
}
std::span<const sim::ResourceId> from_fabric(const Cluster& cluster, std::span<const sim::ResourceId> route) {
  for (std::size_t i = route.size(); i-- > 0;)
    if (cluster.link_kind(route[i]) == LinkKind::nic) return route.subspan(i);
  return route;
}

}  // namespace

void build_collnet_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  // NCCL's CollNet all_reduce (src/device/all_reduce.h, CollNet Direct and CollNet Chain, 2.2x),
  // one head GPU per ring graph channel on every node (the GPU the channel enters the node
  // through, next to its NIC), R channels each carrying S/R:
  //  - the head sends the node's reduced share up its NIC once and receives the result once: S/R
  //    on the head's path to its NIC's tx and from its NIC's rx; the switches (SHARP) reduce
  //    across nodes, so nothing crosses between nodes GPU to GPU;
  //  - Direct: every GPU sends each other channel's head that channel's S/R of its buffer over
  //    NVLink and receives the result from it (reduce-scatter to the heads, then their
  //    broadcast);
  //  - Chain: inside the node a chain in the channel's order from the head: S/R up each chain
  //    edge (reduce) and S/R down it (broadcast), as NCCL's tree inside a node.
  const Cluster& cluster = in.cluster;
  const int nodes = g.nodes();
  const auto chains = rail_chains(g);
  const int rails = static_cast<int>(chains.size());
  const double f = 1.0 / rails;
  const bool direct = plan.algorithm == CollectiveAlgorithm::collnet_direct;
  Paths paths;
  std::vector<double> fractions;
  auto add = [&](std::span<const sim::ResourceId> p) {
    paths.push_back(p);
    fractions.push_back(f);
  };
  for (int k = 0; k < nodes; ++k) {
    for (int r = 0; r < rails; ++r) {
      const std::vector<int>& chain = chains[r][k];
      const int head = chain[0], next_head = chains[r][(k + 1) % nodes][0];
      add(to_fabric(cluster, cluster.route(head, next_head, channel_nic(g, r))));
      add(from_fabric(cluster, cluster.route(next_head, head, channel_nic(g, r))));
      if (direct) {
        for (int gpu : g.per_node[k]) {
          if (gpu == head) continue;
          add(cluster.route(gpu, head));
          add(cluster.route(head, gpu));
        }
      } else {
        for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
          add(cluster.route(chain[i + 1], chain[i]));  // reduce: towards the head
          add(cluster.route(chain[i], chain[i + 1]));  // broadcast: away from it
        }
      }
    }
  }
  plan.channels = rails;
  plan.protocol_allowed = {false, false, true};
  CollectivePhase ph;
  ph.latency_s = direct ? collnet_direct_latency_s(g.ppn()) : collnet_chain_latency_s(g.ppn());
  finish_phase(plan, ph, paths, fractions, in);
  plan.phases.push_back(ph);
}

}  // namespace traincast::models
