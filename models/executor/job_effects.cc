#include "models/executor/job_effects.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/cost/cost_model.h"
#include "models/hardware/catalog.h"
#include "models/reliability/reliability_model.h"
#include "models/storage/storage_model.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

/// Cables of the scale-out fabric: one per compute NIC port to its leaf, plus leaf uplinks (down
/// ports / oversubscription per tier above the leaves) when there is more than one leaf group
/// (a single leaf group has no spines to cable to); torus: one per neighbour link.
int fabric_cables(const Scenario& sc, const Cluster& c) {
  const FabricSpec& f = sc.cluster.fabric;
  if (f.kind == FabricKind::none || c.num_nodes() <= 1) return 0;
  const double ports = static_cast<double>(c.num_nodes()) * c.nics_per_node();
  if (f.kind == FabricKind::torus) {
    const double dims = f.torus_dims.empty() ? 1.0 : static_cast<double>(f.torus_dims.size());
    return static_cast<int>(std::lround(c.num_nodes() * dims));
  }
  if (c.num_nodes() <= f.nodes_per_leaf) return static_cast<int>(std::lround(ports));
  return static_cast<int>(std::lround(ports * (1.0 + (f.tiers - 1) / f.oversubscription)));
}

}  // namespace

void apply_job_effects(const Scenario& sc, const Cluster& cluster, Report& r, double facility_power_w) {
  if (!sc.storage && !sc.reliability && !sc.cost) return;
  const NodeTemplate& node = find_node_template(sc.cluster.node_template);
  StorageNodes nodes;
  nodes.num_nodes = cluster.num_nodes();
  nodes.gpus_per_node = cluster.gpus_per_node();
  nodes.pcie_bytes_per_s = node.pcie_bytes_per_s;
  const double compute_iter_s = r.iteration_time_s;
  const double tokens_per_iteration = static_cast<double>(sc.training.global_batch_size) * tokens_per_sample(sc.model);

  // Checkpoint costs: the scenario's storage, or the default storage when only reliability asks.
  Scenario with_storage = sc;
  if (!with_storage.storage) with_storage.storage = StorageSpec{};
  StorageReport storage = evaluate_storage(with_storage, nodes, compute_iter_s);
  const StorageSpec& sspec = *with_storage.storage;

  // Checkpoint interval: given, else Daly's optimum for the failure rates (defaults: Llama 3).
  const std::vector<FailureRate> rates =
      sc.reliability && !sc.reliability->failures.empty() ? sc.reliability->failures : llama3_failure_rates();
  const double rate_h = job_failure_rate_per_hour(rates, cluster.num_gpus(), cluster.num_nodes());
  const double delta_s =
      sspec.checkpoint_mode == CheckpointMode::synchronous ? storage.checkpoint_write_s : storage.checkpoint_snapshot_s;
  double interval_s = sc.reliability && sc.reliability->checkpoint_interval_s > 0
                          ? sc.reliability->checkpoint_interval_s
                      : sspec.checkpoint_interval_s > 0 ? sspec.checkpoint_interval_s
                                                        : daly_interval_s(delta_s, 3600.0 / rate_h);
  // Without a storage section the data loader is assumed to keep up (no stall).
  const double iteration_s = compute_iter_s + (sc.storage ? storage.data_stall_s_per_iteration : 0.0);
  interval_s = std::max(interval_s, iteration_s);     // at most one checkpoint per iteration
  if (!std::isfinite(interval_s)) interval_s = 1e15;  // no failures: practically never
  set_checkpoint_interval(storage, sspec, interval_s, iteration_s);

  if (sc.storage) {
    r.storage = storage;
    const double stall = storage.data_stall_s_per_iteration + storage.checkpoint_stall_s_per_iteration;
    r.breakdown.storage_stall_s = stall;
    r.iteration_time_s += stall;
    if (!(r.iteration_time_s < 9.2e9))  // sim::Time's range, as for a simulated iteration
      throw std::overflow_error(
          "storage: the data-loader or checkpoint stall makes an iteration longer than the simulator's range "
          "of 292 years (check storage bandwidths and storage.bytes_per_sample / bytes_per_token)");
    const double it = r.iteration_time_s;
    r.tokens_per_s = tokens_per_iteration / it;
    r.samples_per_s = static_cast<double>(sc.training.global_batch_size) / it;
    r.tflops_per_gpu = r.model_flops_per_iteration / it / r.num_gpus / 1e12;
    r.hardware_tflops_per_gpu = r.hardware_flops_per_iteration / it / r.num_gpus / 1e12;
    r.mfu = r.tflops_per_gpu * 1e12 / r.peak_flops_per_gpu;
    r.hfu = r.hardware_tflops_per_gpu * 1e12 / r.peak_flops_per_gpu;
    if (sc.training.train_tokens > 0) r.time_to_train_s = sc.training.train_tokens / r.tokens_per_s;
  }

  double wall_to_train_s = r.time_to_train_s;
  if (sc.reliability) {
    const ReliabilitySpec& rel = *sc.reliability;
    FailureSimInputs in;
    for (const FailureRate& f : rates) {
      in.causes.push_back(f.cause);
      in.rate_per_s.push_back((f.per_gpu_hour * cluster.num_gpus() + f.per_node_hour * cluster.num_nodes()) / 3600.0);
    }
    // Failure-free training time without checkpoints (the draws add them): data stalls included.
    in.work_s = sc.training.train_tokens > 0 ? sc.training.train_tokens / tokens_per_iteration * iteration_s : 0.0;
    in.horizon_s = rel.horizon_s;
    in.interval_s = interval_s;
    in.checkpoint_stall_s = storage.checkpoint_stall_s;
    in.durable_lag_s = sspec.checkpoint_mode == CheckpointMode::asynchronous ? storage.checkpoint_write_s : 0.0;
    in.restart_s = rel.restart_overhead_s + storage.checkpoint_read_s;
    in.draws = rel.monte_carlo_draws;
    in.seed = rel.seed;
    in.threads = sc.options.threads;
    r.reliability = simulate_failures(in);
    if (in.work_s > 0 && !(r.reliability.useful_work_s > 0))
      throw std::invalid_argument(
          "reliability.horizon_s: the window ends before any training is done; lengthen it or set it to 0 (until "
          "train_tokens are trained)");
    // A horizon that ends the run before train_tokens are trained gives goodput for that window
    // only: the wall clock to train is then the failure-free time over the mean goodput.
    if (in.work_s > 0)
      wall_to_train_s = r.reliability.useful_work_s >= in.work_s ? r.reliability.wall_clock_s_mean
                                                                 : r.time_to_train_s / r.reliability.goodput_mean;
  }

  if (sc.cost) {
    CostInputs ci;
    ci.spec = *sc.cost;
    ci.gpu = r.gpu;
    ci.nodes = cluster.num_nodes();
    ci.gpus_per_node = cluster.gpus_per_node();
    ci.switches = cluster.num_nodes() > 1 ? cluster.num_leaves() + cluster.num_spines() : 0;
    ci.cables = fabric_cables(sc, cluster);
    ci.train_wall_clock_s = wall_to_train_s;
    ci.facility_power_w = facility_power_w;
    r.cost = evaluate_cost(ci);
  }
}

}  // namespace traincast::models
