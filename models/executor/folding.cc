// Whether the DP replicas of a job may be folded by their place in the network (folding.h).
#include "models/executor/folding.h"

#include <vector>

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
/// a fat tree or rail-optimized tree without oversubscription.
bool fabric_non_blocking(const Scenario& sc) {
  const FabricSpec& f = sc.cluster.fabric;
  return (f.kind == FabricKind::fat_tree || f.kind == FabricKind::rail_optimized) && f.oversubscription <= 1.0;
}

/// Routes every TP pair, PP send (both directions) and EP/CP pair of every unit and returns false
/// as soon as a resource (other than a non-blocking fabric's) carries two units' traffic.
bool unit_routes_disjoint(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster, int unit) {
  const bool skip_fabric = fabric_non_blocking(sc);
  std::vector<int> owner(cluster.num_resources(), -1);
  auto claim = [&](int a, int b, int u) {
    if (a == b) return true;
    for (const sim::ResourceId r : cluster.route(a, b)) {
      if (skip_fabric && cluster.link_kind(r) == LinkKind::fabric) continue;
      if (owner[r] >= 0 && owner[r] != u) return false;
      owner[r] = u;
    }
    return true;
  };
  for (int r = 0; r < L.dp_cp; ++r) {
    const int u = r / unit;
    for (int s = 0; s < L.pp; ++s)
      for (int k = 0; k < L.tp; ++k) {
        for (int j = 0; j < L.tp; ++j)
          if (!claim(L.gpu(k, r, s), L.gpu(j, r, s), u)) return false;
        if (s + 1 < L.pp &&
            !(claim(L.gpu(k, r, s), L.gpu(k, r, s + 1), u) && claim(L.gpu(k, r, s + 1), L.gpu(k, r, s), u)))
          return false;
        for (int q = u * unit; q < (u + 1) * unit; ++q)
          if (!claim(L.gpu(k, r, s), L.gpu(k, q, s), u)) return false;
      }
  }
  return true;
}

}  // namespace

bool fold_candidate(const Scenario& sc, const ParallelLayout& L, int gpus_per_node) {
  const int unit = L.ep * L.cp;
  const bool whole_nodes = (L.tp * L.pp * unit) % gpus_per_node == 0;
  return sc.options.fold_symmetric && L.dp_cp > unit && whole_nodes && sc.cluster.fabric.oversubscription <= 1.0;
}

bool fold_replicas_by_position(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster) {
  const int gpn = cluster.gpus_per_node();
  if (!fold_candidate(sc, L, gpn)) return false;
  const int unit = L.ep * L.cp;
  if (!units_own_their_nodes(L, unit, gpn)) return unit_routes_disjoint(sc, L, cluster, unit);
  // A unit of one node keeps its traffic inside it (NVLink, PCIe, sockets, its own NICs).
  return L.tp * L.pp * unit <= gpn || fabric_non_blocking(sc);
}

}  // namespace traincast::models
