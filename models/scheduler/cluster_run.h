#pragma once
// Several jobs on one cluster (docs/cluster.md): the scheduler (scheduler.h) with each job's run
// time from the detailed simulator (models/executor/training_run.h).
//
// A job's iteration time is simulate_training of its job scenario (models/spec/cluster_jobs.h) on
// its placement class: the number of leaf switches its nodes span. A job of n nodes over L leaves
// is simulated with nodes_per_leaf = ceil(n / L), so it crosses the spine as its placement does;
// on an oversubscribed leaf each simulated leaf gets the whole leaf's up-link ports
// (FabricSpec::leaf_up_ports), so a job alone has its leaves' up-links as the fabric has them.
// It gets the cluster.overrides of the nodes it is placed on, in its own numbering
// (models/hardware/placed_overrides.h); its isolated run is on the lowest-numbered nodes in
// service, with theirs.
// Co-runners (docs/cluster.md): two running jobs that both span > 1 leaf and have nodes on one
// oversubscribed leaf share its up-links; the job is re-simulated with background flows there at
// each co-runner's measured mean up-link rate (its own placement's simulation, scaled to its nodes
// on that leaf; simulate_training_timing's LeafBackground). Results are cached per (job scenario,
// leaves, its nodes' overrides, background) and simulated once, with simulate_training_timing
// (the same timing bits as simulate_training). The isolated simulations run in parallel; so do the placements' and the
// co-runner sets', in rounds: each round schedules with the cached timings (a missing one stands
// in with the isolated run time, or the placement's alone), the ones it missed are simulated
// together, until a round misses none (the exact schedule). `simulations` counts every
// simulation run, stand-ins that the exact schedule did not use included. When the set of running
// jobs changes, each job's remaining work is re-timed at its new rate (run_scheduler's CoRunTimeOf).
//
// Run time: a token budget T takes ceil(T / tokens per iteration) iterations of the simulated
// iteration time (alone_duration_s D: T = D x the job's isolated tokens/s); a duration_s job runs
// exactly that long. Backfill's estimate is the job's
// isolated run time: on the fewest leaves its node count needs (ceil(n / nodes_per_leaf)).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/spec/cluster_jobs.h"

namespace traincast::models {

struct ClusterJobResult {
  std::string name;
  int gpus = 0;
  double arrival_s = 0.0;
  int priority = 0;
  /// Why it never ran ("" = it ran): more GPUs than the cluster, invalid or out of memory on its GPUs.
  std::string problem;
  double start_s = 0.0;
  double end_s = 0.0;
  double wait_s = 0.0;       ///< start - arrival
  double run_s = 0.0;        ///< end - start
  double alone_run_s = 0.0;  ///< run time alone on an empty cluster (the backfill estimate)
  double slowdown = 0.0;     ///< run_s / alone_run_s (placement and co-runners; 1 when duration_s is fixed)
  /// slowdown = placement_slowdown x co_runner_slowdown. placement_slowdown: its run time alone on the
  /// nodes it got (leaves spanned, the cluster.overrides of those nodes) / alone_run_s; co_runner_slowdown:
  /// run_s / that run time (other jobs on shared oversubscribed leaf up-links). Both 1 when duration_s is fixed.
  double placement_slowdown = 0.0;
  double co_runner_slowdown = 0.0;
  double stretch = 0.0;           ///< (wait_s + run_s) / alone_run_s
  double iteration_time_s = 0.0;  ///< on its placement, alone (no co-runners); 0 for a fixed-duration job
  std::int64_t iterations = 0;    ///< 0 for a fixed-duration job
  int leaves = 0;                 ///< leaf switches its nodes span
  std::string nodes;              ///< its nodes as ranges, e.g. "0-3,8"
};

struct ClusterRunResult {
  std::vector<ClusterJobResult> jobs;  ///< in scenario order
  int cluster_gpus = 0;                ///< GPUs in service: the drained nodes' (missing GPUs) not counted
  double makespan_s = 0.0;             ///< first arrival (0) to last completion
  double utilisation = 0.0;            ///< busy GPU-seconds / (cluster GPUs x makespan)
  double mean_wait_s = 0.0;            ///< over jobs that ran
  double p95_wait_s = 0.0;             ///< nearest rank: the ceil(0.95 n)-th smallest wait of jobs that ran
  int jobs_run = 0;
  /// (time [s], busy GPUs) at every change, ascending, from (0, 0).
  std::vector<std::pair<double, int>> busy_gpus;
  int simulations = 0;  ///< detailed simulations run (cache misses)
};

/// Schedules and runs `jobs`. threads: worker threads for the isolated simulations (0 = all hardware threads; the
/// result is the same for any count). Throws std::invalid_argument as simulate_training does for a
/// job scenario the models cannot run.
ClusterRunResult simulate_cluster(const ClusterJobs& jobs, int threads = 1);

/// As simulate_cluster once per scheduler (each replacing jobs.cluster.scheduler), in order, sharing one
/// cache of detailed simulations: a result's `simulations` counts only the ones its run added.
std::vector<ClusterRunResult> simulate_cluster(const ClusterJobs& jobs, const std::vector<SchedulerSpec>& schedulers,
                                               int threads = 1);

/// Fraction of cluster_gpus busy in each of `buckets` equal slices of [0, makespan_s] (>= 1).
std::vector<double> utilisation_by_slice(const ClusterRunResult& r, int buckets);

}  // namespace traincast::models
