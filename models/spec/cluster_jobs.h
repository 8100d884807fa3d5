#pragma once
// A shared-cluster scenario resolved for the scheduler (models/io/cluster_jobs_io.h makes it,
// models/scheduler/ runs it): the scenario (cluster, scheduler, job list) and each job as a whole
// one-job scenario of its workload on its GPUs.

#include <string>
#include <vector>

#include "models/spec/scenario.h"

namespace traincast::models {

struct ClusterJobs {
  Scenario cluster;  ///< the loaded scenario: cluster, scheduler, jobs
  /// Per job: its workload on its own GPUs (num_nodes = gpus / GPUs per node, dp = gpus / (tp x
  /// pp), global batch = the workload's batch per DP replica x dp), the cluster's fabric; empty
  /// (default) when `problem` is set.
  std::vector<Scenario> job_scenarios;
  /// Per job: why it can never run ("" = it can), e.g. more GPUs than the cluster, or its workload
  /// invalid at its GPU count; such a job is reported, not dropped.
  std::vector<std::string> problem;
  /// Per job: jobs with the same class have the same job scenario (they share simulations).
  std::vector<int> scenario_class;
  /// The files the jobs' workloads were read from (`job { workload: ... }`), each once, in job
  /// order: inputs, which no output may overwrite.
  std::vector<std::string> workload_files;
  /// Per job: what its workload file (`job { workload: ... }`; none for the scenario's own) holds
  /// that a job does not take, one warning each, "FILE:LINE:COL: PATH: what (expected ...)": the
  /// file's own input warnings (Scenario::input_warnings) and its storage, reliability, cost,
  /// power and thermal sections (a job takes the file's workload only). Jobs of one file share them.
  std::vector<std::vector<std::string>> workload_notes;
};

}  // namespace traincast::models
