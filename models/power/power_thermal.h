#pragma once
// Event-driven power and thermal state of every simulated GPU, node and rack (DESIGN §4.5),
// plugged into the op-graph runner as its WorkerActivityModel (worker_activity_model.h). Between
// events each GPU's power and inlet temperature are constant, so its temperature follows the
// exact RC solution (models/power/power_model.h); the model schedules its own events when a GPU
// will reach its slowdown temperature, and then lowers that GPU's clock to hold it there. A
// worker (TP group) runs at the speed of its slowest GPU; its faster GPUs wait at the group's
// collectives, drawing idle power for the difference (power = idle + (P(a, f) - idle) x
// speed_worker / speed_own).
//
// Heat path (air): GPU inlet = supply air + rack recirculation + preheat, where preheat is the
// heat of the GPUs upstream in the same airflow lane of the node divided by rho c_p x the lane's
// airflow, and rack recirculation is the rack's heat beyond rack_cooling_capacity_w (averaged
// over the previous iteration) divided by rho c_p x the rack's airflow. Liquid: inlet = coolant.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/power/power_model.h"
#include "models/power/worker_activity_model.h"
#include "models/spec/report.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace traincast::models {

/// Everything the model needs, prepared by the executor from the scenario and the cluster.
struct PowerThermalSetup {
  /// One node group's hardware (a uniform cluster has one; a mixed cluster's in
  /// cluster.node_groups() order): its GPU's power curve, its node's power figures and the node's
  /// design airflow [m^3/s].
  struct Group {
    GpuPowerCurve curve;
    NodePowerSpec node;
    double node_airflow_m3_per_s = 0;
  };
  std::vector<Group> groups;
  double power_limit_w = 0;  ///< per GPU; >= a GPU's tdp_w means none
  double cpu_load_fraction = 0.5;
  double pue = 1.0;
  bool liquid = false;
  double supply_c = 25;  ///< supply air (air) or coolant (liquid) [C]

  /// Simulated GPUs (index i): global id, worker, thermal parameters, airflow lane position.
  struct Gpu {
    int global = 0;
    std::uint32_t worker = 0;
    int node_kind = 0;  ///< index into node_kinds of the node it sits in
    int group = 0;      ///< index into groups of its node's group
    int actual_node = 0;
    ThermalRc rc;
    /// (sim GPU, K/W) pairs: upstream GPUs in its airflow lane and their preheat per watt.
    std::vector<std::pair<int, double>> upstream;
    double start_c = 0;  ///< temperature at t = 0
    bool start_throttled = false;
    /// Highest SM clock as a fraction of boost (cluster.overrides clock_factor), 0 < f <= 1: the
    /// clock power and temperature allow, capped at it. Not a "reduced clock" of the power model
    /// (clock_reduced() ignores it: temperature feeds nothing back through it).
    double clock_factor = 1.0;
    /// Its own power limit (cluster.overrides power_cap_w) [W]; 0 = power_limit_w's alone.
    double power_limit_w = 0;
    /// Its node's supply air / coolant [C] (cluster.overrides supply_c); NaN = supply_c's.
    double supply_c = std::numeric_limits<double>::quiet_NaN();
    /// Real GPUs it stands for (folding); averages over GPUs weight by it.
    int stands_for = 1;
  };
  std::vector<Gpu> gpus;
  std::vector<std::vector<int>> worker_gpus;  ///< sim GPU indices per worker

  /// Distinct node compositions: sim GPUs that stand for the node's GPUs, and how many real
  /// nodes have that composition (folding makes one simulated node stand for many).
  struct NodeKind {
    std::vector<int> gpus;  ///< sim GPU per local GPU slot (a sim GPU may appear in several kinds)
    int count = 0;
    int group = 0;  ///< index into groups: the node group of these nodes
  };
  std::vector<NodeKind> node_kinds;
  std::vector<int> kind_of_node;     ///< per real node
  std::vector<int> rep_node_of_gpu;  ///< per real GPU: the real node of its representative
  int nodes_per_rack = 4;
  int gpus_per_node = 8;
  int sockets = 2;
  double rack_cooling_capacity_w = 0;     ///< 0 = unlimited
  std::vector<double> rack_rise_start_c;  ///< initial recirculation rise per rack (size racks)
  double gpu_scale = 1;                   ///< real GPUs per simulated GPU (folding)
  int iterations = 1;
  /// Report the last iteration as it would be in the periodic thermal steady state, correcting
  /// the run's temperatures (valid when no clock was reduced: then temperature feeds nothing back).
  bool periodic_correction = false;
  /// false when no GPU can reach its slowdown temperature (clock_feedback_possible): no
  /// threshold events are scheduled.
  bool thermal_events = true;
  sim::TraceRecorder* trace = nullptr;
};

/// What a PowerThermalModel computes. `full`: everything, on the simulation's thread. Where no
/// GPU's clock can depend on its temperature (PowerThermalSetup::thermal_events false, nothing
/// throttled at the start), the work splits in two models of one setup
/// (models/executor/power_thermal_thread.h): `speeds_only` answers the runner (each worker's
/// clocks and speed from its activity, caps and clock factors: the same code as `full`, nothing
/// else), and `replay` is told the same calls afterwards, on another thread, each with the
/// simulated time it was made at (set_replay_time), and keeps power, temperature and energy for
/// the report. Both give the report `full` gives, bit for bit.
enum class PowerThermalRole { full, speeds_only, replay };

class PowerThermalModel : public WorkerActivityModel, public sim::EventHandler {
 public:
  PowerThermalModel(sim::Simulator& sim, PowerThermalSetup setup, PowerThermalRole role = PowerThermalRole::full);
  /// Not copied: the simulator holds it as an event handler, and its GPU states point into its setup.
  PowerThermalModel(const PowerThermalModel&) = delete;
  PowerThermalModel& operator=(const PowerThermalModel&) = delete;

  /// One event of a GPU's window series: time, temperature and the weight its periodic
  /// correction gets at finish(), exp(-(t_ns - window start) / tau) (window_weight).
  struct WindowPoint {
    std::int64_t t_ns = 0;
    double temp_c = 0;
    double weight = 1;
  };

  double stream_changed(std::uint32_t worker, unsigned stream, bool busy, Activity a, double compute_fraction) override;
  void barrier_done(int iteration) override;
  /// Opens the report's window at the end of the next-to-last iteration's compute and closes it
  /// at the end of the last one's: the interval the report's iteration time measures, so a GPU's
  /// energy_j is exactly average_w x iteration_time_s.
  void compute_done(int iteration) override;
  void set_listener(WorkerSpeedListener* listener) override { listener_ = listener; }
  /// The simulated time [ns] of the calls that follow (role replay only; the others read the
  /// simulator's clock).
  void set_replay_time(std::int64_t now_ns) { replay_now_ns_ = now_ns; }
  void on_event(std::uint64_t tag) override;

  /// Brings every state to `end_ns` (the end of the run) and fills power and thermal reports.
  /// iteration_s: the report's iteration time; train_s: time to train (0 = none).
  /// The report covers [start, end] of the last iteration's compute (compute_done), or up to
  /// end_ns when that end was not signalled.
  void finish(std::int64_t end_ns, double iteration_s, double train_s, PowerReport& power, ThermalReport& thermal);

  /// Per sim GPU: temperature the last iteration's power profile would hold at every iteration
  /// start (periodic steady state of the linear RC, capped at the slowdown temperature). A GPU
  /// that started the window at its slowdown temperature, throttled and cooled (ceiling_start)
  /// gets the slowdown temperature minus that cooling: the start of the periodic orbit, where
  /// each compute phase first runs at full clock back up to the limit.
  std::vector<double> periodic_start_c() const;
  /// true when some GPU started the last iteration at its slowdown temperature, throttled and
  /// ended it cooler: that start was not periodic (the orbit starts below the limit), however
  /// small the drift over one iteration (tau = R C is minutes, an iteration milliseconds).
  bool ceiling_start() const;
  /// Rack recirculation rise at the end [C], per rack.
  const std::vector<double>& rack_rise_c() const { return rack_rise_; }
  /// true when, with folding, a real GPU would have seen another inlet than its representative.
  bool asymmetric() const { return asymmetric_; }
  /// true when any GPU throttled or ran below full clock at some point.
  bool clock_reduced() const { return clock_reduced_; }
  /// Per sim GPU: time [s] in the report's window (finish) that its worker computed while it
  /// waited for a slower GPU of the worker (a TP group runs at its slowest GPU's pace: the faster
  /// ones finish their share of each kernel first and wait at the group's next collective). 0 for
  /// the GPU that sets the pace and wherever the worker's GPUs run alike. Read after the run
  /// (the window closed), before or after finish().
  std::vector<double> compute_wait_s() const {
    std::vector<double> out;
    for (const GpuState& st : window_end_ns_ >= 0 ? closed_g_ : g_)
      out.push_back(std::max(0.0, st.wait_ns - st.window_wait_ns) * 1e-9);
    return out;
  }

 private:
  /// Laid out by use, each GPU's state on its own five cache lines: advance_gpu writes the first
  /// two and reads the third (the RC constants, copied from the setup beside the state they
  /// advance), recompute_worker and schedule_threshold read the first three; the fourth is the
  /// window's and the throttle guard's; the fifth what inlet_of reads (copied from the setup).
  struct alignas(64) GpuState {
    double temp_c = 0;
    double power_w = 0;
    double clock = 1.0;
    double inlet_c = 0;
    std::int64_t last_ns = 0;
    double energy_j = 0;
    double temp_integral = 0;  ///< C s since the window start
    double peak_c = 0;
    double peak_w = 0, min_clock = 1.0;
    double window_peak_c = 0;
    /// (ns, C) at the events in the window that can hold the corrected peak, kept only for
    /// periodic_correction (the corrected trajectory is monotone between events, so its peak is
    /// at one of the events; push_window_point drops the events that cannot be it).
    std::vector<WindowPoint> window_points;
    bool throttled = false;
    std::uint32_t generation = 0;
    std::uint32_t worker = 0;  ///< copies of the setup's (PowerThermalSetup::Gpu)
    int zero_events = 0;
    ThermalRc rc;
    double clock_factor = 1.0;
    double own_power_limit_w = 0;  ///< the setup's power_limit_w (0 = none of its own)
    /// Time its worker's compute stream was busy, and clock x that time [ns], since the start
    /// (window_*: at the window start); accounted up to clock_since_ns (account_clock).
    std::int64_t clock_since_ns = 0;
    double compute_ns = 0, compute_clock_ns = 0;
    std::int64_t throttled_ns = 0;    ///< within the window
    std::int64_t zero_event_ns = -1;  ///< guard: immediate re-throttle events at one instant
    double window_compute_ns = 0, window_compute_clock_ns = 0;
    double window_energy_j = 0, window_start_c = 0;
    double window_start_integral = 0;
    alignas(64) double supply_c = 0;  ///< its own supply air / coolant, or the setup's [C]
    std::size_t rack = 0;             ///< of its node (an index into rack_rise_ when in range)
    const std::vector<std::pair<int, double>>* upstream = nullptr;  ///< the setup's
    /// Share of its worker's compute time it waits for a slower GPU of the worker (TP group),
    /// 1 - slowest speed / its own speed, while the worker computes; 0 when it sets the pace.
    double wait_share = 0;
    /// Its worker's compute time x wait_share summed [ns] since the start (window_*: at the
    /// window start); accounted with compute_ns (account_clock).
    double wait_ns = 0, window_wait_ns = 0;
  };
  struct WorkerState {
    Activity compute = Activity::idle;
    bool compute_busy = false;
    double compute_fraction = 0;
    unsigned comm_busy = 0;  ///< bit per busy communication stream
    double speed = 1.0;
  };
  struct KindState {
    double gpu_w = 0;
    double power_w = 0;  ///< AC
    std::int64_t last_ns = 0;
    double energy_j = 0, window_energy_j = 0, iteration_energy_j = 0;
    double peak_w = 0;
    std::int64_t overload_ns = 0;
    double first_overload_s = -1;
  };

  static constexpr double kNsToS = 1e-9;
  Activity activity_of(const WorkerState& w) const;
  std::int64_t now_ns() const { return role_ == PowerThermalRole::replay ? replay_now_ns_ : sim_.now().ns(); }
  void set_worker_speed(std::uint32_t w, double speed);
  /// Role speeds_only: the worker's speed from clock_keys_, nothing else.
  void recompute_speed(std::uint32_t w);
  void advance_gpu(int i, std::int64_t now);
  /// Adds GPU i's clock since clock_since_ns to its compute-clock sums (when its worker's
  /// compute stream is busy); call before its clock or that busy state changes.
  void account_clock(int i, std::int64_t now);
  void advance_kind(int k, std::int64_t now);
  void recompute_worker(std::uint32_t w, int depth);
  /// Sets GPU i's power after advancing its nodes (kinds) to now; their sums follow in
  /// update_dirty_kinds, once per worker update rather than once per GPU of the node (nothing
  /// reads a node's power between: advancing it again at the same instant is a no-op).
  void set_gpu_power(int i, double p);
  void update_dirty_kinds();
  /// exp(x) and expm1(x), x = -dt / tau: the GPUs of a worker advance over one interval with one
  /// tau, so computed once for them (the same bits as computing each time).
  struct Exponentials {
    double x = std::numeric_limits<double>::quiet_NaN();
    double exp_x = 0, expm1_x = 0;
  };
  const Exponentials& exponentials(double x);
  /// GPU i's inlet: its supply, its rack's recirculation rise (air) and its upstream GPUs' preheat.
  double inlet_of(int i) const {
    const GpuState& st = g_[i];
    if (s_.liquid) return st.supply_c;
    double t = st.supply_c;
    if (st.rack < rack_rise_.size()) t += rack_rise_[st.rack];
    for (const auto& [j, k_per_w] : *st.upstream) t += g_[j].power_w * k_per_w;
    return t;
  }
  void schedule_threshold(int i);
  /// AC power of one node of kind `k` whose GPUs draw `gpu_w` in sum [W].
  double node_ac_w(int k, double gpu_w) const;
  const GpuPowerCurve& curve_of(int i) const { return s_.groups[static_cast<std::size_t>(s_.gpus[i].group)].curve; }
  const NodePowerSpec& node_of_kind(int k) const {
    return s_.groups[static_cast<std::size_t>(s_.node_kinds[k].group)].node;
  }
  void counters(int i);

  sim::Simulator& sim_;
  PowerThermalSetup s_;
  PowerThermalRole role_ = PowerThermalRole::full;
  std::int64_t replay_now_ns_ = 0;
  WorkerSpeedListener* listener_ = nullptr;
  std::vector<GpuState> g_;
  std::vector<WorkerState> w_;
  std::vector<KindState> k_;
  std::vector<std::vector<int>> kinds_of_gpu_;  ///< node kinds each sim GPU appears in
  std::vector<std::vector<int>> downstream_;    ///< sim GPUs of other workers whose preheat includes it
  std::vector<int> rack_of_kind_;               ///< rack of each sim GPU's own node (by gpu)
  std::vector<double> rack_rise_;
  std::vector<std::uint32_t> power_track_, temp_track_;
  std::uint32_t power_name_ = 0, temp_name_ = 0;
  std::vector<double> scratch_clock_, scratch_speed_, scratch_hold_;
  /// recompute_worker's clock_for_power_limit per (node group, activity): limit's bits -> clock.
  std::vector<std::unordered_map<std::uint64_t, double>> clock_memo_;
  /// Role speeds_only: per worker, each distinct (own power limit [W], clock factor) of its GPUs.
  std::vector<std::vector<std::pair<double, double>>> clock_keys_;
  std::vector<char> kind_dirty_;  ///< per kind: in dirty_kinds_
  std::vector<int> dirty_kinds_;  ///< kinds whose GPU power changed since update_dirty_kinds
  Exponentials exp_memo_;
  /// The last window weight (window_weight) and its arguments.
  struct {
    std::int64_t since_ns = -1;
    double tau_s = 0, weight = 1;
  } weight_memo_;
  std::int64_t window_start_ns_ = 0;
  std::int64_t window_end_ns_ = -1;  ///< when the window closed; -1 while it is open
  std::vector<GpuState> closed_g_;   ///< GPU states at the window's end
  std::vector<KindState> closed_k_;  ///< node states at the window's end
  std::int64_t last_barrier_ns_ = 0;
  bool window_open_ = false;
  bool asymmetric_ = false;
  bool clock_reduced_ = false;
  bool clock_capped_ = false;  ///< some GPU's clock_factor < 1
  /// See ceiling_start(): GPU i (simulated index).
  bool starts_at_ceiling(std::size_t i) const;
};

}  // namespace traincast::models
