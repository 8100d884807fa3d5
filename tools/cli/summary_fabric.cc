// The run summary's fabric ratio (declared in summary.h): the leaf oversubscription the cluster is
// built with, beside the one asked for where they differ.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "models/hardware/cluster.h"
#include "models/hardware/leaf_ports.h"
#include "tools/cli/summary.h"

namespace traincast::cli {

models::LeafPortsUsed built_leaf_ports(const models::ClusterSpec& c) {
  const models::FabricSpec& f = c.fabric;
  if (c.num_nodes <= 1 || (f.kind != models::FabricKind::fat_tree && f.kind != models::FabricKind::rail_optimized))
    return {};
  // As models::Cluster builds the leaves (cluster.cc): up-links are whole ports, ceil(down /
  // oversubscription) or fabric.leaf_up_ports, and a single leaf group has none.
  const std::unique_ptr<models::Cluster> sizes = models::Cluster::sizes_only(c);
  const int slots = sizes->fabric_slots();
  if (f.nodes_per_leaf < 1 || slots <= f.nodes_per_leaf) return {};
  return models::leaf_ports_used(f, slots, sizes->nics_per_node(), f.nodes_per_leaf);
}

std::string fabric_ratio_text(const models::ClusterSpec& c) {
  const models::FabricSpec& f = c.fabric;
  if (c.num_nodes <= 1 || (f.kind != models::FabricKind::fat_tree && f.kind != models::FabricKind::rail_optimized))
    return "";
  const double asked = f.oversubscription;
  const std::string asked_text = asked > 1 && f.leaf_up_ports == 0 ? "; " + format_fixed(asked, 1) + ":1 asked" : "";
  const models::LeafPortsUsed ports = built_leaf_ports(c);
  if (ports.up <= 0) return asked_text.empty() ? "" : " (non-blocking: one leaf group" + asked_text + ")";
  const double effective = static_cast<double>(ports.down) / ports.up;
  if (std::fabs(effective - asked) < 1e-9 && f.leaf_up_ports == 0) {
    return effective > 1 ? " (" + format_fixed(effective, 1) + ":1)" : "";
  }
  if (!(effective > 1) && asked_text.empty()) return "";
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.3g", effective);
  return std::string(" (") + ratio + ":1, " + std::to_string(ports.down) + ":" + std::to_string(ports.up) +
         " ports per leaf" + asked_text + ")";
}

}  // namespace traincast::cli
