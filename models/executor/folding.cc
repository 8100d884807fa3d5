// Whether the DP replicas of a job may be folded by their place in the network (folding.h).
#include "models/executor/folding.h"

namespace traincast::models {
namespace {

/// true when every node holds GPUs of one symmetry unit (`unit` consecutive data ranks) only.
bool units_own_their_nodes(const ParallelLayout& L, int unit, int gpus_per_node) {
  const int gpus = L.tp * L.pp * L.dp_cp;
  for (int first = 0; first < gpus; first += gpus_per_node) {
    const int u = L.data_rank_of(first) / unit;
    for (int g = first + 1; g < first + gpus_per_node && g < gpus; ++g)
      if (L.data_rank_of(g) / unit != u) return false;
  }
  return true;
}

/// true when traffic between the nodes of different units shares no fabric link that could bind:
/// a fat tree or rail-optimized tree without oversubscription (a torus routes through other
/// nodes' links).
bool fabric_non_blocking(const Scenario& sc) {
  const FabricSpec& f = sc.cluster.fabric;
  return (f.kind == FabricKind::fat_tree || f.kind == FabricKind::rail_optimized) && f.oversubscription <= 1.0;
}

}  // namespace

bool fold_replicas_by_position(const Scenario& sc, const ParallelLayout& L, int gpus_per_node) {
  const int unit = L.ep * L.cp;
  if (!sc.options.fold_symmetric || L.dp_cp <= unit || sc.cluster.fabric.oversubscription > 1.0) return false;
  if (!units_own_their_nodes(L, unit, gpus_per_node)) return false;
  // A unit of one node keeps its traffic inside it (NVLink, PCIe, sockets, its own NICs).
  if (L.tp * L.pp * unit <= gpus_per_node) return true;
  return fabric_non_blocking(sc);
}

}  // namespace traincast::models
