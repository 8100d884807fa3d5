#pragma once
// NCCL's ring graph search (NVIDIA/nccl src/graph/search.cc ncclTopoCompute, ncclTopoSearchRec,
// ncclTopoDupChannels; path types of src/graph/paths.cc) on one node of a group of ranks.

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "models/collectives/nccl_versions.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"

namespace traincast::models {

/// NCCL's path types (src/include/graph.h), in NCCL's order (a larger type is a farther path):
/// loc (same GPU), nvl (NVLink, direct or through NVSwitch), nvb (NVLink through another GPU),
/// pix (one PCIe switch), pxb (several PCIe switches, no CPU), pxn (NVLink to a peer GPU, then
/// PCIe to its NIC), phb (through a CPU's root complex), sys (across the CPU sockets' link).
enum class NcclPathType : std::uint8_t { loc, nvl, nvb, pix, pxb, pxn, phb, sys };

/// One ring channel of the graph: the node's GPUs in ring order (positions into the group's GPUs
/// on the node, 0 .. ppn - 1), the NIC the ring enters the node through and the one it leaves
/// through (local NIC indexes; -1 on one node). nic_in == nic_out: NCCL's crossNic = 0.
struct NcclTopoChannel {
  std::vector<int> order;
  int nic_in = -1;
  int nic_out = -1;
};

/// NCCL's type of a path of one node's resources (src/graph/paths.cc): sys when it crosses a
/// socket link, phb when it passes a CPU's root complex, pxn for NVLink then PCIe, nvl for NVLink
/// only, pxb through two or more PCIe switches, pix through one, loc through none.
NcclPathType nccl_path_type(const Cluster& cluster, std::span<const sim::ResourceId> links);
/// The type of the path between two GPUs of one node (Cluster::route), as the search sees it.
NcclPathType nccl_gpu_path_type(const Cluster& cluster, int src_gpu, int dst_gpu);
/// The type of the PCIe path from a GPU to compute NIC `nic` of its node
/// (Cluster::pcie_route_to_nic: before NCCL's PXN relay), as `nvidia-smi topo -m` and NCCL's
/// "NIC distance" report it.
NcclPathType nccl_gpu_nic_path_type(const Cluster& cluster, int gpu, int nic);
/// NCCL's name of a path type ("PIX", "PXB", "PHB", "SYS", ...).
const char* nccl_path_type_name(NcclPathType type);

/// The result of the search (ncclTopoGraph of the ring pattern).
struct NcclTopoGraph {
  std::vector<NcclTopoChannel> channels;  ///< after ncclTopoDupChannels (duplicates at the end)
  int search_channels = 0;                ///< channels the search found, before the dup
  double bw_gb_per_s = 0;                 ///< per channel after the dup (bwIntra == bwInter for rings) [GB/s]
  NcclPathType type_intra = NcclPathType::loc;
  NcclPathType type_inter = NcclPathType::pix;
  int hops = 0;            ///< links crossed by the search's channels (NCCL's nHops)
  bool fallback = false;   ///< no channel at any speed: NCCL's "simple order" at 0.1 GB/s
  std::int64_t steps = 0;  ///< search steps spent (NCCL's time counter)
  /// Per GPU of the group on the node (its position): the NICs (local indexes) its point-to-point
  /// channels use across nodes, channel c on [c % size] (ncclTopoGetLocalNet on channels 0, 1, ...
  /// until they repeat, over the GPU's local nets as p2p sees them: PXN only through the group's
  /// own GPUs, NCCL's topology holding only the communicator's). Empty on one node.
  std::vector<std::vector<int>> p2p_nics;
  /// The node's system as the search saw it, for NCCL's NVLS graph (nvls_plans.cc), which NCCL
  /// searches on the same system: per local NIC, NCCL's net.bw (the NIC's receive link at
  /// search_link_gb_per_s, bounded by the peers as every link of the search, so a NIC's
  /// bandwidth_factor counts; 0 for a NIC that is not up) [GB/s]; system->maxBw (the best GPU to NIC
  /// path, or GPU to GPU on one node) and system->totalBw (a GPU's NVLink sum or PCIe link, the
  /// larger) [GB/s].
  std::vector<double> net_gb_per_s;
  double max_bw_gb_per_s = 0;
  double total_bw_gb_per_s = 0;
};

/// Per-link bandwidth the search budgets: efficiency x capacity [GB/s] (nccl_tuning.h
/// LinkEfficiency), as NCCL's link widths.
double search_link_gb_per_s(const Cluster& cluster, const sim::FlowNetwork& net, sim::ResourceId r);

/// What a search budgets on node `node`: each of its links at the slowest of its speed
/// (search_link_gb_per_s) and the speeds of the link at the same place on each of `peer_nodes`
/// (other nodes of its node group, Cluster::node_first_resource). Its nets are its own NICs that
/// are up (a peer's failed NIC is served by the peer's next NIC in every route). No peers: the
/// node's own links.
struct SearchBounds {
  int node = 0;
  std::span<const int> peer_nodes;
  /// [GB/s]; a link outside the node (a fabric link) at its own speed.
  double link_gb_per_s(const Cluster& cluster, const sim::FlowNetwork& net, sim::ResourceId r) const;
};

/// The NCCL compute capability class of a GPU as the search reads it (ccMin: the node's GPU), from
/// the catalog's GpuSpec::compute_capability: 100 for sm100+ (Blackwell), 90 for sm90 (Hopper),
/// else 80 (every earlier part, Ada and AMD take the pre-sm90 arrays and tests).
int nccl_cc_class(const GpuSpec& gpu);

/// Searches NCCL's ring graph over `gpus` (global ids of the group's GPUs on one node, in rank
/// order; non-empty) with, when `remote_gpu` >= 0 (a GPU of the group on another node), every NIC
/// of the node as a ring entry and exit (each GPU's own NICs first, as ncclTopoSelectNets and
/// ncclTopoGetLocalNet list them; channel c starts at the c-th): channels at the version's speed arrays, descending,
/// each channel's bandwidth taken off every link of its paths (GPU to GPU: Cluster::route;
/// NIC to GPU and GPU to NIC: the in-node parts of the routes to and from remote_gpu), keeping
/// the graph of the largest channels x bandwidth (tie: fewer hops), then NCCL's pass 2 (speed
/// raised) and ncclTopoDupChannels. `peer_nodes`: other nodes of the same node group whose
/// links bound this one's (SearchBounds: each link at the slowest of it and the link at the same
/// place on each peer), for a graph every node of a group can run on the same NICs. Never throws
/// for valid GPU ids and peers.
NcclTopoGraph search_ring_graph(const Cluster& cluster, const sim::FlowNetwork& net, std::span<const int> gpus,
                                int remote_gpu, const NcclVersion& version, std::span<const int> peer_nodes = {});

/// Cache of ring graphs per group shape and node class (the node's group and its overrides).
class NcclTopoCache {
 public:
  /// The graph for `gpus` on one node (see search_ring_graph), searched once per shape and node
  /// class: nodes of one node group whose NICs, NVLink and PCIe links carry the same failures and
  /// bandwidth_factor overrides (cluster.overrides) share their graphs.
  const NcclTopoGraph& ring_graph(const Cluster& cluster, const sim::FlowNetwork& net, std::span<const int> gpus,
                                  int remote_gpu);
  /// NCCL's ring graph of a group across nodes. `per_node`: the group's GPUs on each of its nodes
  /// (>= 2 nodes, as many GPUs on each). NCCL searches each rank's own node and the ranks agree
  /// on the fewest channels, the lowest bandwidth per channel and the farthest path types
  /// (NVIDIA/nccl src/init.cc, allGather3Data: nChannels and bwIntra/bwInter at their minimum,
  /// typeIntra/typeInter at their maximum), each node keeping its own NICs. The model runs a ring
  /// channel through one rail on every node, so the nodes of one node group share one search: on
  /// the node with the most failed NICs (its NICs up; another node's failed NIC is served by its
  /// next NIC in the routes, Cluster::serving_nic), each link at its slowest over the group's node
  /// classes (search_ring_graph's peer_nodes). A slowed NIC thus keeps the rings off its rail
  /// wherever it sits; slowed NICs on several rails keep them off each of those rails on every
  /// node (NCCL's nodes would each leave only their own). Across node groups (a mixed cluster),
  /// NCCL's combination: the channels of the group whose graph has the fewest (ties: the lower
  /// bandwidth, then the more failed NICs, then the first), at the lowest bandwidth and farthest
  /// types, with the system figures (net_gb_per_s, max_bw_gb_per_s, total_bw_gb_per_s) each at
  /// the lowest of the groups' (for NVLS heads usable on every node, nvls_plans.cc).
  const NcclTopoGraph& ring_graph_across(const Cluster& cluster, const sim::FlowNetwork& net,
                                         std::span<const std::vector<int>> per_node);

 private:
  /// The class of node `node` (0 on a uniform cluster without failed NICs or scaled links).
  int node_class(const Cluster& cluster, int node);

  std::map<std::vector<int>, NcclTopoGraph> graphs_;  ///< key: node class, local ranks, 1 for multi-node
  std::map<std::vector<int>, NcclTopoGraph> merged_;  ///< ring_graph_across's combined graphs, by node classes
  std::vector<int> node_class_;                       ///< per node; empty until a cluster varies by node
  bool classes_built_ = false;
};

}  // namespace traincast::models
