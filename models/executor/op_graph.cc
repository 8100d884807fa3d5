#include "models/executor/op_graph.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "models/executor/huge_pages.h"
#include "models/spec/run_control.h"

namespace traincast::models {

void OpGraph::set_edges(std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges) {
  const std::size_t n = ops.size();
  assign_huge(dep_offset, n + 1, std::uint32_t{0});
  assign_huge(dependents, edges.size(), std::uint32_t{0});
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
  Runner(sim::Simulator& sim, CollectiveEngine& coll, OpGraph& g, WorkerActivityModel* model,
         std::span<const int> worker_sms)
      : sim_(sim),
        coll_(coll),
        g_(g),
        streams_(static_cast<std::size_t>(g.workers) * kNumStreams),
        model_(model),
        worker_sms_(worker_sms),
        prepared_(g.groups.size()) {
    if (!worker_sms_.empty() && worker_sms_.size() != g.workers)
      throw std::logic_error("op graph: worker_sms needs one SM count per worker");
    if (model_ != nullptr) model_->set_listener(this);
    if (model_ != nullptr || !worker_sms_.empty()) running_.assign(g.workers, Running{});
    if (!worker_sms_.empty()) {
      held_ctas_.assign(g.workers, 0);
      task_ctas_.assign(g.tasks.size(), -1);
    }
    assign_huge(links_, g_.ops.size() + 1, OpLinks{});
    // No dep_offset at all: set_edges was never called, no op has dependents.
    const bool has_edges = !g_.dep_offset.empty();
    if (has_edges && g_.dep_offset.size() != g_.ops.size() + 1)
      throw std::logic_error("op graph: dep_offset needs one entry per op and one more");
    // Each stream's ops chained in program order: the stream's last op so far, per stream.
    std::vector<std::uint32_t> tail(streams_.size(), kNone);
    for (std::uint32_t i = 0; i < g_.ops.size(); ++i) {
      const Op& op = g_.ops[i];
      if (op.worker >= g_.workers) throw std::logic_error("op graph: op on a worker that does not exist");
      if (has_edges) links_[i].dep_begin = g_.dep_offset[i];
      if (op.stream != kNoStream) {
        const std::size_t s = op.worker * kNumStreams + op.stream;
        if (tail[s] == kNone) {
          streams_[s].head = i;
        } else {
          links_[tail[s]].next_on_stream = i;
        }
        tail[s] = i;
      }
      if (model_ != nullptr && op.stream == kCompute) {
        if (compute_left_.size() <= static_cast<std::size_t>(op.iteration)) compute_left_.resize(op.iteration + 1u, 0);
        ++compute_left_[static_cast<std::size_t>(op.iteration)];
      }
    }
    if (has_edges) links_[g_.ops.size()].dep_begin = g_.dep_offset[g_.ops.size()];
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
    if (tracked(g_.ops[id])) {
      Running& r = running_[g_.ops[id].worker];
      if (r.op != id || r.generation != static_cast<std::uint32_t>(tag >> 32)) return;  // rescheduled
      r.op = kNone;
    }
    complete(id);
  }

  /// The op of an event that comes next: its Op (56 bytes: it may span two lines) and links, the
  /// first loads of on_event and complete (a miss each: 13 M ops).
  void prefetch(std::uint64_t tag) const override {
    const auto id = static_cast<std::uint32_t>(tag);
    const auto* op = reinterpret_cast<const char*>(&g_.ops[id]);
    __builtin_prefetch(op);
    __builtin_prefetch(op + sizeof(Op) - 1);
    __builtin_prefetch(&links_[id]);
  }

  /// The running compute op of `worker` continues at `speed`: its remaining work (ns at full
  /// clock) is what the old speed left, and its end moves accordingly.
  void speed_changed(std::uint32_t worker, double speed) override {
    Running& r = running_[worker];
    if (r.op == kNone) return;
    r.power_speed = speed;
    respeed(worker);
  }

  /// The running compute op of `worker` continues at its power speed x its SM share now.
  void respeed(std::uint32_t worker) {
    Running& r = running_[worker];
    if (r.op == kNone) return;
    const double speed = r.power_speed * sm_speed(r.op);
    if (speed == r.speed) return;
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
    // The participants' ops and links first, so that their misses overlap (complete reads each).
    for (std::uint32_t k = 0; k < t.participant_count; ++k) prefetch(g_.participants[t.participant_begin + k]);
    for (std::uint32_t k = 0; k < t.participant_count; ++k) complete(g_.participants[t.participant_begin + k]);
  }

 private:
  /// A stream's op that runs or runs next (kNone: none left), and whether it runs.
  struct StreamState {
    std::uint32_t head = kNone;
    bool busy = false;
  };

  /// What one completion reads of an op beside the op itself, in one place (one cache line
  /// rather than one each in OpGraph::dep_offset and a per-stream queue): its dependents begin
  /// at dep_begin (and end at the next op's), and the op after it on its stream.
  struct OpLinks {
    std::uint32_t dep_begin = 0;
    std::uint32_t next_on_stream = kNone;
  };

  void try_start(std::uint32_t id) {
    Op& op = g_.ops[id];
    if (op.remaining != 0 || op.start_ns >= 0) return;
    if (op.stream == kNoStream) {
      start(id);
      return;
    }
    StreamState& s = streams_[op.worker * kNumStreams + op.stream];
    if (s.busy || s.head != id) return;
    s.busy = true;
    start(id);
  }

  struct Running {
    std::uint32_t op = kNone;
    std::uint32_t generation = 0;
    double remaining_ns = 0;   ///< work left at full clock when `since_ns` began
    double speed = 1.0;        ///< power_speed x the SM share (sm_speed)
    double power_speed = 1.0;  ///< the power model's speed (1 without one)
    std::int64_t since_ns = 0;
  };

  void schedule_running(const Running& r) {
    const double left = r.remaining_ns / r.speed;
    const auto delay = static_cast<std::int64_t>(std::ceil(left));  // rounds up: no positive delay becomes zero
    sim_.schedule_in(sim::Time::from_ns(delay), this, (static_cast<std::uint64_t>(r.generation) << 32) | r.op);
  }

  /// Whether `op` is the compute op whose progress running_ follows: with a power model every
  /// compute op on a stream; with SM sharing alone those of the compute stream.
  bool tracked(const Op& op) const {
    if (op.task != kNone || op.stream == kNoStream || running_.empty()) return false;
    return model_ != nullptr || op.stream == kCompute;
  }

  /// Whether collective op `op` holds SMs of its worker while it runs (SM sharing on, an NCCL
  /// kernel beside the compute stream; host copies run on copy engines).
  bool holds_sms(const Op& op) const {
    return !worker_sms_.empty() && op.task != kNone && op.stream != kNoStream && op.stream != kCompute &&
           g_.tasks[op.task].kind == TaskKind::collective;
  }

  /// CTAs of task `t`'s kernel on each GPU, computed once. Tensor-parallel collectives that
  /// overlap compute are Transformer Engine's userbuffers (tp_comm_overlap; blocking ones have no
  /// compute beside them): TE's defaults (transformer_engine/pytorch/module/base.py initialize_ub:
  /// "num_sm = ub_cfg.get("num_sm", 1 if method == "ring_exchange" else 16)", use_ce True) give
  /// the all-gathers' ring exchange 1 SM (copy engines move the data) and the reduce-scatters'
  /// pipeline and bulk overlaps 16. Copy-engine copies (TaskKind::peer_copy, PyTorch async TP's
  /// chunks) hold none. Every other collective: NCCL's channels (CollectiveEngine::kernel_ctas of
  /// its first group; a task's groups have one shape).
  int task_ctas(const Op& op) {
    int& c = task_ctas_[op.task];
    if (c < 0) {
      const Task& task = g_.tasks[op.task];
      constexpr int kUbRingExchangeSms = 1;  // TE initialize_ub default, ring_exchange
      constexpr int kUbPipelineSms = 16;     // TE initialize_ub default, pipeline and bulk
      if (task.kind == TaskKind::peer_copy) {
        c = 0;
        return c;
      }
      if (op.role == Role::tp_comm) {
        c = task.op == CollectiveOp::all_gather ? kUbRingExchangeSms : kUbPipelineSms;
        return c;
      }
      Prepared& p = prepared(task.group_begin, task.op, task.bytes, task.moe);
      if (p.ctas < 0) {
        set_call(task.group_begin, task.op, task.bytes, task.moe);
        p.ctas = coll_.kernel_ctas(call_);
      }
      c = p.ctas;
    }
    return c;
  }

  /// A collective of group `group` as the engine decided it (CollectiveEngine::prepare) and its
  /// kernel's CTAs (-1: not computed yet), per distinct (op, bytes, MoE dispatch) of the group.
  struct Prepared {
    CollectiveOp op;
    double bytes;
    MoeDispatch moe;
    CollectiveEngine::Prepared call;
    int ctas = -1;
  };

  /// call_ = op of `bytes` over group `group`'s GPUs (moe: an all_to_all's dispatch kind).
  void set_call(std::uint32_t group, CollectiveOp op, double bytes, const MoeDispatch& moe) {
    call_.op = op;
    call_.bytes = bytes;
    call_.moe = moe;
    call_.ranks.assign(g_.groups.gpus.begin() + g_.groups.offset[group],
                       g_.groups.gpus.begin() + g_.groups.offset[group + 1]);
  }

  /// The prepared collective `op` of `bytes` over group `group`, prepared on first use: the same
  /// calls recur every micro-batch, and the engine's choice is a function of the call alone. A
  /// group sees a few distinct (op, bytes): a linear search.
  Prepared& prepared(std::uint32_t group, CollectiveOp op, double bytes, const MoeDispatch& moe) {
    std::vector<Prepared>& list = prepared_[group];
    for (Prepared& p : list)
      if (p.op == op && p.bytes == bytes && p.moe == moe) return p;
    set_call(group, op, bytes, moe);
    list.push_back(Prepared{op, bytes, moe, coll_.prepare(call_)});
    return list.back();
  }

  /// The copy-engine copies of groups [begin, begin + count) (each a pair {src, dst}), prepared
  /// on first use (CollectiveEngine::prepare_peer_copy): a chunked TP overlap's ring pairs recur
  /// every step of every micro-batch.
  const CollectiveEngine::PeerCopy& peer_copy(std::uint32_t begin, std::uint32_t count) {
    auto [it, added] = peer_copies_.try_emplace(begin);
    if (added) {
      std::vector<std::pair<int, int>> pairs;
      for (std::uint32_t k = begin; k < begin + count; ++k) {
        const std::uint32_t first = g_.groups.offset[k];
        if (g_.groups.offset[k + 1] - first != 2) throw std::logic_error("op graph: a peer copy group is not a pair");
        pairs.emplace_back(g_.groups.gpus[first], g_.groups.gpus[first + 1]);
      }
      it->second = coll_.prepare_peer_copy(pairs);
    }
    return it->second;
  }

  /// SM-share speed of compute op `id` on its worker now (1 without SM sharing or off the
  /// compute stream).
  double sm_speed(std::uint32_t id) const {
    const Op& op = g_.ops[id];
    if (worker_sms_.empty() || op.stream != kCompute) return 1.0;
    return sm_share_speed(op.compute_fraction(), worker_sms_[op.worker], held_ctas_[op.worker]);
  }

  void start(std::uint32_t id) {
    Op& op = g_.ops[id];
    op.start_ns = sim_.now().ns();
    if (holds_sms(op)) {
      held_ctas_[op.worker] += task_ctas(op);
      respeed(op.worker);
    }
    const double power_speed =
        model_ != nullptr && op.stream != kNoStream
            ? model_->stream_changed(op.worker, op.stream, true, op.task != kNone ? Activity::comm : op.activity,
                                     op.task != kNone ? 0.0 : op.compute_fraction())
            : 1.0;
    if (tracked(op)) {
      Running& r = running_[op.worker];
      r.op = id;
      ++r.generation;
      r.remaining_ns = static_cast<double>(op.duration_ns);
      r.power_speed = power_speed;
      r.speed = power_speed * sm_speed(id);
      r.since_ns = op.start_ns;
      if (r.speed == 1.0) {
        sim_.schedule_in(sim::Time::from_ns(op.duration_ns), this,
                         (static_cast<std::uint64_t>(r.generation) << 32) | id);
      } else {
        schedule_running(r);
      }
      return;
    }
    if (op.task == kNone) {
      sim_.schedule_in(sim::Time::from_ns(op.duration_ns), this, id);
      return;
    }
    Task& t = g_.tasks[op.task];
    if (++t.arrived < t.expected) return;
    if (t.kind == TaskKind::peer_copy) {
      t.pending = 1;
      coll_.start_peer_copy(peer_copy(t.group_begin, t.group_count), t.bytes, this, op.task);
      return;
    }
    t.pending = t.group_count;
    for (std::uint32_t k = 0; k < t.group_count; ++k) {
      const std::uint32_t group = t.group_begin + k;
      if (t.kind != TaskKind::collective) {
        set_call(group, t.op, t.bytes, t.moe);
        coll_.start_host_copy(call_.ranks, t.bytes, t.kind == TaskKind::to_host, this, op.task,
                              t.host_buffers == kNone ? own_buffers_ : g_.host_buffers.at(t.host_buffers));
      } else {
        coll_.start(prepared(group, t.op, t.bytes, t.moe).call, this, op.task);
      }
    }
  }

  void complete(std::uint32_t id) {
    Op& op = g_.ops[id];
    op.end_ns = sim_.now().ns();
    ++ended_;
    if (holds_sms(op)) {
      held_ctas_[op.worker] -= task_ctas(op);
      respeed(op.worker);
    }
    if (model_ != nullptr && op.stream == kNoStream && op.role == Role::barrier) model_->barrier_done(op.iteration);
    if (model_ != nullptr && op.stream == kCompute && --compute_left_[static_cast<std::size_t>(op.iteration)] == 0)
      model_->compute_done(op.iteration);
    const OpLinks links = links_[id];
    const std::uint32_t dep_end = links_[id + 1].dep_begin;
    if (op.stream != kNoStream) {
      StreamState& s = streams_[op.worker * kNumStreams + op.stream];
      s.busy = false;
      s.head = links.next_on_stream;
      if (s.head != kNone) try_start(s.head);
      // The model hears "idle" only when the stream's next op did not start at once (a start on a
      // busy stream replaces its activity, so back-to-back ops cost one update, not two).
      if (model_ != nullptr && !s.busy)
        model_->stream_changed(op.worker, op.stream, false, op.task != kNone ? Activity::comm : op.activity, 0.0);
    }
    for (std::uint32_t k = links.dep_begin; k < dep_end; ++k) {
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
  std::vector<OpLinks> links_;  ///< per op, and one past the last (its dep_begin ends the last op's)
  CollectiveCall call_;
  const HostBuffers own_buffers_;  ///< every GPU's buffer on its own socket
  WorkerActivityModel* model_;
  std::span<const int> worker_sms_;              ///< per worker: SMs per GPU (empty: NCCL kernels take no SMs)
  std::vector<int> held_ctas_;                   ///< per worker: CTAs of the NCCL kernels running beside compute
  std::vector<int> task_ctas_;                   ///< per task: its kernel's CTAs (-1: not computed yet)
  std::vector<std::vector<Prepared>> prepared_;  ///< per group of g_.groups (prepared())
  /// Prepared copy-engine copies by their first group (peer_copy()).
  std::unordered_map<std::uint32_t, CollectiveEngine::PeerCopy> peer_copies_;
  std::vector<Running> running_;             ///< per worker: its compute op in progress (with a model or SM sharing)
  std::vector<std::uint32_t> compute_left_;  ///< per iteration: compute ops not yet ended (with a model)
  std::size_t ended_ = 0;                    ///< ops whose end_ns is set
};

}  // namespace

double sm_share_speed(double compute_fraction, int sms, int ctas) {
  if (sms <= 0 || ctas <= 0) return 1.0;
  const double c = std::clamp(compute_fraction, 0.0, 1.0);
  const double left = std::max(1, sms - ctas);  // the NCCL kernel's CTAs beyond the SMs wait for SMs
  return 1.0 / ((1.0 - c) + c * static_cast<double>(sms) / left);
}

void run_op_graph(sim::Simulator& sim, CollectiveEngine& coll, OpGraph& graph, WorkerActivityModel* model,
                  bool stop_when_done, std::span<const int> worker_sms) {
  Runner runner(sim, coll, graph, model, worker_sms);
  runner.run(stop_when_done);
}

}  // namespace traincast::models
