#pragma once
// The cluster as a graph of directed resources: servers built from their node template (GPUs,
// NVLink/NVSwitch, PCIe switches, CPU sockets, NICs) joined by a fabric (fat tree with 2 or 3
// tiers, rail-optimized, or torus). Topology and routes are data (a resource table with ids
// 0..n-1); install() puts those resources on a FlowNetwork to simulate. Routes are deterministic.
//
// Devices and the directed resources between them (a full-duplex cable is two resources):
//  - NVSwitch nodes: per GPU "nvl_up" (GPU->NVSwitch) and "nvl_down", capacity = NVLink links x
//    per-link bandwidth per direction; the NVSwitch plane itself is non-blocking.
//    Mesh nodes (xGMI, HGX 4-GPU): one resource per ordered GPU pair, capacity = links / peers x
//    per-link. Bridge pairs: one resource per direction between GPUs 2k and 2k+1 (all links).
//  - PCIe, along the template's PCIe tree (pcie_tree.h): per GPU and per NIC "pcie_up"/"pcie_down"
//    (device <-> its PCIe switch, or its CPU root port); per PCIe switch "uplink_up"/"uplink_down"
//    (switch <-> the root complex of its socket, or <-> its upstream switch when cascaded); per
//    ordered socket pair "socket a->b" (UPI/xGMI, NCCL's achievable figure). Switches and root
//    complexes are non-blocking; host memory is not a resource (a copy to it ends at the root
//    complex).
//  - NIC: "tx" (NIC->fabric) and "rx" at the NIC line rate.
//  - Fabric: 2 tiers: leaf<->spine resources per (leaf, spine); 3 tiers: leaf<->aggregation per
//    (leaf, aggregation switch of its pod) and pod<->core per (pod, core); torus: per node one
//    resource per (dimension, direction) to the neighbour (one per dimension of extent 2, whose
//    two neighbours are one node: torus_directions). Under adaptive routing a leaf's
//    up-links are one pooled resource each way (and a pod's core links): per-packet spraying
//    splits every flow evenly over them, which loads each link as the pool does (docs/fabric.md).
// Latencies: NicSpec::latency_ns split over tx and rx; each switch (or torus router) traversed
// adds FabricSpec::switch_latency_ns, each network cable 5 ns/m x cable_length_m. NVLink/PCIe
// resources carry no latency: NCCL's per-step latency model (models/collectives) covers them.

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/network_size.h"
#include "models/hardware/pcie_tree.h"
#include "models/hardware/switch_count.h"
#include "models/spec/scenario.h"
#include "sim/flow_network.h"
#include "sim/time.h"

namespace traincast::models {

struct ResolvedSelector;  // element_overrides.h

/// What a resource is, for per-link-type efficiencies (models/collectives) and reports.
enum class LinkKind : std::uint8_t { other, nvlink, pcie, socket, nic, fabric };

/// One directed resource: a row of the cluster's resource table (resource = its index) and a
/// graph edge between two named devices (for explain and DOT).
struct ClusterEdge {
  std::string from;  ///< device, e.g. "node0.gpu3", "node0.pcie_sw1", "node0.cpu0", "leaf2"
  std::string to;
  sim::ResourceId resource = 0;
  LinkKind kind = LinkKind::other;
  double capacity_bytes_per_s = 0;  ///< per direction, > 0
  sim::Time latency;                ///< charged once per flow crossing it, >= 0
  std::string name;                 ///< e.g. "node0.gpu3.nvl_up", "leaf2->spine1"
};

class Cluster {
 public:
  /// Builds the cluster's resource table and routing, without any network (enough to count
  /// GPUs, route, describe or explain). Throws std::invalid_argument for an unknown
  /// template/GPU/NIC or impossible sizes; messages name the field, e.g.
  /// "cluster.num_nodes: must be > 0 (got 0)",
  /// "cluster.fabric.kind: none allows a single node (got num_nodes = 2)",
  /// "cluster.fabric.torus_dims: product 12 != num_nodes 16"; FlowNetwork::add_resource's
  /// message for a resource whose capacity or latency is out of range; and, before anything is
  /// built, refuse_network_over_limit's for a network over kMaxNetworkResources
  /// (network_size.h). Throws Interrupted (models/spec/run_control.h) when an interrupt is
  /// requested while the nodes are built (polled every 1,024 nodes).
  explicit Cluster(const ClusterSpec& spec);
  /// Cluster(spec), then install(net): builds every resource of the cluster on `net` (which
  /// must be empty). Same errors as both.
  Cluster(const ClusterSpec& spec, sim::FlowNetwork& net);
  /// The cluster's sizes and GPU places only (num_gpus, gpus_per_node, node_of, local_rank,
  /// fabric_slots, node_at_slot, drained_nodes, nics_per_node, gpu_spec): no resource is built, so
  /// route(), resource names and install() see an empty table. For checks that place GPUs on a
  /// cluster too large to build twice (131,072 GPUs: ~0.5 s and ~280 MB for the full table). Same
  /// errors as Cluster(spec) but those of the resource table and the network-size limit.
  static std::unique_ptr<Cluster> sizes_only(const ClusterSpec& spec);

  /// Adds every resource of the table to `net`, in id order, so that the network's ids are the
  /// table's (and route() holds for it). The network shares the table's names (it keeps the
  /// table alive) instead of copying them. Throws std::invalid_argument when `net` already has
  /// resources, Interrupted when an interrupt is requested (polled every 65,536 resources). Call
  /// once per network; only needed to simulate.
  void install(sim::FlowNetwork& net) const;

  /// This cluster with FabricSpec::ecmp_seed = `ecmp_seed`: the same resource table (shared, not
  /// copied: the seed changes only the routes), an empty route cache. Equal in every query to
  /// Cluster(spec with that seed), without building the table again (the ECMP draws of one job,
  /// models/executor/training_run.cc). A copy of a cluster likewise shares its table.
  Cluster with_ecmp_seed(std::uint64_t ecmp_seed) const {
    Cluster c(*this);
    c.spec_.fabric.ecmp_seed = ecmp_seed;
    return c;
  }

  /// The network Cluster(spec) builds, counted from the spec's sizes in constant time, building
  /// nothing: resources() == Cluster(spec).num_resources() exactly (the count mirrors
  /// build_node and build_fabric; tests/models/hardware/network_size_test.cc checks it). Throws
  /// what Cluster(spec) throws for a bad spec, but not the size limit.
  static NetworkSize network_size(const ClusterSpec& spec);
  /// The fabric settings of `spec` that change nothing, one sentence each naming the field and
  /// why (fabric_notes.cc): any fabric field but `kind` on a one-node cluster; a tree's field on a
  /// torus (oversubscription, nodes_per_leaf, tiers, leaves_per_pod, leaf_up_ports, leaf_ports,
  /// routing, ecmp_seed: a torus has no switches and one route per pair); an oversubscription
  /// above 1 where every node sits under one leaf group (no traffic crosses a leaf up-link), or
  /// where whole up-link ports round it to under 90 % of the ratio asked (rail-optimized with
  /// nodes_per_leaf 1 at 2:1 is 1 down port : 1 up port). Empty when every setting acts. Throws
  /// what Cluster(spec) throws for a bad spec.
  static std::vector<std::string> settings_without_effect(const ClusterSpec& spec);
  /// The node's NICs where they spread unevenly over its PCIe switches (pcie_tree.h nic_spread,
  /// after nic_placement), one sentence naming the template, its NIC count, the GPUs with no NIC
  /// on their switch and the NIC each reaches instead, what that costs (a cross-switch path, PXN
  /// over NVLink or through the CPU; point-to-point traffic such as all_to_all can take longer
  /// than with fewer NICs), and the nearest counts that spread evenly (nic_spread_notes.cc). E.g.
  /// 3 NICs on dgx_h100: "cluster.nics_per_node 3 on dgx_h100 leaves gpu1, gpu2, gpu4, gpu5 and
  /// gpu7 without a NIC on their PCIe switch ... (expected cluster.nics_per_node 2 or 4 ..., or 8
  /// ...)". Empty for one node (NICs carry only traffic between nodes) and for an even spread
  /// (every built-in template at its own count). Throws what Cluster(spec) throws for a bad spec.
  static std::vector<std::string> nic_spread_notes(const ClusterSpec& spec);
  /// Neighbour directions of one node of a torus of extents `dims` (each >= 2), each of which
  /// takes an equal share of the node's NIC ports (docs/fabric.md, torus cabling): 2 per
  /// dimension (to the - and + neighbour), 1 per dimension of extent 2 (both are one node, joined
  /// by one link each way). A 4 x 4 torus: 4; [2, 4]: 3; a ring of 2 nodes: 1.
  static int torus_directions(const std::vector<int>& dims) {
    int n = 0;
    for (const int d : dims) n += d == 2 ? 1 : 2;
    return n;
  }
  /// Why `nics` NIC ports per node cannot cable a torus of extents `dims` (each >= 2), or "" when
  /// they can: every neighbour direction takes the same whole number of ports, at least one
  /// (fabric_notes.cc). E.g. 1 NIC on 4 x 4: "1 NIC per node cannot cable the 4 neighbour
  /// directions of a 4x4 torus: each direction takes the same whole number of NIC ports, at least
  /// one, ... (expected cluster.nics_per_node a multiple of 4, e.g. 4; ...)". The Cluster constructor throws it under
  /// "cluster.nics_per_node: "; the scenario loader names the field with its position.
  static std::string torus_ports_problem(const std::vector<int>& dims, int nics);

  int num_gpus() const { return num_nodes_ * gpus_per_node_; }
  int num_nodes() const { return num_nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  int local_rank(int gpu) const { return gpu % gpus_per_node_; }
  /// The spec of global GPU `gpu`: its node group's GPU (the same for every GPU of a uniform
  /// cluster). gpu is not range-checked on a uniform cluster.
  const GpuSpec& gpu_spec(int gpu) const;
  /// The first node group's template (every node's on a uniform cluster).
  const NodeTemplate& node_template() const { return *template_; }

  /// One node group (ClusterSpec::node_groups; a uniform cluster is one group of every node).
  struct NodeGroup {
    const NodeTemplate* node_template = nullptr;
    const GpuSpec* gpu = nullptr;
    int first_node = 0;
    int num_nodes = 0;
    double scale_up_bytes_per_s = 0;   ///< per GPU per direction, as scale_up_bytes_per_s()
    double mesh_link_bytes_per_s = 0;  ///< per GPU pair (mesh) or pair (bridges)
  };
  /// The node groups in node order (one on a uniform cluster).
  const std::vector<NodeGroup>& node_groups() const { return groups_; }
  /// The group node `node` belongs to (0 on a uniform cluster).
  int group_of_node(int node) const;
  /// true when the cluster has more than one node group.
  bool mixed() const { return groups_.size() > 1; }
  const NicSpec& nic() const { return *nic_; }
  const ClusterSpec& spec() const { return spec_; }

  /// Compute NICs per node (template's, or ClusterSpec::nics_per_node).
  int nics_per_node() const { return nics_per_node_; }
  /// The first NIC serving local GPU `local` (NodeTemplate's rule); 0 when the node has no NIC.
  /// With nic_placement other_socket: the NIC that now sits beside the GPU (cabled for the GPU at
  /// its place on the other socket), the one NCCL gives it (ncclTopoGetLocalNet).
  int nic_of_local(int local) const;
  /// The local GPU a NIC is attached next to (the first GPU it serves; with nic_placement
  /// other_socket, the GPU at that GPU's place on the other socket, where the NIC now sits).
  int gpu_of_nic(int nic) const;
  /// The first GPU a NIC serves, as cabled (NodeTemplate's rule), wherever nic_placement puts it.
  int cabled_gpu_of_nic(int nic) const;
  /// The effective scale-up (ScaleUp::none when the GPU has no NVLink/xGMI links).
  ScaleUp scale_up() const { return scale_up_; }
  /// true when some GPUs of a node talk over NVLink/xGMI.
  bool has_scale_up() const { return scale_up_ != ScaleUp::none; }
  /// true when local GPUs a and b (a != b) are joined by NVLink/xGMI (directly or via NVSwitch).
  bool nvlink_between(int local_a, int local_b) const;
  /// Scale-up bandwidth per GPU per direction [bytes/s] (NVSwitch port, sum of mesh links, or
  /// bridge) of the first node group (NodeGroup::scale_up_bytes_per_s per group); 0 without scale-up.
  double scale_up_bytes_per_s() const { return scale_up_bytes_per_s_; }
  /// ScaleUp::bridges: GPUs per NVLink bridge (2 or 4), all to all within a bridge; else 0.
  int bridge_gpus() const { return scale_up_ == ScaleUp::bridges ? bridge_gpus_ : 0; }
  /// GPU peer-to-peer over PCIe in effect (template's, or ClusterSpec::pcie_p2p).
  bool pcie_p2p() const { return pcie_p2p_; }
  int socket_of_gpu(int local) const;
  int socket_of_nic(int nic) const;
  /// The PCIe switch local GPU `local` of `node` hangs on (its group's tree), -1 for a CPU root port.
  int switch_of_gpu(int node, int local) const;
  /// The PCIe switch compute NIC `nic` of `node` hangs on (its group's tree, after
  /// ClusterSpec::nic_placement), -1 for a root port.
  int switch_of_nic(int node, int nic) const;
  /// The first node group's PCIe tree as routed. Other groups may hang their GPUs and NICs on other
  /// switches (pcie_of); every group puts each GPU and NIC on the same socket and each NIC beside
  /// the same GPU (node_groups.cc).
  const PcieLayout& pcie_tree() const { return pcie_; }
  /// The PCIe tree of `node`'s group.
  const PcieLayout& pcie_of(int node) const;
  int num_leaves() const { return num_leaves_; }
  /// Spine (2 tiers) or core (3 tiers) switches modelled; 0 when no traffic leaves a leaf.
  int num_spines() const { return num_spines_; }
  /// Up-link ports of each leaf at the NIC line rate (0: a single leaf group, no up-links).
  int leaf_up_ports() const { return leaf_up_ports_; }
  /// The routing in effect: FabricSpec::routing, or for automatic the NIC's (routing_for_nic).
  FabricRouting routing() const { return routing_; }
  /// The routing `automatic` gives a NIC: InfiniBand ("IB-*": NVIDIA's OpenSM default routing
  /// engine is ar_updn, adaptive routing on; NVIDIA InfiniBand Cluster Bring-up Procedure v1.0)
  /// and HPE Slingshot -> adaptive; Ethernet (RoCE, TCPXO) -> ecmp_hash. d_mod_k (OpenSM's
  /// static ftree tables, AR off) is asked for explicitly.
  static FabricRouting routing_for_nic(const NicSpec& nic);
  /// true when the hash seed can change a route: ecmp_hash routing, traffic between leaves and
  /// more than one equal-cost up-link (spines, aggregation or core switches) to choose from.
  bool hashing_matters() const;
  /// The destination port index D of d-mod-k: leaf switches in order, then their down ports
  /// (OpenSM's ftree numbering): leaf_of(node, nic) * down ports + the port on the leaf.
  std::uint64_t destination_index(int node, int nic) const;

  /// Directed resources a byte crosses from src to dst GPU (src != dst), in order.
  /// Intra-node: NVSwitch [nvl_up(src), nvl_down(dst)], mesh [link(src,dst)], bridge partner
  /// [bridge(src,dst)], else PCIe along the tree: pcie_up(src), the uplink_up of each switch above
  /// src up to the lowest switch both GPUs hang under, the uplink_down of each switch from there
  /// down to dst's, pcie_down(dst). Without a common switch (other branches of the root complex,
  /// root ports, other sockets), or when P2P is off (staged through host memory: always via the
  /// root complex), every uplink of src's chain, the socket link when the chains end on different
  /// sockets, and every uplink of dst's chain downwards.
  /// Inter-node through NIC `rail` (local NIC index, same on both nodes): when NCCL's PXN rule
  /// holds (pxn_relay: NVLink joins the source GPU to the NIC's own GPU, whose PCIe path to the
  /// NIC stays under a switch, and that path is faster than the source's own or the source's
  /// goes through the host), the bytes first cross NVLink to the NIC's GPU (NCCL's PXN, default
  /// since 2.12); then the PCIe path to the NIC (via the root complex when
  /// GPUDirect RDMA is off), tx, fabric, rx, the PCIe path to dst. The fabric part follows
  /// routing(): d_mod_k takes up-port D mod k at each tier (D = the destination port's index),
  /// ecmp_hash a seeded hash of the flow (src GPU, dst GPU, NIC) per switch tier, adaptive the
  /// pooled up/down resources of the leaves (and pods). The span stays valid for the lifetime of
  /// the Cluster (cached per key).
  /// Throws std::out_of_range for a GPU outside [0, num_gpus()), src == dst, or a rail outside
  /// [0, nics_per_node()) for GPUs on different nodes.
  std::span<const sim::ResourceId> route(int src_gpu, int dst_gpu, int rail) const;
  /// route() through the destination GPU's own NIC (rail nic_of_local(local_rank(dst))).
  std::span<const sim::ResourceId> route(int src_gpu, int dst_gpu) const;

  /// The other direction of a GPU's own PCIe link (pcie_up(g) <-> pcie_down(g), the link between
  /// the GPU and its PCIe switch or root port), or kNoResource when r is not such a link.
  sim::ResourceId gpu_pcie_reverse(sim::ResourceId r) const {
    return r < gpu_pcie_reverse_.size() ? gpu_pcie_reverse_[r] : kNoResource;
  }
  static constexpr sim::ResourceId kNoResource = ~sim::ResourceId{0};
  /// Directed resources a copy between GPU `gpu` and the memory of CPU socket `socket` of the GPU's
  /// node crosses, in the order the bytes do. Host-to-device (!to_host): the socket link (UPI/xGMI,
  /// socket -> the GPU's socket) when the memory is on another socket than the GPU's root complex,
  /// the GPU's PCIe switch uplink (when the template has switches), the GPU's PCIe link;
  /// device-to-host (to_host) the same links the other way, in reverse order. The root complex and
  /// DRAM are not resources. Throws std::out_of_range for a GPU outside [0, num_gpus()) or a socket
  /// outside [0, sockets).
  std::vector<sim::ResourceId> host_route(int gpu, bool to_host, int socket) const;
  /// The PCIe resources from global GPU `gpu` to compute NIC `nic` of its node along the PCIe
  /// tree (through the root complex when GPUDirect RDMA is off), without the NVLink relay (PXN)
  /// route() takes: the path `nvidia-smi topo -m` types. Throws std::out_of_range for a GPU or NIC
  /// out of range.
  std::vector<sim::ResourceId> pcie_route_to_nic(int gpu, int nic) const;
  /// host_route() with the buffer on the GPU's own socket (socket_of_gpu(local_rank(gpu))): pinned
  /// memory allocated NUMA-locally, as DeepSpeed's offload and a correctly bound data loader do.
  std::vector<sim::ResourceId> host_route(int gpu, bool to_host) const;

  /// Kind of a resource built by this cluster (LinkKind::other for ids it did not build).
  LinkKind link_kind(sim::ResourceId r) const { return r < kinds_.size() ? kinds_[r] : LinkKind::other; }
  /// The node a resource belongs to (its GPUs' NVLink and PCIe links, its socket links, its NICs'
  /// links to the fabric), or -1 for a fabric link between switches and for ids it did not build.
  int node_of_resource(sim::ResourceId r) const;
  /// The first resource id of node `node` (0 <= node < num_nodes()): build_node adds each node's
  /// resources in one run, in the same order on every node of a node group, so
  /// r - node_first_resource(node_of_resource(r)) names one resource alike on each of them.
  sim::ResourceId node_first_resource(int node) const { return node_first_resource_[static_cast<std::size_t>(node)]; }
  /// Every resource built, as an edge between devices, in build order: the resource table
  /// (edges()[r].resource == r).
  const std::vector<ClusterEdge>& edges() const { return *edges_; }
  /// Resources built (ids 0 .. num_resources() - 1; install() gives a network the same ids).
  std::size_t num_resources() const { return edges_->size(); }
  /// Row r of the resource table. Throws std::out_of_range for r >= num_resources() (as do
  /// capacity, latency and resource_name).
  const ClusterEdge& resource(sim::ResourceId r) const;
  /// Capacity of resource r [bytes/s], as a network it is installed on has it.
  double capacity(sim::ResourceId r) const { return resource(r).capacity_bytes_per_s; }
  /// Latency of resource r, charged once per flow crossing it.
  sim::Time latency(sim::ResourceId r) const { return resource(r).latency; }
  /// Name of resource r, e.g. "node0.gpu3.pcie_up".
  const std::string& resource_name(sim::ResourceId r) const { return resource(r).name; }

  /// SM clock factor of global GPU `gpu` from ClusterSpec::overrides (1 when none names it).
  double clock_factor(int gpu) const {
    return gpu_clock_factor_.empty() ? 1.0 : gpu_clock_factor_[static_cast<std::size_t>(gpu)];
  }
  /// Power limit of global GPU `gpu` from ClusterSpec::overrides power_cap_w [W]; 0 when none.
  double power_cap_w(int gpu) const {
    return gpu_power_cap_w_.empty() ? 0.0 : gpu_power_cap_w_[static_cast<std::size_t>(gpu)];
  }
  /// Supply air or coolant temperature of node `node` from ClusterSpec::overrides supply_c [C];
  /// NaN when none names it (the scenario's thermal.supply_air_c / coolant_c hold).
  double supply_c(int node) const {
    return node_supply_c_.empty() ? std::numeric_limits<double>::quiet_NaN()
                                  : node_supply_c_[static_cast<std::size_t>(node)];
  }
  /// GPUs with a clock factor below 1, a power cap or a node supply temperature, ascending.
  const std::vector<int>& slowed_gpus() const { return slowed_gpus_; }
  /// Resources whose capacity an override scaled, ascending, with the factor applied.
  const std::vector<std::pair<sim::ResourceId, double>>& scaled_resources() const { return scaled_resources_; }
  /// true when compute NIC `nic` of node `node` is up (no override `failed: true` names it).
  bool nic_up(int node, int nic) const { return serving_nic(node, nic) == nic; }
  /// The NIC that carries node `node`'s traffic of rail `nic`: `nic` when it is up, else the first
  /// NIC up after it (nic + 1, nic + 2, ..., wrapping) on the same CPU socket, else on any socket
  /// (NCCL only opens NICs that are up; a GPU whose own NIC is down uses a peer's NIC over PXN, or
  /// PCIe). Not range-checked.
  int serving_nic(int node, int nic) const {
    return serving_nic_.empty() ? nic : serving_nic_[static_cast<std::size_t>(node) * nics_per_node_ + nic];
  }
  /// true when some compute NIC is failed.
  bool has_failed_nics() const { return !serving_nic_.empty(); }
  /// Compute NICs of node `node` that are failed.
  int failed_nics(int node) const;
  /// Resources an override marked failed (both directions of a NIC or of a leaf up-link cable),
  /// ascending; no route crosses them.
  const std::vector<sim::ResourceId>& failed_resources() const { return failed_resources_; }
  /// true when some leaf up-link (leaf <-> spine or aggregation switch) is failed.
  bool has_failed_up_links() const { return !up_link_failed_.empty(); }
  /// The leaf up-links of leaf group `group` (nodes group x nodes_per_leaf onwards: one leaf, or one
  /// per rail on rail_optimized) in id order: first the leaf->spine (or aggregation) resources, then
  /// the spine->leaf ones in the same order. Empty without up-links (one leaf group, torus) or for
  /// a group out of range.
  std::pair<std::vector<sim::ResourceId>, std::vector<sim::ResourceId>> group_up_links(int group) const;

  /// A node drained because an override marks one of its GPUs missing (ElementOverride::missing):
  /// as Slurm drains a node whose gres/gpu count is below its configured one, no job runs on it.
  struct DrainedNode {
    int slot = 0;            ///< its place on the fabric: its number in the scenario (node<slot>)
    std::string gpu;         ///< the missing GPU, "node3/gpu5" (the first override naming the node)
    int override_index = 0;  ///< i of cluster.overrides[i]
    /// "its GPU node3/gpu5 is missing (cluster.overrides[2])": why the node is drained, as every
    /// report prints it.
    std::string reason() const {
      return "its GPU " + gpu + " is missing (cluster.overrides[" + std::to_string(override_index) + "])";
    }
  };
  /// The drained nodes, ascending by slot; none of them is one of this cluster's nodes 0..num_nodes()-1.
  const std::vector<DrainedNode>& drained_nodes() const { return drained_; }
  /// Node places on the fabric: the scenario's cluster.num_nodes (num_nodes() + the drained ones).
  int fabric_slots() const { return num_nodes_ + static_cast<int>(drained_.size()); }
  /// The fabric place of node `node` (0 .. num_nodes()-1): `node` itself unless a node before it is
  /// drained. Its resources are named node<slot>.*, its leaf is slot / nodes_per_leaf.
  int fabric_slot(int node) const {
    return slot_of_node_.empty() ? node : slot_of_node_[static_cast<std::size_t>(node)];
  }
  /// The node at fabric place `slot`, -1 when that node is drained (slot not range-checked).
  int node_at_slot(int slot) const;

  /// The physical switches of a fat_tree or rail_optimized fabric over every fabric slot, what the
  /// cost buys and describe() prints (count_switches on fabric.leaf_ports or the NIC's default);
  /// all zero for another fabric or one node. Defined in cluster_switches.cc.
  SwitchCount switch_count() const;
  /// Human-readable description: per node the devices and links with bandwidths, then the fabric.
  std::string describe() const;
  /// Graphviz DOT of the devices and links (one edge per full-duplex link, labelled with the
  /// per-direction bandwidth). Nodes beyond max_nodes are summarised in a comment.
  std::string to_dot(int max_nodes = 64) const;

 private:
  /// describe()'s "Fabric: ..." line (more than one node).
  void describe_fabric(std::ostream& o) const;
  /// describe()'s "Switches bought: ..." lines: switch_count(), and where the simulated fabric
  /// differs, how (cluster_switches.cc).
  void describe_switches(std::ostream& o) const;
  struct SizesOnly {};
  /// Checks the spec and sets every size (scale-up, fabric shape), building no resource.
  Cluster(const ClusterSpec& spec, SizesOnly);
  /// network_size() of this cluster's sizes (defined with it in network_size.cc).
  NetworkSize count_network() const;

  struct CachedRoute {
    const sim::ResourceId* hops = nullptr;
    std::uint32_t size = 0;
  };

  sim::ResourceId add(double capacity_bytes_per_s, std::int64_t latency_ns, std::string name, LinkKind kind,
                      std::string from, std::string to);
  void build_node(int node);
  /// Resolves ClusterSpec::node_groups (or the one uniform group) into groups_ and sets template_,
  /// gpu_, bridge_gpus_ (ClusterSpec::nvlink_bridge_gpus, else the first template's) and the
  /// scale-up of every group. Throws std::invalid_argument "cluster.node_group[i].FIELD: ..." for a
  /// group that is unknown, does not fit, or cannot share the first group's fabric.
  void resolve_groups(const ClusterSpec& spec);
  /// graph_links_ from the template's NVLink list (empty list: all zero).
  void set_graph_links(const NodeTemplate& t);
  void build_fabric();
  /// Reads the overrides with `missing` (element_overrides.cc): fills drained_ and slot_of_node_,
  /// takes the drained nodes out of num_nodes_ and groups_. Throws std::invalid_argument
  /// "cluster.overrides[i].missing: ..." (or .select) for a selector that is not one GPU, another
  /// field with it, missing: false, a torus, or every node drained.
  void drain_missing_gpus(const ClusterSpec& spec);
  /// Applies spec_.overrides (element_overrides.h) to the built table. Throws
  /// std::invalid_argument "cluster.overrides[i].select: ..." (or .clock_factor/.bandwidth_factor).
  void apply_overrides();
  /// nic_placement other_socket: the local GPU at `local`'s place on the other socket (half the
  /// GPU list away, when that GPU sits on the other socket); else `local`.
  int other_socket_place(int local) const;
  void compute_route(int src, int dst, int rail, std::vector<sim::ResourceId>& out) const;
  void append_intra(int node, int src_local, int dst_local, std::vector<sim::ResourceId>& out) const;
  /// true when local GPU `gpu` of `node` sends to compute NIC `nic` through the NIC's own GPU
  /// over NVLink (NCCL's PXN) rather than over its own PCIe path; NCCL's rule in pxn_relay's
  /// comment (cluster_pcie.cc).
  bool pxn_relay(int node, int gpu, int nic) const;
  /// PCIe path between two endpoints of a node (GPU or NIC); staged = through the root complex.
  void append_pcie(int node, bool src_is_nic, int src, bool dst_is_nic, int dst, bool staged,
                   std::vector<sim::ResourceId>& out) const;
  /// The fabric part from src_node's NIC src_nic to dst_node's NIC dst_nic (the same rail unless
  /// a failed NIC was replaced on one side).
  void append_fabric(int src_node, int dst_node, int src_nic, int dst_nic, std::uint64_t flow_hash,
                     std::vector<sim::ResourceId>& out) const;
  /// The up-link index at the leaf (0 .. ups-1) and the core plane index (3 tiers) of a flow
  /// from leaf src_leaf to leaf dst_leaf (towards NIC `rail` of dst_node): routing()'s pick,
  /// or, when that cable is failed at either leaf, a pick among those up at both.
  std::pair<int, int> pick_up_links(int src_leaf, int src_pod, int dst_leaf, int dst_node, int rail,
                                    std::uint64_t flow_hash) const;
  /// Marks a failed NIC or leaf up-link (override i, resource r); throws std::invalid_argument
  /// "cluster.overrides[i].failed: ..." for an element that cannot fail (element_overrides.cc).
  void fail_resource(int i, const std::string& select, sim::ResourceId r, std::vector<int>& nic_failed);
  /// After every failure is marked: the serving NIC table, and refusals when a node has no NIC
  /// up or two leaves have no up-link in common.
  void settle_failures(const std::vector<int>& nic_failed);
  /// Records override `o`'s supply_c on the nodes `sel` names (whole nodes only); throws
  /// std::invalid_argument "<at>supply_c: ..." otherwise.
  void apply_supply(const std::string& at, const ElementOverride& o, const ResolvedSelector& sel);
  int leaf_of(int node, int rail) const;
  /// ScaleUp::bridges: local GPUs a and b share an NVLink bridge (groups of bridge_gpus_).
  bool same_bridge(int a, int b) const { return a / bridge_gpus_ == b / bridge_gpus_; }
  /// ScaleUp::graph: NVLink links between local GPUs a and b (0: none, the pair uses PCIe).
  int graph_links(int a, int b) const {
    return graph_links_[static_cast<std::size_t>(a) * static_cast<std::size_t>(gpus_per_node_) + b];
  }

  ClusterSpec spec_;
  const GpuSpec* gpu_ = nullptr;
  const NodeTemplate* template_ = nullptr;
  const NicSpec* nic_ = nullptr;
  int num_nodes_ = 0;
  int gpus_per_node_ = 0;
  int nics_per_node_ = 0;
  ScaleUp scale_up_ = ScaleUp::none;
  FabricRouting routing_ = FabricRouting::d_mod_k;
  bool pcie_p2p_ = true;
  double scale_up_bytes_per_s_ = 0;
  double mesh_link_bytes_per_s_ = 0;
  int bridge_gpus_ = 2;  ///< ScaleUp::bridges: GPUs per bridge (ClusterSpec, else the template's)
  /// ScaleUp::graph: the template's NVLink links, [a * gpus_per_node + b] (symmetric).
  std::vector<int> graph_links_;
  PcieLayout pcie_;                     ///< the first group's PCIe tree for nics_per_node_ NICs
  std::vector<PcieLayout> group_pcie_;  ///< each node group's PCIe tree for nics_per_node_ NICs
  /// Node n's PCIe switch uplinks are uplink_up_[switch_base_[n] + s] (num_nodes_ + 1 entries).
  std::vector<std::size_t> switch_base_;
  std::int64_t cable_ns_ = 0;
  // Fabric sizes.
  int num_groups_ = 0;  // leaf groups (nodes_per_leaf nodes each)
  int num_leaves_ = 0;
  int num_spines_ = 0;  // spines (2 tiers) / cores (3 tiers)
  int num_aggs_ = 0;    // aggregation switches per pod (3 tiers)
  int num_pods_ = 0;
  int leaf_down_ports_ = 0;
  int leaf_up_ports_ = 0;               ///< leaf uplink ports at line rate (0: single leaf group, no uplinks)
  double leaf_uplink_bytes_per_s_ = 0;  // per (leaf, spine|agg) resource
  double pod_uplink_bytes_per_s_ = 0;   // per (pod, core) resource
  std::vector<int> torus_dims_;
  double torus_link_bytes_per_s_ = 0;

  // Resource ids. GPU-indexed: global GPU; NIC-indexed: node * nics + nic; switch-indexed:
  // node * switches + s; socket links: node * sockets^2 + a * sockets + b.
  std::vector<sim::ResourceId> nvl_up_, nvl_down_;
  std::vector<sim::ResourceId> mesh_;  // node * gpn * gpn + a * gpn + b (mesh and bridge pairs)
  std::vector<sim::ResourceId> pcie_up_, pcie_down_;
  std::vector<sim::ResourceId> uplink_up_, uplink_down_;
  std::vector<sim::ResourceId> socket_link_;
  std::vector<sim::ResourceId> nic_pcie_up_, nic_pcie_down_, nic_tx_, nic_rx_;
  std::vector<sim::ResourceId> leaf_up_, spine_down_;  // leaf * spines|aggs + k
  std::vector<sim::ResourceId> pod_up_, core_down_;    // pod * cores + c
  std::vector<sim::ResourceId> torus_;                 // node * 2 * dims + 2 * d + (dir < 0); extent 2: - is +
  std::vector<LinkKind> kinds_;
  /// [node] the first resource build_node(node) added; [num_nodes] the first fabric resource.
  std::vector<sim::ResourceId> node_first_resource_;
  std::vector<sim::ResourceId> gpu_pcie_reverse_;  // by resource id; kNoResource elsewhere
  /// The resource table: written while the cluster is built, read-only afterwards, so copies of
  /// the cluster (with_ecmp_seed) share it.
  std::shared_ptr<std::vector<ClusterEdge>> edges_ = std::make_shared<std::vector<ClusterEdge>>();
  std::vector<NodeGroup> groups_;
  std::vector<double> gpu_clock_factor_;  ///< per GPU; empty when no override names a GPU
  std::vector<double> gpu_power_cap_w_;   ///< per GPU, 0 = none; empty when no override caps one
  std::vector<double> node_supply_c_;     ///< per node, NaN = none; empty when no override sets one
  std::vector<int> slowed_gpus_;
  std::vector<std::pair<sim::ResourceId, double>> scaled_resources_;
  std::vector<int> serving_nic_;     ///< node * nics + nic; empty when no NIC is failed
  std::vector<int> up_link_failed_;  ///< leaf * ups + k (as leaf_up_): 1 + the failing override, 0 = up; empty: none
  std::vector<sim::ResourceId> failed_resources_;
  std::vector<DrainedNode> drained_;
  std::vector<int> slot_of_node_;  ///< per node its fabric slot, ascending; empty when none is drained

  /// route()'s cache: the routes computed so far, in blocks that never move (spans stay valid).
  /// A copy of the cluster starts with an empty cache: its routes may differ (with_ecmp_seed).
  struct RouteCache {
    RouteCache() = default;
    RouteCache(const RouteCache& /*other*/) {}
    RouteCache(RouteCache&&) noexcept = default;
    RouteCache& operator=(const RouteCache&) = delete;
    RouteCache& operator=(RouteCache&&) noexcept = default;
    ~RouteCache() = default;
    std::unordered_map<std::uint64_t, CachedRoute> index;
    std::vector<std::unique_ptr<sim::ResourceId[]>> blocks;
    std::size_t block_used = 0, block_size = 0;
    std::vector<sim::ResourceId> scratch;
  };
  mutable RouteCache routes_;
};

}  // namespace traincast::models
