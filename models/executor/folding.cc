// Whether the DP replicas of a job may be folded by their place in the network (folding.h).
#include "models/executor/folding.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/executor/power_thermal_setup.h"
#include "models/hardware/element_overrides.h"

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
/// a fat tree or rail-optimized tree without oversubscription (nor leaf_up_ports set) and without a failed up-link.
bool fabric_non_blocking(const Scenario& sc, const Cluster& cluster) {
  const FabricSpec& f = sc.cluster.fabric;
  return (f.kind == FabricKind::fat_tree || f.kind == FabricKind::rail_optimized) && f.oversubscription <= 1.0 &&
         f.leaf_up_ports == 0 && !cluster.has_failed_up_links();
}

/// Calls f(a, b) for every ordered GPU pair of data rank r's own traffic (TP pairs, PP sends both
/// ways, pairs with the other data ranks of its unit: EP/CP), in a fixed order; stops and returns
/// false as soon as f does.
template <typename F>
bool for_each_own_pair(const ParallelLayout& L, int r, int unit, F&& f) {
  const int u = r / unit;
  for (int s = 0; s < L.pp; ++s)
    for (int k = 0; k < L.tp; ++k) {
      for (int j = 0; j < L.tp; ++j)
        if (!f(L.gpu(k, r, s), L.gpu(j, r, s))) return false;
      if (s + 1 < L.pp && !(f(L.gpu(k, r, s), L.gpu(k, r, s + 1)) && f(L.gpu(k, r, s + 1), L.gpu(k, r, s))))
        return false;
      for (int q = u * unit; q < (u + 1) * unit; ++q)
        if (!f(L.gpu(k, r, s), L.gpu(k, q, s))) return false;
    }
  return true;
}

/// Routes every TP pair, PP send (both directions) and EP/CP pair of every unit and returns false
/// as soon as a resource (other than a non-blocking fabric's) carries two units' traffic.
bool unit_routes_disjoint(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster, int unit) {
  const bool skip_fabric = fabric_non_blocking(sc, cluster);
  std::vector<int> owner(cluster.num_resources(), -1);
  for (int r = 0; r < L.dp_cp; ++r) {
    const int u = r / unit;
    auto claim = [&](int a, int b) {
      if (a == b) return true;
      for (const sim::ResourceId res : cluster.route(a, b)) {
        if (skip_fabric && cluster.link_kind(res) == LinkKind::fabric) continue;
        if (owner[res] >= 0 && owner[res] != u) return false;
        owner[res] = u;
      }
      return true;
    };
    if (!for_each_own_pair(L, r, unit, claim)) return false;
  }
  return true;
}

/// The first resource scaled by an override that unit u's own traffic crosses, or kNoResource.
sim::ResourceId scaled_resource_on_own_traffic(const ParallelLayout& L, const Cluster& cluster, int u, int unit,
                                               const std::vector<char>& scaled) {
  sim::ResourceId hit = Cluster::kNoResource;
  for (int r = u * unit; r < (u + 1) * unit && hit == Cluster::kNoResource; ++r)
    for_each_own_pair(L, r, unit, [&](int a, int b) {
      if (a == b) return true;
      for (const sim::ResourceId res : cluster.route(a, b))
        if (scaled[res] != 0) {
          hit = res;
          return false;
        }
      return true;
    });
  return hit;
}

/// "node3.nic1" for the first failed NIC on a node holding a GPU of unit u, else "".
std::string failed_nic_of_unit(const ParallelLayout& L, const Cluster& cluster, int u, int unit) {
  if (!cluster.has_failed_nics()) return "";
  for (int s = 0; s < L.pp; ++s)
    for (int r = u * unit; r < (u + 1) * unit; ++r)
      for (int k = 0; k < L.tp; ++k) {
        const int node = cluster.node_of(L.gpu(k, r, s));
        for (int n = 0; n < cluster.nics_per_node(); ++n)
          if (!cluster.nic_up(node, n))
            return "node" + std::to_string(cluster.fabric_slot(node)) + ".nic" + std::to_string(n);
      }
  return "";
}

std::string factor_text(double f) {
  std::ostringstream o;
  o << f;
  return o.str();
}

/// One distinct setting on a class's GPUs: "clock_factor 0.9", the first GPU with it, how many.
struct SettingOnGpus {
  std::string field, value, first_gpu;
  int gpus = 0;
};

/// "clock_factor 0.9 on node5/gpu0 (+6 more GPUs), 0.5 on node5/gpu3; power_cap_w 500 on
/// node5/gpu1": each distinct setting of `settings` (in order of first appearance), its values
/// grouped by field; at most kShown settings, then "(+N more settings)" (the JSON's reason is the
/// same text: the summary's Folding line stays one line).
std::string settings_text(const std::vector<SettingOnGpus>& settings) {
  constexpr std::size_t kShown = 4;
  std::string out;
  std::string field;
  // Fields in order of first appearance, each with its values in theirs.
  std::vector<const SettingOnGpus*> ordered;
  for (const SettingOnGpus& a : settings) {
    if (std::any_of(ordered.begin(), ordered.end(), [&](const SettingOnGpus* o) { return o->field == a.field; }))
      continue;
    for (const SettingOnGpus& b : settings)
      if (b.field == a.field) ordered.push_back(&b);
  }
  for (std::size_t i = 0; i < ordered.size() && i < kShown; ++i) {
    const SettingOnGpus& x = *ordered[i];
    if (i > 0) out += x.field == field ? ", " : "; ";
    if (x.field != field) out += x.field + " ";
    field = x.field;
    out += x.value + " on " + x.first_gpu;
    if (x.gpus > 1) out += " (+" + std::to_string(x.gpus - 1) + (x.gpus == 2 ? " more GPU)" : " more GPUs)");
  }
  if (const std::size_t more = ordered.size() > kShown ? ordered.size() - kShown : 0; more > 0)
    out += " (+" + std::to_string(more) + (more == 1 ? " more setting)" : " more settings)");
  return out;
}

/// Why unit u is in the class it heads: its slowed GPUs, each distinct setting named (a class may
/// hold GPUs at clock_factor 0.9 and 0.5, or with a power cap too: fresh user 42 read "clock_factor
/// 0.9 on node5/gpu0 (+7 more GPUs)" as all eight at 0.9), or the scaled link its traffic crosses.
std::string class_reason(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster, int u, int unit,
                         sim::ResourceId link) {
  std::vector<SettingOnGpus> settings;
  const auto add = [&](const std::string& field, double value, int g) {
    const std::string v = factor_text(value);
    for (SettingOnGpus& x : settings)
      if (x.field == field && x.value == v) return void(++x.gpus);
    settings.push_back({field, v, gpu_selector_name(cluster, g), 1});
  };
  for (int s = 0; s < L.pp; ++s)
    for (int r = u * unit; r < (u + 1) * unit; ++r)
      for (int k = 0; k < L.tp; ++k) {
        const int g = L.gpu(k, r, s);
        const double supply = acting_supply_c(sc, cluster, cluster.node_of(g));
        const double cap = acting_power_cap_w(sc, cluster, g);
        if (cluster.clock_factor(g) < 1.0) add("clock_factor", cluster.clock_factor(g), g);
        if (cap > 0.0) add("power_cap_w", cap, g);
        if (!std::isnan(supply)) add("supply_c", supply, g);
      }
  std::string why = settings_text(settings);
  if (link != Cluster::kNoResource) {
    double f = 1.0;
    for (const auto& [res, factor] : cluster.scaled_resources())
      if (res == link) f = factor;
    why += std::string(why.empty() ? "" : "; ") + "its own traffic's default route crosses " +
           cluster.resource_name(link) + " (bandwidth_factor " + factor_text(f) + ")";
  }
  return why.empty() ? "nominal" : why;
}

/// Every unit alone and simulated, with `why`.
FoldingPlan unfolded_plan(int units, int unit, const std::string& why) {
  FoldingPlan p;
  p.unit = unit;
  for (int u = 0; u < units; ++u) p.classes.push_back({{u}, why});
  return p;
}

/// replica_ids and sim_index from the classes.
void index_plan(FoldingPlan& p, int dp_cp) {
  std::vector<int> rep_unit(static_cast<std::size_t>(dp_cp / p.unit), 0);
  std::vector<int> heads;
  for (const ReplicaClass& c : p.classes) {
    heads.push_back(c.units.front());
    for (int u : c.units) rep_unit[static_cast<std::size_t>(u)] = c.units.front();
    if (c.units.size() > 1) p.folded = true;
  }
  std::sort(heads.begin(), heads.end());
  std::vector<int> first_index(rep_unit.size(), -1);
  for (int h : heads) {
    first_index[static_cast<std::size_t>(h)] = static_cast<int>(p.replica_ids.size());
    for (int j = 0; j < p.unit; ++j) p.replica_ids.push_back(h * p.unit + j);
  }
  p.sim_index.resize(static_cast<std::size_t>(dp_cp));
  for (int r = 0; r < dp_cp; ++r)
    p.sim_index[static_cast<std::size_t>(r)] =
        first_index[static_cast<std::size_t>(rep_unit[static_cast<std::size_t>(r / p.unit)])] + r % p.unit;
}

}  // namespace

bool fold_candidate(const Scenario& sc, const ParallelLayout& L, int gpus_per_node) {
  const int unit = L.ep * L.cp;
  const bool whole_nodes = (L.tp * L.pp * unit) % gpus_per_node == 0;
  return sc.options.fold_symmetric && L.dp_cp > unit && whole_nodes && sc.cluster.fabric.oversubscription <= 1.0 &&
         sc.cluster.fabric.leaf_up_ports == 0;
}

bool fold_replicas_by_position(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster) {
  const int gpn = cluster.gpus_per_node();
  if (!fold_candidate(sc, L, gpn)) return false;
  const int unit = L.ep * L.cp;
  if (!units_own_their_nodes(L, unit, gpn)) return unit_routes_disjoint(sc, L, cluster, unit);
  // A unit of one node keeps its traffic inside it (NVLink, PCIe, sockets, its own NICs).
  return L.tp * L.pp * unit <= gpn || fabric_non_blocking(sc, cluster);
}

FoldingPlan plan_replica_folding(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster) {
  const int unit = L.ep * L.cp, units = L.dp_cp / unit;
  FoldingPlan p;
  if (!sc.options.fold_symmetric) {
    p = unfolded_plan(units, unit, "options.fold_symmetric is off");
  } else if (!fold_replicas_by_position(sc, L, cluster)) {
    p = unfolded_plan(units, unit,
                      units <= 1 ? "one symmetry unit (ep x cp replicas)"
                                 : "network position: replicas' own traffic may share links (docs/models.md, folding)");
  } else if (!gpus_slowed(sc, cluster) && cluster.scaled_resources().empty() && !cluster.has_failed_nics()) {
    p.unit = unit;
    ReplicaClass all{{}, "nominal"};
    for (int u = 0; u < units; ++u) all.units.push_back(u);
    p.classes.push_back(std::move(all));
  } else {
    p.unit = unit;
    std::vector<char> scaled(cluster.num_resources(), 0);
    for (const auto& [res, f] : cluster.scaled_resources()) scaled[res] = 1;
    std::map<std::vector<double>, int> class_of_key;
    std::vector<double> key;
    for (int u = 0; u < units; ++u) {
      key.clear();
      for (int s = 0; s < L.pp; ++s)
        for (int r = u * unit; r < (u + 1) * unit; ++r)
          for (int k = 0; k < L.tp; ++k) {
            key.push_back(cluster.clock_factor(L.gpu(k, r, s)));
            key.push_back(acting_power_cap_w(sc, cluster, L.gpu(k, r, s)));  // none without effect
            const double supply = acting_supply_c(sc, cluster, cluster.node_of(L.gpu(k, r, s)));
            key.push_back(std::isnan(supply) ? -1e9 : supply);  // NaN never compares equal; none without effect
          }
      const sim::ResourceId link = cluster.scaled_resources().empty()
                                       ? Cluster::kNoResource
                                       : scaled_resource_on_own_traffic(L, cluster, u, unit, scaled);
      // A failed NIC on one of its nodes: its traffic takes the node's other NICs, a class alone.
      const std::string failed_nic = failed_nic_of_unit(L, cluster, u, unit);
      if (link != Cluster::kNoResource || !failed_nic.empty()) key.push_back(-1.0 - u);  // a class alone
      const auto [it, added] = class_of_key.emplace(key, static_cast<int>(p.classes.size()));
      if (added) {
        std::string why = class_reason(sc, L, cluster, u, unit, link);
        if (!failed_nic.empty()) {
          if (why == "nominal")
            why.clear();
          else
            why += "; ";
          why += failed_nic;
          why += " failed on its node";
        }
        p.classes.push_back({{}, std::move(why)});
      }
      p.classes[static_cast<std::size_t>(it->second)].units.push_back(u);
    }
  }
  index_plan(p, L.dp_cp);
  return p;
}

std::string rank_ranges(const std::vector<int>& units, int unit) {
  std::string out;
  std::size_t i = 0;
  while (i < units.size()) {
    std::size_t j = i;
    while (j + 1 < units.size() && units[j + 1] == units[j] + 1) ++j;
    const int lo = units[i] * unit, hi = units[j] * unit + unit - 1;
    // Appended piece by piece: GCC 12's -Wrestrict misfires on `"-" + std::to_string(hi)` here.
    if (!out.empty()) out += ", ";
    out += std::to_string(lo);
    if (hi > lo) {
      out += '-';
      out += std::to_string(hi);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace traincast::models
