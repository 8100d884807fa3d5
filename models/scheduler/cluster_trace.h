#pragma once
// A cluster run as a Chrome / Perfetto trace (docs/cluster.md, "Outputs"): one process per job
// with its wait and its run as spans, and one process for the cluster with its busy GPUs as a
// counter. models/io/trace_writer.h writes the recorder out.

#include <cstdint>
#include <string_view>

#include "models/scheduler/cluster_run.h"
#include "sim/trace.h"

namespace traincast::models {

/// Appends run `r` to `trace`. Process ids start at `first_pid` (the cluster), then one per job
/// in scenario order; every process name starts with `label` (e.g. "fifo") so that several
/// policies' runs can share one trace. A job's process has a "queue" thread with one span
/// "waiting" from arrival to start and a "run" thread with one span "running on nodes 0-3" from
/// start to end; a job that never ran has one zero-length span "never ran: <reason>" at its
/// arrival. The cluster's process has the counter "busy GPUs" at every change. Times are the
/// run's seconds, rounded up to the nanosecond. Returns the next free process id.
std::int32_t record_cluster_trace(const ClusterRunResult& r, std::string_view label, std::int32_t first_pid,
                                  sim::TraceRecorder& trace);

}  // namespace traincast::models
