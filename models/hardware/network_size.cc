// The network's size from the spec (network_size.h): Cluster::network_size counts what
// build_node and build_fabric (cluster.cc) would add, and the refusal over kMaxNetworkResources.

#include "models/hardware/network_size.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

/// 1234567 -> "1,234,567".
std::string grouped(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return v < 0 ? "-" + digits : digits;
}

}  // namespace

const char* fabric_kind_name(FabricKind k) {
  switch (k) {
    case FabricKind::none:
      return "none";
    case FabricKind::rail_optimized:
      return "rail_optimized";
    case FabricKind::fat_tree:
      return "fat_tree";
    case FabricKind::torus:
      return "torus";
  }
  return "?";
}

NetworkSize Cluster::count_network() const {
  // build_node, per node: per GPU its PCIe link both ways and, on NVSwitch, nvl_up/nvl_down; the
  // linked ordered GPU pairs of a mesh or bridge; each PCIe switch's uplink both ways; every
  // ordered pair of distinct sockets; per NIC its PCIe link both ways and, between nodes, tx/rx.
  const std::int64_t gpn = gpus_per_node_;
  std::int64_t per_node = gpn * (scale_up_ == ScaleUp::nvswitch ? 4 : 2);
  if (scale_up_ == ScaleUp::mesh) per_node += gpn * (gpn - 1);
  if (scale_up_ == ScaleUp::graph) per_node += 2 * static_cast<std::int64_t>(template_->nvlinks.size());
  if (scale_up_ == ScaleUp::bridges) {  // a -> b in the same bridge group, b < gpn
    for (std::int64_t a = 0; a < gpn; ++a) {
      const std::int64_t first = a / bridge_gpus_ * bridge_gpus_;
      per_node += std::min(gpn, first + bridge_gpus_) - first - 1;
    }
  }
  const std::int64_t sockets = std::max(1, template_->sockets);
  per_node += sockets * (sockets - 1);
  per_node += static_cast<std::int64_t>(nics_per_node_) * (num_nodes_ > 1 ? 4 : 2);
  // build_fabric: torus links per node and neighbour direction (torus_directions); else per leaf its up-links both
  // ways (one pooled pair under adaptive routing) and, with 3 tiers and several pods, per pod its
  // core links both ways (pooled likewise).
  std::int64_t fabric = 0;
  const bool pooled = routing_ == FabricRouting::adaptive;
  if (!torus_dims_.empty()) {
    fabric = static_cast<std::int64_t>(num_nodes_) * torus_directions(torus_dims_);
  } else if ((spec_.fabric.tiers == 3 ? num_aggs_ : num_spines_) > 0) {
    const std::int64_t ups = spec_.fabric.tiers == 3 ? num_aggs_ : num_spines_;
    fabric = static_cast<std::int64_t>(num_leaves_) * 2 * (pooled ? 1 : ups);
    if (spec_.fabric.tiers == 3 && num_pods_ > 1)
      fabric += static_cast<std::int64_t>(num_pods_) * 2 * (pooled ? 1 : num_spines_);
  }
  return {num_nodes_, per_node, 2 * static_cast<std::int64_t>(switch_base_.back()), fabric};
}

NetworkSize Cluster::network_size(const ClusterSpec& spec) { return Cluster(spec, SizesOnly{}).count_network(); }

std::unique_ptr<Cluster> Cluster::sizes_only(const ClusterSpec& spec) {
  return std::unique_ptr<Cluster>(new Cluster(spec, SizesOnly{}));
}

void refuse_network_over_limit(const ClusterSpec& spec, const NetworkSize& size) {
  if (size.resources() <= kMaxNetworkResources) return;
  // The largest node count that fits: the count grows with num_nodes (nodes and leaves), so
  // bisect on it (each step counts without building: a sum over the nodes).
  int fits = 0;
  for (int lo = 1, hi = spec.num_nodes; lo <= hi;) {
    const int mid = lo + (hi - lo) / 2;
    ClusterSpec smaller = spec;
    smaller.num_nodes = mid;
    smaller.fabric.torus_dims.clear();  // a ring of mid nodes: torus_dims must multiply to num_nodes
    bool ok = false;
    try {
      ok = Cluster::network_size(smaller).resources() <= kMaxNetworkResources;
    } catch (const std::invalid_argument&) {
      ok = false;  // e.g. fabric kind none with more than one node
    }
    if (ok) {
      fits = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  const NodeTemplate& node = cluster_node_template(spec);
  const int nics = spec.nics_per_node.value_or(node.nics);
  std::string fabric = fabric_kind_name(spec.fabric.kind);
  if (spec.fabric.kind == FabricKind::fat_tree || spec.fabric.kind == FabricKind::rail_optimized)
    fabric += ", " + std::to_string(spec.fabric.tiers) + " tiers";
  throw std::invalid_argument(
      "cluster.num_nodes: " + grouped(size.nodes) + " x " + node.name +
      " (cluster.node_template: " + std::to_string(node.gpus_per_node) +
      " GPUs per node; cluster.nics_per_node: " + std::to_string(nics) + "; cluster.fabric.kind: " + fabric +
      ") would build " + grouped(size.resources()) + " network resources (directed links: " +
      grouped(size.resources_per_node + size.pcie_uplink_resources / std::max<std::int64_t>(1, size.nodes)) +
      " per node, " + grouped(size.fabric_resources) + " in the fabric), beyond the simulator's limit of " +
      grouped(kMaxNetworkResources) + " (about 1.2 KB each in a run: ~4.7 GB) (expected " +
      (fits >= 1 ? "cluster.num_nodes " + grouped(fits) + " or fewer for this node and fabric"
                 : std::string("a smaller cluster")) +
      ")");
}

void check_network_size(const ClusterSpec& spec) { refuse_network_over_limit(spec, Cluster::network_size(spec)); }

}  // namespace traincast::models
