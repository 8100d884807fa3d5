#include "models/executor/op_graph.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/spec/run_control.h"

namespace traincast::models {

void OpGraph::set_edges(std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges) {
  const std::size_t n = ops.size();
  dep_offset.assign(n + 1, 0);
  dependents.assign(edges.size(), 0);
  for (const auto& [dep, op] : edges) {
    if (dep >= n || op >= n) throw std::logic_error("op graph: dependency on an op that does not exist");
    ++dep_offset[dep + 1];
    ++ops[op].remaining;
  }
  for (std::size_t i = 0; i < n; ++i) dep_offset[i + 1] += dep_offset[i];
  std::vector<std::uint32_t> fill(dep_offset.begin(), dep_offset.end() - 1);
  for (const auto& [dep, op] : edges) dependents[fill[dep]++] = op;
  edges = {};
}

namespace {

class Runner : public sim::EventHandler, public CollectiveListener, public WorkerSpeedListener {
 public:
  Runner(sim::Simulator& sim, CollectiveEngine& coll, OpGraph& g, WorkerActivityModel* model)
      : sim_(sim), coll_(coll), g_(g), streams_(static_cast<std::size_t>(g.workers) * kNumStreams), model_(model) {
    if (model_ != nullptr) {
      running_.assign(g.workers, Running{});
      model_->set_listener(this);
    }
    for (std::uint32_t i = 0; i < g_.ops.size(); ++i) {
      const Op& op = g_.ops[i];
      if (op.worker >= g_.workers) throw std::logic_error("op graph: op on a worker that does not exist");
      if (op.stream != kNoStream) streams_[op.worker * kNumStreams + op.stream].ops.push_back(i);
      if (model_ != nullptr && op.stream == kCompute) {
        if (compute_left_.size() <= static_cast<std::size_t>(op.iteration)) compute_left_.resize(op.iteration + 1u, 0);
        ++compute_left_[static_cast<std::size_t>(op.iteration)];
      }
    }
  }

  void run(bool stop_when_done) {
    for (std::uint32_t i = 0; i < g_.ops.size(); ++i)
      if (g_.ops[i].remaining == 0) try_start(i);
    // Simulator::run() to the end, polling Ctrl-C after every event (a relaxed atomic load, against
    // microseconds to seconds per event: one event may start a collective of 65,536 flows).
    while (!(stop_when_done && ended_ == g_.ops.size()) && sim_.step()) throw_if_interrupted("run: simulation");
    for (const Op& op : g_.ops) {
      if (op.end_ns >= 0) continue;
      if (op.task != kNone && g_.tasks[op.task].arrived < g_.tasks[op.task].expected)
        throw std::logic_error("op graph: a collective was reached by " + std::to_string(g_.tasks[op.task].arrived) +
                               " of its " + std::to_string(g_.tasks[op.task].expected) + " participants");
      if (op.start_ns >= 0)
        throw std::overflow_error(
            "the simulation stopped before every operation finished: a transfer or kernel would end "
            "beyond the engine's range of 292 years (check bandwidths, oversubscription and sizes)");
      throw std::logic_error(
          "op graph: some operations never became ready (a dependency cycle, or a stream "
          "whose next op waits on a later op of the same stream)");
    }
  }

  void on_event(std::uint64_t tag) override {
    const auto id = static_cast<std::uint32_t>(tag);
    if (model_ != nullptr && g_.ops[id].task == kNone && g_.ops[id].stream != kNoStream) {
      Running& r = running_[g_.ops[id].worker];
      if (r.op != id || r.generation != static_cast<std::uint32_t>(tag >> 32)) return;  // rescheduled
      r.op = kNone;
    }
    complete(id);
  }

  /// The running compute op of `worker` continues at `speed`: its remaining work (ns at full
  /// clock) is what the old speed left, and its end moves accordingly.
  void speed_changed(std::uint32_t worker, double speed) override {
    Running& r = running_[worker];
    if (r.op == kNone || speed == r.speed) return;
    const std::int64_t now = sim_.now().ns();
    r.remaining_ns = std::max(0.0, r.remaining_ns - static_cast<double>(now - r.since_ns) * r.speed);
    r.since_ns = now;
    r.speed = speed;
    ++r.generation;
    schedule_running(r);
  }

  void on_collective_done(std::uint64_t tag) override {
    Task& t = g_.tasks[static_cast<std::size_t>(tag)];
    if (--t.pending > 0) return;
    for (std::uint32_t k = 0; k < t.participant_count; ++k) complete(g_.participants[t.participant_begin + k]);
  }

 private:
  struct StreamState {
    std::vector<std::uint32_t> ops;
    std::size_t head = 0;
    bool busy = false;
  };

  void try_start(std::uint32_t id) {
    Op& op = g_.ops[id];
    if (op.remaining != 0 || op.start_ns >= 0) return;
    if (op.stream == kNoStream) {
      start(id);
      return;
    }
    StreamState& s = streams_[op.worker * kNumStreams + op.stream];
    if (s.busy || s.head >= s.ops.size() || s.ops[s.head] != id) return;
    s.busy = true;
    ++s.head;
    start(id);
  }

  struct Running {
    std::uint32_t op = kNone;
    std::uint32_t generation = 0;
    double remaining_ns = 0;  ///< work left at full clock when `since_ns` began
    double speed = 1.0;
    std::int64_t since_ns = 0;
  };

  void schedule_running(const Running& r) {
    const double left = r.remaining_ns / r.speed;
    const auto delay = static_cast<std::int64_t>(std::ceil(left));  // rounds up: no positive delay becomes zero
    sim_.schedule_in(sim::Time::from_ns(delay), this, (static_cast<std::uint64_t>(r.generation) << 32) | r.op);
  }

  void start(std::uint32_t id) {
    Op& op = g_.ops[id];
    op.start_ns = sim_.now().ns();
    if (model_ != nullptr && op.stream != kNoStream) {
      const bool comm = op.task != kNone;
      const double speed = model_->stream_changed(op.worker, op.stream, true, comm ? Activity::comm : op.activity,
                                                  comm ? 0.0 : op.compute_fraction());
      if (!comm) {
        Running& r = running_[op.worker];
        r.op = id;
        ++r.generation;
        r.remaining_ns = static_cast<double>(op.duration_ns);
        r.speed = speed;
        r.since_ns = op.start_ns;
        if (speed == 1.0) {
          sim_.schedule_in(sim::Time::from_ns(op.duration_ns), this,
                           (static_cast<std::uint64_t>(r.generation) << 32) | id);
        } else {
          schedule_running(r);
        }
        return;
      }
    }
    if (op.task == kNone) {
      sim_.schedule_in(sim::Time::from_ns(op.duration_ns), this, id);
      return;
    }
    Task& t = g_.tasks[op.task];
    if (++t.arrived < t.expected) return;
    t.pending = t.group_count;
    for (std::uint32_t k = 0; k < t.group_count; ++k) {
      const std::uint32_t group = t.group_begin + k;
      call_.op = t.op;
      call_.bytes = t.bytes;
      call_.ranks.assign(g_.groups.gpus.begin() + g_.groups.offset[group],
                         g_.groups.gpus.begin() + g_.groups.offset[group + 1]);
      if (t.kind != TaskKind::collective)
        coll_.start_host_copy(call_.ranks, t.bytes, t.kind == TaskKind::to_host, this, op.task,
                              t.host_buffers == kNone ? own_buffers_ : g_.host_buffers.at(t.host_buffers));
      else
        coll_.start(call_, this, op.task);
    }
  }

  void complete(std::uint32_t id) {
    Op& op = g_.ops[id];
    op.end_ns = sim_.now().ns();
    ++ended_;
    if (model_ != nullptr && op.stream == kNoStream && op.role == Role::barrier) model_->barrier_done(op.iteration);
    if (model_ != nullptr && op.stream == kCompute && --compute_left_[static_cast<std::size_t>(op.iteration)] == 0)
      model_->compute_done(op.iteration);
    if (op.stream != kNoStream) {
      StreamState& s = streams_[op.worker * kNumStreams + op.stream];
      s.busy = false;
      if (s.head < s.ops.size()) try_start(s.ops[s.head]);
      // The model hears "idle" only when the stream's next op did not start at once (a start on a
      // busy stream replaces its activity, so back-to-back ops cost one update, not two).
      if (model_ != nullptr && !s.busy)
        model_->stream_changed(op.worker, op.stream, false, op.task != kNone ? Activity::comm : op.activity, 0.0);
    }
    for (std::uint32_t k = g_.dep_offset[id]; k < g_.dep_offset[id + 1]; ++k) {
      const std::uint32_t d = g_.dependents[k];
      if (--g_.ops[d].remaining == 0) {
        g_.ops[d].last_dep = id;
        try_start(d);
      }
    }
  }

  sim::Simulator& sim_;
  CollectiveEngine& coll_;
  OpGraph& g_;
  std::vector<StreamState> streams_;
  CollectiveCall call_;
  const HostBuffers own_buffers_;  ///< every GPU's buffer on its own socket
  WorkerActivityModel* model_;
  std::vector<Running> running_;             ///< per worker: its compute op in progress (with a model)
  std::vector<std::uint32_t> compute_left_;  ///< per iteration: compute ops not yet ended (with a model)
  std::size_t ended_ = 0;                    ///< ops whose end_ns is set
};

}  // namespace

void run_op_graph(sim::Simulator& sim, CollectiveEngine& coll, OpGraph& graph, WorkerActivityModel* model,
                  bool stop_when_done) {
  Runner runner(sim, coll, graph, model);
  runner.run(stop_when_done);
}

}  // namespace traincast::models
