// NCCL's path types on a node's routes (nccl_topo_search.h): what the ring search and
// `nvidia-smi topo -m` call a path between two GPUs or a GPU and a NIC.

#include <span>
#include <string>

#include "models/collectives/nccl_topo_search.h"

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

}  // namespace traincast::models
