// Builds one worker's op graph: per-layer forward/backward programs, pipeline sends/receives,
// gradient buckets and their reductions, ZeRO parameter gathers, input copies, optimizer step.
#include "models/executor/worker_graph.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/workload/pipeline_schedule.h"

namespace traincast::models {
namespace {

/// Builds the op graph of one worker.
class GraphBuilder {
 public:
  GraphBuilder(const TrainingPlan& plan, int replica, int stage, WorkerGraph& g)
      : plan_(plan),
        replica_(replica),
        stage_(stage),
        g_(g),
        worker_(static_cast<std::uint32_t>(replica * plan.pp + stage)) {}

  void build() {
    const TrainingPlan& P = plan_;
    g_.sends.assign(static_cast<std::size_t>(P.iterations) * 2 * P.m * P.v, kNone);
    const auto steps = pipeline_steps(stage_, P.pp, P.m, P.v);
    // Last backward step of each chunk launches that chunk's gradient buckets.
    std::vector<int> last_backward_mb(static_cast<std::size_t>(P.v), -1);
    for (const auto& s : steps)
      if (!s.forward) last_backward_mb[static_cast<std::size_t>(s.chunk)] = s.micro_batch;
    for (int it = 0; it < P.iterations; ++it) {
      iteration_ = it;
      if (P.storage_stall_ns > 0) {
        // The GPUs wait, idle, for the batch (and the checkpoint): first on the compute stream,
        // taking no deferred dependencies (communication still in flight overlaps it).
        const std::uint32_t op = add_op(Role::storage_stall, kCompute, P.label("storage_stall"), -1);
        g_.ops[op].duration_ns = P.storage_stall_ns;
        g_.ops[op].activity = Activity::idle;
      }
      for (const auto& s : steps) {
        if (s.forward) {
          forward(s.micro_batch, s.chunk);
        } else {
          backward(s.micro_batch, s.chunk, s.micro_batch == last_backward_mb[static_cast<std::size_t>(s.chunk)]);
        }
      }
      finish_iteration();
    }
  }

 private:
  bool first_stage_of_model(int chunk) const { return stage_ == 0 && chunk == 0; }
  bool last_stage_of_model(int chunk) const { return stage_ == plan_.pp - 1 && chunk == plan_.v - 1; }

  std::uint32_t add_op(Role role, Stream stream, std::uint32_t label, int mb) {
    Op op;
    op.role = role;
    op.stream = stream;
    op.label = label;
    op.micro_batch = mb;
    op.worker = worker_;
    op.iteration = static_cast<std::uint16_t>(iteration_);
    g_.ops.push_back(op);
    return static_cast<std::uint32_t>(g_.ops.size() - 1);
  }
  void dep(std::uint32_t on, std::uint32_t op) {
    if (on != kNone) g_.edges.emplace_back(on, op);
  }
  std::uint32_t private_task(CollectiveOp op, double bytes, std::uint32_t group_begin, std::uint32_t count) {
    Task t;
    t.op = op;
    t.bytes = bytes;
    t.group_begin = group_begin;
    t.group_count = count;
    g_.tasks.push_back(t);
    return static_cast<std::uint32_t>(g_.tasks.size() - 1);
  }

  /// A new op on the compute stream: takes the deferred dependencies that are due.
  std::uint32_t compute_stream_op(Role role, std::uint32_t label, int mb) {
    const std::uint32_t op = add_op(role, kCompute, label, mb);
    for (auto& d : deferred_) {
      if (d.second == 1) dep(d.first, op);
      --d.second;
    }
    std::erase_if(deferred_, [](const auto& d) { return d.second <= 0; });
    for (std::uint32_t on : pending_first_deps_) dep(on, op);
    pending_first_deps_.clear();
    prev_compute_ = last_compute_;
    last_compute_ = op;
    return op;
  }
  /// The op of a collective segment: on the compute stream when blocking; else on `stream`,
  /// starting with the next compute segment and consumed by the one after it (with_next), or
  /// starting with the previous compute segment and consumed by the next (with_prev).
  std::uint32_t comm_op(Role role, Stream stream, Overlap overlap, std::uint32_t label, int mb) {
    if (overlap == Overlap::blocking) return compute_stream_op(role, label, mb);
    const std::uint32_t op = add_op(role, stream, label, mb);
    const bool next = overlap == Overlap::with_next;
    dep(next ? last_compute_ : prev_compute_, op);
    deferred_.emplace_back(op, next ? 2 : 1);
    return op;
  }
  /// Everything still in flight that a consumer of the current output must wait for.
  void flush_deferred(std::uint32_t op) {
    for (const auto& d : deferred_) dep(d.first, op);
    deferred_.clear();
  }

  void emit(const Program& prog, int mb) {
    const TrainingPlan::ProgramInfo& info = plan_.info(prog, stage_);
    for (std::size_t i = 0; i < prog.size(); ++i) {
      const Segment& seg = prog[i];
      const std::uint32_t label = info.label_ids[i];
      if (!seg.is_collective) {
        Op& op = g_.ops[compute_stream_op(Role::compute, label, mb)];
        op.duration_ns = info.duration_ns[i];
        op.set_compute_fraction(info.compute_fraction[i]);
        op.activity = info.compute_fraction[i] >= 0.5 ? Activity::compute_bound : Activity::memory_bound;
        continue;
      }
      if (seg.group == CommGroup::cp) {
        // Context-parallel ring step: every CP rank sends to the next at once (one send_recv per
        // pair and TP rank), shared by the CP group's workers (merge). Beside the next compute
        // segment on the CP stream (with_next), or on the compute stream (blocking).
        const std::uint32_t task = private_task(seg.op, seg.bytes, plan_.cp_group(replica_, stage_),
                                                static_cast<std::uint32_t>(plan_.tp * plan_.cp));
        g_.tasks[task].expected = static_cast<std::uint32_t>(plan_.cp);
        const std::uint32_t op = comm_op(Role::cp_comm, kCp, seg.overlap, label, mb);
        g_.ops[op].task = task;
        g_.cp_tasks.push_back(task);
        g_.cp_ops.push_back(op);
        continue;
      }
      if (seg.group == CommGroup::ep) {
        // Expert-parallel all-to-all over the EP group: shared by the group's workers (merge). On
        // the compute stream (blocking), or beside the next compute segment (with_next: the shared
        // experts under moe_shared_expert_overlap) on the EP stream, consumed by the one after.
        const std::uint32_t task =
            private_task(seg.op, seg.bytes, plan_.ep_group(replica_, stage_), static_cast<std::uint32_t>(plan_.tp));
        g_.tasks[task].expected = static_cast<std::uint32_t>(plan_.ep);
        g_.tasks[task].moe = seg.moe;
        const std::uint32_t op = comm_op(Role::ep_comm, kEp, seg.overlap, label, mb);
        g_.ops[op].task = task;
        g_.ep_tasks.push_back(task);
        g_.ep_ops.push_back(op);
        continue;
      }
      // A send_recv is one step of a chunked TP overlap: each TP rank to the next, all at once.
      const bool ring_step = seg.op == CollectiveOp::send_recv;
      const std::uint32_t task = ring_step ? private_task(seg.op, seg.bytes, plan_.tp_ring_group(replica_, stage_),
                                                          static_cast<std::uint32_t>(plan_.tp))
                                           : private_task(seg.op, seg.bytes, plan_.tp_group(replica_, stage_), 1);
      if (ring_step && seg.copy_engine) g_.tasks[task].kind = TaskKind::peer_copy;
      g_.ops[comm_op(Role::tp_comm, kTp, seg.overlap, label, mb)].task = task;
    }
  }

  /// Pipeline send after a forward (dir 0) or backward (dir 1) of (mb, chunk).
  void send(int dir, int mb, int chunk) {
    const std::uint32_t label = plan_.label(dir == 0 ? "pp_send_fwd" : "pp_send_bwd");
    const std::uint32_t op = add_op(Role::pp_send, kPp, label, mb);
    dep(last_compute_, op);
    flush_deferred(op);
    g_.ops[op].task = private_task(CollectiveOp::send_recv, plan_.programs.p2p_bytes,
                                   plan_.pp_group(replica_, stage_, dir), static_cast<std::uint32_t>(plan_.tp));
    g_.sends[plan_.send_slot(iteration_, dir, mb, chunk)] = op;
  }
  /// The next compute op waits for the matching send of a neighbouring stage.
  void receive(int dir, int mb, int src_stage, int src_chunk) {
    const auto src_worker = static_cast<std::uint32_t>(replica_ * plan_.pp + src_stage);
    pending_remote_ = RemoteDep{src_worker, plan_.send_slot(iteration_, dir, mb, src_chunk), kNone};
  }
  /// Megatron's scatter/gather after a pipeline receive (dir 0 activation, 1 gradient): the
  /// received 1/t shards are all-gathered over the TP group on the compute stream before the
  /// next compute (ModelPrograms::p2p_gather_bytes; none when 0). Being the first compute-stream
  /// op after the receive, it is the op the receive feeds.
  void receive_gather(int dir, int mb) {
    if (plan_.programs.p2p_gather_bytes <= 0) return;
    const std::uint32_t task =
        private_task(CollectiveOp::all_gather, plan_.programs.p2p_gather_bytes, plan_.tp_group(replica_, stage_), 1);
    g_.ops[compute_stream_op(Role::tp_comm, plan_.label(dir == 0 ? "pp_gather_fwd" : "pp_gather_bwd"), mb)].task = task;
  }
  /// The receive feeds the first compute-stream op added since `first_new` (not a prefetch).
  void attach_remote_to_first_compute(std::size_t first_new) {
    for (std::size_t i = first_new; i < g_.ops.size(); ++i)
      if (g_.ops[i].stream == kCompute) {
        attach_remote(static_cast<std::uint32_t>(i));
        return;
      }
  }

  /// ZeRO-3 / FSDP parameter all-gathers of one pass (dir 0 forward, 1 backward) over a chunk's
  /// items (embedding, layers, head) for one micro-batch: each item's first op waits for its
  /// gather, and the gather of the next item is issued when this item starts (prefetch one item
  /// ahead, as FSDP's forward/backward prefetch does; at most two items' weights gathered).
  /// A no-op below ZeRO-3 or without data parallelism; in backward when the forward's gathered
  /// parameters are kept (reshard_after_forward false); in the forward of micro-batches after the
  /// first when they are kept for the iteration (reshard_after_backward false: the compute
  /// stream's order makes those wait for the first micro-batch's gathers).
  class ZeroGathers {
   public:
    ZeroGathers(GraphBuilder& b, int mb, int chunk, int dir)
        : b_(b), mb_(mb), chunk_(chunk), dir_(dir), n_(b.plan_.num_items(b.stage_, chunk)) {
      const TrainingPlan& P = b.plan_;
      const bool pass_gathers = dir == 0 ? (P.reshard_after_backward || mb == 0) : P.reshard_after_forward;
      active_ = P.zero_stage == 3 && P.dp_cp > 1 && pass_gathers;
    }
    /// Call before emitting the next item (in pass order).
    void before_item() {
      if (!active_) return;
      if (k_ == 0) next_ = issue(0);
      const std::uint32_t cur = next_;
      if (k_ + 1 < n_) next_ = issue(k_ + 1);
      b_.pending_first_deps_.push_back(cur);
      ++k_;
    }

   private:
    std::uint32_t issue(int k) {
      const TrainingPlan& P = b_.plan_;
      const int item = dir_ == 0 ? k : n_ - 1 - k;  // forward-order index
      const std::uint32_t op =
          b_.add_op(Role::dp_param, kDpParam, P.label(dir_ == 0 ? "dp_param_gather_fwd" : "dp_param_gather_bwd"), mb_);
      b_.dep(b_.last_compute_, op);
      const std::uint32_t task = P.gather_task(b_.iteration_, b_.stage_, chunk_, item, mb_, dir_);
      b_.g_.ops[op].task = task;
      b_.g_.dp_ops.emplace_back(task, op);
      return op;
    }
    GraphBuilder& b_;
    int mb_, chunk_, dir_, n_;
    int k_ = 0;
    bool active_ = false;
    std::uint32_t next_ = kNone;
  };

  void attach_remote(std::uint32_t op) {
    if (pending_remote_.src_worker != kNone) {
      pending_remote_.local_op = op;
      g_.remote.push_back(pending_remote_);
      pending_remote_.src_worker = kNone;
    }
  }

  void forward(int mb, int chunk) {
    const TrainingPlan& P = plan_;
    if (!first_stage_of_model(chunk)) {
      if (stage_ > 0)
        receive(0, mb, stage_ - 1, chunk);
      else
        receive(0, mb, P.pp - 1, chunk - 1);
    }
    const std::size_t first_new = g_.ops.size();
    if (!first_stage_of_model(chunk)) receive_gather(0, mb);
    ZeroGathers gathers(*this, mb, chunk, 0);
    if (first_stage_of_model(chunk)) {
      gathers.before_item();
      if (P.input_copies) input_copy(mb);
      const std::size_t first_input_op = g_.ops.size();
      emit(P.programs.embedding_forward, mb);
      for (std::size_t i = first_input_op; i < g_.ops.size(); ++i)
        if (g_.ops[i].stream == kCompute) {
          prefetch_anchor_ = static_cast<std::uint32_t>(i);
          break;
        }
    }
    const int layers = P.chunk_layers[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(chunk)];
    for (int layer = 0; layer < layers; ++layer) {
      gathers.before_item();
      // Overlapped ZeRO-1 parameter gather of the previous iteration: the layer's first op waits.
      if (iteration_ > 0 && !param_gather_of_layer_.empty()) {
        const auto& prev = param_gather_of_layer_[static_cast<std::size_t>(chunk)];
        if (static_cast<std::size_t>(layer) < prev.size() && prev[static_cast<std::size_t>(layer)] != kNone)
          pending_first_deps_.push_back(prev[static_cast<std::size_t>(layer)]);
      }
      emit(P.layer(stage_, chunk, layer).forward, mb);
    }
    if (last_stage_of_model(chunk)) {
      gathers.before_item();
      emit(P.programs.head_forward, mb);
    }
    attach_remote_to_first_compute(first_new);
    if (!last_stage_of_model(chunk)) send(0, mb, chunk);
  }

  void backward(int mb, int chunk, bool last_of_chunk) {
    const TrainingPlan& P = plan_;
    if (!last_stage_of_model(chunk)) {
      if (stage_ < P.pp - 1)
        receive(1, mb, stage_ + 1, chunk);
      else
        receive(1, mb, 0, chunk + 1);
    }
    const std::size_t first_new = g_.ops.size();
    if (!last_stage_of_model(chunk)) receive_gather(1, mb);
    const auto& buckets = P.buckets[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(chunk)];
    std::size_t next_bucket = 0;
    int item = 0;
    auto after_item = [&](int done_item) {
      // DDP / ZeRO-1 reduce once, after the chunk's last micro-batch; ZeRO-2/3 after every one.
      if (!last_of_chunk && P.grad_reductions == 1) return;
      while (next_bucket < buckets.size() && buckets[next_bucket].after_item == done_item) {
        launch_grad_bucket(chunk, static_cast<int>(next_bucket), buckets[next_bucket], mb);
        ++next_bucket;
      }
    };
    ZeroGathers gathers(*this, mb, chunk, 1);
    if (last_stage_of_model(chunk)) {
      gathers.before_item();
      emit(P.programs.head_backward, mb);
      after_item(item++);
    }
    const int layers = P.chunk_layers[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(chunk)];
    for (int layer = layers - 1; layer >= 0; --layer) {
      gathers.before_item();
      const LayerPrograms& lp = P.layer(stage_, chunk, layer);
      emit(lp.recompute, mb);
      emit(lp.backward, mb);
      after_item(item++);
    }
    if (first_stage_of_model(chunk)) {
      gathers.before_item();
      emit(P.programs.embedding_backward, mb);
      after_item(item++);
    }
    attach_remote_to_first_compute(first_new);
    if (!first_stage_of_model(chunk)) send(1, mb, chunk);
  }

  /// The host-to-device copy of micro-batch mb's input: with prefetch on the H2D stream, issued
  /// when the previous micro-batch's first kernel starts (DeepLearningExamples data_prefetcher:
  /// the next batch is copied on a side stream while the current one computes); without, on the
  /// compute stream right before the micro-batch. The micro-batch's first kernel waits for it.
  void input_copy(int mb) {
    const TrainingPlan& P = plan_;
    const std::uint32_t task = private_task(CollectiveOp::all_reduce, P.input_bytes, P.tp_group(replica_, stage_), 1);
    g_.tasks[task].kind = TaskKind::from_host;
    g_.tasks[task].host_buffers = kInputBuffers;
    std::uint32_t op;
    if (P.input_prefetch) {
      op = add_op(Role::input_copy, kH2d, P.label("h2d_input"), mb);
      dep(prefetch_anchor_, op);
      pending_first_deps_.push_back(op);
    } else {
      op = compute_stream_op(Role::input_copy, P.label("h2d_input"), mb);
    }
    g_.ops[op].task = task;
  }

  void launch_grad_bucket(int chunk, int bucket, const GradBucket& b, int mb) {
    const std::uint32_t reduced = launch_grad_reductions(chunk, bucket, b, mb);
    if (plan_.offload) offload_gradients(b, mb, reduced);
  }

  /// CPU offload: this GPU's share of the bucket's (reduced) gradient goes to host memory over
  /// its PCIe path once the reduction that produced it is done (DeepSpeed ZeRO-Offload copies
  /// each reduced partition into the CPU's fp32 gradient buffer on the reduction stream).
  void offload_gradients(const GradBucket& b, int mb, std::uint32_t after) {
    const TrainingPlan& P = plan_;
    const bool zero = P.zero_stage >= 1;
    const double dense = b.params / (zero && P.dp_cp > 1 ? P.dp_cp : 1);
    const double experts = b.expert_params / (zero && P.dp_cp / P.ep > 1 ? P.dp_cp / P.ep : 1);
    const std::uint32_t op = add_op(Role::offload, kDp, P.label("offload_d2h"), mb);
    dep(after != kNone ? after : last_compute_, op);
    const std::uint32_t task =
        private_task(CollectiveOp::all_reduce, (dense + experts) * P.grad_bytes, P.tp_group(replica_, stage_), 1);
    g_.tasks[task].kind = TaskKind::to_host;
    g_.ops[op].task = task;
    g_.barrier_deps.push_back(op);
    g_.barrier_dep_iteration.push_back(static_cast<std::uint32_t>(iteration_));
  }

  /// The data-parallel reductions of one bucket; returns the last op launched (kNone without DP).
  std::uint32_t launch_grad_reductions(int chunk, int bucket, const GradBucket& b, int mb) {
    const TrainingPlan& P = plan_;
    if (P.dp_cp <= 1) return kNone;
    std::uint32_t last = kNone;
    if (b.params > 0 || b.expert_params <= 0)
      last = launch_dp_op(Role::dp_grad, P.grad_task(iteration_, stage_, chunk, bucket, mb));
    // Expert gradients: reduced over the replicas holding the same experts.
    if (b.expert_params > 0 && P.dp_cp / P.ep > 1)
      last = launch_dp_op(Role::dp_grad, P.expert_task(iteration_, stage_, chunk, bucket, replica_, 0));
    return last;
  }

  std::uint32_t launch_dp_op(Role role, std::uint32_t task) {
    const TrainingPlan& P = plan_;
    const Scenario& sc = *P.sc;
    (void)role;
    const bool overlap = sc.parallel.overlap_grad_reduce;
    const std::uint32_t op = overlap ? add_op(Role::dp_grad, kDp, P.label("dp_grad_sync"), -1)
                                     : compute_stream_op(Role::dp_grad, P.label("dp_grad_sync"), -1);
    if (overlap) dep(last_compute_, op);
    g_.ops[op].task = task;
    g_.dp_ops.emplace_back(task, op);
    g_.barrier_deps.push_back(op);
    g_.barrier_dep_iteration.push_back(static_cast<std::uint32_t>(iteration_));
    return op;
  }

  /// End of an iteration: the barrier waits for this worker, then the optimizer step and the
  /// post-step parameter gathers.
  void finish_iteration() {
    // The barrier (global grad-norm all-reduce before the step) waits for this worker's last op.
    g_.barrier_deps.push_back(last_compute_);
    g_.barrier_dep_iteration.push_back(static_cast<std::uint32_t>(iteration_));
    param_gathers(optimizer_step());
  }

  /// The optimizer step after the barrier; returns the op after which the parameters are updated.
  std::uint32_t optimizer_step() {
    const TrainingPlan& P = plan_;
    // With CPU offload the step runs on the host (the GPU waits: no delayed parameter update),
    // then the updated 16-bit parameter shard is copied back before anything reads it.
    const std::uint32_t step = compute_stream_op(P.offload ? Role::offload : Role::optimizer,
                                                 P.label(P.offload ? "cpu_adam" : "optimizer"), -1);
    g_.ops[step].duration_ns = P.optimizer_ns[static_cast<std::size_t>(stage_)];
    // Adam streams its state through HBM; on the CPU the GPU idles meanwhile.
    g_.ops[step].activity = P.offload ? Activity::idle : Activity::memory_bound;
    g_.optimizer_ops.push_back(step);
    flush_deferred(step);
    std::uint32_t opt = step;
    if (P.offload) {
      opt = compute_stream_op(Role::offload, P.label("offload_h2d"), -1);
      const std::uint32_t task =
          private_task(CollectiveOp::all_reduce, P.offload_h2d_bytes[static_cast<std::size_t>(stage_)],
                       P.tp_group(replica_, stage_), 1);
      g_.tasks[task].kind = TaskKind::from_host;
      g_.ops[opt].task = task;
    }
    return opt;
  }

  /// ZeRO-1/2 parameter all-gathers of the updated shards after `opt`: overlapped (each layer's
  /// first op of the next iteration waits for its bucket's gather) or on the compute stream.
  void param_gathers(std::uint32_t opt) {
    const TrainingPlan& P = plan_;
    const Scenario& sc = *P.sc;
    param_gather_of_layer_.clear();
    if ((P.zero_stage == 1 || P.zero_stage == 2) && P.dp_cp > 1) {
      const bool overlap = sc.parallel.overlap_param_gather;
      param_gather_of_layer_.resize(static_cast<std::size_t>(P.v));
      for (int c = 0; c < P.v; ++c) {
        const auto& bks = P.buckets[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(c)];
        auto& of_layer = param_gather_of_layer_[static_cast<std::size_t>(c)];
        of_layer.assign(
            static_cast<std::size_t>(P.chunk_layers[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(c)]),
            kNone);
        // Gathers in forward order: the bucket holding the first layers first.
        auto gather = [&](std::uint32_t task) {
          const std::uint32_t op = overlap ? add_op(Role::dp_param, kDp, P.label("dp_param_gather"), -1)
                                           : compute_stream_op(Role::dp_param, P.label("dp_param_gather"), -1);
          if (overlap) dep(opt, op);
          g_.ops[op].task = task;
          g_.dp_ops.emplace_back(task, op);
          return op;
        };
        for (std::size_t bi = bks.size(); bi-- > 0;) {
          const int b = static_cast<int>(bi);
          // Expert shard first (same stream, in order): a layer waiting for the dense gather has both.
          if (bks[bi].expert_params > 0 && P.dp_cp / P.ep > 1)
            gather(P.expert_task(iteration_, stage_, c, b, replica_, 1));
          const std::uint32_t op = gather(P.param_gather_task(iteration_, stage_, c, b));
          for (int layer : bks[bi].layers) of_layer[static_cast<std::size_t>(layer)] = op;
        }
      }
      if (!overlap) param_gather_of_layer_.clear();
    }
  }

  const TrainingPlan& plan_;
  int replica_, stage_;
  WorkerGraph& g_;
  std::uint32_t worker_;
  int iteration_ = 0;
  std::uint32_t last_compute_ = kNone, prev_compute_ = kNone;
  std::vector<std::pair<std::uint32_t, int>> deferred_;
  std::vector<std::uint32_t> pending_first_deps_;  ///< the next compute op waits for these
  std::uint32_t prefetch_anchor_ = kNone;          ///< first kernel of the last micro-batch (input prefetch)
  RemoteDep pending_remote_{kNone, 0, kNone};
  std::vector<std::vector<std::uint32_t>> param_gather_of_layer_;
};

}  // namespace

void build_worker_graph(const TrainingPlan& plan, int replica, int stage, WorkerGraph& g) {
  GraphBuilder b(plan, replica, stage, g);
  b.build();
}

}  // namespace traincast::models
