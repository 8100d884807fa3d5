// PowerThermalModel's report (power_thermal.h): the window's figures once the run is over, and the
// periodic start state the next pass starts from. The event-driven state it reads is kept by
// power_thermal.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "models/power/power_thermal.h"

namespace traincast::models {

std::vector<double> PowerThermalModel::periodic_start_c() const {
  const bool closed = window_end_ns_ >= 0;
  const std::vector<GpuState>& G = closed ? closed_g_ : g_;
  std::vector<double> out(G.size());
  const std::int64_t end_ns = closed ? window_end_ns_ : (G.empty() ? 0 : G[0].last_ns);
  const double period_s = static_cast<double>(end_ns - window_start_ns_) * kNsToS;
  for (std::size_t i = 0; i < G.size(); ++i) {
    const ThermalRc& rc = s_.gpus[i].rc;
    const GpuState& st = G[i];
    const double decay = std::exp(-period_s / rc.tau_s());
    // T_end = T_start decay + X (linear RC, piecewise-constant input); periodic: T* = X / (1 - decay).
    const double x = st.temp_c - st.window_start_c * decay;
    double t = decay < 1.0 ? x / (1.0 - decay) : st.temp_c;
    // A GPU that started the window at its slowdown temperature and throttled there held its
    // compute at the holding power from the first instant, while on the periodic orbit each
    // compute phase starts below the limit by what the low-power phases (communication, waits)
    // cooled it and runs at full clock until it is back at the limit: the window's own cooling,
    // T_start - T_end, is that dip. The linear-RC T* of a clamped profile does not apply.
    if (starts_at_ceiling(i)) t = rc.slowdown_c - (st.window_start_c - st.temp_c);
    out[i] = std::min(t, rc.slowdown_c);
  }
  return out;
}

bool PowerThermalModel::starts_at_ceiling(std::size_t i) const {
  const GpuState& st = (window_end_ns_ >= 0 ? closed_g_ : g_)[i];
  return st.throttled_ns > 0 && st.window_start_c >= s_.gpus[i].rc.slowdown_c && st.temp_c < st.window_start_c;
}

bool PowerThermalModel::ceiling_start() const {
  for (std::size_t i = 0; i < g_.size(); ++i)
    if (starts_at_ceiling(i)) return true;
  return false;
}

void PowerThermalModel::finish(std::int64_t end_ns, double iteration_s, double train_s, PowerReport& pr,
                               ThermalReport& tr) {
  for (int i = 0; i < static_cast<int>(g_.size()); ++i) advance_gpu(i, end_ns);
  for (int k = 0; k < static_cast<int>(k_.size()); ++k) advance_kind(k, end_ns);
  for (int i = 0; i < static_cast<int>(g_.size()); ++i) account_clock(i, end_ns);
  // The window: the last iteration as the report times it (compute_done), else up to end_ns.
  const bool closed = window_end_ns_ >= 0;
  const std::vector<GpuState>& G = closed ? closed_g_ : g_;
  const std::vector<KindState>& K = closed ? closed_k_ : k_;
  const double window_s = static_cast<double>((closed ? window_end_ns_ : end_ns) - window_start_ns_) * kNsToS;
  const int n = static_cast<int>(g_.size());
  // The report's one GPU limit: the highest over the node groups (their GPUs' TDPs may differ).
  double cap = 0;
  for (const PowerThermalSetup::Group& g : s_.groups) {
    const double tdp = g.curve.tdp_w;
    cap = std::max(cap, s_.power_limit_w > 0 && s_.power_limit_w < tdp ? s_.power_limit_w : tdp);
  }
  std::vector<double> periodic;
  if (s_.periodic_correction && !clock_reduced_) periodic = periodic_start_c();
  pr = PowerReport{};
  tr = ThermalReport{};
  pr.pue = s_.pue;
  pr.gpu_power_limit_w = cap;
  double gpu_sum_w = 0;
  for (int i = 0; i < n; ++i) {
    const GpuState& st = G[i];
    GpuPower gp;
    gp.gpu = s_.gpus[i].global;
    gp.energy_j = st.energy_j - st.window_energy_j;
    gp.average_w = window_s > 0 ? gp.energy_j / window_s : st.power_w;
    gp.peak_w = st.peak_w;
    gp.clock_fraction_min = st.min_clock;
    gp.clock_factor = st.clock_factor;
    gp.power_cap_w = st.own_power_limit_w;
    if (const double busy_ns = st.compute_ns - st.window_compute_ns; busy_ns > 0)
      gp.compute_clock_fraction_mean = (st.compute_clock_ns - st.window_compute_clock_ns) / busy_ns;
    gp.compute_wait_s = std::max(0.0, st.wait_ns - st.window_wait_ns) * kNsToS;
    gpu_sum_w += gp.average_w;
    pr.gpu_peak_w = std::max(pr.gpu_peak_w, gp.peak_w);
    pr.gpus.push_back(gp);
    GpuThermal gt;
    gt.gpu = gp.gpu;
    gt.peak_c = st.peak_c;
    gt.average_c = window_s > 0 ? (st.temp_integral - st.window_start_integral) / window_s : st.temp_c;
    gt.inlet_c = st.inlet_c;
    gt.throttled_time_fraction =
        window_s > 0 ? std::min(1.0, static_cast<double>(st.throttled_ns) * kNsToS / window_s) : 0.0;
    gt.start_c = st.window_start_c;
    gt.end_c = st.temp_c;
    if (!periodic.empty() && window_s > 0) {
      // Linear RC: starting the window at T* instead adds (T* - T_start) exp(-t / tau).
      const double tau = s_.gpus[i].rc.tau_s();
      const double corr = periodic[i] - st.window_start_c, decay = std::exp(-window_s / tau);
      gt.start_c = periodic[i];
      gt.end_c = st.temp_c + corr * decay;
      gt.average_c += corr * tau / window_s * (1.0 - decay);
      gt.peak_c = gt.start_c;
      for (const WindowPoint& p : st.window_points) gt.peak_c = std::max(gt.peak_c, p.temp_c + corr * p.weight);
    }
    if (gt.peak_c > tr.peak_c || i == 0) {
      tr.peak_c = gt.peak_c;
      tr.hottest_gpu = gt.gpu;
    }
    tr.throttled_time_fraction = std::max(tr.throttled_time_fraction, gt.throttled_time_fraction);
    // Real GPUs: with folding a simulated GPU stands for stands_for of them, so folded and
    // unfolded runs count alike.
    if (gt.throttled_time_fraction > 0) tr.throttled_gpus += s_.gpus[i].stands_for;
    const double drift_c = std::abs(gt.end_c - gt.start_c);
    tr.max_drift_c = std::max(tr.max_drift_c, drift_c);
    // Distance from the periodic steady state (ThermalReport::steady_state_offset_c): the drift
    // over one iteration is that distance times (1 - exp(-w / tau)).
    const double settle = window_s > 0 ? -std::expm1(-window_s / s_.gpus[i].rc.tau_s()) : 0.0;
    tr.steady_state_offset_c = std::max(tr.steady_state_offset_c, settle > 0 ? drift_c / settle : drift_c);
    tr.slowdown_c = s_.gpus[i].rc.slowdown_c;
    tr.gpus.push_back(gt);
  }
  tr.steady_state = tr.steady_state_offset_c <= 0.5;
  pr.gpu_average_w = n > 0 ? gpu_sum_w / n : 0.0;
  // Partial folding: simulated GPUs stand for different numbers of real ones.
  if (std::any_of(s_.gpus.begin(), s_.gpus.end(),
                  [&](const auto& g) { return g.stands_for != s_.gpus[0].stands_for; })) {
    double weighted_w = 0, weight = 0;
    for (int i = 0; i < n; ++i) {
      weighted_w += pr.gpus[static_cast<std::size_t>(i)].average_w * s_.gpus[i].stands_for;
      weight += s_.gpus[i].stands_for;
    }
    pr.gpu_average_w = weighted_w / weight;
  }
  // Nodes: every real node has the power of its kind.
  double it_w = 0;
  int nodes = 0;
  for (std::size_t k = 0; k < k_.size(); ++k) {
    const KindState& ks = K[k];
    const double avg = window_s > 0 ? (ks.energy_j - ks.window_energy_j) / window_s : ks.power_w;
    it_w += avg * s_.node_kinds[k].count;
    nodes += s_.node_kinds[k].count;
    if (k == 0 || k_[k].peak_w > pr.node_peak_w) {
      pr.node_peak_w = k_[k].peak_w;
      // The PSU capacity of the node at the peak (node groups may differ): its headroom.
      pr.node_psu_capacity_w = node_of_kind(static_cast<int>(k)).redundant_capacity_w();
    }
  }
  for (std::size_t node = 0; node < s_.kind_of_node.size(); ++node) {
    const KindState& ks = k_[s_.kind_of_node[node]];
    if (ks.overload_ns <= 0) continue;
    PsuOverload o;
    o.node = static_cast<int>(node);
    o.first_time_s = ks.first_overload_s;
    o.peak_w = ks.peak_w;
    o.capacity_w = node_of_kind(s_.kind_of_node[node]).redundant_capacity_w();
    o.excess_w = ks.peak_w - o.capacity_w;
    o.overload_time_fraction =
        static_cast<double>(ks.overload_ns) / static_cast<double>(std::max<std::int64_t>(1, end_ns));
    pr.psu_overloads.push_back(o);
  }
  pr.node_average_w = nodes > 0 ? it_w / nodes : 0.0;
  const int racks = static_cast<int>(rack_rise_.size());
  std::vector<double> rack_avg(static_cast<std::size_t>(racks), 0.0), rack_peak(static_cast<std::size_t>(racks), 0.0);
  for (std::size_t node = 0; node < s_.kind_of_node.size(); ++node) {
    const KindState& ks = K[s_.kind_of_node[node]];
    rack_avg[node / s_.nodes_per_rack] += window_s > 0 ? (ks.energy_j - ks.window_energy_j) / window_s : ks.power_w;
    rack_peak[node / s_.nodes_per_rack] += k_[s_.kind_of_node[node]].peak_w;
  }
  for (int r = 0; r < racks; ++r) {
    pr.rack_average_w += rack_avg[r] / racks;
    pr.rack_peak_w = std::max(pr.rack_peak_w, rack_peak[r]);
  }
  // The hottest supply air a real GPU takes in, before its upstream GPUs' preheat: its node's
  // supply (cluster.overrides supply_c, or the setup's) plus its rack's recirculation rise (air).
  // A real node's GPUs are its kind's representatives, of its supply (folding keeps it).
  bool any_node = false;
  for (std::size_t node = 0; node < s_.kind_of_node.size(); ++node) {
    const std::size_t rack = node / static_cast<std::size_t>(s_.nodes_per_rack);
    const double rise_c = s_.liquid || rack >= rack_rise_.size() ? 0.0 : rack_rise_[rack];
    for (const int sim : s_.node_kinds[static_cast<std::size_t>(s_.kind_of_node[node])].gpus) {
      if (sim < 0) continue;  // a slot no simulated GPU stands for (as the node power sums)
      const double inlet_c = G[static_cast<std::size_t>(sim)].supply_c + rise_c;
      tr.rack_inlet_max_c = any_node ? std::max(tr.rack_inlet_max_c, inlet_c) : inlet_c;
      any_node = true;
    }
  }
  if (!any_node) tr.rack_inlet_max_c = s_.supply_c;
  double facility_peak_it = 0;
  for (std::size_t k = 0; k < k_.size(); ++k) facility_peak_it += k_[k].peak_w * s_.node_kinds[k].count;
  pr.it_average_w = it_w;
  pr.facility_average_w = it_w * s_.pue;
  pr.facility_peak_w = facility_peak_it * s_.pue;
  pr.it_energy_per_iteration_j = it_w * iteration_s;
  pr.energy_per_iteration_j = pr.facility_average_w * iteration_s;
  pr.energy_to_train_kwh = train_s > 0 ? pr.facility_average_w * train_s / 3.6e6 : 0.0;
  (void)gpu_sum_w;
}

}  // namespace traincast::models
