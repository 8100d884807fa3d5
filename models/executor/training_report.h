#pragma once
// Turns a finished run of a training graph into its Report: throughput, MFU, time breakdown,
// straggler, memory, busiest links, utilisation, and the trace's spans.

#include <cstdint>
#include <vector>

#include "models/executor/training_graph.h"
#include "models/hardware/cluster.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"
#include "sim/flow_network.h"
#include "sim/trace.h"

namespace traincast::models {

/// The report of a graph that run_op_graph has executed on `net` (the network `cluster` was built
/// on); `events` = the simulator's processed events. `trace`, when given, receives one span per
/// executed op (per worker, per stream). Storage, reliability and cost (apply_job_effects) are
/// left to the caller, which knows the power model's facility draw. `gpu_wait_s`, when given: per
/// GPU of job.worker_gpus (flattened in worker order), the time [s] of the last iteration its
/// worker computed while it waited for a slower GPU of the worker (PowerThermalModel::
/// compute_wait_s); the utilisation's per-GPU compute busy fractions leave it out.
Report training_report(const Scenario& scenario, const Cluster& cluster, const sim::FlowNetwork& net,
                       std::uint64_t events, const TrainingGraph& job, sim::TraceRecorder* trace = nullptr,
                       const std::vector<double>* gpu_wait_s = nullptr);

/// Fills r.straggler's GPU (the slowest rank's TP-group GPU with the lowest mean SM clock while
/// computing; the first on ties), node, clock, temperature and cause from the power and thermal
/// reports (training_report found the rank and the input-copy cause).
void name_straggler(const Cluster& cluster, Report& r);

}  // namespace traincast::models
