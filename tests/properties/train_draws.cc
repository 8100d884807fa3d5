// Generated training iterations and the iteration properties (issue 16); the compute model's
// clock property over generated kernels.

#include "tests/properties/train_draws.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "models/compute/compute_model.h"
#include "models/executor/training_run.h"
#include "models/hardware/catalog.h"
#include "models/io/scenario_io.h"
#include "models/power/power_model.h"
#include "sim/trace.h"

namespace traincast::properties {
namespace {

int gpus_per_node(const TrainDraw& d) { return models::find_builtin_node_template(d.node_template).gpus_per_node; }
double tdp_w(const TrainDraw& d) {
  return models::find_gpu(models::find_builtin_node_template(d.node_template).gpu).tdp_w;
}
/// GPUs one behind the other along the chassis airflow (models/power/power_model.h).
int airflow_rows(const TrainDraw& d) {
  const models::NodeTemplate& node = models::find_builtin_node_template(d.node_template);
  return models::node_power_spec(node, models::find_gpu(node.gpu)).airflow_rows;
}

/// Keeps a draw valid after a change: dp from the GPUs, layers and heads divisible, the global
/// batch a multiple of dp x micro-batch with at least pp micro-batches.
TrainDraw normalised(TrainDraw d) {
  const int gpus = d.num_nodes * gpus_per_node(d);
  while (d.tp * d.pp > gpus) (d.pp > 1 ? d.pp : d.tp) /= 2;
  d.dp = gpus / (d.tp * d.pp);
  d.num_layers = std::max(d.num_layers, d.pp);
  d.num_layers -= d.num_layers % d.pp;
  d.num_attention_heads = std::max(d.num_attention_heads, d.tp);
  const int per_step = d.dp * d.micro_batch_size;
  d.global_batch_size = std::max(d.global_batch_size - d.global_batch_size % per_step, per_step * d.pp);
  return d;
}

void integrate_power(const sim::TraceRecorder& trace, double end_s, std::map<int, double>& energy_j) {
  std::map<std::uint32_t, std::vector<const sim::TraceRecorder::Counter*>> by_track;
  const std::vector<std::string>& names = trace.names();
  for (const auto& c : trace.counters())
    if (names[c.name] == "power_w") by_track[c.track].push_back(&c);
  for (auto& [track, samples] : by_track) {
    std::stable_sort(samples.begin(), samples.end(), [](auto* a, auto* b) { return a->at < b->at; });
    double e = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const double t0 = samples[i]->at.seconds();
      const double t1 = i + 1 < samples.size() ? samples[i + 1]->at.seconds() : end_s;
      const double a = std::min(t0, end_s), b = std::min(t1, end_s);
      if (b > a) e += samples[i]->value * (b - a);
    }
    energy_j[trace.tracks()[track].process_id - 1000000] = e;
  }
}

/// Energy = integral of power: each GPU's reported energy against its traced power integrated
/// over the iteration (one iteration simulated: the report's window is [0, iteration]); the job's
/// IT energy against its average power x iteration time, and facility = IT x PUE.
void energy_check(const models::Report& r, const sim::TraceRecorder& trace, TrainOutcome& o) {
  std::map<int, double> traced;
  integrate_power(trace, r.iteration_time_s, traced);
  auto gap = [](double a, double b) { return std::fabs(a - b) / std::max({std::fabs(a), std::fabs(b), 1e-30}); };
  std::ostringstream d;
  // Over several routing draws the report is their mean and the trace the first draw's own
  // timeline (training_run.cc), so only energy = average power x iteration time is checked.
  for (const models::GpuPower& g : r.routing.seeds > 1 ? std::vector<models::GpuPower>{} : r.power.gpus) {
    const auto it = traced.find(g.gpu);
    const double integral = it == traced.end() ? 0.0 : it->second;
    const double e = gap(g.energy_j, integral);
    if (e > o.energy_error) {
      o.energy_error = e;
      d.str("");
      d << "GPU " << g.gpu << ": energy_j " << fmt(g.energy_j) << " J, integral of traced power " << fmt(integral)
        << " J over " << fmt(r.iteration_time_s) << " s";
    }
  }
  const double it_gap = gap(r.power.it_energy_per_iteration_j, r.power.it_average_w * r.iteration_time_s);
  const double fac_gap = gap(r.power.energy_per_iteration_j, r.power.it_energy_per_iteration_j * r.power.pue);
  if (std::max(it_gap, fac_gap) > o.energy_error) {
    o.energy_error = std::max(it_gap, fac_gap);
    d.str("");
    d << "IT energy " << fmt(r.power.it_energy_per_iteration_j) << " J vs " << fmt(r.power.it_average_w) << " W x "
      << fmt(r.iteration_time_s) << " s; facility " << fmt(r.power.energy_per_iteration_j) << " J (PUE "
      << fmt(r.power.pue) << ")";
  }
  if (r.power.gpus.empty()) {
    o.energy_error = 1;
    d << "no per-GPU power in the report";
  }
  o.energy_detail = d.str();
}

std::string describe(const TrainOutcome& o) { return fmt(o.iteration_s * 1e3) + " ms"; }

CheckResult monotone(const std::string& base_what, const TrainDraw& base, const std::string& better_what,
                     const TrainDraw& better) {
  const TrainOutcome a = run_train(base), b = run_train(better);
  CheckResult r;
  const double e = excess(a.iteration_s, b.iteration_s);
  r.detail =
      base_what + ": " + describe(a) + "; " + better_what + ": " + describe(b) + "; " + fmt(e * 100) + " % slower";
  r.violated = e > kIteration;
  return r;
}

CheckResult folded_unfolded(const TrainDraw& d) {
  if (d.dp < 2) return not_applicable();
  TrainDraw u = d;
  u.fold_symmetric = false;
  const TrainOutcome a = run_train(d), b = run_train(u);
  CheckResult r;
  const double e = std::fabs(excess(a.iteration_s, b.iteration_s));
  r.detail = "folded " + describe(a) + ", unfolded " + describe(b) + " (" + fmt(e * 100) + " % apart); peak memory " +
             fmt(a.peak_bytes) + " vs " + fmt(b.peak_bytes) + " B";
  r.violated = e > kIteration || a.peak_bytes != b.peak_bytes;
  return r;
}

/// Physics never answers backwards: one GPU at clock_factor 0.8 never makes the job faster.
/// Where a power cap or the thermal slowdown sets clocks it may, and does: a GPU held at 0.8 also
/// in its memory-bound and communication phases heats less and is held back less in its compute
/// phases (train-0099, train-0174: 280 W caps, 0.6 % faster), so the property applies where neither
/// binds (no cap, no GPU throttled in the nominal run).
CheckResult slower_gpu(const TrainDraw& d) {
  if (d.gpu_power_limit_w > 0 || run_train(d).throttled_gpus > 0) return not_applicable();
  TrainDraw slow = d;
  slow.last_gpu_clock_factor = 0.8;
  return monotone("last GPU at clock_factor 0.8", slow, "all GPUs nominal", d);
}

/// Partial folding: with one GPU at clock_factor 0.8, folded (by class) and unfolded agree.
CheckResult folded_unfolded_slow_gpu(const TrainDraw& d) {
  TrainDraw slow = d;
  slow.last_gpu_clock_factor = 0.8;
  return folded_unfolded(slow);
}

CheckResult memory_monotone(const std::string& what, const TrainDraw& small, const TrainDraw& big) {
  const TrainOutcome a = run_train(small), b = run_train(big);
  CheckResult r;
  r.detail = what + ": peak " + fmt(a.peak_bytes) + " B -> " + fmt(b.peak_bytes) + " B";
  r.violated = b.peak_bytes < a.peak_bytes * (1 - 1e-12);
  return r;
}

CheckResult memory_micro_batch(const TrainDraw& d) {
  TrainDraw big = d;
  big.micro_batch_size *= 2;
  big.global_batch_size *= 2;  // the same micro-batches per pipeline
  return memory_monotone("micro_batch_size " + std::to_string(d.micro_batch_size) + " -> " +
                             std::to_string(big.micro_batch_size) + " (global batch x2)",
                         d, big);
}

CheckResult memory_global_batch(const TrainDraw& d) {
  TrainDraw big = d;
  big.global_batch_size *= 2;
  return memory_monotone(
      "global_batch_size " + std::to_string(d.global_batch_size) + " -> " + std::to_string(big.global_batch_size), d,
      big);
}

/// The draw at its cap (the draw's, or 70 % of TDP) and without one.
std::pair<TrainDraw, TrainDraw> cap_sides(const TrainDraw& d) {
  TrainDraw low = d, high = d;
  low.gpu_power_limit_w = d.gpu_power_limit_w > 0 ? d.gpu_power_limit_w : std::round(0.7 * tdp_w(d));
  high.gpu_power_limit_w = 0;
  return {low, high};
}

/// true when a throttled GPU may breathe air its upstream GPUs heated (air cooling, more than one
/// airflow row) in either run: there the cap also sets the inlet (docs/properties.md).
bool preheat_sets_pace(const TrainDraw& d) {
  if (airflow_rows(d) < 2) return false;
  const auto [low, high] = cap_sides(d);
  return run_train(low).throttled_gpus > 0 || run_train(high).throttled_gpus > 0;
}

CheckResult power_cap(const TrainDraw& d) {
  if (preheat_sets_pace(d)) return not_applicable();
  const auto [low, high] = cap_sides(d);
  return monotone("power cap " + fmt(low.gpu_power_limit_w) + " W", low, "no cap (TDP " + fmt(tdp_w(d)) + " W)", high);
}

/// Where a throttled GPU breathes its upstream GPUs' heat, no cap may be slower only through that
/// heat: the upstream GPUs then draw more power without the cap than with it.
CheckResult power_cap_preheat(const TrainDraw& d) {
  if (!preheat_sets_pace(d)) return not_applicable();
  const auto [low, high] = cap_sides(d);
  const TrainOutcome a = run_train(low), b = run_train(high);
  CheckResult r;
  const double e = excess(a.iteration_s, b.iteration_s);
  r.detail = "power cap " + fmt(low.gpu_power_limit_w) + " W: " + describe(a) + ", upstream GPUs " + fmt(a.upstream_w) +
             " W; no cap: " + describe(b) + ", upstream GPUs " + fmt(b.upstream_w) + " W; " + fmt(e * 100) +
             " % slower";
  r.violated = e > kIteration && !(b.upstream_w > a.upstream_w);
  return r;
}

CheckResult cooling(const TrainDraw& d) {
  TrainDraw warm = d;
  warm.supply_air_c = d.supply_air_c + 10;
  if (d.airflow_fraction < 1.0) {
    TrainDraw full = d;
    full.airflow_fraction = 1.0;
    return monotone("airflow " + fmt(d.airflow_fraction), d, "airflow 1", full);
  }
  return monotone("supply air " + fmt(warm.supply_air_c) + " C", warm, "supply air " + fmt(d.supply_air_c) + " C", d);
}

CheckResult energy(const TrainDraw& d) {
  const TrainOutcome o = run_train(d, true);
  CheckResult r;
  r.detail = o.energy_detail + " (" + fmt(o.energy_error * 100) + " % off)";
  r.violated = o.energy_error > kIteration;
  return r;
}

CheckResult less_oversubscription(const TrainDraw& d) {
  if (d.num_nodes <= d.nodes_per_leaf || d.oversubscription <= 1) return not_applicable();
  TrainDraw better = d;
  better.oversubscription = d.oversubscription - 1;
  return monotone("oversubscription " + fmt(d.oversubscription), d, "oversubscription " + fmt(better.oversubscription),
                  better);
}

CheckResult more_nics(const TrainDraw& d) {
  if (d.num_nodes < 2 || d.node_template.rfind("pcie_", 0) != 0) return not_applicable();
  TrainDraw few = d, many = d;
  const int n = d.nics_per_node > 0 ? d.nics_per_node : models::find_builtin_node_template(d.node_template).nics;
  few.nics_per_node = n >= 8 ? 4 : n;
  many.nics_per_node = n >= 8 ? 8 : 2 * n;
  return monotone(std::to_string(few.nics_per_node) + " NICs", few, std::to_string(many.nics_per_node) + " NICs", many);
}

/// The next faster NIC of the draw's NIC family, "" when none.
std::string faster_nic_name(const TrainDraw& d) {
  static const std::map<std::string, std::string> up{
      {"IB-HDR-200", "IB-NDR-400"}, {"IB-NDR-400", "IB-XDR-800"}, {"RoCE-200GbE", "RoCE-400GbE"}};
  const auto it = up.find(d.nic.empty() ? models::find_builtin_node_template(d.node_template).nic : d.nic);
  return it == up.end() ? "" : it->second;
}

CheckResult faster_nic(const TrainDraw& d) {
  const std::string fast = faster_nic_name(d);
  if (d.num_nodes < 2 || fast.empty()) return not_applicable();
  TrainDraw better = d;
  better.nic = fast;
  const std::string slow = d.nic.empty() ? models::find_builtin_node_template(d.node_template).nic : d.nic;
  return monotone("nic " + slow, d, "nic " + fast, better);
}

/// 1 thread and 2 threads of op-graph generation give the same iteration and memory (every 4th draw).
CheckResult threads(const TrainDraw& d) {
  if (std::stoi(d.id.substr(d.id.rfind('-') + 1)) % 4 != 0) return not_applicable();
  TrainDraw two = d;
  two.threads = 2;
  const TrainOutcome a = run_train(d), b = run_train(two);
  CheckResult r;
  r.detail = "1 thread " + describe(a) + ", 2 threads " + describe(b);
  r.violated = a.iteration_s != b.iteration_s || a.peak_bytes != b.peak_bytes;
  return r;
}

using Sides = std::pair<std::string, std::string>;

struct TrainProperty {
  std::string name;
  CheckResult (*check)(const TrainDraw&);
  /// The --set overrides of the other side (the draw's scenario text is one side).
  Sides (*sides)(const TrainDraw&);
};

std::string set_text(const std::string& field, const std::string& value) { return "--set " + field + "=" + value; }
Sides other_folded(const TrainDraw&) { return {"", set_text("options.fold_symmetric", "false")}; }
Sides other_energy(const TrainDraw&) { return {"--trace T (integrate each GPU's power_w counter)", ""}; }
Sides other_mb(const TrainDraw& d) {
  return {"", set_text("workload.training.micro_batch_size", std::to_string(2 * d.micro_batch_size)) + " " +
                  set_text("workload.training.global_batch_size", std::to_string(2 * d.global_batch_size))};
}
Sides other_gbs(const TrainDraw& d) {
  return {"", set_text("workload.training.global_batch_size", std::to_string(2 * d.global_batch_size))};
}
Sides other_cap(const TrainDraw& d) {
  const double low = d.gpu_power_limit_w > 0 ? d.gpu_power_limit_w : std::round(0.7 * tdp_w(d));
  return {set_text("power.gpu_power_limit_w", fmt(low)), set_text("power.gpu_power_limit_w", "0")};
}
Sides other_cooling(const TrainDraw& d) {
  if (d.airflow_fraction < 1.0) return {"", "(thermal.gpu_airflow_fraction lines removed)"};
  return {set_text("thermal.supply_air_c", fmt(d.supply_air_c + 10)), ""};
}
Sides other_oversub(const TrainDraw& d) {
  return {"", set_text("cluster.fabric.oversubscription", fmt(d.oversubscription - 1))};
}
Sides other_nics(const TrainDraw& d) {
  const int n = d.nics_per_node > 0 ? d.nics_per_node : models::find_builtin_node_template(d.node_template).nics;
  return {set_text("cluster.nics_per_node", std::to_string(n >= 8 ? 4 : n)),
          set_text("cluster.nics_per_node", std::to_string(n >= 8 ? 8 : 2 * n))};
}
Sides other_nic(const TrainDraw& d) { return {"", set_text("cluster.nic", faster_nic_name(d))}; }
Sides other_threads(const TrainDraw&) { return {"", set_text("options.threads", "2")}; }
Sides other_slow_gpu(const TrainDraw&) {
  return {"cluster { overrides { select: <last GPU> clock_factor: 0.8 } }", "(no overrides)"};
}
Sides other_folded_slow(const TrainDraw&) {
  return {"cluster { overrides { select: <last GPU> clock_factor: 0.8 } }",
          "the same " + set_text("options.fold_symmetric", "false")};
}

const std::vector<TrainProperty>& train_properties() {
  static const std::vector<TrainProperty> p{
      {"folded_equals_unfolded", folded_unfolded, other_folded},
      {"energy_integral_of_power", energy, other_energy},
      {"memory_micro_batch_grows", memory_micro_batch, other_mb},
      {"memory_global_batch_grows", memory_global_batch, other_gbs},
      {"higher_power_cap", power_cap, other_cap},
      {"higher_power_cap_preheat", power_cap_preheat, other_cap},
      {"better_cooling", cooling, other_cooling},
      {"less_oversubscription", less_oversubscription, other_oversub},
      {"more_nics", more_nics, other_nics},
      {"faster_nic", faster_nic, other_nic},
      {"same_with_2_threads", threads, other_threads},
      {"slower_gpu_never_faster", slower_gpu, other_slow_gpu},
      {"folded_equals_unfolded_slow_gpu", folded_unfolded_slow_gpu, other_folded_slow},
  };
  return p;
}

std::vector<TrainDraw> smaller_train_draws(const TrainDraw& d) {
  std::vector<TrainDraw> out;
  auto add = [&](TrainDraw c) {
    c = normalised(c);
    if (scenario_text(c) != scenario_text(d)) out.push_back(c);
  };
  TrainDraw c = d;
  if (d.num_nodes > 1) {
    c.num_nodes = d.num_nodes / 2;
    add(c);
  }
  c = d;
  if (d.num_layers > d.pp) {
    c.num_layers = d.num_layers / 2;
    add(c);
  }
  c = d;
  c.global_batch_size = d.global_batch_size / 2;
  add(c);
  c = d;
  if (d.micro_batch_size > 1) {
    c.micro_batch_size = d.micro_batch_size / 2;
    c.global_batch_size = d.global_batch_size / 2;
    add(c);
  }
  for (int* field : {&c.pp, &c.tp}) {
    c = d;
    if (*field > 1) {
      *field /= 2;
      add(c);
    }
  }
  c = d;
  if (d.hidden_size > 256) {
    c.hidden_size = d.hidden_size / 2;
    add(c);
  }
  c = d;
  if (d.seq_length > 256) {
    c.seq_length = d.seq_length / 2;
    add(c);
  }
  c = d;
  c.recompute = "none";
  c.zero_stage = 0;
  add(c);
  return out;
}

}  // namespace

std::string scenario_text(const TrainDraw& d) {
  std::ostringstream o;
  o << "# property draw " << d.id << "\nname: \"" << d.id << "\"\ncluster {\n  node_template: \"" << d.node_template
    << "\"\n  num_nodes: " << d.num_nodes << "\n";
  if (!d.nic.empty()) o << "  nic: \"" << d.nic << "\"\n";
  if (d.nics_per_node > 0) o << "  nics_per_node: " << d.nics_per_node << "\n";
  if (d.last_gpu_clock_factor < 1.0)
    o << "  overrides { select: \"node" << d.num_nodes - 1 << "/gpu" << gpus_per_node(d) - 1
      << "\" clock_factor: " << fmt(d.last_gpu_clock_factor) << " }\n";
  if (d.num_nodes > 1)
    o << "  fabric { kind: fat_tree nodes_per_leaf: " << d.nodes_per_leaf
      << " oversubscription: " << fmt(d.oversubscription) << " }\n";
  o << "}\nworkload {\n  model { num_layers: " << d.num_layers << " hidden_size: " << d.hidden_size
    << " num_attention_heads: " << d.num_attention_heads << " vocab_size: " << d.vocab_size
    << " seq_length: " << d.seq_length << " }\n";
  o << "  parallel { tp: " << d.tp << " pp: " << d.pp << " dp: " << d.dp << " zero_stage: " << d.zero_stage << " }\n";
  o << "  training { global_batch_size: " << d.global_batch_size << " micro_batch_size: " << d.micro_batch_size
    << " recompute: " << d.recompute << " }\n}\n";
  if (d.gpu_power_limit_w > 0) o << "power { gpu_power_limit_w: " << fmt(d.gpu_power_limit_w) << " }\n";
  o << "thermal { supply_air_c: " << fmt(d.supply_air_c);
  if (d.airflow_fraction < 1.0)
    for (int i = 0; i < gpus_per_node(d); ++i) o << " gpu_airflow_fraction: " << fmt(d.airflow_fraction);
  o << " }\n";
  if (!d.fold_symmetric || d.threads != 1)
    o << "options { fold_symmetric: " << (d.fold_symmetric ? "true" : "false") << " threads: " << d.threads << " }\n";
  return o.str();
}

TrainOutcome run_train(const TrainDraw& d, bool energy) {
  static std::map<std::string, TrainOutcome> cache;
  const std::string text = scenario_text(d);
  const std::string key = (energy ? "E" : "-") + text;
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  const models::Scenario sc = io::load_scenario_text(text, d.id + ".textproto", io::Format::text);
  sim::TraceRecorder trace;
  const models::Report r = models::simulate_training(sc, energy ? &trace : nullptr);
  TrainOutcome o;
  o.iteration_s = r.iteration_time_s;
  o.peak_bytes = r.memory.peak_bytes_per_gpu;
  o.throttled_gpus = r.thermal.throttled_gpus;
  const int gpn = gpus_per_node(d), rows = airflow_rows(d);
  double upstream_w = 0;
  int upstream = 0;
  for (const models::GpuPower& g : r.power.gpus)
    if (rows > 1 && g.gpu % gpn < gpn - gpn / rows) {
      upstream_w += g.average_w;
      ++upstream;
    }
  o.upstream_w = upstream > 0 ? upstream_w / upstream : 0.0;
  if (energy) energy_check(r, trace, o);
  if (cache.size() > 256) cache.clear();
  cache.emplace(key, o);
  if (energy) cache.emplace("-" + text, o);  // the same run answers the plain question too
  return o;
}

TrainDraw draw_train(int index) {
  Rng rng = draw_rng("train", index);
  TrainDraw d;
  d.id = draw_id("train", index);
  d.node_template = rng.pick(
      std::vector<std::string>{"dgx_h100", "dgx_a100", "pcie_8gpu_2socket", "pcie_8gpu_2socket_h100_nvlink_bridge"});
  d.num_nodes = rng.pick(std::vector<int>{1, 1, 2, 2, 4});
  if (d.num_nodes > 1) {
    d.nodes_per_leaf = rng.pick(std::vector<int>{1, 2});
    d.oversubscription = rng.pick(std::vector<double>{1.0, 2.0, 3.0});
    if (d.node_template.rfind("pcie_", 0) == 0) d.nics_per_node = rng.pick(std::vector<int>{2, 4, 8});
  }
  d.num_layers = rng.pick(std::vector<int>{4, 8});
  d.hidden_size = rng.pick(std::vector<int>{512, 1024, 2048});
  d.num_attention_heads = rng.pick(std::vector<int>{8, 16});
  d.seq_length = rng.pick(std::vector<int>{512, 1024, 2048});
  d.tp = rng.pick(std::vector<int>{1, 2, 4, 8});
  d.pp = rng.pick(std::vector<int>{1, 2, 4});
  d.micro_batch_size = rng.pick(std::vector<int>{1, 2, 4});
  d.zero_stage = rng.uniform(0, 1);
  d.recompute = rng.pick(std::vector<std::string>{"none", "none", "selective", "full"});
  if (rng.chance(0.3)) d.gpu_power_limit_w = std::round(rng.pick(std::vector<double>{0.65, 0.8}) * tdp_w(d));
  d.supply_air_c = rng.pick(std::vector<double>{20, 25, 30, 35});
  if (rng.chance(0.3)) d.airflow_fraction = rng.pick(std::vector<double>{0.5, 0.7});
  d = normalised(d);
  d.global_batch_size = d.dp * d.micro_batch_size * d.pp * rng.uniform(1, 2);
  return d;
}

Tally run_train_group(int count) {
  Tally tally;
  const std::string only = only_draw();
  for (int i = 0; i < count; ++i) {
    const TrainDraw d = draw_train(i);
    if (!only.empty() && only != d.id) continue;
    if (!only.empty()) std::printf("%s", scenario_text(d).c_str());
    for (const TrainProperty& p : train_properties()) {
      CheckResult r;
      try {
        r = p.check(d);
      } catch (const std::exception& e) {
        r.violated = true;
        r.detail = std::string("threw: ") + e.what();
      }
      tally.count(p.name, r);
      if (!r.violated) continue;
      const std::function<std::vector<TrainDraw>(const TrainDraw&)> smaller = smaller_train_draws;
      const std::function<bool(const TrainDraw&)> fails = [&](const TrainDraw& c) {
        try {
          return p.check(c).violated;
        } catch (const std::exception&) {
          return false;
        }
      };
      const TrainDraw s = shrink(d, smaller, fails, 30);
      Violation v;
      v.draw = d.id;
      v.property = p.name;
      v.detail = r.detail;
      try {
        v.shrunk = p.check(s).detail;
      } catch (const std::exception& e) {
        v.shrunk = std::string("threw: ") + e.what();
      }
      v.scenario = scenario_text(s);
      const auto [a, b] = p.sides(s);
      v.reproduce = "traincast run FILE " + a;
      if (!b.empty()) v.reproduce += "   vs   traincast run FILE " + b;
      tally.add_violation(std::move(v));
    }
  }
  return tally;
}

Tally run_clock_group(int count) {
  Tally tally;
  const std::vector<std::string> gpus = models::gpu_names();
  const std::string only = only_draw();
  for (int i = 0; i < count; ++i) {
    Rng rng = draw_rng("clock", i);
    const std::string id = draw_id("clock", i);
    if (!only.empty() && only != id) continue;
    const models::GpuSpec& gpu = models::find_gpu(rng.pick(gpus));
    const models::ComputeParams params = models::default_compute_params(gpu);
    const models::Precision prec = gpu.peak_bf16_flops > 0 ? models::Precision::bf16 : models::Precision::fp16;
    models::Kernel k;
    k.kind = rng.pick(std::vector<models::KernelKind>{
        models::KernelKind::gemm, models::KernelKind::gemm, models::KernelKind::attention_forward,
        models::KernelKind::attention_backward, models::KernelKind::elementwise, models::KernelKind::norm});
    k.m = std::ldexp(1.0, rng.uniform(4, 15));
    k.n = std::ldexp(1.0, rng.uniform(4, 15));
    k.k = std::ldexp(1.0, rng.uniform(4, 15));
    k.flops = 2 * k.m * k.n * k.k;
    k.bytes = 2 * (k.m * k.k + k.k * k.n + k.m * k.n);
    CheckResult r;
    double prev = models::kernel_seconds(k, gpu, params, prec, 0.3);
    for (double clock = 0.4; clock <= 1.0001 && !r.violated; clock += 0.1) {
      const double t = models::kernel_seconds(k, gpu, params, prec, std::min(clock, 1.0));
      if (t > prev * (1 + 1e-12)) {
        r.violated = true;
        r.detail = gpu.name + " kernel m=" + fmt(k.m) + " n=" + fmt(k.n) + " k=" + fmt(k.k) + ": clock " + fmt(clock) +
                   " takes " + fmt(t) + " s > " + fmt(prev) + " s at the clock before";
      }
      prev = t;
    }
    tally.count("higher_clock_kernel", r);
    if (r.violated) tally.add_violation(Violation{id, "higher_clock_kernel", r.detail, r.detail, "", ""});
  }
  return tally;
}

}  // namespace traincast::properties
