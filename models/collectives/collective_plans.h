#pragma once
// Building a CollectivePlan for each algorithm (ring, tree, NVLS, NVLS tree, PAT, hierarchical,
// CollNet, all-to-all, send/recv): the flows each phase starts on the cluster's routes, with their bytes,
// rate caps and NCCL latency. The derivations: collective_engine.h and collective_plans.cc.

#include <cstdint>
#include <span>
#include <vector>

#include "models/collectives/collective_plan.h"
#include "models/collectives/nccl_topo_search.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"

namespace traincast::models {

/// Scratch reused between plan builds (per resource of the network; all zero between builds).
struct PlanScratch {
  std::vector<double> load;
  std::vector<double> eff_capacity;  ///< finish_phase: per touched resource, efficiency x capacity [bytes/s]
  std::vector<std::uint32_t> count;
  std::vector<sim::ResourceId> touched;
  std::vector<int> node_index;  ///< group_ranks: per cluster node, -1 between builds
  NcclTopoCache topo;           ///< NCCL ring graphs per group shape (nccl_topo_search.h)
};

/// What a plan is built from besides its (op, algorithm, ranks): the cluster, the network it is
/// built on (capacities), and scratch. All must outlive the call.
struct PlanInputs {
  const Cluster& cluster;
  const sim::FlowNetwork& net;
  PlanScratch& scratch;
  /// PAT only: build the plan but for its flows, its phase's tuner_seconds_per_byte a lower bound
  /// (pat_tuner_seconds_per_byte_floor) and every other time per byte 0: what the engine prices
  /// to learn that the tuner cannot choose PAT without routing its n x rails x log2 n paths.
  bool pat_floor_only = false;
};

/// A group's ranks grouped by node: nodes in order of first appearance, GPUs in rank order.
struct RankGroups {
  std::vector<int> node_ids;
  std::vector<std::vector<int>> per_node;
  /// Local NICs the ring graph's channels use on every node, in channel order (the rails).
  std::vector<int> rails;
  /// > 1 node: NCCL's ring graph of the group, every node's search combined
  /// (NcclTopoCache::ring_graph_across; the first node's where nodes hold different counts), owned
  /// by PlanScratch::topo; null on one node or without NICs.
  const NcclTopoGraph* graph = nullptr;
  NcclVersion version;    ///< cluster.collectives.nccl_version (nccl_versions.h)
  bool same_size = true;  ///< every node holds as many GPUs of the group
  int ppn() const { return static_cast<int>(per_node[0].size()); }
  int nodes() const { return static_cast<int>(node_ids.size()); }
};

/// Groups `ranks` (non-empty, valid GPU ids) by node; across nodes with NICs, searches (or finds
/// in in.scratch.topo) NCCL's ring graph and takes its NICs as the rails.
RankGroups group_ranks(const Cluster& cluster, std::span<const int> ranks, const PlanInputs& in);
/// true when every ring edge inside a node is NVLink (NCCL's intra-node path type <= NVB).
bool all_nvlink(const Cluster& cluster, const RankGroups& g);

/// NCCL's double binary tree over n nodes (src/graph/trees.cc, ncclGetBtree/ncclGetDtree): the
/// parent of `rank` in tree 0 (a binary tree whose leaves and inner nodes alternate, root 0) or
/// tree 1 (the mirror of tree 0 for an even count, tree 0 shifted by one for an odd count); -1
/// for the root.
int dtree_parent(int n, int rank, int tree);
/// Chains per ring graph channel on every node: [channel][node] -> the node's GPUs of the group
/// in the channel's order, starting at the GPU the channel enters the node through (the head).
/// Channels: the graph's search channels (before the dup, which only copies them); one node:
/// one chain in rank order.
std::vector<std::vector<std::vector<int>>> rail_chains(const RankGroups& g);
/// NIC of search channel c of the group's ring graph (the one its ring enters and leaves each
/// node through); needs g.graph.
int channel_nic(const RankGroups& g, int c);

/// The NICs NCCL's point-to-point channels from `src` to `dst` (GPUs of the group) use across
/// nodes (NcclTopoGraph::p2p_nics of the receiver's place), each carrying an equal share; empty on
/// one node, without a graph, or where the first node holds no GPU of the receiver's local index
/// (Cluster::route(src, dst) then).
std::span<const int> p2p_rails(const Cluster& cluster, const RankGroups& g, int src, int dst);
/// Appends the paths of a point-to-point transfer of `fraction` of the call's bytes from `src` to
/// `dst`: one per p2p rail with an equal share, or route(src, dst).
template <typename Paths>
void add_p2p_paths(const Cluster& cluster, const RankGroups& g, int src, int dst, double fraction, Paths& paths,
                   std::vector<double>& fractions) {
  const std::span<const int> rails = p2p_rails(cluster, g, src, dst);
  if (rails.empty()) {
    paths.push_back(cluster.route(src, dst));
    fractions.push_back(fraction);
    return;
  }
  for (int rail : rails) {
    paths.push_back(cluster.route(src, dst, rail));
    fractions.push_back(fraction / static_cast<double>(rails.size()));
  }
}

/// Fills `plan` (op, algorithm and ranks set, nothing else) for its algorithm: num_nodes, rails,
/// protocols, and the phases, or applicable = false when the algorithm cannot run the call
/// (automatic: ring). A single rank gets no phases. Throws std::invalid_argument "collective: the
/// group spans nodes without NICs" for a ring across nodes without NICs.
void build_plan(CollectivePlan& plan, const PlanInputs& in);

/// Gives `phase` its flows, appended to plan.flows: one per path, fractions[i] x the call's bytes
/// on paths[i], each with its rate cap; and sets the phase's bottleneck (time per byte, link kind,
/// PCIe duplex load). paths and fractions have the same size; the caller appends the phase to
/// plan.phases. paths_per_flow > 1: each run of that many consecutive paths is one multi-path
/// flow (its paths kept in plan.multipath_paths; multipath_route merges them) carrying the sum of their fractions,
/// split over them in proportion; paths.size() must be a multiple of it. Its cap is the separate flows' caps taken
/// together: at rate r its path i moves r x fractions[i] / sum, so each link bounds r by efficiency x capacity x sum /
/// load, the bound each path's own flow would have had scaled by sum / fractions[i].
void finish_phase(CollectivePlan& plan, CollectivePhase& phase, std::span<const std::span<const sim::ResourceId>> paths,
                  std::span<const double> fractions, const PlanInputs& in, std::size_t paths_per_flow = 1);

/// The merged route of plan's multi-path flow k (CollectiveFlowTemplate::multipath): built from
/// its paths (FlowNetwork::multipath_route) on first use and kept in plan.routes.
const sim::FlowNetwork::MultiPathRoute& multipath_route(const CollectivePlan& plan, std::size_t k,
                                                        const sim::FlowNetwork& net);

/// The per-algorithm builders of build_plan (its applicability checks already passed; each
/// appends its phases to plan).
void build_ring_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
void build_hierarchical_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
void build_tree_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
/// NVLS tree (nvls_plans.cc): NVLS inside each node and NCCL's double binary tree between the
/// nodes' heads, one head per NIC as NCCL's NVLS graph takes them (at most min(32, GPUs)).
void build_nvls_tree_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
void build_nvls_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
void build_pat_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
/// A lower bound on the tuner_seconds_per_byte of the phase build_pat_plan gives plan (op and
/// ranks set, PAT applicable: one GPU per node, g.rails not empty), bit for bit: the largest load /
/// (efficiency x capacity) over the links but the fabric's of the paths that leave or reach
/// ranks[0] alone (2 x rails x log2 n routes of its n x rails x log2 n), their loads summed in
/// the full plan's order (a sum of some of the same non-negative terms in the same order is no
/// larger in floating point: each rounding is monotone), without the PCIe both-way bounds (which
/// only raise it).
double pat_tuner_seconds_per_byte_floor(const CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
/// CollNet Direct and CollNet Chain (plan.algorithm says which): all_reduce across nodes reduced
/// by the fabric's SHARP switches.
void build_collnet_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
/// all_to_all: flat (every rank sends 1/n of the call's bytes to every other), or with plan.moe
/// deepep DeepEP's deduplicated dispatch (moe_dispatch.h; needs the same number of the group's GPUs
/// on every node, else std::invalid_argument "deepep all-to-all: ...").
void build_all_to_all_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
/// all_to_all with plan.moe deepep (deepep_plan.cc): one phase of DeepEP's RDMA and NVLink flows
/// at moe_dispatch.h's byte fractions.
void build_deepep_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
void build_send_recv_plan(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);
/// all_to_all / send_recv on one node whose pairs all talk over NVLink: sets plan's NCCL p2p
/// schedule (CollectivePlan::p2p_channels ..., nccl_p2p.h; p2p_schedule.cc): all_to_all sends in
/// every round of the p2p schedule (round 0 to itself, as nccl-tests' and XLA's all-to-all do),
/// send_recv (a 2-rank communicator) in round 1. Any other group keeps none.
void set_p2p_schedule(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in);

}  // namespace traincast::models
