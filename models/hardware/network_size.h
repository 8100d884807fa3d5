#pragma once
// The network's size from the cluster spec alone, before any resource is built, and its limit:
// the network-size counterpart of models/executor/graph_size.h, so that a cluster too large to
// simulate is refused in milliseconds instead of after gigabytes of links are built.

#include <cstdint>

#include "models/spec/cluster_spec.h"

namespace traincast::models {

/// Directed resources (links) a cluster's network may hold at most.
///
/// Derived from memory per resource, measured on this build (release, g++, 2 cores; DGX H100 nodes
/// then had 4 PCIe switches, 74 resources per node, now 8 and 82):
/// `traincast explain scenarios/models/llama3_405b.textproto --set cluster.num_nodes=N --path gpu0
/// gpu8` (the Cluster table, the installed FlowNetwork and the CollectiveEngine, no simulation) peaks
/// at 490,016 KB for N = 16,384 (1,247,232 resources) and 1,823,456 KB for N = 65,536 (4,988,928):
/// 365 bytes per resource. A whole single-routing-draw run (`traincast run` of the same file with
/// N = 16,384, dp = 1,024, global_batch_size = 16,384, fabric.routing = adaptive: routes, collective
/// plans, flows and per-link statistics on top) peaks at 1,385,592 KB, and at 135,724 KB for
/// N = 2,048 (155,904 resources): 1.17 KB per resource between the two, about 1.2 KB. 4,000,000
/// resources is then about 1.5 GB of network and 4.7 GB for a whole run (per routing draw: ECMP's
/// draws run one per TBB thread), the budget of the op graph's kMaxGraphOps (~4 GB). It admits 47,548 DGX H100 nodes
/// (380,384 GPUs) on a 3-tier fat tree, so every shipped scenario (the largest: 2,048 nodes, 172,288 resources) and the
/// folded 131,072-GPU Llama 3 405B run (16,384 nodes, 1,378,304 resources) run; 2^20 GPUs (131,072 DGX H100 nodes,
/// 11,026,432 resources) are refused. A million-GPU run was measured at 14.4 GB and 606 s before this limit
/// (docs/scenarios.md, Limits).
inline constexpr std::int64_t kMaxNetworkResources = 4'000'000;

/// What Cluster(spec) builds, counted from the spec: every node's own resources (GPU NVLink and
/// PCIe links, socket links, NIC PCIe links and, with more than one node, NIC tx/rx), its PCIe
/// switch uplinks (per node group: groups may differ in switches) and the fabric's
/// (leaf-spine/aggregation, pod-core, or torus links).
struct NetworkSize {
  std::int64_t nodes = 0;                  ///< cluster.num_nodes
  std::int64_t resources_per_node = 0;     ///< directed resources inside one node but its PCIe switch uplinks
  std::int64_t pcie_uplink_resources = 0;  ///< every node's PCIe switch uplinks, both ways
  std::int64_t fabric_resources = 0;       ///< directed switch-to-switch (or torus) resources
  /// All directed resources: exactly Cluster(spec).num_resources().
  std::int64_t resources() const { return nodes * resources_per_node + pcie_uplink_resources + fabric_resources; }
};

/// Throws std::invalid_argument, naming cluster.num_nodes, the node template (GPUs and NICs per
/// node), cluster.nics_per_node and the fabric, the count against kMaxNetworkResources and the
/// largest cluster.num_nodes that fits, when size.resources() > kMaxNetworkResources. Cluster's
/// constructor calls it (through check_network_size's count) before it builds anything, so run,
/// plan, sweep, explain and chakra refuse alike. Throws what Cluster::network_size throws.
void refuse_network_over_limit(const ClusterSpec& spec, const NetworkSize& size);

/// refuse_network_over_limit(spec, Cluster::network_size(spec)): a bad spec throws Cluster's own
/// message (e.g. "cluster.num_nodes: must be > 0 (got 0)"), a spec over the limit the refusal.
/// Linear in the node count (one sum per node of its PCIe switches); builds nothing.
void check_network_size(const ClusterSpec& spec);

/// The scenario's name of a fabric kind: "none", "rail_optimized", "fat_tree" or "torus"
/// (cluster.fabric.kind in models/io/traincast.proto).
const char* fabric_kind_name(FabricKind k);

}  // namespace traincast::models
