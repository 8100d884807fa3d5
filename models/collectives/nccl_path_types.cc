// NCCL's path types on a node's routes (nccl_topo_search.h): what the ring search and
// `nvidia-smi topo -m` call a path between two GPUs or a GPU and a NIC; the search's link figures,
// the compute capability class it reads, and the per-shape cache of its graphs.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
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

double SearchBounds::link_gb_per_s(const Cluster& cluster, const sim::FlowNetwork& net, sim::ResourceId r) const {
  double bw = search_link_gb_per_s(cluster, net, r);
  if (peer_nodes.empty() || cluster.node_of_resource(r) != node) return bw;
  for (int p : peer_nodes)
    bw = std::min(
        bw, search_link_gb_per_s(cluster, net, r - cluster.node_first_resource(node) + cluster.node_first_resource(p)));
  return bw;
}

int nccl_cc_class(const GpuSpec& gpu) {
  const int cc = gpu.compute_capability;  // catalog: NVIDIA's CUDA GPUs table; 0 for AMD
  return cc >= 100 ? 100 : cc >= 90 ? 90 : 80;
}

int NcclTopoCache::node_class(const Cluster& cluster, int node) {
  if (!classes_built_) {
    classes_built_ = true;
    if (cluster.mixed() || cluster.has_failed_nics() || !cluster.scaled_resources().empty()) {
      // A node's signature: its node group, the NIC serving each of its rails (failed NICs) and
      // its links scaled by bandwidth_factor (offset in the node's run of resources, factor).
      const int nodes = cluster.num_nodes();
      std::vector<std::vector<std::int64_t>> sig(static_cast<std::size_t>(nodes));
      for (int n = 0; n < nodes; ++n) {
        auto& s = sig[static_cast<std::size_t>(n)];
        s.push_back(cluster.group_of_node(n));
        if (cluster.has_failed_nics())
          for (int k = 0; k < cluster.nics_per_node(); ++k) s.push_back(cluster.serving_nic(n, k));
      }
      for (const auto& [r, factor] : cluster.scaled_resources()) {
        const int n = cluster.node_of_resource(r);
        if (n < 0) continue;  // a fabric link: outside every node's search
        auto& s = sig[static_cast<std::size_t>(n)];
        s.push_back(static_cast<std::int64_t>(r - cluster.node_first_resource(n)));
        s.push_back(std::bit_cast<std::int64_t>(factor));
      }
      std::map<std::vector<std::int64_t>, int> ids;
      node_class_.resize(static_cast<std::size_t>(nodes));
      for (int n = 0; n < nodes; ++n)
        node_class_[static_cast<std::size_t>(n)] =
            ids.emplace(std::move(sig[static_cast<std::size_t>(n)]), static_cast<int>(ids.size())).first->second;
    }
  }
  return node_class_.empty() ? 0 : node_class_[static_cast<std::size_t>(node)];
}

const NcclTopoGraph& NcclTopoCache::ring_graph(const Cluster& cluster, const sim::FlowNetwork& net,
                                               std::span<const int> gpus, int remote_gpu) {
  std::vector<int> key;
  key.reserve(gpus.size() + 2);
  key.push_back(node_class(cluster, cluster.node_of(gpus[0])));
  for (int g : gpus) key.push_back(cluster.local_rank(g));
  key.push_back(remote_gpu >= 0 ? 1 : 0);
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    const NcclVersion v = nccl_version_of(cluster.spec().collectives.nccl_version);
    it = graphs_.emplace(std::move(key), search_ring_graph(cluster, net, gpus, remote_gpu, v)).first;
  }
  return it->second;
}

const NcclTopoGraph& NcclTopoCache::ring_graph_across(const Cluster& cluster, const sim::FlowNetwork& net,
                                                      std::span<const std::vector<int>> per_node) {
  auto node_at = [&](std::size_t i) { return cluster.node_of(per_node[i][0]); };
  // The group's node classes, each with its first node (index into per_node); a uniform group: one.
  std::vector<int> classes;
  std::vector<std::size_t> first_of;
  for (std::size_t i = 0; i < per_node.size(); ++i) {
    const int c = node_class(cluster, node_at(i));
    if (std::find(classes.begin(), classes.end(), c) == classes.end()) {
      classes.push_back(c);
      first_of.push_back(i);
    }
  }
  auto remote_of = [&](std::size_t i) { return per_node[i == 0 ? 1 : 0][0]; };
  if (classes.size() == 1) return ring_graph(cluster, net, per_node[0], remote_of(0));
  // Per node group: one search bounded by its other classes' nodes (the same links at the slowest
  // of their speeds), so that its channels avoid a slowed NIC wherever it sits.
  std::vector<const NcclTopoGraph*> found;
  std::vector<std::size_t> found_at;
  std::vector<bool> done(classes.size(), false);
  for (std::size_t k = 0; k < classes.size(); ++k) {
    if (done[k]) continue;
    const int group = cluster.group_of_node(node_at(first_of[k]));
    std::vector<std::size_t> in_group;  // this node group's classes (indexes into classes)
    for (std::size_t j = k; j < classes.size(); ++j)
      if (cluster.group_of_node(node_at(first_of[j])) == group) in_group.push_back(j);
    // Searched on the class with the most failed NICs (the first of them), with its own NICs up:
    // the other nodes' failed NICs are served by their next NIC up in every route
    // (Cluster::serving_nic), as NCCL's other nodes keep their own NICs.
    std::size_t rep = k;
    for (std::size_t j : in_group)
      if (cluster.failed_nics(node_at(first_of[j])) > cluster.failed_nics(node_at(first_of[rep]))) rep = j;
    std::vector<int> members;
    std::vector<int> peers;
    for (std::size_t j : in_group) {
      done[j] = true;
      members.push_back(classes[j]);
      if (j != rep) peers.push_back(node_at(first_of[j]));
    }
    const std::span<const int> gpus = per_node[first_of[rep]];
    if (peers.empty()) {
      found.push_back(&ring_graph(cluster, net, gpus, remote_of(first_of[rep])));
    } else {
      std::sort(members.begin(), members.end());
      std::vector<int> key{-1};  // unlike ring_graph's keys, which start with a class (>= 0)
      key.insert(key.end(), members.begin(), members.end());
      key.push_back(-1 - classes[rep]);
      for (int g : gpus) key.push_back(cluster.local_rank(g));
      auto it = graphs_.find(key);
      if (it == graphs_.end()) {
        const NcclVersion v = nccl_version_of(cluster.spec().collectives.nccl_version);
        it = graphs_.emplace(std::move(key), search_ring_graph(cluster, net, gpus, remote_of(first_of[rep]), v, peers))
                 .first;
      }
      found.push_back(&it->second);
    }
    found_at.push_back(first_of[rep]);
  }
  if (found.size() == 1) return *found[0];
  // Across node groups (a mixed cluster): NCCL's combination of the ranks' graphs.
  std::size_t chosen = 0;
  double min_bw = std::numeric_limits<double>::infinity();
  NcclPathType max_intra = NcclPathType::loc;
  NcclPathType max_inter = NcclPathType::loc;
  const auto failed = [&](std::size_t k) { return cluster.failed_nics(node_at(found_at[k])); };
  // The system figures the NVLS graph is searched on (NcclTopoGraph::net_gb_per_s): each at the
  // slowest group's, so that an NVLS head is usable on every node (nvls_plans.cc).
  NcclTopoGraph system = *found[0];
  for (std::size_t k = 0; k < found.size(); ++k) {
    const NcclTopoGraph& g = *found[k];
    const NcclTopoGraph& c = *found[chosen];
    for (std::size_t n = 0; n < system.net_gb_per_s.size() && n < g.net_gb_per_s.size(); ++n)
      system.net_gb_per_s[n] = std::min(system.net_gb_per_s[n], g.net_gb_per_s[n]);
    system.max_bw_gb_per_s = std::min(system.max_bw_gb_per_s, g.max_bw_gb_per_s);
    system.total_bw_gb_per_s = std::min(system.total_bw_gb_per_s, g.total_bw_gb_per_s);
    min_bw = std::min(min_bw, g.bw_gb_per_s);
    max_intra = std::max(max_intra, g.type_intra);
    max_inter = std::max(max_inter, g.type_inter);
    if (g.channels.size() < c.channels.size() ||
        (g.channels.size() == c.channels.size() &&
         (g.bw_gb_per_s < c.bw_gb_per_s || (g.bw_gb_per_s == c.bw_gb_per_s && failed(k) > failed(chosen)))))
      chosen = k;
  }
  const NcclTopoGraph& base = *found[chosen];
  if (base.bw_gb_per_s == min_bw && base.type_intra == max_intra && base.type_inter == max_inter &&
      base.net_gb_per_s == system.net_gb_per_s && base.max_bw_gb_per_s == system.max_bw_gb_per_s &&
      base.total_bw_gb_per_s == system.total_bw_gb_per_s)
    return base;
  std::vector<int> key;
  for (int g : per_node[0]) key.push_back(cluster.local_rank(g));
  key.push_back(-1);
  std::vector<int> sorted = classes;
  std::sort(sorted.begin(), sorted.end());
  key.insert(key.end(), sorted.begin(), sorted.end());
  auto it = merged_.find(key);
  if (it == merged_.end()) {
    NcclTopoGraph merged = base;
    merged.bw_gb_per_s = min_bw;
    merged.type_intra = max_intra;
    merged.type_inter = max_inter;
    merged.net_gb_per_s = system.net_gb_per_s;
    merged.max_bw_gb_per_s = system.max_bw_gb_per_s;
    merged.total_bw_gb_per_s = system.total_bw_gb_per_s;
    it = merged_.emplace(std::move(key), std::move(merged)).first;
  }
  return it->second;
}

}  // namespace traincast::models
