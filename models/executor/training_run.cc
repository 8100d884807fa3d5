// Runs a training job on the engine (training_run.h): one pass builds the graph, runs it with the
// power/thermal model and reports; simulate_training chains the passes it needs.
#include "models/executor/training_run.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/executor/graph_builder.h"
#include "models/executor/graph_size.h"
#include "models/executor/job_effects.h"
#include "models/executor/op_graph.h"
#include "models/executor/override_effects.h"
#include "models/executor/power_thermal_setup.h"
#include "models/executor/power_thermal_thread.h"
#include "models/executor/training_report.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/power/power_thermal.h"
#include "models/reliability/worker_threads.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// The storage stall in the timeline is derived from the iteration without storage,
/// compute_iteration_s (0: no stall, as without a storage section).
struct StorageStall {
  double compute_iteration_s = 0;
};

/// What a pass reports: everything, or the timing only (simulate_training_timing).
enum class PassOutput { full, timing };

/// Co-runners' background flows to add (may be null or empty) and where to put the job's own
/// up-link traffic (may be null): simulate_training_timing's interference inputs. `cluster`: the
/// job's cluster built once for all its ECMP draws (null: each pass builds its own); a pass
/// runs on a copy with its scenario's seed (Cluster::with_ecmp_seed), whose resource table is
/// shared, not built again. Its spec must be the scenario's but for the seed.
struct CoRun {
  const std::vector<LeafBackground>* background = nullptr;
  UpLinkTraffic* own = nullptr;
  const Cluster* cluster = nullptr;
  bool any() const { return background != nullptr && !background->empty(); }
};

/// Starts the co-runners' persistent flows: per group `flows` each way, each capped at 1/flows of
/// the rate, round-robin over the group's up-links. Each carries its cap for 1e9 s (31.7 years),
/// beyond any iteration the engine runs; the run stops at the job's last op (run_op_graph's
/// stop_when_done), so they never drain.
void start_background(sim::FlowNetwork& net, const Cluster& cluster, const CoRun& co) {
  if (!co.any()) return;
  constexpr double kHorizonS = 1e9;
  for (const LeafBackground& b : *co.background) {
    const auto [up, down] = cluster.group_up_links(b.group);
    if (up.empty() || b.flows < 1 || !(b.up_bytes_per_s > 0.0) || !(b.down_bytes_per_s > 0.0))
      throw std::invalid_argument("simulate_training_timing: background on leaf group " + std::to_string(b.group) +
                                  " (expected a group with up-links, flows >= 1 and rates > 0)");
    for (int k = 0; k < b.flows; ++k) {
      const std::size_t link = static_cast<std::size_t>(k) % up.size();
      const double up_cap = b.up_bytes_per_s / b.flows, down_cap = b.down_bytes_per_s / b.flows;
      net.start_flow(std::span(&up[link], 1), up_cap * kHorizonS, nullptr, 0, up_cap);
      net.start_flow(std::span(&down[link], 1), down_cap * kHorizonS, nullptr, 0, down_cap);
    }
  }
}

/// The job's own traffic over every group's up-links (UpLinkTraffic), per second of its last op's end.
void measure_own(const sim::FlowNetwork& net, const Cluster& cluster, const TrainingGraph& job, const CoRun& co) {
  if (co.own == nullptr || co.any()) return;
  std::int64_t end_ns = 0;
  for (const Op& op : job.graph.ops) end_ns = std::max(end_ns, op.end_ns);
  UpLinkTraffic t;
  double busy_ns = 0.0, flow_ns = 0.0, links_per_leaf = 1.0;
  for (int g = 0;; ++g) {
    const auto [up, down] = cluster.group_up_links(g);
    if (up.empty()) break;
    const int leaves = cluster.spec().fabric.kind == FabricKind::rail_optimized ? cluster.nics_per_node() : 1;
    links_per_leaf = static_cast<double>(up.size()) / leaves;
    for (sim::ResourceId r : up) {
      const sim::ResourceStats st = net.stats(r);
      t.up_bytes_per_s += st.bytes_carried;
      busy_ns += st.busy_ns;
      flow_ns += st.flow_ns;
    }
    for (sim::ResourceId r : down) t.down_bytes_per_s += net.stats(r).bytes_carried;
  }
  if (busy_ns > 0.0) {
    t.up_busy_bytes_per_s = t.up_bytes_per_s / (busy_ns * 1e-9);
    t.up_flows_per_leaf = flow_ns / busy_ns * links_per_leaf;
  }
  if (end_ns > 0) {
    t.up_bytes_per_s /= static_cast<double>(end_ns) * 1e-9;
    t.down_bytes_per_s /= static_cast<double>(end_ns) * 1e-9;
  }
  *co.own = t;
}

/// With compute_model kernel, each worker's SMs per GPU, so that NCCL's kernels take SMs from the
/// compute they overlap (run_op_graph's worker_sms; issue 17, docs/accuracy.md); empty with
/// training_fit, whose GEMM efficiencies were fitted on training runs that already paid it.
std::vector<int> nccl_worker_sms(const Scenario& sc, const Cluster& cluster, const TrainingGraph& job) {
  std::vector<int> sms;
  if (sc.training.compute_model != ComputeModel::kernel) return sms;
  sms.reserve(job.worker_gpus.size());
  for (const std::vector<int>& gpus : job.worker_gpus)
    sms.push_back(gpus.empty() ? 0 : cluster.gpu_spec(gpus[0]).sm_count);
  return sms;
}

/// One pass of the whole job; `start` gives the thermal starting point and receives the end state.
/// The storage stall is part of the simulated timeline. With `job_effects`, storage figures,
/// failures/goodput and cost (issue 4) follow, each only when the scenario asks, the cost's energy
/// at the power model's facility draw.
/// PassOutput::timing (only where clock_feedback_possible is false): when no GPU has a
/// clock_factor below 1 either, every clock stays 1 and the power/thermal model could only report,
/// so it is not run (no power, thermal or straggler section; energy cost at 0 W).
Report simulate_pass(const Scenario& sc, sim::TraceRecorder* trace, ThermalStartState& start, bool job_effects,
                     const StorageStall& storage, PassOutput output = PassOutput::full, const CoRun& co = {}) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster =
      co.cluster != nullptr ? co.cluster->with_ecmp_seed(sc.cluster.fabric.ecmp_seed) : Cluster(sc.cluster);
  cluster.install(net);
  CollectiveEngine coll(sim, net, cluster);
  start_background(net, cluster, co);
  const double stall_s =
      storage.compute_iteration_s > 0 ? storage_stall_per_iteration_s(sc, cluster, storage.compute_iteration_s) : 0.0;
  TrainingGraph job = build_training_graph(sc, cluster, stall_s);
  const std::vector<int> worker_sms = nccl_worker_sms(sc, cluster, job);
  if (output == PassOutput::timing && trace == nullptr && !gpus_slowed(sc, cluster)) {
    run_op_graph(sim, coll, job.graph, nullptr, co.any(), worker_sms);
    measure_own(net, cluster, job, co);
    Report r = training_report(sc, cluster, net, sim.events_processed(), job, nullptr);
    std::int64_t end_ns = 0;
    for (const Op& op : job.graph.ops) end_ns = std::max(end_ns, op.end_ns);
    report_override_effects(sc, cluster, net, end_ns, job.iterations, job.worker_gpus, r);
    if (job_effects) apply_job_effects(sc, cluster, r, 0.0, storage.compute_iteration_s);
    start.folded = job.folded;
    return r;
  }
  PowerThermalSetup setup = power_thermal_setup(sc, cluster, job, start);
  setup.trace = trace;
  PowerThermalRun power_run(sim, std::move(setup), sc.options.threads);
  run_op_graph(sim, coll, job.graph, &power_run.activity(), co.any(), worker_sms);
  PowerThermalModel& power = power_run.finished();
  measure_own(net, cluster, job, co);
  const std::vector<double> gpu_wait_s = power.compute_wait_s();
  Report r = training_report(sc, cluster, net, sim.events_processed(), job, trace, &gpu_wait_s);
  std::int64_t end_ns = 0;
  for (const Op& op : job.graph.ops) end_ns = std::max(end_ns, op.end_ns);
  power.finish(end_ns, r.iteration_time_s, r.time_to_train_s, r.power, r.thermal);
  name_straggler(cluster, r);
  report_override_effects(sc, cluster, net, end_ns, job.iterations, job.worker_gpus, r);
  if (job_effects) {
    apply_job_effects(sc, cluster, r, r.power.facility_average_w, storage.compute_iteration_s);
    // The facility average includes the storage stall, when the GPUs draw idle power; over the
    // wall clock with failures where they are modelled (the hours the rent is charged for).
    r.power.energy_to_train_kwh =
        r.time_to_train_s > 0 ? r.power.facility_average_w * wall_clock_to_train_s(r) / 3.6e6 : 0.0;
  }
  start.periodic_c = power.periodic_start_c();
  start.rack_rise_out_c = power.rack_rise_c();
  start.asymmetric = power.asymmetric();
  start.ceiling_start = power.ceiling_start();
  start.folded = job.folded;
  return r;
}

/// simulate_training's passes: from idle or the periodic steady state, unfolded when folding
/// broke symmetry. `no_slowdown`: without thermal slowdown (attribution); `job_effects`: see
/// simulate_pass.
Report simulate_passes(const Scenario& sc, sim::TraceRecorder* trace, bool no_slowdown, bool job_effects,
                       const StorageStall& storage, PassOutput output, const CoRun& co = {}) {
  const bool steady = sc.thermal.start == ThermalStart::steady_state;
  if (!clock_feedback_possible(sc)) {
    // Temperature feeds nothing back: one pass, reported in the periodic steady state.
    ThermalStartState start;
    start.periodic_correction = steady;
    start.no_thermal_slowdown = no_slowdown;
    return simulate_pass(sc, trace, start, job_effects, storage, output, co);
  }
  Scenario unfolded;
  const Scenario* s = &sc;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ThermalStartState first;
    first.no_thermal_slowdown = no_slowdown;
    if (!steady) {
      Report r = simulate_pass(*s, trace, first, job_effects, storage, PassOutput::full, co);
      if (!(first.asymmetric && first.folded)) return r;
    } else {
      // Pass 1 from idle gives the periodic steady state; pass 2 starts there. A rack over its
      // cooling capacity feeds one pass's heat into the next one's inlet, and a throttled clock
      // changes the heat: further passes follow until the last iteration's thermal state repeats
      // (thermal.steady_state) or kMaxSteadyPasses; the report says which.
      constexpr int kMaxSteadyPasses = 6;
      simulate_pass(*s, nullptr, first, false, storage, PassOutput::full, co);
      bool asymmetric = first.asymmetric, folded = false;
      ThermalStartState prev = first;
      Report r;
      for (int pass = 2;; ++pass) {
        ThermalStartState next;
        next.start_c = prev.periodic_c;
        next.rack_rise_c = prev.rack_rise_out_c;
        next.no_thermal_slowdown = no_slowdown;
        sim::TraceRecorder pass_trace;  // only the reported pass's trace is kept
        r = simulate_pass(*s, trace != nullptr ? &pass_trace : nullptr, next, job_effects, storage, PassOutput::full,
                          co);
        if (trace != nullptr) *trace = std::move(pass_trace);
        asymmetric = asymmetric || next.asymmetric;
        folded = next.folded;
        // A pass that started a GPU at its slowdown temperature is not the periodic state even
        // when it drifts < 0.5 K: the next one starts on the orbit (PowerThermalModel::ceiling_start).
        if ((r.thermal.steady_state && !next.ceiling_start) || pass >= kMaxSteadyPasses) break;
        prev = std::move(next);
      }
      if (!(asymmetric && folded)) return r;
    }
    // Racks saw different inlets for GPUs that one simulated GPU stood for: run every replica.
    unfolded = sc;
    unfolded.options.fold_symmetric = false;
    s = &unfolded;
  }
  throw std::logic_error("executor: an unfolded run reported folding asymmetry");
}

}  // namespace

/// One draw of the routing: the whole job (storage stall pass, thermal passes, attribution);
/// `job_effects` as simulate_pass. `storage` receives the iteration without storage.
static Report simulate_draw(const Scenario& sc, sim::TraceRecorder* trace, bool job_effects, StorageStall& storage,
                            PassOutput output, const CoRun& co = {}) {
  if (sc.storage) {
    // The stall is the loader's read time beyond the iteration without storage (and the
    // checkpoint stall per iteration): simulate that iteration first, then the job with the stall
    // in its timeline, where the GPUs wait idle (power, temperature and utilisation see it).
    Scenario without = sc;
    without.storage.reset();
    without.reliability.reset();
    without.cost.reset();
    const CoRun background_only{co.background, nullptr, co.cluster};
    storage.compute_iteration_s =
        simulate_passes(without, nullptr, false, false, {}, output, background_only).iteration_time_s;
  }
  Report r = simulate_passes(sc, trace, false, job_effects, storage, output, co);
  if (r.thermal.throttled_gpus > 0) {
    // Attribution: the same job with no thermal slowdown (a power cap still holds).
    const Report cool =
        simulate_passes(sc, nullptr, true, false, storage, PassOutput::full, CoRun{co.background, nullptr, co.cluster});
    const double hot_s = r.iteration_time_s - r.breakdown.storage_stall_s;
    const double cool_s = cool.iteration_time_s - cool.breakdown.storage_stall_s;
    r.thermal.throttle_iteration_increase_s = hot_s - cool_s;
    r.thermal.throttle_iteration_increase_fraction = r.thermal.throttle_iteration_increase_s / cool_s;
  }
  return r;
}

/// The routing's name in reports.
static const char* routing_report_name(FabricRouting r) {
  switch (r) {
    case FabricRouting::d_mod_k:
      return "d_mod_k";
    case FabricRouting::adaptive:
      return "adaptive";
    case FabricRouting::ecmp_hash:
      return "ecmp_hash";
    case FabricRouting::automatic:
      break;
  }
  return "automatic";
}

static Report simulate_training_as_in_arena(const Scenario& sc, sim::TraceRecorder* trace, PassOutput output,
                                            const std::vector<LeafBackground>* background, UpLinkTraffic* own) {
  check_graph_size_early(sc);  // before any cluster is built (graph_size.h)
  const NodeTemplate& node = cluster_node_template(sc.cluster);
  const FabricRouting routing =
      sc.cluster.fabric.routing != FabricRouting::automatic
          ? sc.cluster.fabric.routing
          : Cluster::routing_for_nic(find_nic(sc.cluster.nic.empty() ? node.nic : sc.cluster.nic));
  const bool switched = sc.cluster.num_nodes > 1 && sc.cluster.fabric.kind != FabricKind::torus;
  // Only ECMP can need draws; then the resource table (no network) says whether a hash has a choice,
  // and the draws share it (each copies it with its own seed: CoRun::cluster).
  std::optional<Cluster> shared;
  if (switched && routing == FabricRouting::ecmp_hash) shared.emplace(sc.cluster);
  const int seeds = shared && shared->hashing_matters() ? kEcmpSeeds : 1;
  std::vector<Report> draws(static_cast<std::size_t>(seeds));
  std::vector<StorageStall> stalls(static_cast<std::size_t>(seeds));
  std::vector<UpLinkTraffic> traffic(static_cast<std::size_t>(seeds));
  // With several draws, storage figures, failures and cost follow once, from the mean (below).
  auto run_draw = [&](int i) {
    Scenario s = sc;
    s.cluster.fabric.ecmp_seed = sc.cluster.fabric.ecmp_seed + static_cast<std::uint64_t>(i);
    const auto k = static_cast<std::size_t>(i);
    try {
      draws[k] = simulate_draw(s, i == 0 ? trace : nullptr, seeds == 1, stalls[k], output,
                               CoRun{background, own != nullptr ? &traffic[k] : nullptr, shared ? &*shared : nullptr});
    } catch (const std::overflow_error& e) {
      // Issue 21: a huge model's op overflowed the engine's clock, and the engine's message named
      // no field. Name what makes the ops that long.
      if (std::string_view(e.what()).find("Time::max()") == std::string_view::npos) throw;
      throw std::overflow_error(
          "workload.model: one iteration of this job runs past 292 years of simulated time (" + std::string(e.what()) +
          ") (expected a smaller model: workload.model.num_layers, hidden_size, seq_length; a smaller "
          "workload.training.global_batch_size; or more GPUs)");
    }
  };
  // Each draw deterministic; options.threads sets how many run at once (worker_threads.h: the
  // arena simulate_training_as set up, or the calling thread alone for 1).
  for_each_index(sc.options.threads, seeds, run_draw);
  // Statistics in draw order (deterministic whatever the thread count).
  const double n = seeds;
  if (own != nullptr && (background == nullptr || background->empty())) {
    *own = {};
    for (const UpLinkTraffic& t : traffic) {
      own->up_bytes_per_s += t.up_bytes_per_s / n;
      own->down_bytes_per_s += t.down_bytes_per_s / n;
      own->up_busy_bytes_per_s += t.up_busy_bytes_per_s / n;
      own->up_flows_per_leaf += t.up_flows_per_leaf / n;
    }
  }
  double sum_s = 0, min_s = draws[0].iteration_time_s, max_s = min_s;
  TimeBreakdown mean;
  constexpr double TimeBreakdown::*kParts[] = {
      &TimeBreakdown::compute_s,         &TimeBreakdown::tp_comm_exposed_s,    &TimeBreakdown::dp_comm_exposed_s,
      &TimeBreakdown::pp_comm_exposed_s, &TimeBreakdown::pipeline_bubble_s,    &TimeBreakdown::optimizer_s,
      &TimeBreakdown::storage_stall_s,   &TimeBreakdown::ep_comm_exposed_s,    &TimeBreakdown::offload_s,
      &TimeBreakdown::cp_comm_exposed_s, &TimeBreakdown::input_copy_exposed_s, &TimeBreakdown::straggler_wait_s};
  for (const Report& d : draws) {
    sum_s += d.iteration_time_s;
    min_s = std::min(min_s, d.iteration_time_s);
    max_s = std::max(max_s, d.iteration_time_s);
    for (double TimeBreakdown::*part : kParts) mean.*part += d.breakdown.*part / n;
  }
  const double mean_s = sum_s / n;
  double var = 0;
  for (const Report& d : draws) var += (d.iteration_time_s - mean_s) * (d.iteration_time_s - mean_s);
  Report r = std::move(draws[0]);
  r.routing.routing = switched ? routing_report_name(routing) : "";
  r.routing.seeds = seeds;
  r.routing.iteration_time_s_min = min_s;
  r.routing.iteration_time_s_max = max_s;
  r.routing.iteration_time_s_stddev = std::sqrt(var / n);
  if (seeds == 1) return r;
  const double scale = mean_s > 0 ? r.iteration_time_s / mean_s : 1.0;
  // The mean draw: the iteration time, its breakdown (each part averaged, so they still add up)
  // and the rates derived from the iteration time; the other sections are the first draw's.
  r.iteration_time_s = mean_s;
  r.breakdown = mean;
  for (double* rate :
       {&r.tokens_per_s, &r.samples_per_s, &r.tflops_per_gpu, &r.hardware_tflops_per_gpu, &r.mfu, &r.hfu}) {
    *rate *= scale;
  }
  r.time_to_train_s /= scale;
  // Energy per iteration at the first draw's average power over the mean iteration (energy = P x t
  // still holds; the trace, when asked, is the first draw's own timeline).
  const double stretch = 1.0 / scale;
  r.power.it_energy_per_iteration_j *= stretch;
  r.power.energy_per_iteration_j *= stretch;
  for (GpuPower& g : r.power.gpus) g.energy_j *= stretch;
  double compute_iteration_s = 0;
  for (const StorageStall& st : stalls) compute_iteration_s += st.compute_iteration_s / n;
  // Storage, failures/goodput and cost once, on the mean draw (as simulate_pass does for one).
  // The draws' shared table (seeds > 1 only with it), as Cluster(sc.cluster) would build it.
  apply_job_effects(sc, *shared, r, r.power.facility_average_w, compute_iteration_s);
  r.power.energy_to_train_kwh =
      r.time_to_train_s > 0 ? r.power.facility_average_w * wall_clock_to_train_s(r) / 3.6e6 : 0.0;
  return r;
}

/// The whole run (ECMP draws, op-graph builds, failure draws) on options.threads threads
/// (worker_threads.h); the report is the same for any count.
static Report simulate_training_as(const Scenario& sc, sim::TraceRecorder* trace, PassOutput output,
                                   const std::vector<LeafBackground>* background = nullptr,
                                   UpLinkTraffic* own = nullptr) {
  return with_worker_threads(sc.options.threads,
                             [&] { return simulate_training_as_in_arena(sc, trace, output, background, own); });
}

Report simulate_training(const Scenario& sc, sim::TraceRecorder* trace) {
  return simulate_training_as(sc, trace, PassOutput::full);
}

Report simulate_training_timing(const Scenario& sc) { return simulate_training_as(sc, nullptr, PassOutput::timing); }

Report simulate_training_timing(const Scenario& sc, const std::vector<LeafBackground>& background, UpLinkTraffic* own) {
  return simulate_training_as(sc, nullptr, PassOutput::timing, &background, own);
}

}  // namespace traincast::models
