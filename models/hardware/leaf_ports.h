#pragma once
// Leaf switch radix (fresh-user finding: a fat tree of 72-NIC GB200 NVL72 racks was built and
// priced with 2,304-port leaves). A leaf switch has fabric.leaf_ports ports at the NIC line rate;
// the ports a leaf needs (down to its nodes, up to the spines) must fit in it. The scenario loader
// derives the default nodes per leaf from it and refuses a nodes_per_leaf that does not fit
// (models/io/scenario_checks.cc), and the switches bought are counted by it (switch_count.h).

#include "models/hardware/catalog.h"
#include "models/spec/cluster_spec.h"

namespace traincast::models {

/// The default radix of a leaf switch for `nic` [ports at its line rate]: 144 for XDR 800 Gb/s
/// (NVIDIA Quantum-X800 Q3400 datasheet: 144 ports of 800 Gb/s), else 64 (NVIDIA Quantum-2
/// QM9700 datasheet: 64 ports of 400 Gb/s NDR, the switch cost.switch_price_usd's default
/// prices; a slower NIC's port is at most one of them, so 64 is the count it can rely on).
int default_leaf_ports(const NicSpec& nic);

/// fabric.leaf_ports when given (> 0), else default_leaf_ports(nic).
int leaf_ports(const FabricSpec& f, const NicSpec& nic);

/// The ports one leaf uses: `down` to its nodes (rail_optimized: 1 per node, a leaf per NIC rail;
/// fat_tree: every NIC of the node) and `up` to the spines (ceil(down / oversubscription), or
/// fabric.leaf_up_ports; none with a single leaf group), as models::Cluster builds them.
struct LeafPortsUsed {
  int down = 0;
  int up = 0;
  long long total() const { return static_cast<long long>(down) + up; }
};

/// What one leaf of `nodes_per_leaf` nodes uses in a cluster of `nodes` nodes (fabric slots) with
/// `nics` NICs each; a single leaf group cables only its min(nodes, nodes_per_leaf) nodes.
LeafPortsUsed leaf_ports_used(const FabricSpec& f, int nodes, int nics, int nodes_per_leaf);

/// The most nodes per leaf, up to 32 (FabricSpec's default), whose leaf fits in `ports`; 0 when
/// not even one node's does (a fat_tree leaf takes all of a node's NICs: 72 for GB200 NVL72).
int default_nodes_per_leaf(const FabricSpec& f, int nodes, int nics, int ports);

}  // namespace traincast::models
