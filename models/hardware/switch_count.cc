// Physical switches of a leaf-spine or 3-tier fabric (switch_count.h).

#include "models/hardware/switch_count.h"

#include <algorithm>

#include "models/hardware/leaf_ports.h"

namespace traincast::models {
namespace {

long long ceil_div(long long a, long long b) { return b > 0 ? (a + b - 1) / b : 0; }

int clamp_int(long long v) { return static_cast<int>(std::min<long long>(v, 1LL << 30)); }

/// 3 tiers over the leaf switches: pods of consecutive leaf switches, aggregation and core switches
/// by ports; a core's reach sets `s.refusal`.
void count_three_tiers(const FabricSpec& f, int pod_groups, int switches_per_group, int rails, int up, SwitchCount& s) {
  const long long k = s.switch_ports, half = std::max(1, s.switch_ports / 2);
  const long long leaves = s.leaf_switches;
  // One pod (fabric.tiers 3, every leaf group in its leaves_per_pod, at most k leaf switches): the
  // aggregation switches are the top tier. Else pods of k/2 leaf switches (an aggregation switch
  // has k/2 ports down), as in the k-ary fat tree, whatever leaves_per_pod groups the simulation.
  const long long spec_pod = static_cast<long long>(pod_groups) * switches_per_group;
  const bool one_pod = !s.third_tier_added && spec_pod >= leaves && leaves <= k;
  const long long pod_leaves = one_pod ? leaves : half;
  const long long pods = ceil_div(leaves, pod_leaves);
  s.pods = clamp_int(pods);
  s.pod_leaf_switches = clamp_int(pod_leaves);
  // Up-links of leaf switch i: the rails on it x up (the last switch of a group may hold fewer).
  auto up_links_of = [&](long long i) {
    const long long slot = i % switches_per_group;
    const long long on = std::min<long long>(s.rails_per_leaf_switch, rails - slot * s.rails_per_leaf_switch);
    return on * up;
  };
  const long long agg_down = one_pod ? k : half;
  long long aggs = 0;
  for (long long p = 0; p < pods; ++p) {
    long long links = 0;
    for (long long i = p * pod_leaves; i < std::min(leaves, (p + 1) * pod_leaves); ++i) links += up_links_of(i);
    aggs += ceil_div(links, agg_down);
  }
  s.aggregation_switches = clamp_int(aggs);
  if (pods > 1) {
    s.core_links = s.leaf_up_links;
    s.core_switches = clamp_int(ceil_div(s.core_links, k));
  }
  if (pods <= k) return;
  // A 4th tier would be needed: name the most nodes 3 tiers of these switches reach.
  const long long groups_fit = k * pod_leaves / switches_per_group;
  s.refused_field = "cluster.num_nodes";
  s.refusal = std::to_string(leaves) + " leaf switches need " + std::to_string(pods) + " pods of " +
              std::to_string(pod_leaves) + ", over the " + std::to_string(k) + " a core switch of " +
              std::to_string(k) +
              " ports reaches (one port each; 3 tiers of k-port switches reach k x k/2 leaf "
              "switches, Al-Fares et al. 2008) (expected " +
              (groups_fit > 0 ? "num_nodes <= " + std::to_string(groups_fit * f.nodes_per_leaf) + ", or " : "") +
              "a larger fabric.leaf_ports)";
}

}  // namespace

SwitchCount count_switches(const FabricSpec& f, int slots, int nics, int ports) {
  SwitchCount s;
  if (slots <= 1 || f.nodes_per_leaf < 1 || ports < 1 ||
      (f.kind != FabricKind::fat_tree && f.kind != FabricKind::rail_optimized))
    return s;
  const bool rail = f.kind == FabricKind::rail_optimized;
  const int rails = rail ? std::max(1, nics) : 1;
  const int groups = clamp_int(ceil_div(slots, f.nodes_per_leaf));
  const LeafPortsUsed used = leaf_ports_used(f, slots, nics, f.nodes_per_leaf);
  s.switch_ports = ports;
  s.rail_leaves = clamp_int(static_cast<long long>(groups) * rails);
  s.rail_leaf_ports = clamp_int(used.total());
  // A leaf group's rail leaves share a switch as its ports permit (its nodes' NICs of several
  // rails on one box); leaves of different groups never share one (the spine joins groups).
  s.rails_per_leaf_switch =
      rail ? static_cast<int>(std::clamp<long long>(used.total() > 0 ? ports / used.total() : rails, 1, rails)) : 1;
  const int switches_per_group = clamp_int(ceil_div(rails, s.rails_per_leaf_switch));
  s.leaf_switches = clamp_int(static_cast<long long>(groups) * switches_per_group);
  if (used.up == 0) return s;  // one leaf group: no tier above the leaves
  s.leaf_up_links = static_cast<long long>(s.rail_leaves) * used.up;
  if (f.tiers != 3 && s.leaf_switches <= ports) {
    s.spine_switches = clamp_int(ceil_div(s.leaf_up_links, ports));
    return s;
  }
  s.third_tier_added = f.tiers != 3;
  count_three_tiers(f, f.leaves_per_pod, switches_per_group, rails, used.up, s);
  return s;
}

}  // namespace traincast::models
