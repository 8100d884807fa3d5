#pragma once
// The job-level discrete-event scheduler (docs/cluster.md): jobs arrive, queue, start on whole
// nodes when the policy lets them, and end after their run time. Events are arrivals and
// completions in time order (ties: all completions and arrivals at one instant are applied, then
// one scheduling pass), so the result depends only on the input.
//
// Policies (models/spec/jobs_spec.h). The queue is ordered by priority (higher first), then
// arrival, then list order.
// - fifo: jobs start in queue order while the head fits; nothing passes a waiting head.
// - backfill: EASY backfill as Slurm's sched/backfill: when the head does not fit, it gets a
//   reservation at the shadow time (the earliest estimated end of running jobs at which enough nodes
//   are free); a later job starts now only if it fits now and either ends (by its estimate) by the
//   shadow time or uses no more than the nodes left over at the shadow time. The estimate is the
//   job's isolated run time (`estimate`); its actual run time comes from `run_time` at its start.

#include <cstddef>
#include <functional>
#include <vector>

#include "models/spec/jobs_spec.h"
#include "sim/time.h"

namespace traincast::models {

struct QueuedJob {
  int nodes = 1;       ///< whole nodes it asks for
  sim::Time arrival;   ///< submission time
  int priority = 0;    ///< higher first
  sim::Time estimate;  ///< run-time estimate backfill uses (the isolated run time)
};

struct ClusterShape {
  int num_nodes = 1;
  int nodes_per_leaf = 1;  ///< nodes under one leaf switch (num_nodes or more: one leaf)
  /// Drained nodes (a missing GPU, Cluster::drained_nodes), ascending: never given to a job; they
  /// keep their places (node i is still on leaf i / nodes_per_leaf).
  std::vector<int> drained = {};
};

/// What a job did. never_fits: it asks for more nodes than the cluster has in service (start, end unset).
struct JobOutcome {
  bool never_fits = false;
  sim::Time start;
  sim::Time end;
  std::vector<int> nodes;  ///< ascending
  int leaves = 0;          ///< leaf switches its nodes span
};

struct Schedule {
  std::vector<JobOutcome> jobs;  ///< in input order
  /// (time, busy nodes) after every instant where the count changed, ascending, from (0, 0); drained
  /// nodes are never busy.
  std::vector<std::pair<sim::Time, int>> busy_nodes;
  sim::Time makespan;  ///< last completion (0 when no job ran)
};

/// The job's actual run time on `nodes` alone (called once, when it starts).
using RunTimeOf = std::function<sim::Time(std::size_t job, const std::vector<int>& nodes)>;

/// A running job: its index and nodes.
struct RunningJob {
  std::size_t job = 0;
  const std::vector<int>* nodes = nullptr;
};

/// The whole run time job `job` would take at the rate it has while `running` (every running job,
/// itself included, ascending by index) run together: its run time alone when none of them slows it.
using CoRunTimeOf = std::function<sim::Time(std::size_t job, const std::vector<RunningJob>& running)>;

/// Runs the jobs to completion. Throws std::invalid_argument for nodes < 1, a negative arrival or
/// estimate, or a shape with num_nodes or nodes_per_leaf < 1 or a drained node outside 0..num_nodes-1.
/// With `co_run_time` (co-runner interference, docs/cluster.md): after every instant's scheduling
/// pass each running job's run time under the new set of running jobs is asked for; where it
/// changed, the job's remaining work (the fraction of its run not yet done, at the rate it had since
/// its last change) is re-timed at the new rate: end = now + remaining x new run time, rounded to
/// the nearest nanosecond. A job whose run time never changes ends exactly at start + run_time.
/// Backfill's reservations still use each job's `estimate`.
Schedule run_scheduler(const std::vector<QueuedJob>& jobs, const ClusterShape& shape, const SchedulerSpec& spec,
                       const RunTimeOf& run_time, const CoRunTimeOf& co_run_time = nullptr);

}  // namespace traincast::models
