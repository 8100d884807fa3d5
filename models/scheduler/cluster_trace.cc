#include "models/scheduler/cluster_trace.h"

#include <string>

namespace traincast::models {

std::int32_t record_cluster_trace(const ClusterRunResult& r, std::string_view label, std::int32_t first_pid,
                                  sim::TraceRecorder& trace) {
  const std::string prefix = std::string(label) + ": ";
  const std::uint32_t cluster =
      trace.track(first_pid, prefix + "cluster (" + std::to_string(r.cluster_gpus) + " GPUs)", 0, "busy GPUs");
  const std::uint32_t busy = trace.name("busy GPUs");
  for (const auto& [t_s, gpus] : r.busy_gpus) trace.counter(cluster, busy, sim::Time::from_seconds(t_s), gpus);
  std::int32_t pid = first_pid + 1;
  for (const ClusterJobResult& j : r.jobs) {
    const std::string process = prefix + "job " + j.name + " (" + std::to_string(j.gpus) + " GPUs)";
    const sim::Time arrival = sim::Time::from_seconds(j.arrival_s);
    if (!j.problem.empty()) {
      trace.span(trace.track(pid, process, 0, "queue"), trace.name("never ran: " + j.problem), arrival, arrival);
    } else {
      const sim::Time start = sim::Time::from_seconds(j.start_s);
      trace.span(trace.track(pid, process, 0, "queue"), trace.name("waiting"), arrival, start);
      trace.span(trace.track(pid, process, 1, "run"), trace.name("running on nodes " + j.nodes), start,
                 sim::Time::from_seconds(j.end_s));
    }
    ++pid;
  }
  return pid;
}

}  // namespace traincast::models
