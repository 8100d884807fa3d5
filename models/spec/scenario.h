#pragma once
// Plain structs describing one simulation: what the io layer produces from a scenario file
// (models/io/) and what the models consume. No protobuf here. Units are in every name.
// Defaults below are the documented defaults of the scenario schema (models/io/traincast.proto).

#include <optional>
#include <string>
#include <vector>
#include "models/spec/cluster_spec.h"
#include "models/spec/enums.h"
#include "models/spec/jobs_spec.h"
#include "models/spec/operations_spec.h"
#include "models/spec/workload_spec.h"

namespace traincast::models {

struct OptionsSpec {
  /// Iterations simulated (>= 1); the report is of the last one. With overlap_param_gather and
  /// ZeRO-1 at least 2 are simulated, so the gather's overlap with the next forward is real.
  int iterations = 1;
  bool fold_symmetric = true;  ///< simulate one DP replica when the job is symmetric (DESIGN §3)
  /// Threads for the whole run (ECMP draws, op-graph generation, failure draws): 0 = all hardware
  /// threads (the caller's TBB arena), 1 = one, N = an arena of N (models/reliability/worker_threads.h).
  /// The result does not depend on it.
  int threads = 0;
  bool operator==(const OptionsSpec&) const = default;
};

struct Scenario {
  std::string name;
  std::string description;
  ClusterSpec cluster;
  ModelSpec model;
  ParallelSpec parallel;
  TrainingSpec training;
  OffloadSpec offload;
  OptionsSpec options;
  std::optional<StorageSpec> storage;          ///< absent: storage not modelled (no stalls)
  std::optional<ReliabilitySpec> reliability;  ///< absent: failures not modelled
  std::optional<CostSpec> cost;                ///< absent: cost not reported
  /// workload.data_loader: absent = input copies not modelled (free). ResNet family only.
  std::optional<DataLoaderSpec> data_loader;
  PowerSpec power;
  ThermalSpec thermal;
  SchedulerSpec scheduler;    ///< how `traincast cluster` queues and places `jobs`
  std::vector<JobSpec> jobs;  ///< several jobs sharing the cluster (empty: one job, the workload)
  /// What the loader found worth a warning but not an error, each "file:line:col: path: what
  /// (expected ...)": today a node_template block no node uses (a library of templates is
  /// legitimate). run, compare, explain and nccl-tests print each as "warning: ...".
  std::vector<std::string> input_warnings;
  bool operator==(const Scenario&) const = default;
};

}  // namespace traincast::models
