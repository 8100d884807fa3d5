// The power/thermal model's setup for a training job, and whether power or temperature can ever
// lower a clock (power_thermal_setup.h).
#include "models/executor/power_thermal_setup.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/element_overrides.h"

namespace traincast::models {
namespace {

/// The calibration profile's power/thermal overlay for `gpu`, or null when the scenario's profile
/// has none. Throws std::invalid_argument when it was fitted on another GPU.
/// The (node template, GPU) of each node group of `sc` in order (one for a uniform cluster).
std::vector<std::pair<const NodeTemplate*, const GpuSpec*>> scenario_groups(const Scenario& sc) {
  std::vector<std::pair<const NodeTemplate*, const GpuSpec*>> out;
  if (sc.cluster.node_groups.empty()) {
    const NodeTemplate& node = cluster_node_template(sc.cluster);
    out.emplace_back(&node, &find_gpu(sc.cluster.gpu.empty() ? node.gpu : sc.cluster.gpu));
  }
  for (const NodeGroupSpec& g : sc.cluster.node_groups) {
    const NodeTemplate& node = find_node_template(g.node_template, sc.cluster);
    out.emplace_back(&node, &find_gpu(g.gpu.empty() ? node.gpu : g.gpu));
  }
  return out;
}

/// The calibration profile's power/thermal overlay for `gpu`, or null when the scenario's profile
/// has none or was fitted on the GPU of another of its node groups (it applies to that group's).
/// Throws std::invalid_argument when it was fitted on a GPU the cluster does not have.
const PowerThermalOverlay* power_overlay(const Scenario& sc, const GpuSpec& gpu) {
  const CalibrationProfile* p = sc.cluster.profile.get();
  if (p == nullptr || !p->power_thermal.any()) return nullptr;
  if (p->gpu != gpu.name) {
    for (const auto& [node, other] : scenario_groups(sc))
      if (other->name == p->gpu) return nullptr;
    throw std::invalid_argument("profile " + (p->origin.empty() ? std::string("(in memory)") : p->origin) +
                                ": power_thermal was fitted on GPU \"" + p->gpu + "\" but the cluster's GPU is \"" +
                                gpu.name + "\" (expected a profile of the same GPU)");
  }
  return &p->power_thermal;
}

/// The default lumped RC with the profile's fitted R and C over it (a scenario's own
/// thermal.r_k_per_w / c_j_per_k are applied by the callers and win).
ThermalRc base_thermal_rc(const Scenario& sc, const GpuSpec& gpu, bool liquid, int rows) {
  ThermalRc rc = default_thermal_rc(gpu, liquid, rows);
  if (const PowerThermalOverlay* o = power_overlay(sc, gpu)) {
    if (o->r_k_per_w) rc.r_k_per_w = *o->r_k_per_w;
    if (o->c_j_per_k) rc.c_j_per_k = *o->c_j_per_k;
  }
  return rc;
}

/// clock_feedback_possible for the nodes of one group: `node` holding `gpu`s.
bool group_clock_feedback_possible(const Scenario& sc, const GpuSpec& gpu, const NodeTemplate& node) {
  const PowerSpec& pw = sc.power;
  const ThermalSpec& th = sc.thermal;
  if (pw.gpu_power_limit_w > 0 && pw.gpu_power_limit_w < gpu.tdp_w) return true;
  for (const ElementOverride& o : sc.cluster.overrides)  // a GPU's own power cap
    if (o.power_cap_w > 0 && o.power_cap_w < gpu.tdp_w) return true;
  const bool liquid = th.cooling == Cooling::liquid;
  if (!liquid && th.rack_cooling_capacity_w > 0) return true;
  const NodePowerSpec ns = node_power_spec(node, gpu);
  const int rows = liquid ? 1 : ns.airflow_rows;
  const int lanes = std::max(1, node.gpus_per_node / std::max(1, rows));
  const PowerThermalOverlay* overlay = power_overlay(sc, gpu);
  // A fitted u(compute_bound) > 1: the GPU's TDP caps a tensor-core-bound kernel below the full clock.
  if (overlay && overlay->compute_bound_fraction && *overlay->compute_bound_fraction > 1) return true;
  const ThermalRc base = base_thermal_rc(sc, gpu, liquid, rows);
  auto airflow = [&](int l) {
    return static_cast<std::size_t>(l) < th.gpu_airflow_fraction.size() ? th.gpu_airflow_fraction[l] : 1.0;
  };
  for (int l = 0; l < node.gpus_per_node; ++l) {
    double r = th.r_k_per_w > 0 ? th.r_k_per_w : base.r_k_per_w;
    if (!liquid) r /= std::pow(airflow(l), 0.8);
    double inlet = liquid ? th.coolant_c : th.supply_air_c;
    for (const ElementOverride& o : sc.cluster.overrides)  // the hottest node's supply
      if (o.supply_c) inlet = std::max(inlet, *o.supply_c);
    if (!liquid)
      for (int u = l % lanes; u < l; u += lanes) inlet += gpu.tdp_w * preheat_k_per_w(gpu, rows, airflow(u));
    if (inlet + gpu.tdp_w * r >= gpu.slowdown_temp_c) return true;
  }
  return false;
}

}  // namespace

bool clock_feedback_possible(const Scenario& sc) {
  for (const auto& [node, gpu] : scenario_groups(sc))
    if (group_clock_feedback_possible(sc, *gpu, *node)) return true;
  return false;
}

std::vector<std::string> thermal_settings_without_effect(const Scenario& sc) {
  const ThermalSpec& th = sc.thermal;
  const ThermalSpec defaults;
  std::vector<std::string> notes;
  if (th.cooling == Cooling::liquid) {
    char coolant_c[32];
    std::snprintf(coolant_c, sizeof coolant_c, "%g", th.coolant_c);
    const std::string coolant = std::string("thermal.coolant_c, ") + coolant_c + " C";
    if (th.given.supply_air_c || th.supply_air_c != defaults.supply_air_c)
      notes.push_back("thermal.supply_air_c has no effect: cooling is liquid, so the GPUs' inlet is the coolant (" +
                      coolant + ") (expected cooling: air for a supply air temperature to act)");
    if (!th.gpu_airflow_fraction.empty())
      notes.push_back(
          "thermal.gpu_airflow_fraction has no effect: cooling is liquid, so cold plates carry the GPUs' heat, not "
          "the air (expected cooling: air for a GPU's airflow to act)");
  } else if (th.given.coolant_c || th.coolant_c != defaults.coolant_c) {
    notes.push_back(
        "thermal.coolant_c has no effect: cooling is air, so the GPUs' inlet is thermal.supply_air_c (expected "
        "cooling: liquid for a coolant temperature to act)");
  }
  return notes;
}

double gpu_power_limit_w(const Scenario& sc, const GpuSpec& gpu) {
  const double limit = sc.power.gpu_power_limit_w;
  return limit > 0 && limit < gpu.tdp_w ? limit : gpu.tdp_w;
}

double gpu_power_limit_w(const Scenario& sc, const Cluster& cluster, int gpu) {
  return gpu_power_limit_w(sc, cluster.gpu_spec(gpu));
}

double acting_power_cap_w(const Scenario& sc, const Cluster& cluster, int gpu) {
  const double cap = cluster.power_cap_w(gpu);
  return cap > 0 && cap < gpu_power_limit_w(sc, cluster, gpu) ? cap : 0.0;
}

double acting_supply_c(const Scenario& sc, const Cluster& cluster, int node) {
  const double supply = cluster.supply_c(node);
  const double inlet = sc.thermal.cooling == Cooling::liquid ? sc.thermal.coolant_c : sc.thermal.supply_air_c;
  return supply == inlet ? std::numeric_limits<double>::quiet_NaN() : supply;  // NaN stays NaN
}

bool gpus_slowed(const Scenario& sc, const Cluster& cluster) {
  return std::any_of(cluster.slowed_gpus().begin(), cluster.slowed_gpus().end(), [&](int g) {
    return cluster.clock_factor(g) < 1.0 || acting_power_cap_w(sc, cluster, g) > 0.0 ||
           !std::isnan(acting_supply_c(sc, cluster, cluster.node_of(g)));
  });
}

std::vector<std::string> power_caps_without_effect(const Scenario& sc) {
  std::vector<std::string> notes;
  if (std::none_of(sc.cluster.overrides.begin(), sc.cluster.overrides.end(),
                   [](const ElementOverride& o) { return o.power_cap_w > 0 && !o.missing; }))
    return notes;
  std::unique_ptr<Cluster> cluster;
  try {
    cluster = Cluster::sizes_only(sc.cluster);  // power caps name GPUs: sizes and places suffice
  } catch (const std::exception&) {
    return notes;  // a bad spec: the command's Cluster says why
  }
  for (std::size_t i = 0; i < sc.cluster.overrides.size(); ++i) {
    const ElementOverride& o = sc.cluster.overrides[i];
    if (!(o.power_cap_w > 0) || o.missing || !selector_reads_no_resource(o.select)) continue;
    std::vector<int> gpus;
    try {
      gpus = resolve_selector(*cluster, o.select).gpus;
    } catch (const std::invalid_argument&) {
      continue;
    }
    double limit = 0;  // the highest limit among its GPUs: the cap acts on none of them
    bool acts = gpus.empty();
    for (int g : gpus) {
      limit = std::max(limit, gpu_power_limit_w(sc, *cluster, g));
      acts = acts || o.power_cap_w < gpu_power_limit_w(sc, *cluster, g);  // sizes_only applies no override
    }
    if (acts) continue;
    const bool own_limit = sc.power.gpu_power_limit_w > 0 && sc.power.gpu_power_limit_w <= limit;
    const auto watts = [](double w) {
      char text[32];
      std::snprintf(text, sizeof text, "%g W", w);
      return std::string(text);
    };
    notes.push_back(
        "cluster.overrides[" + std::to_string(i) + "].power_cap_w has no effect: " + watts(o.power_cap_w) +
        " is at or above the power limit of " + watts(limit) + " of the GPUs it names (" +
        (own_limit ? std::string("power.gpu_power_limit_w") : "the TDP of " + cluster->gpu_spec(gpus.front()).name) +
        "); a cap only lowers a GPU's limit (expected below " + watts(limit) + ", or no override)");
  }
  return notes;
}

PowerThermalSetup power_thermal_setup(const Scenario& sc, const Cluster& cluster, const TrainingGraph& job,
                                      const ThermalStartState& start) {
  PowerThermalSetup ps;
  const PowerSpec& pw = sc.power;
  const ThermalSpec& th = sc.thermal;
  const bool liquid = th.cooling == Cooling::liquid;
  // Per node group: its GPU's curve, its node's power figures and airflow, the base thermal RC,
  // the airflow rows and lanes of its node (one group on a uniform cluster).
  std::vector<ThermalRc> base;
  std::vector<int> rows_of, lanes_of;
  const int gpn = cluster.gpus_per_node();
  for (const Cluster::NodeGroup& group : cluster.node_groups()) {
    const GpuSpec& gpu = *group.gpu;
    const NodeTemplate& node = *group.node_template;
    PowerThermalSetup::Group g;
    g.curve = power_curve_of(gpu);
    if (const PowerThermalOverlay* o = power_overlay(sc, gpu)) {
      if (o->idle_w) g.curve.idle_w = *o->idle_w;
      if (o->compute_bound_fraction)
        g.curve.activity_fraction[static_cast<int>(Activity::compute_bound)] = *o->compute_bound_fraction;
    }
    if (pw.memory_bound_fraction)
      g.curve.activity_fraction[static_cast<int>(Activity::memory_bound)] = *pw.memory_bound_fraction;
    if (pw.comm_fraction) g.curve.activity_fraction[static_cast<int>(Activity::comm)] = *pw.comm_fraction;
    g.node = node_power_spec(node, gpu);
    if (pw.psu_redundant) g.node.psu_redundant = *pw.psu_redundant;
    g.node_airflow_m3_per_s = node_airflow_m3_per_s(g.node, gpu, gpn, node.sockets);
    const int rows = liquid ? 1 : g.node.airflow_rows;
    rows_of.push_back(rows);
    lanes_of.push_back(std::max(1, gpn / std::max(1, rows)));
    base.push_back(base_thermal_rc(sc, gpu, liquid, rows));
    ps.groups.push_back(g);
  }
  ps.power_limit_w = pw.gpu_power_limit_w;
  ps.cpu_load_fraction = pw.cpu_load_fraction;
  ps.pue = pw.pue;
  ps.liquid = liquid;
  ps.supply_c = liquid ? th.coolant_c : th.supply_air_c;
  ps.nodes_per_rack = std::max(1, th.nodes_per_rack);
  ps.gpus_per_node = gpn;
  ps.sockets = cluster.node_template().sockets;  // the same board shape in every group
  ps.rack_cooling_capacity_w = th.rack_cooling_capacity_w;
  ps.iterations = job.iterations;
  ps.periodic_correction = start.periodic_correction;
  ps.thermal_events = clock_feedback_possible(sc);
  ps.gpu_scale = static_cast<double>(job.dp_cp) / job.replicas;
  auto airflow = [&](int local) {
    return static_cast<std::size_t>(local) < th.gpu_airflow_fraction.size() ? th.gpu_airflow_fraction[local] : 1.0;
  };
  const int t = job.tp, d = job.dp_cp;
  std::vector<int> sim_of(static_cast<std::size_t>(cluster.num_gpus()), -1);
  ps.worker_gpus.resize(job.worker_gpus.size());
  for (std::size_t w = 0; w < job.worker_gpus.size(); ++w)
    for (int g : job.worker_gpus[w]) {
      sim_of[static_cast<std::size_t>(g)] = static_cast<int>(ps.gpus.size());
      ps.worker_gpus[w].push_back(static_cast<int>(ps.gpus.size()));
      PowerThermalSetup::Gpu pg;
      pg.global = g;
      pg.worker = static_cast<std::uint32_t>(w);
      pg.actual_node = cluster.node_of(g);
      pg.group = cluster.group_of_node(pg.actual_node);
      pg.rc = base[static_cast<std::size_t>(pg.group)];
      if (th.r_k_per_w > 0) pg.rc.r_k_per_w = th.r_k_per_w;
      if (th.c_j_per_k > 0) pg.rc.c_j_per_k = th.c_j_per_k;
      if (start.no_thermal_slowdown) pg.rc.slowdown_c = std::numeric_limits<double>::infinity();
      if (!liquid) pg.rc.r_k_per_w /= std::pow(airflow(cluster.local_rank(g)), 0.8);
      pg.clock_factor = cluster.clock_factor(g);
      pg.power_limit_w = cluster.power_cap_w(g);
      pg.supply_c = cluster.supply_c(cluster.node_of(g));
      ps.gpus.push_back(pg);
    }
  // Representative of real GPU g = tp_rank + t (data_rank + d stage), d = dp x cp: the same TP
  // rank and stage in the simulated replica standing for its data rank (folding.h).
  auto rep_of = [&](int g) {
    const int k = g % t, r = (g / t) % d, st = g / (t * d);
    const int rep =
        job.folding.replica_ids[static_cast<std::size_t>(job.folding.sim_index[static_cast<std::size_t>(r)])];
    const int index = k + t * (rep + d * st);
    return sim_of[static_cast<std::size_t>(index)];
  };
  ps.rep_node_of_gpu.resize(static_cast<std::size_t>(cluster.num_gpus()));
  for (auto& pg : ps.gpus) pg.stands_for = 0;
  for (int g = 0; g < cluster.num_gpus(); ++g) {
    PowerThermalSetup::Gpu& rep = ps.gpus[static_cast<std::size_t>(rep_of(g))];
    ps.rep_node_of_gpu[static_cast<std::size_t>(g)] = rep.actual_node;
    ++rep.stands_for;
  }
  if (!liquid)
    for (auto& pg : ps.gpus) {
      const auto group = static_cast<std::size_t>(pg.group);
      const GpuSpec& gpu = *cluster.node_groups()[group].gpu;
      const int node_first = cluster.node_of(pg.global) * gpn, l = cluster.local_rank(pg.global);
      for (int u = l % lanes_of[group]; u < l; u += lanes_of[group])
        pg.upstream.emplace_back(rep_of(node_first + u), preheat_k_per_w(gpu, rows_of[group], airflow(u)));
    }
  std::map<std::pair<int, std::vector<int>>, int> kind_index;
  for (int n = 0; n < cluster.num_nodes(); ++n) {
    std::vector<int> members;
    members.reserve(static_cast<std::size_t>(gpn));
    for (int l = 0; l < gpn; ++l) members.push_back(rep_of(n * gpn + l));
    const int group = cluster.group_of_node(n);
    auto [it, added] = kind_index.emplace(std::make_pair(group, members), static_cast<int>(ps.node_kinds.size()));
    if (added) ps.node_kinds.push_back({members, 0, group});
    ++ps.node_kinds[static_cast<std::size_t>(it->second)].count;
    ps.kind_of_node.push_back(it->second);
  }
  for (auto& pg : ps.gpus) pg.node_kind = ps.kind_of_node[static_cast<std::size_t>(pg.actual_node)];
  ps.rack_rise_start_c = start.rack_rise_c;
  for (std::size_t i = 0; i < ps.gpus.size(); ++i) {
    auto& pg = ps.gpus[i];
    double inlet = std::isnan(pg.supply_c) ? ps.supply_c : pg.supply_c;
    const auto rack = static_cast<std::size_t>(pg.actual_node / ps.nodes_per_rack);
    if (!liquid && rack < start.rack_rise_c.size()) inlet += start.rack_rise_c[rack];
    const double idle_w = ps.groups[static_cast<std::size_t>(pg.group)].curve.idle_w;  // its node's GPUs'
    for (const auto& [j, k_per_w] : pg.upstream) inlet += idle_w * k_per_w;
    pg.start_c = i < start.start_c.size() ? start.start_c[i] : inlet + idle_w * pg.rc.r_k_per_w;
    pg.start_throttled = pg.start_c >= pg.rc.slowdown_c;
  }
  return ps;
}

}  // namespace traincast::models
