// What each cluster.overrides entry did in a run. See override_effects.h.

#include "models/executor/override_effects.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "models/executor/training_run.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/override_overlaps.h"
#include "models/reliability/worker_threads.h"

namespace traincast::models {
namespace {

/// "node<M>.<suffix>" -> (M, ".<suffix>"); nullopt for any other name (switch links, a torus
/// link between two nodes, which has no like on another node).
std::optional<std::pair<int, std::string_view>> node_resource(std::string_view name) {
  if (!name.starts_with("node")) return std::nullopt;
  int m = 0;
  const char* first = name.data() + 4;
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(first, last, m);
  if (ec != std::errc{} || end == first || end == last || *end != '.') return std::nullopt;
  const std::string_view suffix(end, static_cast<std::size_t>(last - end));
  if (suffix.find("->") != std::string_view::npos) return std::nullopt;
  return std::pair<int, std::string_view>{m, suffix};
}

/// NIC and link entries: traffic, utilisation, and the peers' traffic (one pass over the names),
/// peers only on `simulated_nodes` (fabric slots of simulated replicas' GPUs; a folded replica's
/// elements carry the collectives over every replica but not its own traffic).
void fill_traffic(const sim::FlowNetwork& net, std::int64_t end_ns, int iterations,
                  const std::vector<ResolvedSelector>& sel, const std::vector<ActingElements>& acting,
                  const std::unordered_set<int>& simulated_nodes, OverridesReport& out) {
  const double run_s = static_cast<double>(end_ns) * 1e-9;
  const double per_iteration = 1.0 / std::max(1, iterations);
  std::unordered_set<sim::ResourceId> overridden;
  for (const ResolvedSelector& s : sel) overridden.insert(s.resources.begin(), s.resources.end());
  // suffix -> entries naming a resource of that suffix on their node
  std::unordered_map<std::string, std::vector<std::size_t>> by_suffix;
  std::vector<int> own_node(sel.size(), -1);
  for (std::size_t i = 0; i < sel.size(); ++i) {
    OverrideEffectReport& e = out.entries[i];
    if (!sel[i].resources.empty()) e.acts = !acting[i].links.empty();
    for (sim::ResourceId id : sel[i].resources) {
      const sim::ResourceStats st = net.stats(id);
      e.bytes_per_iteration += st.bytes_carried * per_iteration;
      const double cap = net.capacity(id);
      if (cap > 0 && run_s > 0) e.utilization = std::max(e.utilization, st.bytes_carried / (cap * run_s));
      const auto nr = node_resource(net.resource_name(id));
      if (!nr) continue;
      if (!simulated_nodes.contains(nr->first)) e.folded = true;
      if (own_node[i] >= 0 && own_node[i] != nr->first) continue;
      own_node[i] = nr->first;
      by_suffix[std::string(nr->second)].push_back(i);
    }
  }
  if (by_suffix.empty()) return;
  std::vector<std::map<int, double>> peer_bytes(sel.size());  // entry -> node -> bytes per iteration
  for (sim::ResourceId id = 0; id < net.num_resources(); ++id) {
    const auto nr = node_resource(net.resource_name(id));
    if (!nr || !simulated_nodes.contains(nr->first)) continue;
    const auto it = by_suffix.find(std::string(nr->second));
    if (it == by_suffix.end() || overridden.contains(id)) continue;
    for (std::size_t i : it->second)
      if (nr->first != own_node[i]) peer_bytes[i][nr->first] += net.stats(id).bytes_carried * per_iteration;
  }
  for (std::size_t i = 0; i < sel.size(); ++i) {
    const std::optional<SelectorNodes> sn = selector_nodes(out.entries[i].select);
    if (peer_bytes[i].empty() || !sn) continue;
    std::pair<int, double> best{-1, -1.0};
    for (const auto& [node, bytes] : peer_bytes[i])
      if (bytes > best.second) best = {node, bytes};
    out.entries[i].peer = "node" + std::to_string(best.first) + sn->rest;
    out.entries[i].peer_bytes_per_iteration = best.second;
  }
}

/// GPU and node entries: clocks, straggler, temperatures from the power and thermal reports, over
/// the GPUs each entry acts on; `simulated_gpus`: the simulated replicas' GPUs.
void fill_gpus(const Cluster& cluster, const std::vector<ResolvedSelector>& sel,
               const std::vector<ActingElements>& acting, const std::vector<std::vector<int>>& simulated_worker_gpus,
               const std::unordered_set<int>& simulated_gpus, Report& r) {
  std::unordered_map<int, const GpuPower*> power;
  for (const GpuPower& g : r.power.gpus) power.emplace(g.gpu, &g);
  // The simulated worker (TP group) of each simulated GPU.
  std::unordered_map<int, std::size_t> worker_of;
  for (std::size_t w = 0; w < simulated_worker_gpus.size(); ++w)
    for (int g : simulated_worker_gpus[w]) worker_of.emplace(g, w);
  const auto wait_of = [&](int g) {
    const auto p = power.find(g);
    return p == power.end() ? 0.0 : p->second->compute_wait_s;
  };
  std::unordered_map<int, const GpuThermal*> thermal;
  for (const GpuThermal& g : r.thermal.gpus) thermal.emplace(g.gpu, &g);
  const std::vector<ElementOverride>& ovs = cluster.spec().overrides;
  for (std::size_t i = 0; i < sel.size(); ++i) {
    if (sel[i].gpus.empty()) continue;
    OverrideEffectReport& e = r.overrides.entries[i];
    const bool node_entry = ovs[i].supply_c.has_value();
    // The GPUs it acts on: override_acting_elements gives GPUs, or nodes for supply_c.
    std::vector<int> gpus;
    for (int g : sel[i].gpus)
      if (std::binary_search(acting[i].ids.begin(), acting[i].ids.end(), node_entry ? cluster.node_of(g) : g))
        gpus.push_back(g);
    e.acts = !gpus.empty();
    std::unordered_set<int> waiting;  // peers counted in e.peers_waiting
    e.folded = e.acts && std::none_of(gpus.begin(), gpus.end(), [&](int g) { return simulated_gpus.contains(g); });
    for (int g : gpus) {
      if (r.straggler.found && r.straggler.gpu == g) e.straggler = true;
      if (node_entry) {
        if (const auto t = thermal.find(g); t != thermal.end()) {
          e.hottest_gpu_c = std::max(e.hottest_gpu_c, t->second->average_c);
          e.throttled_time_fraction = std::max(e.throttled_time_fraction, t->second->throttled_time_fraction);
        }
        continue;
      }
      const auto p = power.find(g);
      if (p == power.end()) continue;
      // Its TP group's other GPUs that waited for it (it sets the pace: it waited for none).
      if (const auto w = worker_of.find(g); w != worker_of.end() && p->second->compute_wait_s <= 0)
        for (int peer : simulated_worker_gpus[w->second])
          if (peer != g && wait_of(peer) > 0 && !std::binary_search(acting[i].ids.begin(), acting[i].ids.end(), peer) &&
              waiting.insert(peer).second) {
            ++e.peers_waiting;
            e.peers_wait_s = std::max(e.peers_wait_s, wait_of(peer));
          }
      const double boost = cluster.gpu_spec(g).boost_clock_mhz;
      const double mhz = p->second->compute_clock_fraction_mean * boost;
      if (e.sm_clock_mhz == 0.0 || mhz < e.sm_clock_mhz) {
        e.sm_clock_mhz = mhz;
        e.boost_clock_mhz = boost;
      }
    }
  }
}

}  // namespace

void report_override_effects(const Scenario& sc, const Cluster& cluster, const sim::FlowNetwork& net,
                             std::int64_t end_ns, int iterations,
                             const std::vector<std::vector<int>>& simulated_worker_gpus, Report& r) {
  const std::vector<ElementOverride>& ovs = sc.cluster.overrides;
  r.overrides.entries.clear();
  if (ovs.empty()) return;
  std::vector<ResolvedSelector> sel(ovs.size());
  for (std::size_t i = 0; i < ovs.size(); ++i) {
    OverrideEffectReport e;
    e.index = static_cast<int>(i);
    e.select = ovs[i].select;
    e.setting = override_setting(ovs[i]);
    r.overrides.entries.push_back(std::move(e));
    if (ovs[i].missing) continue;  // its node is drained: the `drained` line names it
    // The cluster resolved every entry when it was built (Cluster::apply_overrides refuses one
    // naming nothing), so this cannot throw here.
    sel[i] = resolve_selector(cluster, ovs[i].select);
  }
  std::unordered_set<int> simulated_gpus, simulated_nodes;
  for (const std::vector<int>& gpus : simulated_worker_gpus)
    for (int g : gpus) {
      simulated_gpus.insert(g);
      simulated_nodes.insert(cluster.fabric_slot(cluster.node_of(g)));
    }
  const std::vector<ActingElements> acting = override_acting_elements(cluster, ovs);
  fill_traffic(net, end_ns, iterations, sel, acting, simulated_nodes, r.overrides);
  fill_gpus(cluster, sel, acting, simulated_worker_gpus, simulated_gpus, r);
}

std::optional<Scenario> without_acting_overrides(const Scenario& sc) {
  Scenario out = sc;
  std::vector<ElementOverride>& ovs = out.cluster.overrides;
  const auto acting = [](const ElementOverride& o) { return !o.missing; };
  if (std::none_of(ovs.begin(), ovs.end(), acting)) return std::nullopt;
  std::erase_if(ovs, acting);
  return out;
}

namespace {

/// r's cost against the nominal job's iteration time.
void set_cost(double nominal_iteration_s, Report& r) {
  r.overrides.cost_known = true;
  r.overrides.cost_s = r.iteration_time_s - nominal_iteration_s;
  r.overrides.cost_fraction = nominal_iteration_s > 0 ? r.overrides.cost_s / nominal_iteration_s : 0.0;
}

/// Calls body(i) for i in [0, n) on options.threads (worker_threads.h) and rethrows the exception
/// of the lowest i that threw, whatever order they ran in, so the error a user sees never depends
/// on the thread count.
template <class Body>
void run_each_rethrowing_first(int threads, std::size_t n, const Body& body) {
  std::vector<std::exception_ptr> errors(n);
  for_each_index(threads, n, [&](std::size_t i) {
    try {
      body(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

/// A switch link at a bandwidth_factor keeps the flows static routing gives it, where a failed
/// one's move to the other up-links: say what failing it would cost (the first kFailedRuns such
/// entries that act; a link the routing cannot fail, e.g. adaptive's pooled up-links, is skipped).
/// The runs are independent of each other: side by side on options.threads.
void add_failed_link_costs(const Scenario& sc, double nominal_iteration_s, Report& r) {
  constexpr std::size_t kFailedRuns = 4;
  std::vector<std::size_t> links;
  for (std::size_t i = 0; i < sc.cluster.overrides.size() && links.size() < kFailedRuns; ++i) {
    const ElementOverride& o = sc.cluster.overrides[i];
    if (i >= r.overrides.entries.size() || !(o.bandwidth_factor > 0) || selector_nodes(o.select).has_value()) continue;
    if (r.overrides.entries[i].acts) links.push_back(i);
  }
  if (links.empty()) return;
  std::vector<std::optional<double>> failed_s(links.size());
  with_worker_threads(sc.options.threads, [&] {
    run_each_rethrowing_first(sc.options.threads, links.size(), [&](std::size_t k) {
      Scenario failed = sc;
      failed.cluster.overrides[links[k]].bandwidth_factor = 0.0;
      failed.cluster.overrides[links[k]].failed = true;
      try {
        failed_s[k] = simulate_training(failed).iteration_time_s;
      } catch (const std::invalid_argument&) {
        // the routing or topology cannot fail this link: nothing to say
      }
    });
  });
  for (std::size_t k = 0; k < links.size(); ++k) {
    if (!failed_s[k]) continue;
    OverrideEffectReport& e = r.overrides.entries[links[k]];
    e.failed_instead_known = true;
    e.failed_instead_cost_s = *failed_s[k] - nominal_iteration_s;
  }
}

}  // namespace

void add_override_cost(const Scenario& sc, Report& r) {
  const std::optional<Scenario> base = without_acting_overrides(sc);
  if (!base) return;
  const double nominal_s = simulate_training(*base).iteration_time_s;
  set_cost(nominal_s, r);
  add_failed_link_costs(sc, nominal_s, r);
}

Report simulate_training_with_override_cost(const Scenario& sc, sim::TraceRecorder* trace) {
  const std::optional<Scenario> base = without_acting_overrides(sc);
  if (!base) return simulate_training(sc, trace);
  // The job and the job without its overrides are independent simulations: side by side (the
  // job's error first if both throw). Each is deterministic alone, so the report is the same
  // bytes for any thread count.
  Report r;
  double nominal_s = 0;
  with_worker_threads(sc.options.threads, [&] {
    run_each_rethrowing_first(sc.options.threads, 2, [&](std::size_t i) {
      if (i == 0) {
        r = simulate_training(sc, trace);
      } else {
        nominal_s = simulate_training(*base).iteration_time_s;
      }
    });
  });
  set_cost(nominal_s, r);
  add_failed_link_costs(sc, nominal_s, r);
  return r;
}

}  // namespace traincast::models
