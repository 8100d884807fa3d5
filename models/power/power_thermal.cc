#include "models/power/power_thermal.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>

namespace traincast::models {

namespace {
constexpr double kNsToS = 1e-9;
using WindowPointT = PowerThermalModel::WindowPoint;

/// Below this [K], a window point that lies under the chord of two others is kept (see
/// push_window_point): far above the rounding of temp + corr x weight (about 1e-14 K at 100 C,
/// plus |corr| x 2.2e-16, so exact to |corr| < 1e9 K), and far below what one event moves a
/// GPU's temperature.
constexpr double kWindowChordMarginK = 1e-6;

/// exp(-(t - t0) / tau): the weight of the periodic correction at since_start_ns after the
/// window start (finish() adds corr x weight to the point's temperature).
double window_weight(std::int64_t since_start_ns, double tau_s) {
  return std::exp(-static_cast<double>(since_start_ns) * kNsToS / tau_s);
}

/// Appends a point to a GPU's window series, first dropping those the new one shows cannot hold
/// the corrected peak. finish() reads the series only for max over points of temp + corr x
/// weight, corr known only then: each point is a line in corr, and only lines on the upper
/// envelope can be the maximum, whatever corr is. The weights fall with time (tau > 0), so the
/// points come in order of falling weight, and the envelope is the upper convex hull of the
/// (weight, temp) points, kept here as a monotone chain (Andrew 1979): the last point b goes
/// when it lies more than kWindowChordMarginK below the chord from the one before it, a, to the
/// new one, c. Then for every corr, a or c gives at least b's value plus the margin, so b's
/// computed value (off by far less than the margin) is below theirs: the maximum finish()
/// computes is unchanged, bit for bit. b also goes when it is no higher than a and c (a valley:
/// a dominates it for corr >= 0, c for corr <= 0, rounding included, as the weights are
/// ordered). What is left is the hull's vertices plus points within the margin of a chord: a
/// handful per window, not one per event. points[0] is the window start.
/// Whether a and b are the same double, bit for bit (-0.0 is not 0.0; a NaN is itself).
bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

void push_window_point(std::vector<WindowPointT>& points, const WindowPointT& c) {
  while (points.size() >= 2) {
    const WindowPointT& a = points[points.size() - 2];
    const WindowPointT& b = points.back();
    bool drop = b.temp_c <= a.temp_c && b.temp_c <= c.temp_c;
    if (!drop) {
      const double span = a.weight - c.weight;
      const double chord_c =
          span > 0 ? a.temp_c + (c.temp_c - a.temp_c) * ((a.weight - b.weight) / span) : std::max(a.temp_c, c.temp_c);
      drop = b.temp_c < chord_c - kWindowChordMarginK;
    }
    if (!drop) break;
    points.pop_back();
  }
  points.push_back(c);
}
}  // namespace

PowerThermalModel::PowerThermalModel(sim::Simulator& sim, PowerThermalSetup setup, PowerThermalRole role)
    : sim_(sim), s_(std::move(setup)), role_(role) {
  const int n = static_cast<int>(s_.gpus.size());
  window_open_ = s_.iterations <= 1;
  g_.resize(static_cast<std::size_t>(n));
  w_.resize(s_.worker_gpus.size());
  k_.resize(s_.node_kinds.size());
  kind_dirty_.assign(s_.node_kinds.size(), 0);
  kinds_of_gpu_.resize(static_cast<std::size_t>(n));
  downstream_.resize(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < s_.node_kinds.size(); ++k)
    for (int i : s_.node_kinds[k].gpus)
      if (i >= 0 && (kinds_of_gpu_[i].empty() || kinds_of_gpu_[i].back() != static_cast<int>(k)))
        kinds_of_gpu_[i].push_back(static_cast<int>(k));
  // Only GPUs of other workers: recompute_worker advances the worker's own GPUs and sets their
  // inlets itself, so a same-worker entry only repeated that work (with the same values).
  for (int i = 0; i < n; ++i)
    for (const auto& [j, k_per_w] : s_.gpus[i].upstream)
      if (s_.gpus[j].worker != s_.gpus[i].worker) downstream_[j].push_back(i);
  const int racks = static_cast<int>((s_.kind_of_node.size() + s_.nodes_per_rack - 1) / s_.nodes_per_rack);
  rack_rise_ = s_.rack_rise_start_c;
  rack_rise_.resize(static_cast<std::size_t>(racks), 0.0);
  // Initial state: idle, at the start temperature.
  for (int i = 0; i < n; ++i) {
    GpuState& st = g_[i];
    st.power_w = curve_of(i).idle_w;
    st.temp_c = s_.gpus[i].start_c;
    st.throttled = s_.gpus[i].start_throttled;
    st.worker = s_.gpus[i].worker;
    st.rc = s_.gpus[i].rc;
    st.clock_factor = s_.gpus[i].clock_factor;
    st.own_power_limit_w = s_.gpus[i].power_limit_w;
    st.supply_c = std::isnan(s_.gpus[i].supply_c) ? s_.supply_c : s_.gpus[i].supply_c;
    st.rack = static_cast<std::size_t>(s_.gpus[i].actual_node / s_.nodes_per_rack);
    st.upstream = &s_.gpus[i].upstream;
    st.peak_c = st.temp_c;
    st.window_start_c = st.temp_c;
    st.window_peak_c = st.temp_c;
    if (s_.periodic_correction && window_open_) st.window_points.push_back({0, st.temp_c, 1.0});
  }
  for (int i = 0; i < n; ++i) g_[i].inlet_c = inlet_of(i);
  for (std::size_t k = 0; k < k_.size(); ++k) {
    double sum = 0;
    for (int i : s_.node_kinds[k].gpus)
      sum += i >= 0 ? g_[i].power_w : s_.groups[static_cast<std::size_t>(s_.node_kinds[k].group)].curve.idle_w;
    k_[k].gpu_w = sum;
    k_[k].power_w = node_ac_w(static_cast<int>(k), sum);
  }
  if (s_.trace != nullptr) {
    power_name_ = s_.trace->name("power_w");
    temp_name_ = s_.trace->name("temperature_c");
    for (int i = 0; i < n; ++i) {
      const std::string proc = "GPU " + std::to_string(s_.gpus[i].global) + " power/thermal";
      const std::int32_t pid = 1000000 + s_.gpus[i].global;
      power_track_.push_back(s_.trace->track(pid, proc, 0, "power"));
      temp_track_.push_back(s_.trace->track(pid, proc, 1, "temperature"));
      counters(i);
    }
  }
  clock_memo_.resize(s_.groups.size() * kNumActivities);
  if (role_ == PowerThermalRole::speeds_only) {
    clock_keys_.resize(s_.worker_gpus.size());
    for (std::size_t w = 0; w < s_.worker_gpus.size(); ++w)
      for (int i : s_.worker_gpus[w]) {
        const std::pair<double, double> key{g_[i].own_power_limit_w, g_[i].clock_factor};
        if (std::find(clock_keys_[w].begin(), clock_keys_[w].end(), key) == clock_keys_[w].end())
          clock_keys_[w].push_back(key);
      }
  }
  for (int i = 0; i < n; ++i) {
    schedule_threshold(i);
    if (s_.gpus[i].clock_factor < 1.0) clock_capped_ = true;
  }
}

double PowerThermalModel::node_ac_w(int k, double gpu_w) const {
  const PowerThermalSetup::Group& group = s_.groups[static_cast<std::size_t>(s_.node_kinds[k].group)];
  const NodePowerSpec& n = group.node;
  const double heat = gpu_w + n.cpu_w_per_socket * s_.cpu_load_fraction * s_.sockets + n.other_w;
  const double design_heat_w = group.curve.tdp_w * static_cast<double>(s_.node_kinds[k].gpus.size());
  return (heat + fan_power_w(n, gpu_w, design_heat_w)) / n.psu_efficiency;
}

Activity PowerThermalModel::activity_of(const WorkerState& w) const {
  if (w.compute_busy) return w.compute;
  return w.comm_busy != 0 ? Activity::comm : Activity::idle;
}

void PowerThermalModel::advance_kind(int k, std::int64_t now) {
  KindState& ks = k_[k];
  if (now <= ks.last_ns) return;
  const double dt = static_cast<double>(now - ks.last_ns) * kNsToS;
  ks.energy_j += ks.power_w * dt;
  ks.peak_w = std::max(ks.peak_w, ks.power_w);
  const NodePowerSpec& node = node_of_kind(k);
  if (node.psu_count > 0 && ks.power_w > node.redundant_capacity_w()) {
    if (ks.first_overload_s < 0) ks.first_overload_s = static_cast<double>(ks.last_ns) * kNsToS;
    ks.overload_ns += now - ks.last_ns;
  }
  ks.last_ns = now;
}

void PowerThermalModel::account_clock(int i, std::int64_t now) {
  GpuState& st = g_[i];
  if (now <= st.clock_since_ns) return;
  if (w_[st.worker].compute_busy) {
    const auto busy_ns = static_cast<double>(now - st.clock_since_ns);
    st.compute_ns += busy_ns;
    st.compute_clock_ns += st.clock * busy_ns;
    st.wait_ns += st.wait_share * busy_ns;
  }
  st.clock_since_ns = now;
}

void PowerThermalModel::advance_gpu(int i, std::int64_t now) {
  GpuState& st = g_[i];
  if (now <= st.last_ns) return;
  const double dt = static_cast<double>(now - st.last_ns) * kNsToS;
  const ThermalRc& rc = st.rc;
  st.energy_j += st.power_w * dt;
  st.peak_w = std::max(st.peak_w, st.power_w);
  st.min_clock = std::min(st.min_clock, st.clock);
  if (st.throttled) {
    st.temp_integral += st.temp_c * dt;
    st.throttled_ns += now - st.last_ns;
  } else {
    const Exponentials& e = exponentials(-dt / rc.tau_s());
    st.temp_integral += temperature_integral_expm1(rc, st.temp_c, st.power_w, st.inlet_c, dt, e.expm1_x);
    const double end = temperature_after_decay(rc, st.temp_c, st.power_w, st.inlet_c, e.exp_x);
    // Between events T moves monotonically toward the steady state: the peak is at an end.
    st.temp_c = end;
    st.peak_c = std::max(st.peak_c, end);
    st.window_peak_c = std::max(st.window_peak_c, end);
    if (s_.periodic_correction && window_open_) {
      const std::int64_t since_ns = now - window_start_ns_;
      if (since_ns != weight_memo_.since_ns || !same_bits(rc.tau_s(), weight_memo_.tau_s))
        weight_memo_ = {since_ns, rc.tau_s(), window_weight(since_ns, rc.tau_s())};
      push_window_point(st.window_points, {now, end, weight_memo_.weight});
    }
  }
  st.last_ns = now;
}

const PowerThermalModel::Exponentials& PowerThermalModel::exponentials(double x) {
  if (!same_bits(x, exp_memo_.x)) exp_memo_ = {x, std::exp(x), std::expm1(x)};
  return exp_memo_;
}

void PowerThermalModel::counters(int i) {
  if (s_.trace == nullptr) return;
  const sim::Time now = sim::Time::from_ns(now_ns());
  s_.trace->counter(power_track_[i], power_name_, now, g_[i].power_w);
  s_.trace->counter(temp_track_[i], temp_name_, now, g_[i].temp_c);
}

void PowerThermalModel::set_gpu_power(int i, double p) {
  GpuState& st = g_[i];
  if (p == st.power_w) return;
  const std::int64_t now = now_ns();
  for (int k : kinds_of_gpu_[i]) {
    advance_kind(k, now);
    if (!kind_dirty_[k]) {
      kind_dirty_[k] = 1;
      dirty_kinds_.push_back(k);
    }
  }
  st.power_w = p;
  counters(i);
}

void PowerThermalModel::update_dirty_kinds() {
  for (int k : dirty_kinds_) {
    double sum = 0;
    for (int j : s_.node_kinds[k].gpus) sum += g_[j].power_w;
    k_[k].gpu_w = sum;
    k_[k].power_w = node_ac_w(k, sum);
    kind_dirty_[k] = 0;
  }
  dirty_kinds_.clear();
}

void PowerThermalModel::schedule_threshold(int i) {
  GpuState& st = g_[i];
  if (!s_.thermal_events) return;
  ++st.generation;
  if (st.throttled) return;
  const ThermalRc& rc = st.rc;
  const double dt = seconds_to_reach(rc, st.temp_c, st.power_w, st.inlet_c, rc.slowdown_c);
  if (!std::isfinite(dt) || st.temp_c >= rc.slowdown_c) {
    const std::int64_t now = now_ns();
    if (now != st.zero_event_ns) st.zero_events = 0;
    st.zero_event_ns = now;
    if (st.temp_c >= rc.slowdown_c && st.power_w > (rc.slowdown_c - st.inlet_c) / rc.r_k_per_w &&
        st.clock > curve_of(i).clock_min_fraction && ++st.zero_events <= 4) {
      sim_.schedule_in(sim::Time::from_ns(0), this, (static_cast<std::uint64_t>(st.generation) << 32) | i);
    }
    return;
  }
  const double ns = std::ceil(dt * 1e9);
  if (ns > 9e18) return;
  sim_.schedule_in(sim::Time::from_ns(static_cast<std::int64_t>(ns)), this,
                   (static_cast<std::uint64_t>(st.generation) << 32) | static_cast<std::uint32_t>(i));
}

void PowerThermalModel::on_event(std::uint64_t tag) {
  const auto i = static_cast<int>(tag & 0xffffffffu);
  GpuState& st = g_[i];
  if (static_cast<std::uint32_t>(tag >> 32) != st.generation) return;  // superseded
  advance_gpu(i, now_ns());
  // Rounding the crossing up to whole ns may overshoot by < 1 ns of heating: hold at T_slow.
  st.temp_c = std::min(st.temp_c, st.rc.slowdown_c);
  st.throttled = true;
  clock_reduced_ = true;
  recompute_worker(st.worker, 0);
}

void PowerThermalModel::recompute_speed(std::uint32_t w) {
  const WorkerState& ws = w_[w];
  const Activity a = activity_of(ws);
  const double c = ws.compute_busy && a != Activity::comm ? ws.compute_fraction : 0.0;
  const GpuPowerCurve& curve = curve_of(s_.worker_gpus[w].front());
  const double cap = s_.power_limit_w > 0 && s_.power_limit_w < curve.tdp_w ? s_.power_limit_w : curve.tdp_w;
  // recompute_worker's clocks of GPUs that are not throttled, from each distinct (own cap, clock
  // factor) of the worker's GPUs: the same operations, so the same bits.
  double slowest = 1.0;
  for (const auto& [own, factor] : clock_keys_[w]) {
    double clock = clock_for_power_limit(curve, a, own > 0 ? std::min(cap, own) : cap);
    if (clock < 1.0) clock_reduced_ = true;
    clock = std::min(clock, factor);
    slowest = std::min(slowest, op_speed(c, clock));
  }
  set_worker_speed(w, slowest);
}

void PowerThermalModel::recompute_worker(std::uint32_t w, int depth) {
  if (role_ == PowerThermalRole::speeds_only) {
    recompute_speed(w);
    return;
  }
  const std::int64_t now = now_ns();
  const std::vector<int>& gpus = s_.worker_gpus[w];
  for (int i : gpus) {
    advance_gpu(i, now);
    for (int j : downstream_[i]) advance_gpu(j, now);
  }
  WorkerState& ws = w_[w];
  const Activity a = activity_of(ws);
  const double c = ws.compute_busy && a != Activity::comm ? ws.compute_fraction : 0.0;
  // A worker's GPUs are of one node group (a pipeline stage lies within one GPU type).
  const GpuPowerCurve& curve = curve_of(gpus.front());
  const double cap = s_.power_limit_w > 0 && s_.power_limit_w < curve.tdp_w ? s_.power_limit_w : curve.tdp_w;
  std::vector<double>& clock = scratch_clock_;
  std::vector<double>& speed = scratch_speed_;
  std::vector<double>& hold = scratch_hold_;
  clock.resize(gpus.size());
  speed.resize(gpus.size());
  hold.resize(gpus.size());
  // clock_for_power_limit by node group, activity and limit: a
  // bisection of ~35 power evaluations that every GPU asks for the same few limits (its cap, its
  // holding power) in every pass of every call (half of the CPU of a throttling run before:
  // GB200 NVL72/64 at 70 C coolant, 2026-12-07). A pure function: the memo changes no bit.
  std::unordered_map<std::uint64_t, double>& memo =
      clock_memo_[static_cast<std::size_t>(s_.gpus[gpus.front()].group) * kNumActivities + static_cast<std::size_t>(a)];
  if (memo.size() > 4096) memo.clear();  // limits that move with inlets (air): keep it small
  auto clock_at = [&](double limit_w) {
    const auto [it, added] = memo.try_emplace(std::bit_cast<std::uint64_t>(limit_w), 0.0);
    if (added) it->second = clock_for_power_limit(curve, a, limit_w);
    return it->second;
  };
  double slowest = 1.0;
  for (int pass = 0; pass < 2 * static_cast<int>(gpus.size()) + 2; ++pass) {
    slowest = 1.0;
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      GpuState& st = g_[gpus[k]];
      const ThermalRc& rc = st.rc;
      hold[k] = (rc.slowdown_c - st.inlet_c) / rc.r_k_per_w;
      const double own = st.own_power_limit_w;  // cluster.overrides power_cap_w
      const double cap_k = own > 0 ? std::min(cap, own) : cap;
      double limit = cap_k;
      if (st.throttled) {
        if (gpu_power_w(curve, a, clock_at(cap_k)) <= hold[k]) {
          st.throttled = false;  // the thermal limit no longer binds
        } else {
          limit = std::min(limit, hold[k]);
        }
      }
      clock[k] = clock_at(limit);
      if (clock[k] < 1.0) clock_reduced_ = true;
      clock[k] = std::min(clock[k], st.clock_factor);  // cluster.overrides
      speed[k] = op_speed(c, clock[k]);
      slowest = std::min(slowest, speed[k]);
    }
    // A throttled GPU that would draw less than its holding power at its free clock (others set
    // the pace, so it waits part of the time) cools: release it.
    bool changed = false;
    // The slowest speed of the others: the smallest, or for the GPU that has it the second.
    std::size_t first = 0;
    double second = std::numeric_limits<double>::infinity();
    for (std::size_t j = 1; j < gpus.size(); ++j) {
      if (speed[j] < speed[first]) {
        second = speed[first];
        first = j;
      } else {
        second = std::min(second, speed[j]);
      }
    }
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      GpuState& st = g_[gpus[k]];
      if (!st.throttled) continue;
      const double own = st.own_power_limit_w;
      const double f_free = clock_at(own > 0 ? std::min(cap, own) : cap);
      const double s_free = op_speed(c, f_free);
      const double others = std::min(s_free, k == first ? second : speed[first]);
      const double p = curve.idle_w + (gpu_power_w(curve, a, f_free) - curve.idle_w) * (others / s_free);
      if (p < hold[k] * (1 - 1e-9)) {
        st.throttled = false;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    const int i = gpus[k];
    GpuState& st = g_[i];
    const double duty = speed[k] > 0 ? slowest / speed[k] : 1.0;
    const double p = curve.idle_w + (gpu_power_w(curve, a, clock[k]) - curve.idle_w) * duty;
    account_clock(i, now_ns());
    st.clock = clock[k];
    st.wait_share = 1.0 - duty;
    st.min_clock = std::min(st.min_clock, clock[k]);
    set_gpu_power(i, p);
  }
  update_dirty_kinds();
  // Inlets of this worker's GPUs and of those downstream of them follow the new powers.
  std::vector<std::uint32_t> others;
  for (int i : gpus) {
    g_[i].inlet_c = inlet_of(i);
    for (int j : downstream_[i]) {
      const double inlet = inlet_of(j);
      if (inlet == g_[j].inlet_c) continue;
      g_[j].inlet_c = inlet;
      if (g_[j].throttled) {
        others.push_back(g_[j].worker);
      } else {
        schedule_threshold(j);
      }
    }
  }
  for (int i : gpus) schedule_threshold(i);
  set_worker_speed(w, slowest);
  if (depth < 4)
    for (std::uint32_t o : others) recompute_worker(o, depth + 1);
}

void PowerThermalModel::set_worker_speed(std::uint32_t w, double speed) {
  WorkerState& ws = w_[w];
  if (speed == ws.speed) return;
  ws.speed = speed;
  if (listener_ != nullptr && ws.compute_busy) listener_->speed_changed(w, speed);
}

double PowerThermalModel::stream_changed(std::uint32_t worker, unsigned stream, bool busy, Activity a,
                                         double compute_fraction) {
  WorkerState& ws = w_[worker];
  const Activity before = activity_of(ws);
  const double before_c = ws.compute_fraction;
  if (stream == kComputeStream) {
    if (busy != ws.compute_busy && role_ != PowerThermalRole::speeds_only)
      for (int i : s_.worker_gpus[worker]) account_clock(i, now_ns());
    ws.compute_busy = busy;
    ws.compute = busy ? a : Activity::idle;
    ws.compute_fraction = busy ? compute_fraction : 0.0;
  } else {
    const unsigned bit = 1u << stream;
    ws.comm_busy = busy ? (ws.comm_busy | bit) : (ws.comm_busy & ~bit);
  }
  const Activity after = activity_of(ws);
  if (after == before && (ws.compute_fraction == before_c || !(clock_reduced_ || clock_capped_))) return ws.speed;
  recompute_worker(worker, 0);
  return ws.speed;
}

void PowerThermalModel::barrier_done(int /*iteration*/) {
  if (role_ == PowerThermalRole::speeds_only) return;
  const std::int64_t now = now_ns();
  for (int i = 0; i < static_cast<int>(g_.size()); ++i) advance_gpu(i, now);
  for (int k = 0; k < static_cast<int>(k_.size()); ++k) advance_kind(k, now);
  // Rack recirculation from the iteration's average rack heat (air cooling with a finite capacity).
  if (!s_.liquid && s_.rack_cooling_capacity_w > 0) {
    const double iter_s = static_cast<double>(now - last_barrier_ns_) * kNsToS;
    std::vector<double> rack_w(rack_rise_.size(), 0.0);
    for (std::size_t n = 0; n < s_.kind_of_node.size(); ++n) {
      KindState& ks = k_[s_.kind_of_node[n]];
      const double e = ks.energy_j - ks.iteration_energy_j;
      rack_w[n / s_.nodes_per_rack] += iter_s > 0 ? e / iter_s : 0.0;
    }
    // A rack's airflow: the sum of the design airflow of the nodes in it. An empty slot (a rack
    // of nodes_per_rack with fewer nodes, the last rack of a cluster) moves no air: it is blanked,
    // and the nodes' own fans move the rack's air (session 35: the slots were counted, so one node
    // in a rack of 4 saw a quarter of its recirculation and the answer moved with empty slots).
    std::vector<double> rack_airflow(rack_rise_.size(), 0.0);
    for (std::size_t n = 0; n < s_.kind_of_node.size(); ++n) {
      const int group = s_.node_kinds[s_.kind_of_node[n]].group;
      rack_airflow[n / s_.nodes_per_rack] += s_.groups[static_cast<std::size_t>(group)].node_airflow_m3_per_s;
    }
    for (std::size_t r = 0; r < rack_rise_.size(); ++r)
      rack_rise_[r] =
          std::max(0.0, rack_w[r] - s_.rack_cooling_capacity_w) / (kAirHeatCapacityJPerM3K * rack_airflow[r]);
    // With folding, a real GPU must see the same inlet as the GPU that stands for it.
    for (std::size_t g = 0; g < s_.rep_node_of_gpu.size(); ++g) {
      const std::size_t own = g / static_cast<std::size_t>(s_.gpus_per_node);
      const auto rep = static_cast<std::size_t>(s_.rep_node_of_gpu[g]);
      if (rack_rise_[own / s_.nodes_per_rack] != rack_rise_[rep / s_.nodes_per_rack]) asymmetric_ = true;
    }
    for (int i = 0; i < static_cast<int>(g_.size()); ++i) {
      const double inlet = inlet_of(i);
      if (inlet == g_[i].inlet_c) continue;
      g_[i].inlet_c = inlet;
      if (g_[i].throttled) {
        recompute_worker(s_.gpus[i].worker, 0);
      } else {
        schedule_threshold(i);
      }
    }
  }
  for (KindState& ks : k_) ks.iteration_energy_j = ks.energy_j;
  last_barrier_ns_ = now;
}

void PowerThermalModel::compute_done(int iteration) {
  if (role_ == PowerThermalRole::speeds_only) return;
  if (iteration != s_.iterations - 2 && iteration != s_.iterations - 1) return;
  const std::int64_t now = now_ns();
  for (int i = 0; i < static_cast<int>(g_.size()); ++i) advance_gpu(i, now);
  for (int k = 0; k < static_cast<int>(k_.size()); ++k) advance_kind(k, now);
  for (int i = 0; i < static_cast<int>(g_.size()); ++i) account_clock(i, now);
  if (iteration == s_.iterations - 1) {
    // The report's window ends with the last iteration's compute: freeze what it reports.
    window_end_ns_ = now;
    window_open_ = false;
    // Move each GPU's window series rather than copy it: nothing adds to or reads g_'s series
    // once the window is closed (finish() reads closed_g_), so the copy would double its memory.
    closed_g_.resize(g_.size());
    for (std::size_t i = 0; i < g_.size(); ++i) {
      std::vector<WindowPoint> points = std::move(g_[i].window_points);
      g_[i].window_points.clear();
      closed_g_[i] = g_[i];
      closed_g_[i].window_points = std::move(points);
    }
    closed_k_ = k_;
    return;
  }
  // The window is the last iteration: it opens at the end of the one before it.
  window_open_ = true;
  window_start_ns_ = now;
  for (GpuState& st : g_) {
    st.window_energy_j = st.energy_j;
    st.window_start_c = st.temp_c;
    st.window_start_integral = st.temp_integral;
    st.window_compute_ns = st.compute_ns;
    st.window_compute_clock_ns = st.compute_clock_ns;
    st.window_wait_ns = st.wait_ns;
    st.window_peak_c = st.temp_c;
    st.throttled_ns = 0;
    st.peak_w = st.power_w;
    st.window_points.clear();
    if (s_.periodic_correction) st.window_points.push_back({now, st.temp_c, 1.0});
  }
  for (KindState& ks : k_) ks.window_energy_j = ks.energy_j;
}

}  // namespace traincast::models
