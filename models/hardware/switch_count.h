#pragma once
// Physical switches of a leaf-spine (or 3-tier) fabric: what the cost model buys and explain prints,
// one count for both (fresh-user findings, session 34: two NVLink partitions of one GB200 NVL72
// rack bought 36 leaf switches, one per NIC rail, though each used 2 ports; explain printed the
// simulation's 16 spines where the cost bought 72; 144 leaves were priced as a 2-tier tree whose
// 64-port spines could not reach them).
//
// The simulated topology is not this count: Cluster keeps one leaf per NIC rail and leaf group,
// bundles a leaf's up-links into at most kMaxSpines resources and keeps 2 tiers where a real fabric
// needs 3 (docs/fabric.md, "Leaf switch radix"). Routing never crosses rails (a GPU sends on the
// destination's rail, relaying over NVLink where NCCL does), and above the leaves both trees are
// non-blocking, so the simulated bandwidth is the physical fabric's.

#include <string>

#include "models/spec/cluster_spec.h"

namespace traincast::models {

/// Switches of `switch_ports` ports each, bought for a fat_tree or rail_optimized fabric.
struct SwitchCount {
  int switch_ports = 0;           ///< k, every switch's radix [ports at the NIC line rate]
  int rail_leaves = 0;            ///< leaves as simulated: one per leaf group (and NIC rail)
  int rail_leaf_ports = 0;        ///< ports one simulated leaf uses: down + up-links
  int rails_per_leaf_switch = 1;  ///< simulated leaves of one leaf group on one physical switch
  int leaf_switches = 0;
  int spine_switches = 0;         ///< 2 tiers
  int aggregation_switches = 0;   ///< 3 tiers
  int core_switches = 0;          ///< 3 tiers, more than one pod
  int pods = 0;                   ///< 3 tiers
  int pod_leaf_switches = 0;      ///< leaf switches of a full pod (3 tiers)
  bool third_tier_added = false;  ///< fabric.tiers 2, but more leaf switches than a spine has ports
  long long leaf_up_links = 0;    ///< leaf-to-spine (or aggregation) cables
  long long core_links = 0;       ///< aggregation-to-core cables
  /// Non-empty when 3 tiers of such switches cannot be built: the field at fault and why (with
  /// what fits). The loader refuses such a scenario (models/io/scenario_checks.cc).
  std::string refused_field, refusal;
  int tiers() const { return core_switches + aggregation_switches > 0 ? 3 : spine_switches > 0 ? 2 : 1; }
  long long total() const {
    return static_cast<long long>(leaf_switches) + spine_switches + aggregation_switches + core_switches;
  }
};

/// The switches of fabric `f` (kind fat_tree or rail_optimized, f.nodes_per_leaf >= 1) over
/// `slots` nodes of `nics` NICs on switches of `ports` ports (leaf_ports(f, nic)); all zero for
/// another kind or one node. Leaves: the ports of leaf_ports_used; on rail_optimized the rails of a
/// leaf group share a switch as ports permit, floor(ports / (down + up)) rails per switch. 2 tiers
/// while the leaf switches are at most `ports` (every spine has a port for each): spines =
/// ceil(leaf up-links / ports). Past that, and for f.tiers 3, a 3-tier fat tree (Al-Fares,
/// Loukissas and Vahdat, "A Scalable, Commodity Data Center Network Architecture", SIGCOMM 2008:
/// the k-ary fat tree has k pods of k/2 edge and k/2 aggregation switches and (k/2)^2 cores, 5k^2/4
/// switches for k^3/4 hosts): pods of k/2 leaf switches (an aggregation switch's down ports),
/// ceil(pod's up-links / (k/2)) aggregation switches per pod (k/2 down, k/2 up), cores ceil(up-links
/// / k). With f.tiers 3, every leaf group in one f.leaves_per_pod and at most k leaf switches, the
/// aggregation switches are the top (k ports down) and there is no core. More than k pods (a core
/// has a port for each: 3 tiers reach k x k/2 leaf switches) is set as `refusal`.
SwitchCount count_switches(const FabricSpec& f, int slots, int nics, int ports);

}  // namespace traincast::models
