// NCCL's path types on a node's routes (nccl_topo_search.h): what the ring search and
// `nvidia-smi topo -m` call a path between two GPUs or a GPU and a NIC; the search's link figures,
// the compute capability class it reads, and the per-shape cache of its graphs.

#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/nccl_topo_search.h"
#include "models/collectives/nccl_tuning.h"
#include "models/collectives/nccl_versions.h"

namespace traincast::models {

NcclPathType nccl_path_type(const Cluster& cluster, std::span<const sim::ResourceId> links) {
  bool nvl = false, pci = false, cpu = false, socket = false;
  int switches = 0;
  for (auto r : links) {
    const ClusterEdge& e = cluster.resource(r);
    switch (e.kind) {
      case LinkKind::nvlink:
        nvl = true;
        break;
      case LinkKind::pcie:
        pci = true;
        break;
      case LinkKind::socket:
        socket = true;
        break;
      default:
        break;
    }
    if (e.to.find(".cpu") != std::string::npos) cpu = true;
    if (e.to.find(".pcie_sw") != std::string::npos) ++switches;
  }
  if (socket) return NcclPathType::sys;
  if (cpu) return NcclPathType::phb;
  if (nvl && pci) return NcclPathType::pxn;
  if (nvl) return NcclPathType::nvl;
  if (!pci) return NcclPathType::loc;
  return switches > 1 ? NcclPathType::pxb : NcclPathType::pix;
}

NcclPathType nccl_gpu_path_type(const Cluster& cluster, int src_gpu, int dst_gpu) {
  return nccl_path_type(cluster, cluster.route(src_gpu, dst_gpu));
}

NcclPathType nccl_gpu_nic_path_type(const Cluster& cluster, int gpu, int nic) {
  return nccl_path_type(cluster, cluster.pcie_route_to_nic(gpu, nic));
}

const char* nccl_path_type_name(NcclPathType type) {
  // NCCL's topoPathTypeStr (src/graph/topo.cc).
  switch (type) {
    case NcclPathType::loc:
      return "LOC";
    case NcclPathType::nvl:
      return "NVL";
    case NcclPathType::nvb:
      return "NVB";
    case NcclPathType::pix:
      return "PIX";
    case NcclPathType::pxb:
      return "PXB";
    case NcclPathType::pxn:
      return "PXN";
    case NcclPathType::phb:
      return "PHB";
    case NcclPathType::sys:
      return "SYS";
  }
  return "?";
}

double search_link_gb_per_s(const Cluster& cluster, const sim::FlowNetwork& net, sim::ResourceId r) {
  // Rounded to NCCL's 1/1000 GB/s (SUB_ROUND), so that e.g. PCIe gen5 x16 at NCCL's PCI figure is
  // NCCL's 48.0, not 47.99999 from the efficiency's floating-point product.
  return std::round(link_efficiency(cluster, r) * net.capacity(r) / 1e9 * 1000) / 1000;
}

int nccl_cc_class(const GpuSpec& gpu) {
  const int cc = gpu.compute_capability;  // catalog: NVIDIA's CUDA GPUs table; 0 for AMD
  return cc >= 100 ? 100 : cc >= 90 ? 90 : 80;
}

const NcclTopoGraph& NcclTopoCache::ring_graph(const Cluster& cluster, const sim::FlowNetwork& net,
                                               std::span<const int> gpus, int remote_gpu) {
  std::vector<int> key;
  key.reserve(gpus.size() + 1);
  for (int g : gpus) key.push_back(cluster.local_rank(g));
  key.push_back(remote_gpu >= 0 ? 1 : 0);
  // The node's failed NICs (cluster.overrides) change the nets.
  if (remote_gpu >= 0)
    for (int n = 0; n < cluster.nics_per_node(); ++n)
      if (!cluster.nic_up(cluster.node_of(gpus[0]), n)) key.push_back(-1 - n);
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    const NcclVersion v = nccl_version_of(cluster.spec().collectives.nccl_version);
    it = graphs_.emplace(std::move(key), search_ring_graph(cluster, net, gpus, remote_gpu, v)).first;
  }
  return it->second;
}

}  // namespace traincast::models
