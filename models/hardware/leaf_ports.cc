// Leaf switch radix (leaf_ports.h).

#include "models/hardware/leaf_ports.h"

#include <algorithm>
#include <cmath>

namespace traincast::models {

int default_leaf_ports(const NicSpec& nic) {
  // NVIDIA Quantum-X800 Q3400 datasheet: 144 ports of 800 Gb/s XDR; NVIDIA Quantum-2 QM9700
  // datasheet: 64 ports of 400 Gb/s NDR.
  return nic.name == "IB-XDR-800" ? 144 : 64;
}

int leaf_ports(const FabricSpec& f, const NicSpec& nic) {
  return f.leaf_ports > 0 ? f.leaf_ports : default_leaf_ports(nic);
}

LeafPortsUsed leaf_ports_used(const FabricSpec& f, int nodes, int nics, int nodes_per_leaf) {
  LeafPortsUsed u;
  if (nodes <= 1 || nodes_per_leaf < 1 || (f.kind != FabricKind::fat_tree && f.kind != FabricKind::rail_optimized))
    return u;
  const long long per_node = f.kind == FabricKind::rail_optimized ? 1 : std::max(0, nics);
  const bool one_group = nodes <= nodes_per_leaf;
  const long long down = (one_group ? nodes : nodes_per_leaf) * per_node;
  u.down = static_cast<int>(std::min<long long>(down, 1LL << 30));
  if (!one_group) {
    // Whole ports, the fewest that carry down / oversubscription (models::Cluster builds these).
    u.up = f.leaf_up_ports > 0 ? f.leaf_up_ports
                               : std::max(1, static_cast<int>(std::ceil(u.down / f.oversubscription - 1e-9)));
  }
  return u;
}

int default_nodes_per_leaf(const FabricSpec& f, int nodes, int nics, int ports) {
  const int most = FabricSpec{}.nodes_per_leaf;
  for (int n = most; n >= 1; --n) {
    if (leaf_ports_used(f, nodes, nics, n).total() <= ports) return n;
  }
  return 0;
}

}  // namespace traincast::models
