#include "models/scheduler/scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/scheduler/placement.h"

namespace traincast::models {
namespace {

struct Running {
  sim::Time end;           ///< actual end
  sim::Time estimate_end;  ///< start + estimate
  std::size_t job;
  sim::Time full;     ///< whole run time at the current rate
  sim::Time since;    ///< when the current rate began
  double left = 1.0;  ///< fraction of the work left at `since`
};

class Loop {
 public:
  Loop(const std::vector<QueuedJob>& jobs, const ClusterShape& shape, const SchedulerSpec& spec,
       const RunTimeOf& run_time, const CoRunTimeOf& co_run_time)
      : jobs_(jobs),
        shape_(shape),
        spec_(spec),
        run_time_(run_time),
        co_run_time_(co_run_time),
        free_(static_cast<std::size_t>(shape.num_nodes), true),
        free_count_(shape.num_nodes) {
    for (int n : shape.drained) {  // never free: no job gets a drained node
      free_count_ -= free_[static_cast<std::size_t>(n)] ? 1 : 0;
      free_[static_cast<std::size_t>(n)] = false;
    }
    in_service_ = free_count_;
    out_.jobs.resize(jobs.size());
    out_.busy_nodes.emplace_back(sim::Time::zero(), 0);
  }

  Schedule run() {
    std::vector<std::size_t> arrivals(jobs_.size());
    for (std::size_t i = 0; i < arrivals.size(); ++i) arrivals[i] = i;
    std::stable_sort(arrivals.begin(), arrivals.end(),
                     [&](std::size_t a, std::size_t b) { return jobs_[a].arrival < jobs_[b].arrival; });
    std::size_t next_arrival = 0;
    while (next_arrival < arrivals.size() || !running_.empty()) {
      sim::Time now = sim::Time::max();
      if (next_arrival < arrivals.size()) now = jobs_[arrivals[next_arrival]].arrival;
      for (const Running& r : running_) now = std::min(now, r.end);
      finish_at(now);
      for (; next_arrival < arrivals.size() && jobs_[arrivals[next_arrival]].arrival == now; ++next_arrival)
        enqueue(arrivals[next_arrival]);
      schedule(now);
      retime(now);
      record(now);
    }
    return std::move(out_);
  }

 private:
  void finish_at(sim::Time now) {
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->end != now) {
        ++it;
        continue;
      }
      for (int n : out_.jobs[it->job].nodes) free_[static_cast<std::size_t>(n)] = true;
      free_count_ += jobs_[it->job].nodes;
      out_.makespan = std::max(out_.makespan, now);
      it = running_.erase(it);
    }
  }

  void enqueue(std::size_t j) {
    if (jobs_[j].nodes > in_service_) {
      out_.jobs[j].never_fits = true;
      return;
    }
    const auto before = [&](std::size_t a, std::size_t b) {
      if (jobs_[a].priority != jobs_[b].priority) return jobs_[a].priority > jobs_[b].priority;
      if (jobs_[a].arrival != jobs_[b].arrival) return jobs_[a].arrival < jobs_[b].arrival;
      return a < b;
    };
    queue_.insert(std::upper_bound(queue_.begin(), queue_.end(), j, before), j);
  }

  void start(std::size_t j, sim::Time now) {
    JobOutcome& o = out_.jobs[j];
    o.nodes = place_job(free_, shape_.nodes_per_leaf, jobs_[j].nodes, spec_.placement);
    for (int n : o.nodes) free_[static_cast<std::size_t>(n)] = false;
    free_count_ -= jobs_[j].nodes;
    o.leaves = leaves_spanned(o.nodes, shape_.nodes_per_leaf);
    o.start = now;
    const sim::Time full = run_time_(j, o.nodes);
    o.end = now + full;
    running_.push_back({o.end, now + jobs_[j].estimate, j, full, now, 1.0});
  }

  /// Co-runner interference: each running job's run time under the current set; where it changed,
  /// its remaining work is re-timed at the new rate.
  void retime(sim::Time now) {
    if (!co_run_time_ || running_.empty()) return;
    std::vector<RunningJob> set;
    for (const Running& r : running_) set.push_back({r.job, &out_.jobs[r.job].nodes});
    std::sort(set.begin(), set.end(), [](const RunningJob& a, const RunningJob& b) { return a.job < b.job; });
    for (Running& r : running_) {
      const sim::Time full = co_run_time_(r.job, set);
      if (full == r.full) continue;
      if (r.full > sim::Time::zero())
        r.left = std::max(0.0, r.left - static_cast<double>((now - r.since).ns()) / static_cast<double>(r.full.ns()));
      r.full = full;
      r.since = now;
      r.end = now + sim::Time::from_ns(std::llround(r.left * static_cast<double>(full.ns())));
      out_.jobs[r.job].end = r.end;
    }
  }

  /// EASY's reservation for the head: the shadow time and the nodes spare at it.
  std::pair<sim::Time, int> reservation(std::size_t head, sim::Time now) const {
    std::vector<Running> by_end = running_;
    std::stable_sort(by_end.begin(), by_end.end(), [](const Running& a, const Running& b) {
      return a.estimate_end != b.estimate_end ? a.estimate_end < b.estimate_end : a.job < b.job;
    });
    int free = free_count_;
    for (const Running& r : by_end) {
      free += jobs_[r.job].nodes;
      if (free >= jobs_[head].nodes) return {std::max(r.estimate_end, now), free - jobs_[head].nodes};
    }
    return {sim::Time::max(), 0};  // unreachable: the head fits the empty cluster
  }

  void schedule(sim::Time now) {
    while (!queue_.empty() && jobs_[queue_.front()].nodes <= free_count_) {
      start(queue_.front(), now);
      queue_.erase(queue_.begin());
    }
    if (spec_.policy != SchedulerPolicy::backfill || queue_.empty()) return;
    auto [shadow, extra] = reservation(queue_.front(), now);
    for (auto it = queue_.begin() + 1; it != queue_.end();) {
      const QueuedJob& q = jobs_[*it];
      const bool ends_before = now + q.estimate <= shadow;
      if (q.nodes <= free_count_ && (ends_before || q.nodes <= extra)) {
        if (!ends_before) extra -= q.nodes;
        start(*it, now);
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void record(sim::Time now) {
    const int busy = in_service_ - free_count_;
    if (busy == out_.busy_nodes.back().second) return;
    if (out_.busy_nodes.back().first == now)
      out_.busy_nodes.back().second = busy;
    else
      out_.busy_nodes.emplace_back(now, busy);
  }

  const std::vector<QueuedJob>& jobs_;
  const ClusterShape& shape_;
  const SchedulerSpec& spec_;
  const RunTimeOf& run_time_;
  const CoRunTimeOf& co_run_time_;
  std::vector<bool> free_;
  int free_count_;
  int in_service_ = 0;  ///< nodes not drained
  std::vector<std::size_t> queue_;
  std::vector<Running> running_;
  Schedule out_;
};

}  // namespace

Schedule run_scheduler(const std::vector<QueuedJob>& jobs, const ClusterShape& shape, const SchedulerSpec& spec,
                       const RunTimeOf& run_time, const CoRunTimeOf& co_run_time) {
  if (shape.num_nodes < 1 || shape.nodes_per_leaf < 1)
    throw std::invalid_argument("run_scheduler: num_nodes and nodes_per_leaf must be >= 1");
  for (int n : shape.drained)
    if (n < 0 || n >= shape.num_nodes) throw std::invalid_argument("run_scheduler: a drained node outside the cluster");
  for (const QueuedJob& j : jobs) {
    if (j.nodes < 1 || j.arrival < sim::Time::zero() || j.estimate < sim::Time::zero())
      throw std::invalid_argument("run_scheduler: a job needs nodes >= 1, arrival >= 0 and estimate >= 0");
  }
  return Loop(jobs, shape, spec, run_time, co_run_time).run();
}

}  // namespace traincast::models
