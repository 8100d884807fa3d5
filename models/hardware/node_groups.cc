// Node groups of a cluster (cluster.h, Cluster::resolve_groups): a uniform cluster is one group;
// a mixed cluster (ClusterSpec::node_groups, issue 20) has groups of different templates and GPUs
// on one fabric, so their boards must have the same shape and their NICs the same line rate.

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/cluster.h"
#include "models/hardware/pcie_tree.h"

namespace traincast::models {
namespace {

/// Sets g's scale-up figures from its template and GPU, and returns the effective scale-up
/// (ScaleUp::none when the GPU has no NVLink/xGMI links). `bridge_gpus`: GPUs per NVLink bridge
/// (Cluster::bridge_gpus_). `field` names the template in messages.
ScaleUp resolve_scale_up(Cluster::NodeGroup& g, int bridge_gpus, const std::string& field) {
  const NodeTemplate& t = *g.node_template;
  const GpuSpec& gpu = *g.gpu;
  ScaleUp kind = t.scale_up;
  const double link_bw = gpu.nvlink_bytes_per_s_per_link;
  if (gpu.nvlink_links <= 0 || link_bw <= 0) kind = ScaleUp::none;
  switch (kind) {
    case ScaleUp::nvswitch:
      g.scale_up_bytes_per_s = gpu.nvlink_links * link_bw;
      break;
    case ScaleUp::mesh: {
      const int peers = t.gpus_per_node - 1;
      const int links_per_peer = peers > 0 ? gpu.nvlink_links / peers : 0;
      if (peers > 0 && links_per_peer == 0) {
        throw std::invalid_argument(field + ": '" + t.name + "' has more GPUs than '" + gpu.name +
                                    "' has links for a full mesh");
      }
      g.mesh_link_bytes_per_s = links_per_peer * link_bw;
      g.scale_up_bytes_per_s = g.mesh_link_bytes_per_s * peers;
      break;
    }
    case ScaleUp::bridges: {
      // The card's links split evenly over the bridge's peers (bridge_group_problem checks it, and
      // Cluster refuses a bad size after this): a 2-way bridge takes all of them to the partner, a
      // 4-way 1/3 to each of 3 peers.
      const int peers = std::max(1, bridge_gpus - 1);
      const int links_per_peer = gpu.nvlink_links / peers;  // whole: bridge_group_problem
      g.mesh_link_bytes_per_s = links_per_peer * link_bw;
      g.scale_up_bytes_per_s = t.gpus_per_node > 1 ? g.mesh_link_bytes_per_s * peers : 0;
      break;
    }
    case ScaleUp::graph: {
      // Each listed pair has its own link count (Cluster::graph_links); the GPU's scale-up is
      // the most links any GPU of the node has listed.
      std::vector<int> links(static_cast<std::size_t>(t.gpus_per_node), 0);
      for (const NvlinkEdge& e : t.nvlinks) {
        links[static_cast<std::size_t>(e.gpu_a)] += e.links;
        links[static_cast<std::size_t>(e.gpu_b)] += e.links;
      }
      g.mesh_link_bytes_per_s = link_bw;
      g.scale_up_bytes_per_s = *std::max_element(links.begin(), links.end()) * link_bw;
      break;
    }
    case ScaleUp::none:
      break;
  }
  return kind;
}

/// "what differs" when group b's board cannot share group a's fabric and node shape; empty when it can.
std::string shape_difference(const NodeTemplate& a, const NodeTemplate& b) {
  auto differ = [&](const char* what, int x, int y) {
    return std::string(what) + " " + std::to_string(y) + " vs " + std::to_string(x);
  };
  if (a.gpus_per_node != b.gpus_per_node) return differ("GPUs per node", a.gpus_per_node, b.gpus_per_node);
  if (a.nics != b.nics) return differ("compute NICs", a.nics, b.nics);
  if (a.sockets != b.sockets) return differ("CPU sockets", a.sockets, b.sockets);
  // The PCIe switches may differ (an HGX H100 board has a switch per GPU where a DGX A100 shares
  // one between two: each group routes over its own tree, Cluster::pcie_of); each GPU and NIC must
  // sit on the same socket and each NIC serve the same GPUs, since NCCL's rails and the host-memory
  // routes are the cluster's, not a group's.
  const PcieLayout la = pcie_layout(a, a.nics), lb = pcie_layout(b, b.nics);
  if (la.gpu_socket != lb.gpu_socket || la.nic_socket != lb.nic_socket || la.gpu_nic != lb.gpu_nic ||
      la.nic_gpu != lb.nic_gpu)
    return "a different PCIe layout (which socket each GPU and NIC hangs on, or which GPUs a NIC serves)";
  const auto same_edge = [](const NvlinkEdge& x, const NvlinkEdge& y) {
    return x.gpu_a == y.gpu_a && x.gpu_b == y.gpu_b && x.links == y.links;
  };
  if (!std::equal(a.nvlinks.begin(), a.nvlinks.end(), b.nvlinks.begin(), b.nvlinks.end(), same_edge))
    return "a different NVLink graph (nvlink entries)";
  return {};
}

}  // namespace

void Cluster::set_graph_links(const NodeTemplate& t) {
  const auto n = static_cast<std::size_t>(t.gpus_per_node);
  graph_links_.assign(n * n, 0);
  for (const NvlinkEdge& e : t.nvlinks) {
    graph_links_[static_cast<std::size_t>(e.gpu_a) * n + static_cast<std::size_t>(e.gpu_b)] = e.links;
    graph_links_[static_cast<std::size_t>(e.gpu_b) * n + static_cast<std::size_t>(e.gpu_a)] = e.links;
  }
}

void Cluster::resolve_groups(const ClusterSpec& spec) {
  groups_.clear();
  if (spec.node_groups.empty()) {
    NodeGroup g;
    g.node_template = &cluster_node_template(spec);
    g.gpu = &find_gpu(spec.gpu.empty() ? g.node_template->gpu : spec.gpu);
    g.num_nodes = spec.num_nodes;
    bridge_gpus_ = spec.nvlink_bridge_gpus.value_or(g.node_template->bridge_gpus);
    scale_up_ = resolve_scale_up(g, bridge_gpus_, "cluster.node_template");
    groups_.push_back(g);
    set_graph_links(*g.node_template);
  } else {
    if (!spec.gpu.empty()) {
      throw std::invalid_argument("cluster.gpu: set with node_group (expected each group's gpu instead)");
    }
    int first = 0;
    for (std::size_t i = 0; i < spec.node_groups.size(); ++i) {
      const NodeGroupSpec& s = spec.node_groups[i];
      const std::string at = "cluster.node_group[" + std::to_string(i) + "].";
      if (s.num_nodes <= 0) {
        throw std::invalid_argument(at + "num_nodes: must be > 0 (got " + std::to_string(s.num_nodes) + ")");
      }
      NodeGroup g;
      try {
        g.node_template = &find_node_template(s.node_template, spec);
        g.gpu = &find_gpu(s.gpu.empty() ? g.node_template->gpu : s.gpu);
      } catch (const std::exception& e) {
        std::string msg = at;
        msg += g.node_template == nullptr ? "node_template: " : "gpu: ";
        msg += e.what();
        throw std::invalid_argument(msg);
      }
      if (!s.gpu.empty()) {
        if (const std::string why = gpu_fit_problem(*g.node_template, *g.gpu); !why.empty()) {
          std::string msg = at;
          msg += "gpu: ";
          msg += why;
          throw std::invalid_argument(msg);
        }
      }
      g.first_node = first;
      g.num_nodes = s.num_nodes;
      first += s.num_nodes;
      if (i == 0) bridge_gpus_ = spec.nvlink_bridge_gpus.value_or(g.node_template->bridge_gpus);
      const ScaleUp kind = resolve_scale_up(g, bridge_gpus_, at + "node_template");
      if (i == 0) {
        scale_up_ = kind;
        set_graph_links(*g.node_template);
      } else {
        const NodeTemplate& t0 = *groups_.front().node_template;
        std::string why = shape_difference(t0, *g.node_template);
        if (why.empty() && kind != scale_up_) why = "a different scale-up (NVSwitch, mesh, bridges or none)";
        const std::string nic0 = spec.nic.empty() ? t0.nic : spec.nic;
        const std::string nic = spec.nic.empty() ? g.node_template->nic : spec.nic;
        if (why.empty() && nic != nic0) {
          why = "NIC ";
          why += nic;
          why += " vs ";
          why += nic0;
          why += " (one fabric runs at one line rate; set cluster.nic)";
        }
        if (!why.empty()) {
          std::string msg = at;
          msg += "node_template: '";
          msg += g.node_template->name;
          msg += "' cannot share a fabric with '";
          msg += t0.name;
          msg += "' (node_group[0]): ";
          msg += why;
          msg += " (expected templates of the same board shape and NIC)";
          throw std::invalid_argument(msg);
        }
      }
      groups_.push_back(g);
    }
    if (first != spec.num_nodes) {
      throw std::invalid_argument("cluster.num_nodes: " + std::to_string(spec.num_nodes) +
                                  " but the node groups hold " + std::to_string(first) +
                                  " nodes (expected their sum, or num_nodes left unset)");
    }
  }
  template_ = groups_.front().node_template;
  gpu_ = groups_.front().gpu;
  scale_up_bytes_per_s_ = groups_.front().scale_up_bytes_per_s;
  mesh_link_bytes_per_s_ = groups_.front().mesh_link_bytes_per_s;
}

int Cluster::group_of_node(int node) const {
  if (groups_.size() == 1) return 0;
  int g = 0;
  while (g + 1 < static_cast<int>(groups_.size()) && node >= groups_[static_cast<std::size_t>(g) + 1].first_node) ++g;
  return g;
}

const GpuSpec& Cluster::gpu_spec(int gpu) const {
  if (groups_.size() == 1) return *gpu_;
  return *groups_[static_cast<std::size_t>(group_of_node(node_of(gpu)))].gpu;
}

}  // namespace traincast::models
