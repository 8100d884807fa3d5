#pragma once
// The cluster as a graph of directed resources on a FlowNetwork: per-GPU NVLink/NVSwitch ports,
// PCIe to NICs, NIC uplinks, leaf and spine switch links. Routes are deterministic.
//
// Resources built per node (all directed; a full-duplex cable is two resources):
//  - NVSwitch nodes: per GPU "nvl_up" (GPU->NVSwitch) and "nvl_down" (NVSwitch->GPU), capacity =
//    NVLink links x per-link bandwidth per direction; the NVSwitch plane itself is non-blocking.
//    Full-mesh nodes (MI300X xGMI, GpuSpec::scale_up_mesh): one resource per ordered GPU pair,
//    capacity = links per peer x per-link bandwidth.
//  - PCIe: per GPU "pcie_up"/"pcie_down" (GPU<->its PCIe switch) and per NIC "nic_pcie_up"/
//    "nic_pcie_down" (NIC<->switch), capacity = NodeTemplate::pcie_bytes_per_s. The PCIe switch
//    is non-blocking. GPUs without NVLink reach each other over pcie_up -> pcie_down.
//  - NIC: "nic_tx" (NIC->leaf) and "nic_rx" (leaf->NIC) at the NIC line rate.
//  - Fabric: leaf->spine and spine->leaf resources, one pair per (leaf, spine).
// Latencies: NicSpec::latency_ns is split over nic_tx and nic_rx; every switch traversed adds
// FabricSpec::switch_latency_ns (charged on the resource leaving that switch). NVLink/PCIe
// resources carry no latency: NCCL's per-step latency model (models/collectives) covers them.

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/scenario.h"
#include "sim/flow_network.h"

namespace traincast::models {

/// What a resource is, for per-link-type efficiencies (models/collectives) and reports.
enum class LinkKind : std::uint8_t { other, nvlink, pcie, nic, fabric };

class Cluster {
 public:
  /// Builds every resource of the cluster on `net`. Throws std::invalid_argument for an unknown
  /// template/GPU or impossible sizes; messages name the field, e.g.
  /// "cluster.num_nodes: must be > 0 (got 0)",
  /// "cluster.fabric.kind: none allows a single node (got num_nodes = 2)".
  Cluster(const ClusterSpec& spec, sim::FlowNetwork& net);

  int num_gpus() const { return num_nodes_ * gpus_per_node_; }
  int num_nodes() const { return num_nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node(); }
  int local_rank(int gpu) const { return gpu % gpus_per_node(); }
  /// Same spec for every GPU (homogeneous cluster). gpu is not range-checked.
  const GpuSpec& gpu_spec(int gpu) const;
  const NodeTemplate& node_template() const { return *template_; }
  const NicSpec& nic() const { return *nic_; }
  const ClusterSpec& spec() const { return spec_; }

  /// Compute NICs per node (NodeTemplate::nics).
  int nics_per_node() const { return nics_per_node_; }
  /// Local index (= rail) of the NIC serving local GPU `local`: local * nics / gpus_per_node.
  int nic_of_local(int local) const { return local * nics_per_node_ / gpus_per_node_; }
  /// true when GPUs of a node talk over NVLink/xGMI (else over PCIe).
  bool has_scale_up() const { return scale_up_bytes_per_s_ > 0; }
  /// Scale-up bandwidth per GPU per direction [bytes/s] (NVSwitch port or sum of mesh links).
  double scale_up_bytes_per_s() const { return scale_up_bytes_per_s_; }
  int num_leaves() const { return num_leaves_; }
  /// Spine switches (0 when every node pair shares a leaf on each rail).
  int num_spines() const { return num_spines_; }

  /// Directed resources a byte crosses from src to dst GPU (src != dst), in order.
  /// Intra-node: NVSwitch [nvl_up(src), nvl_down(dst)], mesh [link(src,dst)], or PCIe
  /// [pcie_up(src), pcie_down(dst)]. Inter-node from local i to local j: NIC rail r = nic(j);
  /// when nic(i) != r the bytes first cross NVLink to the local GPU j (NCCL's PXN, default
  /// since NCCL 2.12: a rail-optimized fabric only joins NICs of the same rail, so NCCL moves
  /// the data over NVLink to the GPU on the destination's rail rather than cross rails in
  /// the fabric), then [pcie_up(proxy), nic_pcie_down, nic_tx, (leaf_up, spine_down), nic_rx,
  /// nic_pcie_up, pcie_down(dst)]. ECMP picks the spine by a fixed hash of (src, dst).
  /// The span stays valid for the lifetime of the Cluster (routes are cached per pair).
  /// Throws std::out_of_range for a GPU outside [0, num_gpus()) or src == dst.
  std::span<const sim::ResourceId> route(int src_gpu, int dst_gpu) const;

  /// Kind of a resource built by this cluster (LinkKind::other for ids it did not build).
  LinkKind link_kind(sim::ResourceId r) const { return r < kinds_.size() ? kinds_[r] : LinkKind::other; }

  /// Human-readable list of devices and links with bandwidths.
  std::string describe() const;

 private:
  static constexpr std::size_t kMaxHops = 12;
  struct CachedRoute {
    std::array<sim::ResourceId, kMaxHops> hops{};
    std::uint8_t size = 0;
  };

  sim::ResourceId add(double capacity_bytes_per_s, std::int64_t latency_ns, std::string name, LinkKind kind);
  void build_node(int node);
  void build_fabric();
  void compute_route(int src, int dst, CachedRoute& out) const;
  void append_intra(int node, int src_local, int dst_local, CachedRoute& out) const;
  int leaf_of(int node, int rail) const;

  ClusterSpec spec_;
  sim::FlowNetwork& net_;
  const GpuSpec* gpu_ = nullptr;
  const NodeTemplate* template_ = nullptr;
  const NicSpec* nic_ = nullptr;
  int num_nodes_ = 0;
  int gpus_per_node_ = 0;
  int nics_per_node_ = 0;
  double scale_up_bytes_per_s_ = 0;
  double mesh_link_bytes_per_s_ = 0;
  int num_groups_ = 0;  // leaf groups (nodes_per_leaf nodes each)
  int num_leaves_ = 0;
  int num_spines_ = 0;
  int leaf_down_ports_ = 0;
  double leaf_uplink_bytes_per_s_ = 0;  // per (leaf, spine) resource

  // Resource ids, indexed by global GPU / global NIC (node * nics + rail) / leaf * spines + spine.
  std::vector<sim::ResourceId> nvl_up_, nvl_down_;
  std::vector<sim::ResourceId> mesh_;  // node * gpn * gpn + src_local * gpn + dst_local
  std::vector<sim::ResourceId> pcie_up_, pcie_down_;
  std::vector<sim::ResourceId> nic_pcie_up_, nic_pcie_down_, nic_tx_, nic_rx_;
  std::vector<sim::ResourceId> leaf_up_, spine_down_;
  std::vector<LinkKind> kinds_;
  std::size_t resources_built_ = 0;

  mutable std::unordered_map<std::uint64_t, std::uint32_t> route_index_;
  mutable std::deque<CachedRoute> routes_;
};

}  // namespace traincast::models
