// Cluster::settings_without_effect: fabric fields a scenario sets that the built fabric ignores,
// and overrides that change nothing, so that the CLI can say so instead of answering as if they acted.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "models/hardware/cluster.h"

namespace traincast::models {

std::vector<std::string> Cluster::settings_without_effect(const ClusterSpec& spec) {
  const Cluster c(spec, SizesOnly{});
  const FabricSpec& f = spec.fabric;
  const FabricSpec defaults;
  std::vector<std::string> notes;
  // A clock_factor of 1 is the full boost clock, which its GPUs run at without it (a power cap at
  // or above the limit is warned likewise: power_caps_without_effect).
  for (std::size_t i = 0; i < spec.overrides.size(); ++i)
    if (spec.overrides[i].clock_factor == 1.0)
      notes.push_back("cluster.overrides[" + std::to_string(i) +
                      "].clock_factor has no effect: 1 is the full boost clock, which the GPUs it names run at "
                      "without it (expected below 1 to slow them, or no override)");
  if (c.fabric_slots() == 1) {
    std::vector<std::string> set;
    if (f.oversubscription != defaults.oversubscription) set.emplace_back("oversubscription");
    if (f.switch_latency_ns != defaults.switch_latency_ns) set.emplace_back("switch_latency_ns");
    if (f.nodes_per_leaf != defaults.nodes_per_leaf) set.emplace_back("nodes_per_leaf");
    if (f.tiers != defaults.tiers) set.emplace_back("tiers");
    if (f.leaves_per_pod != defaults.leaves_per_pod) set.emplace_back("leaves_per_pod");
    if (!f.torus_dims.empty()) set.emplace_back("torus_dims");
    if (f.cable_length_m != defaults.cable_length_m) set.emplace_back("cable_length_m");
    if (f.routing != defaults.routing) set.emplace_back("routing");
    if (f.ecmp_seed != defaults.ecmp_seed) set.emplace_back("ecmp_seed");
    if (f.sharp != defaults.sharp) set.emplace_back("sharp");
    // kind: none is what a one-node cluster is; another kind than the default names a fabric.
    if (f.kind != defaults.kind && f.kind != FabricKind::none) set.emplace_back("kind");
    for (const std::string& name : set)
      notes.push_back("cluster.fabric." + name +
                      " has no effect: the cluster is one node, so no traffic crosses the fabric (expected "
                      "num_nodes > 1 for fabric settings to act)");
    // The node's NICs carry only traffic between nodes: NCCL keeps one node's traffic on NVLink,
    // PCIe peer-to-peer or shared memory (its NET transport serves other nodes only).
    const ClusterSpec cluster_defaults;
    std::vector<std::string> nic_set;
    if (spec.gpu_direct_rdma != cluster_defaults.gpu_direct_rdma) nic_set.emplace_back("gpu_direct_rdma");
    if (spec.nic_placement != cluster_defaults.nic_placement) nic_set.emplace_back("nic_placement");
    if (spec.nics_per_node.has_value()) nic_set.emplace_back("nics_per_node");
    if (!spec.nic.empty()) nic_set.emplace_back("nic");
    for (const std::string& name : nic_set)
      notes.push_back("cluster." + name +
                      " has no effect: the cluster is one node, and a node's NICs carry only traffic between "
                      "nodes (expected num_nodes > 1 for NIC settings to act)");
    return notes;
  }
  if (f.kind == FabricKind::torus) {
    // A torus has no leaves, spines or pods: its links join neighbouring nodes (cluster.cc).
    std::vector<std::string> set;
    if (f.oversubscription != defaults.oversubscription) set.emplace_back("oversubscription");
    if (f.nodes_per_leaf != defaults.nodes_per_leaf) set.emplace_back("nodes_per_leaf");
    if (f.tiers != defaults.tiers) set.emplace_back("tiers");
    if (f.leaves_per_pod != defaults.leaves_per_pod) set.emplace_back("leaves_per_pod");
    if (f.leaf_up_ports != defaults.leaf_up_ports) set.emplace_back("leaf_up_ports");
    if (f.leaf_ports != defaults.leaf_ports) set.emplace_back("leaf_ports");
    // A torus routes dimension by dimension, the shorter way round: one path, nothing to hash.
    if (f.routing != defaults.routing) set.emplace_back("routing");
    if (f.ecmp_seed != defaults.ecmp_seed) set.emplace_back("ecmp_seed");
    for (const std::string& name : set)
      notes.push_back("cluster.fabric." + name +
                      " has no effect: a torus has no leaf or spine switches, its links join neighbouring nodes "
                      "and it routes dimension by dimension (expected kind fat_tree or rail_optimized for tree "
                      "settings to act)");
    return notes;
  }
  if (f.kind != FabricKind::fat_tree && f.kind != FabricKind::rail_optimized) return notes;
  if (!(f.oversubscription > 1.0) || f.leaf_up_ports > 0) return notes;
  std::ostringstream o;
  o << "cluster.fabric.oversubscription " << f.oversubscription << ":1 has no effect: ";
  if (c.num_groups_ <= 1) {
    o << "all " << c.fabric_slots() << " nodes sit under one leaf group (nodes_per_leaf " << f.nodes_per_leaf
      << " >= num_nodes " << c.fabric_slots()
      << "), so no traffic crosses a leaf up-link (expected nodes_per_leaf < num_nodes for an oversubscribed fabric)";
    notes.push_back(o.str());
    return notes;
  }
  const double effective = static_cast<double>(c.leaf_down_ports_) / c.leaf_up_ports_;
  if (effective >= 0.9 * f.oversubscription) return notes;
  o.str("");
  o << "cluster.fabric.oversubscription " << f.oversubscription << ":1 acts as " << effective << ":1: a leaf has "
    << c.leaf_down_ports_ << " down port" << (c.leaf_down_ports_ == 1 ? "" : "s")
    << " and up-links are whole ports at the NIC line rate, ceil(" << c.leaf_down_ports_ << " / " << f.oversubscription
    << ") = " << c.leaf_up_ports_
    << " (expected more nodes_per_leaf, or fabric.leaf_up_ports for the port count itself)";
  notes.push_back(o.str());
  return notes;
}

std::string Cluster::torus_ports_problem(const std::vector<int>& dims, int nics) {
  const int directions = torus_directions(dims);
  if (directions <= 0 || (nics >= directions && nics % directions == 0)) return {};
  std::string shape;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d > 0) shape += 'x';
    shape += std::to_string(dims[d]);
  }
  const int lower = nics / directions * directions, upper = lower + directions;
  std::string o = std::to_string(nics) + (nics == 1 ? " NIC per node" : " NICs per node");
  o += nics < directions ? " cannot cable the " : " do not split evenly over the ";
  o += std::to_string(directions) + " neighbour directions of a " + shape +
       " torus: each direction takes the same whole number of NIC ports, at least one, and a cable "
       "joins a port to the neighbour's (expected cluster.nics_per_node a multiple of " +
       std::to_string(directions) + ", e.g. " + (lower > 0 ? std::to_string(lower) + " or " : std::string()) +
       std::to_string(upper) + "; a torus node has 2 directions per dimension, 1 per dimension of extent 2)";
  return o;
}

}  // namespace traincast::models
