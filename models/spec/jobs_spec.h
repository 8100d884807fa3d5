#pragma once
// Several jobs sharing one cluster under a scheduler (docs/cluster.md): the plain structs of
// models/io/traincast.proto's JobSpec and SchedulerSpec. Units are in every name.

#include <string>

namespace traincast::models {

/// Queue policy. fifo: strict queue order. backfill: EASY backfill as Slurm's sched/backfill
/// offers it; the run-time estimate is the job's simulated isolated run time.
enum class SchedulerPolicy { fifo, backfill };

/// Which free nodes a starting job gets. packed: lowest-numbered; spread: round-robin over the
/// leaf switches; topology_aware: fewest leaves (leaves with most free nodes first).
enum class JobPlacement { packed, spread, topology_aware };

struct SchedulerSpec {
  SchedulerPolicy policy = SchedulerPolicy::fifo;
  JobPlacement placement = JobPlacement::packed;
  bool operator==(const SchedulerSpec&) const = default;
};

/// One job of a shared cluster, as the scenario writes it. Its workload is resolved by models/io
/// (load_cluster_jobs) into a whole job scenario.
struct JobSpec {
  std::string name;      ///< "" = "job<index>"
  std::string workload;  ///< zoo name or scenario path; "" = the scenario's own workload
  int gpus = 0;          ///< required, a multiple of the node's GPUs
  double arrival_s = 0.0;
  int priority = 0;         ///< higher first
  double tokens = 0.0;      ///< token budget (0 = unset); exactly one of tokens, duration_s, alone_duration_s
  double duration_s = 0.0;  ///< fixed run time [s] (0 = unset)
  /// token budget as time [s]: tokens = alone_duration_s x the job's simulated tokens/s alone (0 = unset)
  double alone_duration_s = 0.0;
  bool operator==(const JobSpec&) const = default;
};

}  // namespace traincast::models
