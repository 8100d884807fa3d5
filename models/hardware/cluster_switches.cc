// Cluster::switch_count and describe()'s "Fabric:" and "Switches bought" lines: the simulated
// fabric, and the physical switches the cost model buys (models/hardware/switch_count.h), printed
// by explain next to it.
#include <ostream>
#include <string>

#include "models/hardware/cluster.h"
#include "models/hardware/describe_text.h"
#include "models/hardware/leaf_ports.h"

namespace traincast::models {
using detail::count_of;
using detail::gbps;
namespace {

const char* routing_name(FabricRouting r) {
  switch (r) {
    case FabricRouting::automatic:
      return "automatic";
    case FabricRouting::d_mod_k:
      return "d_mod_k (static destination-based tables)";
    case FabricRouting::adaptive:
      return "adaptive (flows split evenly over the up-links)";
    case FabricRouting::ecmp_hash:
      return "ecmp_hash (5-tuple hash per switch)";
  }
  return "?";
}

}  // namespace

void Cluster::describe_fabric(std::ostream& o) const {
  const FabricSpec& f = spec_.fabric;
  o << "Fabric: " << fabric_kind_name(f.kind);
  if (!torus_dims_.empty()) {
    o << " ";
    for (std::size_t d = 0; d < torus_dims_.size(); ++d) o << (d ? "x" : "") << torus_dims_[d];
    o << ", " << gbps(torus_link_bytes_per_s_) << " per direction to each neighbour, dimension-order routing";
  } else {
    const int group_nodes = std::min(f.nodes_per_leaf, fabric_slots());  // cabled: fewer in one group
    const int down_ports = f.kind == FabricKind::rail_optimized ? group_nodes : group_nodes * nics_per_node_;
    o << ", " << f.tiers << " tiers, " << num_leaves_ << (num_leaves_ == 1 ? " leaf switch (" : " leaf switches (")
      << down_ports << (down_ports == 1 ? " down port" : " down ports") << (num_leaves_ == 1 ? ", " : " each, ")
      << group_nodes << (group_nodes == 1 ? " node per leaf group)" : " nodes per leaf group)");
    if (f.tiers == 2 && num_spines_ > 0) {
      o << ", " << count_of(num_spines_, "spine") << ", leaf uplinks " << num_spines_ << " x "
        << gbps(leaf_uplink_bytes_per_s_);
    } else if (f.tiers == 3 && num_aggs_ > 0) {
      o << ", " << count_of(num_pods_, "pod") << " of " << count_of(f.leaves_per_pod, "leaf group") << " with "
        << count_of(num_aggs_, "aggregation switch") << ", leaf uplinks " << num_aggs_ << " x "
        << gbps(leaf_uplink_bytes_per_s_);
      if (num_spines_ > 0)
        o << ", " << count_of(num_spines_, "core") << ", pod uplinks " << gbps(pod_uplink_bytes_per_s_);
    }
    o << " (oversubscription " << f.oversubscription << ":1 asked";
    if (leaf_up_ports_ > 0) o << ", " << leaf_down_ports_ << ":" << leaf_up_ports_ << " ports";
    o << "); routing " << routing_name(routing_);
    if (routing_ == FabricRouting::ecmp_hash) o << " (seed " << f.ecmp_seed << ")";
  }
  o << ", " << f.switch_latency_ns << (torus_dims_.empty() ? " ns per switch hop" : " ns per hop between nodes")
    << ", cables " << f.cable_length_m << " m\n";
  describe_switches(o);
}

SwitchCount Cluster::switch_count() const {
  const FabricSpec& f = spec_.fabric;
  if (fabric_slots() <= 1 || (f.kind != FabricKind::fat_tree && f.kind != FabricKind::rail_optimized)) return {};
  return count_switches(f, fabric_slots(), nics_per_node_, leaf_ports(f, *nic_));
}

void Cluster::describe_switches(std::ostream& o) const {
  const SwitchCount s = switch_count();
  if (s.leaf_switches == 0) return;
  const FabricSpec& f = spec_.fabric;
  o << "Switches bought (the cost's count): " << count_of(s.total(), "switch") << " of " << s.switch_ports
    << " ports (fabric.leaf_ports" << (f.leaf_ports > 0 ? "" : ", the default for " + nic_->name)
    << "): " << s.leaf_switches << " leaf";
  if (s.rails_per_leaf_switch > 1) {
    o << " (up to " << s.rails_per_leaf_switch << " rail leaves of a leaf group on one, " << s.rail_leaf_ports
      << (s.rail_leaf_ports == 1 ? " port each)" : " ports each)");
  }
  if (s.spine_switches > 0) {
    o << " + " << s.spine_switches << " spine (" << s.rail_leaves << (s.rail_leaves == 1 ? " leaf x " : " leaves x ")
      << count_of(leaf_up_ports_, "up-link") << " / " << s.switch_ports << " ports)";
  }
  if (s.aggregation_switches > 0) {
    o << " + " << s.aggregation_switches << " aggregation" << (s.core_switches > 0 ? "" : " (the top tier, one pod)");
    if (s.core_switches > 0) o << " + " << s.core_switches << " core (" << count_of(s.pods, "pod") << ")";
  }
  o << "\n";
  // Where the simulated fabric differs: one leaf per rail, up-links bundled, 2 tiers kept.
  if (s.rails_per_leaf_switch > 1)
    o << "  simulated: one leaf per NIC rail, " << num_leaves_ << " (no traffic crosses rails at a leaf)\n";
  if (s.third_tier_added) {
    o << "  a 2-tier tree reaches " << s.switch_ports << " leaf switches (one port each on a spine): the cost counts "
      << "a third tier, pods of " << s.pod_leaf_switches << " (k-ary fat tree, Al-Fares et al. 2008); simulated: 2 "
      << "tiers, " << num_spines_ << " spines (non-blocking above the leaves either way, one switch hop fewer)\n";
  } else if (f.tiers == 2 && num_spines_ > 0 && num_spines_ != s.spine_switches) {
    o << "  simulated: " << count_of(num_spines_, "spine") << " each reaching every leaf, a leaf's "
      << count_of(leaf_up_ports_, "up-link") << " on " << count_of(num_spines_, "resource")
      << " (the same bandwidth)\n";
  } else if (f.tiers == 3 && num_aggs_ > 0 &&
             (num_aggs_ * num_pods_ != s.aggregation_switches || num_spines_ != s.core_switches)) {
    o << "  simulated: " << count_of(num_pods_, "pod") << " of " << count_of(f.leaves_per_pod, "leaf group") << ", "
      << count_of(num_aggs_, "aggregation switch") << " per pod and " << count_of(num_spines_, "core")
      << " (up-links bundled into that many resources, the same bandwidth); bought: pods of " << s.pod_leaf_switches
      << " leaf switches\n";
  }
}

}  // namespace traincast::models
