#include "models/executor/job_effects.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/cost/cost_model.h"
#include "models/hardware/catalog.h"
#include "models/reliability/reliability_model.h"
#include "models/storage/storage_model.h"
#include "models/workload/layer_program.h"

namespace traincast::models {
namespace {

/// Cables of the scale-out fabric: one per compute NIC port to its leaf, plus every leaf up-link
/// and (3 tiers) aggregation-to-core link of the switches bought (`s`, Cluster::switch_count).
/// Torus: no switches, so a cable runs NIC port to NIC port: a node's ports are shared evenly among
/// its 2 x dims neighbour directions (the model's link is nics x NIC rate / (2 x dims) per
/// direction), a cable joins two ports, so each dimension of extent >= 2 takes nodes x nics / dims
/// ports and half as many cables; a dimension of extent 1 has no neighbour and its ports no cable.
/// 8 DGX H100 (8 NICs) in a ring: 8 x 8 / 2 = 32 cables (docs/fabric.md, torus cabling).
int fabric_cables(const Scenario& sc, const Cluster& c, const SwitchCount& s) {
  const FabricSpec& f = sc.cluster.fabric;
  if (f.kind == FabricKind::none || c.num_nodes() <= 1) return 0;
  if (f.kind == FabricKind::torus) {
    const std::vector<int> dims = f.torus_dims.empty() ? std::vector<int>{c.num_nodes()} : f.torus_dims;
    const auto cabled = static_cast<double>(std::count_if(dims.begin(), dims.end(), [](int d) { return d >= 2; }));
    const double ports =
        static_cast<double>(c.num_nodes()) * c.nics_per_node() * cabled / static_cast<double>(dims.size());
    return static_cast<int>(std::lround(ports / 2.0));
  }
  const long long cables = static_cast<long long>(c.num_nodes()) * c.nics_per_node() + s.leaf_up_links + s.core_links;
  return static_cast<int>(std::min<long long>(cables, std::numeric_limits<int>::max()));
}

/// What one purchase price buys, in words: "dgx_h100 node of 8 GPUs", "gb200_nvl72 rack of 72
/// GPUs", and for a "base/N" partition the base's whole server or rack with its nodes ("gb200_nvl72
/// rack of 72 GPUs, 2 gb200_nvl72/36 nodes each").
std::string price_unit(const NodeTemplate& t) {
  const bool partition = t.partition_of_gpus > 0;
  const std::string base = partition ? t.name.substr(0, t.name.find('/')) : t.name;
  std::string unit =
      base + (t.gpus_per_rack > 0 ? " rack of " : " node of ") + std::to_string(t.physical_gpus()) + " GPUs";
  if (partition) {
    const int n = t.nodes_per_physical();
    unit += ", " + std::to_string(n) + " " + t.name + (n == 1 ? " node" : " nodes") + " each";
    const int spare = t.physical_gpus() - n * t.gpus_per_node;
    if (spare > 0) unit += " and " + std::to_string(spare) + " spare GPUs";
  }
  return unit;
}

/// Storage figures and the checkpoint interval for an iteration of compute_iter_s without storage.
struct StoragePlan {
  StorageReport storage;
  StorageSpec spec;
  std::vector<FailureRate> rates;
  double interval_s = 0;
  double iteration_s = 0;  ///< compute + data-loader stall (checkpoints excluded)
};

StoragePlan plan_storage(const Scenario& sc, const Cluster& cluster, double compute_iter_s) {
  const NodeTemplate& node = cluster_node_template(sc.cluster);
  StorageNodes nodes;
  nodes.num_nodes = cluster.num_nodes();
  nodes.gpus_per_node = cluster.gpus_per_node();
  nodes.pcie_bytes_per_s = node.pcie_bytes_per_s;
  StoragePlan p;
  // Checkpoint costs: the scenario's storage, or the default storage when only reliability asks.
  Scenario with_storage = sc;
  if (!with_storage.storage) with_storage.storage = StorageSpec{};
  p.storage = evaluate_storage(with_storage, nodes, compute_iter_s);
  p.spec = *with_storage.storage;
  // Checkpoint interval: given, else Daly's optimum for the failure rates (defaults: Llama 3).
  p.rates = sc.reliability && !sc.reliability->failures.empty() ? sc.reliability->failures : llama3_failure_rates();
  const double rate_h = job_failure_rate_per_hour(p.rates, cluster.num_gpus(), cluster.num_nodes());
  const double delta_s = p.spec.checkpoint_mode == CheckpointMode::synchronous ? p.storage.checkpoint_write_s
                                                                               : p.storage.checkpoint_snapshot_s;
  p.interval_s = sc.reliability && sc.reliability->checkpoint_interval_s > 0 ? sc.reliability->checkpoint_interval_s
                 : p.spec.checkpoint_interval_s > 0                          ? p.spec.checkpoint_interval_s
                                                    : daly_interval_s(delta_s, 3600.0 / rate_h);
  // Without a storage section the data loader is assumed to keep up (no stall).
  p.iteration_s = compute_iter_s + (sc.storage ? p.storage.data_stall_s_per_iteration : 0.0);
  p.interval_s = std::max(p.interval_s, p.iteration_s);  // at most one checkpoint per iteration
  if (!std::isfinite(p.interval_s)) p.interval_s = kNoFailureCheckpointIntervalS;  // no failures: practically never
  set_checkpoint_interval(p.storage, p.spec, p.interval_s, p.iteration_s);
  return p;
}

}  // namespace

double storage_stall_per_iteration_s(const Scenario& sc, const Cluster& cluster, double compute_iteration_s) {
  if (!sc.storage) return 0.0;
  const StoragePlan p = plan_storage(sc, cluster, compute_iteration_s);
  const double stall = p.storage.data_stall_s_per_iteration + p.storage.checkpoint_stall_s_per_iteration;
  if (!(compute_iteration_s + stall < 9.2e9))  // sim::Time's range, as for a simulated iteration
    throw std::overflow_error(
        "storage: the data-loader or checkpoint stall makes an iteration longer than the simulator's range "
        "of 292 years (check storage bandwidths and storage.bytes_per_sample / bytes_per_token)");
  return stall;
}

void apply_job_effects(const Scenario& sc, const Cluster& cluster, Report& r, double facility_power_w,
                       double compute_iteration_s) {
  if (!sc.storage && !sc.reliability && !sc.cost) return;
  const double compute_iter_s = compute_iteration_s > 0 ? compute_iteration_s : r.iteration_time_s;
  const double tokens_per_iteration = static_cast<double>(sc.training.global_batch_size) * tokens_per_sample(sc.model);
  const StoragePlan plan = plan_storage(sc, cluster, compute_iter_s);
  const StorageReport& storage = plan.storage;
  const StorageSpec& sspec = plan.spec;
  const std::vector<FailureRate>& rates = plan.rates;
  const double interval_s = plan.interval_s;
  const double iteration_s = plan.iteration_s;
  // The stall itself is in the simulated timeline: r's iteration time and rates include it.
  if (sc.storage) r.storage = storage;

  double wall_to_train_s = r.time_to_train_s;
  // Failures are drawn over a training run; one that does not fit in memory has none.
  if (sc.reliability && !r.memory.oom) {
    const ReliabilitySpec& rel = *sc.reliability;
    FailureSimInputs in;
    for (const FailureRate& f : rates) {
      in.causes.push_back(f.cause);
      in.rate_per_s.push_back((f.per_gpu_hour * cluster.num_gpus() + f.per_node_hour * cluster.num_nodes()) / 3600.0);
    }
    // Failure-free training time without checkpoints (the draws add them): data stalls included.
    in.work_s =
        sc.training.train_tokens > 0 ? std::ceil(sc.training.train_tokens / tokens_per_iteration) * iteration_s : 0.0;
    in.horizon_s = rel.horizon_s;
    if (in.horizon_s == 0 && in.work_s > kMaxFailureWindowS) {
      throw FailureWindowExceeded(
          "reliability: workload.training.train_tokens need " +
              std::to_string(static_cast<long long>(in.work_s / 86400.0)) +
              " days of failure-free training, beyond the failure draws' range of 3.2e8 s, about 10 years (expected "
              "fewer train_tokens, or reliability.horizon_s > 0 for a window of at most 3.2e8 s)",
          in.work_s / 86400.0);
    }
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
    // useful_work_s is a mean over draws: when every draw finished it equals work_s up to the
    // rounding of that sum, hence the relative 1e-9.
    if (in.work_s > 0) wall_to_train_s = wall_clock_to_train_s(r);
  }

  if (sc.cost) {
    CostInputs ci;
    ci.spec = *sc.cost;
    ci.gpu = r.gpu;
    ci.nodes = cluster.num_nodes();
    ci.gpus_per_node = cluster.gpus_per_node();
    const NodeTemplate& node = cluster_node_template(sc.cluster);
    ci.physical_gpus = node.physical_gpus();
    ci.nodes_per_physical = node.nodes_per_physical();
    ci.unit = price_unit(node);
    // The physical switches, the count explain prints (models/hardware/switch_count.h).
    const SwitchCount switches = cluster.switch_count();
    ci.switches = static_cast<int>(std::min<long long>(switches.total(), std::numeric_limits<int>::max()));
    ci.switch_ports = switches.switch_ports;
    ci.cables = fabric_cables(sc, cluster, switches);
    ci.train_wall_clock_s = wall_to_train_s;
    ci.facility_power_w = facility_power_w;
    r.cost = evaluate_cost(ci);
  }
}

double wall_clock_to_train_s(const Report& r) {
  const ReliabilityReport& rl = r.reliability;
  if (!rl.modelled || rl.work_requested_s <= 0 || !(rl.goodput_mean > 0)) return r.time_to_train_s;
  // useful_work_s is a mean over draws: when every draw finished it equals the work asked for up
  // to the rounding of that sum, hence the relative 1e-9.
  return rl.useful_work_s >= rl.work_requested_s * (1 - 1e-9) ? rl.wall_clock_s_mean
                                                              : r.time_to_train_s / rl.goodput_mean;
}

}  // namespace traincast::models
