#pragma once
// Loading a shared-cluster scenario (a cluster plus `job { ... }` entries, docs/cluster.md) for
// `traincast cluster`: the scenario as load_scenario_file reads it, each job's workload found and
// loaded, and each job as a whole one-job scenario on its own GPUs (models/spec/cluster_jobs.h).

#include <string>
#include <vector>

#include "models/spec/cluster_jobs.h"

namespace traincast::io {

/// Reads `path` (with `overrides`, as load_scenario_file) and resolves its jobs. The file needs no
/// workload section when every job without a `workload` of its own has a fixed `duration_s` (such
/// a job's scenario is then the cluster on its nodes, nothing simulated); a job that would run
/// the missing workload is an error at that job. A job's workload
/// is "" (the scenario's own), a zoo name (no '/', no '.': NAME.textproto in a `models/` or
/// `scenarios/models/` folder at or above the scenario's folder, nearest first) or a scenario path
/// relative to the scenario's folder; each distinct one is loaded once, as a scenario. Throws
/// ScenarioError with every problem found: the scenario's own; an override no job's own simulation
/// can hold, at cluster.overrides[i].select (models::override_not_per_job); no job ("file:1:1: job: none
/// (expected ...)"); a workload that cannot be found or loaded, at job[i].workload with the
/// loader's first message. A job that asks for more GPUs than the cluster has, or whose workload
/// is invalid on its GPU count (e.g. not a multiple of tp x pp), is not an error: its `problem`
/// says why it can never run.
models::ClusterJobs load_cluster_jobs(const std::string& path, const std::vector<std::string>& overrides = {});

/// The job scenario of `workload` on `gpus` GPUs of `cluster` (see models::ClusterJobs), before
/// validation: workload fields from `workload`, the rest from `cluster`, jobs, reliability and
/// cluster.overrides cleared (models::placed_overrides adds its nodes' per placement), num_nodes = gpus /
/// gpus_per_node, dp = gpus / (tp x pp x cp), global batch = the workload's batch per DP replica x dp. gpus_per_node
/// >= 1.
models::Scenario job_scenario(const models::Scenario& cluster, const models::Scenario& workload, int gpus,
                              int gpus_per_node);

}  // namespace traincast::io
