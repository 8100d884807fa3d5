#include "models/executor/training_executor.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/collectives/collective.h"
#include "models/compute/compute_model.h"
#include "models/executor/job_effects.h"
#include "models/executor/op_graph.h"
#include "models/executor/straggler.h"
#include "models/hardware/cluster.h"
#include "models/power/power_thermal.h"
#include "models/workload/cnn.h"
#include "models/workload/layer_program.h"
#include "models/workload/memory_model.h"
#include "models/workload/offload.h"
#include "models/workload/pipeline_schedule.h"
#include "models/workload/transformer.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// OpGraph::host_buffers index of the input copies' buffers (the data loaders' memory).
constexpr std::uint32_t kInputBuffers = 0;

/// Dependency on another worker's pipeline send, resolved after all graphs are built.
struct RemoteDep {
  std::uint32_t src_worker;
  std::uint32_t slot;      ///< index into the source worker's send table
  std::uint32_t local_op;  ///< dependent op (local index)
};

/// One bucket of gradients launched after backward item `after_item` of a chunk.
struct Bucket {
  int after_item = 0;
  double params = 0;         ///< DP-replicated parameters (per TP rank)
  double expert_params = 0;  ///< routed-expert parameters (per GPU), reduced over dp / ep ranks
  std::vector<int> layers;   ///< chunk-local layers whose parameters it holds (for param gather)
};

/// Everything one worker (a TP group of one stage of one replica) builds on its own.
struct WorkerGraph {
  std::vector<Op> ops;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  ///< (dep, op), local indices
  std::vector<RemoteDep> remote;
  std::vector<Task> tasks;                  ///< private tasks (TP, PP); group ids global
  std::vector<std::uint32_t> sends;         ///< local op of each send slot (kNone if absent)
  std::vector<std::uint32_t> barrier_deps;  ///< local ops the iteration barrier waits for, per iteration
  std::vector<std::uint32_t> barrier_dep_iteration;
  std::vector<std::uint32_t> optimizer_ops;                     ///< per iteration: op that waits for the barrier
  std::vector<std::pair<std::uint32_t, std::uint32_t>> dp_ops;  ///< (global dp task, local op)
  /// Local tasks of the expert-parallel all-to-alls in emission order: the i-th of every worker
  /// of one EP group (same stage) is the same collective; the group's first replica owns it.
  std::vector<std::uint32_t> ep_tasks;
  std::vector<std::uint32_t> ep_ops;  ///< the local op of each entry of ep_tasks
  /// The same for the context-parallel ring send/recvs: the i-th of every worker of one CP group
  /// (same stage) is the same ring step; the group's first replica owns it.
  std::vector<std::uint32_t> cp_tasks;
  std::vector<std::uint32_t> cp_ops;
};

/// The job's shape, shared read-only by all builders.
struct Plan {
  const Scenario* sc = nullptr;
  ModelPrograms programs;
  int t = 1, p = 1, d = 1, v = 1, m = 1;  // tp, pp, dp, chunks, micro-batches
  int ep = 1;                             // expert parallel size (divides d)
  /// Context parallel size. The executor's data-parallel dimension d is dp x cp: the cp ranks of
  /// a CP group run the same program on their share of the sequence (replicas that exchange K/V),
  /// gradients are reduced over all d (Megatron's dp-cp group); replica r = dp_rank * cp + cp_rank.
  int cp = 1;
  int replicas = 1;  // simulated replicas (1 when folded)
  int iterations = 1;
  std::vector<std::vector<int>> chunk_layers;             // [stage][chunk] layer count
  std::vector<std::vector<int>> chunk_first_layer;        // [stage][chunk] global index of its first layer
  std::vector<std::vector<std::vector<Bucket>>> buckets;  // [stage][chunk] -> buckets
  std::vector<std::vector<std::uint32_t>> dp_task_base;   // [stage][chunk] first grad task of iteration 0
  std::uint32_t dp_tasks_per_iteration = 0;
  int zero_stage = 0;
  /// Gradient reduce-scatters per bucket per iteration: 1 (DDP, ZeRO-1: accumulate the full
  /// gradient locally, reduce once) or m (ZeRO-2/3: the full gradient is not kept, so every
  /// micro-batch's backward reduce-scatters its buckets into the shard, as DeepSpeed ZeRO-2/3
  /// and FSDP without no_sync do).
  int grad_reductions = 1;
  std::vector<std::int64_t> optimizer_ns;  // per stage (CPU-Adam with offload)
  std::int64_t storage_stall_ns = 0;       // idle op at the start of every iteration (storage)
  /// CPU offload (workload.offload.optimizer): gradient shards go to the host after each
  /// reduction, the step runs on the CPU, updated 16-bit parameters come back.
  bool offload = false;
  std::vector<double> offload_h2d_bytes;  // per stage, per GPU: updated parameter shard
  std::vector<double> stage_params;       // per stage, per TP rank
  double grad_bytes = 4, weight_bytes = 2;
  GroupTable groups;  // GPU lists of every collective group
  std::uint32_t tp_group_base = 0, pp_group_base = 0, dp_group_base = 0;
  std::uint32_t ep_group_base = 0, edp_group_base = 0, cp_group_base = 0;
  std::vector<std::string> labels;
  /// Input copies (scenario data_loader): bytes per micro-batch per GPU, and the socket of every
  /// first-stage GPU's loader memory (OpGraph::host_buffers[kInputBuffers] of the job).
  bool input_copies = false;
  bool input_prefetch = true;
  double input_bytes = 0;
  HostBuffers input_buffers;

  int gpu(int tp_rank, int dp_rank, int stage) const { return tp_rank + t * (dp_rank + d * stage); }
  std::uint32_t tp_group(int replica, int stage) const {
    return tp_group_base + static_cast<std::uint32_t>(replica * p + stage);
  }
  /// First of t send pairs (one per TP rank) from (replica, stage) in direction dir (0 fwd, 1 bwd).
  std::uint32_t pp_group(int replica, int stage, int dir) const {
    return pp_group_base + static_cast<std::uint32_t>(((replica * p + stage) * 2 + dir) * t);
  }
  std::uint32_t dp_group(int stage) const { return dp_group_base + static_cast<std::uint32_t>(stage * t); }
  /// First of t EP groups (one per TP rank) of the EP group holding `replica` at `stage`.
  std::uint32_t ep_group(int replica, int stage) const {
    return ep_group_base + static_cast<std::uint32_t>(((replica / ep) * p + stage) * t);
  }
  /// First of t x cp ring pairs ({cp rank j, cp rank j+1 mod cp} for each TP rank k, at
  /// index k * cp + j) of the CP group holding `replica` at `stage`.
  std::uint32_t cp_group(int replica, int stage) const {
    return cp_group_base + static_cast<std::uint32_t>(((replica / cp) * p + stage) * t * cp);
  }
  /// First of t expert-data-parallel groups (one per TP rank): the dp / ep GPUs of `stage` whose
  /// replicas hold the same experts (replica % ep == ep_rank).
  std::uint32_t edp_group(int stage, int ep_rank) const {
    return edp_group_base + static_cast<std::uint32_t>((stage * ep + ep_rank) * t);
  }
  const LayerPrograms& layer(int stage, int chunk, int local) const {
    const int global = chunk_first_layer[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)] + local;
    return programs.layer_kinds[static_cast<std::size_t>(programs.layer_kind[static_cast<std::size_t>(global)])];
  }

  // Shared DP task layout of one (stage, chunk) in one iteration, from dp_task_base[stage][chunk]:
  // gradient buckets, the post-step parameter gathers (one per bucket), MoE's expert tasks, then
  // from zero_extra_base: ZeRO-2/3's gradient rounds 1..m-1 (micro-batch major) and ZeRO-3's
  // per-item gathers (forward of every micro-batch, then backward; items in forward order:
  // embedding, layers, head).
  std::vector<std::vector<std::uint32_t>> zero_extra_base;  // [stage][chunk]
  std::size_t num_buckets(int stage, int chunk) const {
    return buckets[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)].size();
  }
  int num_items(int stage, int chunk) const {
    return chunk_layers[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)] +
           (stage == 0 && chunk == 0 ? 1 : 0) + (stage == p - 1 && chunk == v - 1 ? 1 : 0);
  }
  std::uint32_t chunk_task_base(int iteration, int stage, int chunk) const {
    return dp_task_base[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)] +
           static_cast<std::uint32_t>(iteration) * dp_tasks_per_iteration;
  }
  std::uint32_t grad_task(int iteration, int stage, int chunk, int bucket, int mb) const {
    const std::size_t nb = num_buckets(stage, chunk);
    const std::size_t round = grad_reductions > 1 ? static_cast<std::size_t>(mb) : 0;
    if (round == 0) return chunk_task_base(iteration, stage, chunk) + static_cast<std::uint32_t>(bucket);
    return chunk_task_base(iteration, stage, chunk) + extra_base(stage, chunk) +
           static_cast<std::uint32_t>((round - 1) * nb + static_cast<std::size_t>(bucket));
  }
  std::uint32_t extra_base(int stage, int chunk) const {
    return zero_extra_base[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)];
  }
  /// ZeRO-3 gather of item `item` (forward order) for micro-batch mb, dir 0 forward, 1 backward.
  std::uint32_t gather_task(int iteration, int stage, int chunk, int item, int mb, int dir) const {
    const std::size_t nb = num_buckets(stage, chunk);
    return chunk_task_base(iteration, stage, chunk) + extra_base(stage, chunk) +
           static_cast<std::uint32_t>(static_cast<std::size_t>(grad_reductions - 1) * nb +
                                      static_cast<std::size_t>((dir * m + mb) * num_items(stage, chunk) + item));
  }
  std::uint32_t send_slot(int iteration, int dir, int mb, int chunk) const {
    return static_cast<std::uint32_t>(((iteration * 2 + dir) * m + mb) * v + chunk);
  }
  /// Label ids of each program's segments, and compute durations in ns (computed once).
  struct ProgramInfo {
    const Program* program;
    std::vector<std::uint32_t> label_ids;
    std::vector<std::int64_t> duration_ns;
    std::vector<double> compute_fraction;  ///< compute-bound share of each segment's time
  };
  std::vector<ProgramInfo> program_info;

  std::uint32_t label(const std::string& s) const {
    auto it = std::find(labels.begin(), labels.end(), s);
    if (it == labels.end()) throw std::logic_error("executor: unknown label " + s);
    return static_cast<std::uint32_t>(it - labels.begin());
  }
  const ProgramInfo& info(const Program& prog) const {
    for (const ProgramInfo& i : program_info)
      if (i.program == &prog) return i;
    throw std::logic_error("executor: unknown program");
  }
};

/// Builds the op graph of one worker.
class GraphBuilder {
 public:
  GraphBuilder(const Plan& plan, int replica, int stage, WorkerGraph& g)
      : plan_(plan),
        replica_(replica),
        stage_(stage),
        g_(g),
        worker_(static_cast<std::uint32_t>(replica * plan.p + stage)) {}

  void build() {
    const Plan& P = plan_;
    g_.sends.assign(static_cast<std::size_t>(P.iterations) * 2 * P.m * P.v, kNone);
    const auto steps = pipeline_steps(stage_, P.p, P.m, P.v);
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
  bool last_stage_of_model(int chunk) const { return stage_ == plan_.p - 1 && chunk == plan_.v - 1; }

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
  /// Everything still in flight that a consumer of the current output must wait for.
  void flush_deferred(std::uint32_t op) {
    for (const auto& d : deferred_) dep(d.first, op);
    deferred_.clear();
  }

  void emit(const Program& prog, int mb) {
    const Plan::ProgramInfo& info = plan_.info(prog);
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
                                                static_cast<std::uint32_t>(plan_.t * plan_.cp));
        g_.tasks[task].expected = static_cast<std::uint32_t>(plan_.cp);
        std::uint32_t op;
        if (seg.overlap == Overlap::blocking) {
          op = compute_stream_op(Role::cp_comm, label, mb);
        } else {
          op = add_op(Role::cp_comm, kCp, label, mb);
          dep(last_compute_, op);
          deferred_.emplace_back(op, seg.overlap == Overlap::with_next ? 2 : 1);
        }
        g_.ops[op].task = task;
        g_.cp_tasks.push_back(task);
        g_.cp_ops.push_back(op);
        continue;
      }
      if (seg.group == CommGroup::ep) {
        // Expert-parallel all-to-all over the EP group: shared by the group's workers (merge).
        const std::uint32_t task =
            private_task(seg.op, seg.bytes, plan_.ep_group(replica_, stage_), static_cast<std::uint32_t>(plan_.t));
        g_.tasks[task].expected = static_cast<std::uint32_t>(plan_.ep);
        const std::uint32_t op = compute_stream_op(Role::ep_comm, label, mb);
        g_.ops[op].task = task;
        g_.ep_tasks.push_back(task);
        g_.ep_ops.push_back(op);
        continue;
      }
      const std::uint32_t task = private_task(seg.op, seg.bytes, plan_.tp_group(replica_, stage_), 1);
      if (seg.overlap == Overlap::blocking) {
        g_.ops[compute_stream_op(Role::tp_comm, label, mb)].task = task;
        continue;
      }
      const std::uint32_t op = add_op(Role::tp_comm, kTp, label, mb);
      g_.ops[op].task = task;
      if (seg.overlap == Overlap::with_next) {
        dep(last_compute_, op);         // starts with the next compute segment
        deferred_.emplace_back(op, 2);  // the segment after that consumes it
      } else {
        dep(prev_compute_, op);         // starts with the previous compute segment
        deferred_.emplace_back(op, 1);  // the next segment consumes it
      }
    }
  }

  /// Pipeline send after a forward (dir 0) or backward (dir 1) of (mb, chunk).
  void send(int dir, int mb, int chunk) {
    const std::uint32_t label = plan_.label(dir == 0 ? "pp_send_fwd" : "pp_send_bwd");
    const std::uint32_t op = add_op(Role::pp_send, kPp, label, mb);
    dep(last_compute_, op);
    flush_deferred(op);
    g_.ops[op].task = private_task(CollectiveOp::send_recv, plan_.programs.p2p_bytes,
                                   plan_.pp_group(replica_, stage_, dir), static_cast<std::uint32_t>(plan_.t));
    g_.sends[plan_.send_slot(iteration_, dir, mb, chunk)] = op;
  }
  /// The next compute op waits for the matching send of a neighbouring stage.
  void receive(int dir, int mb, int src_stage, int src_chunk) {
    const auto src_worker = static_cast<std::uint32_t>(replica_ * plan_.p + src_stage);
    pending_remote_ = RemoteDep{src_worker, plan_.send_slot(iteration_, dir, mb, src_chunk), kNone};
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
  /// A no-op below ZeRO-3 or without data parallelism.
  class ZeroGathers {
   public:
    ZeroGathers(GraphBuilder& b, int mb, int chunk, int dir)
        : b_(b), mb_(mb), chunk_(chunk), dir_(dir), n_(b.plan_.num_items(b.stage_, chunk)) {
      active_ = b.plan_.zero_stage == 3 && b.plan_.d > 1;
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
      const Plan& P = b_.plan_;
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
    const Plan& P = plan_;
    if (!first_stage_of_model(chunk)) {
      if (stage_ > 0)
        receive(0, mb, stage_ - 1, chunk);
      else
        receive(0, mb, P.p - 1, chunk - 1);
    }
    const std::size_t first_new = g_.ops.size();
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
    const Plan& P = plan_;
    if (!last_stage_of_model(chunk)) {
      if (stage_ < P.p - 1)
        receive(1, mb, stage_ + 1, chunk);
      else
        receive(1, mb, 0, chunk + 1);
    }
    const std::size_t first_new = g_.ops.size();
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
    const Plan& P = plan_;
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

  void launch_grad_bucket(int chunk, int bucket, const Bucket& b, int mb) {
    const std::uint32_t reduced = launch_grad_reductions(chunk, bucket, b, mb);
    if (plan_.offload) offload_gradients(b, mb, reduced);
  }

  /// CPU offload: this GPU's share of the bucket's (reduced) gradient goes to host memory over
  /// its PCIe path once the reduction that produced it is done (DeepSpeed ZeRO-Offload copies
  /// each reduced partition into the CPU's fp32 gradient buffer on the reduction stream).
  void offload_gradients(const Bucket& b, int mb, std::uint32_t after) {
    const Plan& P = plan_;
    const bool zero = P.zero_stage >= 1;
    const double dense = b.params / (zero && P.d > 1 ? P.d : 1);
    const double experts = b.expert_params / (zero && P.d / P.ep > 1 ? P.d / P.ep : 1);
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
  std::uint32_t launch_grad_reductions(int chunk, int bucket, const Bucket& b, int mb) {
    const Plan& P = plan_;
    if (P.d <= 1) return kNone;
    std::uint32_t last = kNone;
    const std::uint32_t base = P.dp_task_base[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(chunk)] +
                               static_cast<std::uint32_t>(iteration_) * P.dp_tasks_per_iteration;
    const auto nb =
        static_cast<std::uint32_t>(P.buckets[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(chunk)].size());
    if (b.params > 0 || b.expert_params <= 0)
      last = launch_dp_op(Role::dp_grad, P.grad_task(iteration_, stage_, chunk, bucket, mb));
    // Expert gradients: reduced over the replicas holding the same experts.
    if (b.expert_params > 0 && P.d / P.ep > 1)
      last = launch_dp_op(Role::dp_grad, base + 2 * nb +
                                             static_cast<std::uint32_t>(bucket) * static_cast<std::uint32_t>(P.ep) +
                                             static_cast<std::uint32_t>(replica_ % P.ep));
    return last;
  }

  std::uint32_t launch_dp_op(Role role, std::uint32_t task) {
    const Plan& P = plan_;
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

  void finish_iteration() {
    const Plan& P = plan_;
    const Scenario& sc = *P.sc;
    // The barrier (global grad-norm all-reduce before the step) waits for this worker's last op.
    g_.barrier_deps.push_back(last_compute_);
    g_.barrier_dep_iteration.push_back(static_cast<std::uint32_t>(iteration_));
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
    param_gather_of_layer_.clear();
    if ((P.zero_stage == 1 || P.zero_stage == 2) && P.d > 1) {
      const bool overlap = sc.parallel.overlap_param_gather;
      param_gather_of_layer_.resize(static_cast<std::size_t>(P.v));
      for (int c = 0; c < P.v; ++c) {
        const auto& bks = P.buckets[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(c)];
        auto& of_layer = param_gather_of_layer_[static_cast<std::size_t>(c)];
        of_layer.assign(
            static_cast<std::size_t>(P.chunk_layers[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(c)]),
            kNone);
        // Gathers in forward order: the bucket holding the first layers first.
        const auto nb = static_cast<std::uint32_t>(bks.size());
        const std::uint32_t base = P.dp_task_base[static_cast<std::size_t>(stage_)][static_cast<std::size_t>(c)] +
                                   static_cast<std::uint32_t>(iteration_) * P.dp_tasks_per_iteration;
        auto gather = [&](std::uint32_t task) {
          const std::uint32_t op = overlap ? add_op(Role::dp_param, kDp, P.label("dp_param_gather"), -1)
                                           : compute_stream_op(Role::dp_param, P.label("dp_param_gather"), -1);
          if (overlap) dep(opt, op);
          g_.ops[op].task = task;
          g_.dp_ops.emplace_back(task, op);
          return op;
        };
        for (std::size_t bi = bks.size(); bi-- > 0;) {
          const auto b = static_cast<std::uint32_t>(bi);
          // Expert shard first (same stream, in order): a layer waiting for the dense gather has both.
          if (bks[bi].expert_params > 0 && P.d / P.ep > 1)
            gather(base + 2 * nb + nb * static_cast<std::uint32_t>(P.ep) + b * static_cast<std::uint32_t>(P.ep) +
                   static_cast<std::uint32_t>(replica_ % P.ep));
          const std::uint32_t op = gather(base + nb + b);
          for (int layer : bks[bi].layers) of_layer[static_cast<std::size_t>(layer)] = op;
        }
      }
      if (!overlap) param_gather_of_layer_.clear();
    }
  }

  const Plan& plan_;
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

/// Gradient buckets of one chunk in backward order (Megatron/DDP: filled as gradients become
/// ready; a bucket is launched once it holds dp_bucket_bytes).
std::vector<Bucket> plan_buckets(const Plan& P, int stage, int chunk) {
  const Scenario& sc = *P.sc;
  struct Item {
    double params, expert_params;
    int layer;  // chunk-local, or -1
  };
  std::vector<Item> items;
  const bool first = stage == 0 && chunk == 0, last = stage == P.p - 1 && chunk == P.v - 1;
  // Parameters that get gradients: all, or the LoRA adapters only (frozen embedding and head).
  const bool frozen = P.programs.frozen_base;
  if (last) items.push_back({frozen ? 0.0 : P.programs.head_params_per_rank, 0.0, -1});
  const int layers = P.chunk_layers[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)];
  for (int l = layers - 1; l >= 0; --l) {
    const LayerPrograms& lp = P.layer(stage, chunk, l);
    if (frozen)
      items.push_back({P.programs.adapter_params_per_layer_per_rank, 0.0, l});
    else
      items.push_back({lp.params_per_rank, lp.expert_params_per_rank, l});
  }
  if (first && !frozen) items.push_back({P.programs.embedding_params_per_rank, 0.0, -1});
  // Megatron-Core: bucket_size = max(40M, 1M × dp) elements; here the first term is dp_bucket_bytes.
  // PyTorch DDP (the ResNet family): bucket_cap_mb as given, and the first bucket (the last
  // layers' gradients, ready first) capped at 1 MiB (torch.distributed _DEFAULT_FIRST_BUCKET_BYTES)
  // so communication starts early.
  const bool ddp = sc.model.family == ModelFamily::resnet;
  const double bucket_bytes =
      ddp ? sc.parallel.dp_bucket_bytes : std::max(sc.parallel.dp_bucket_bytes, 1e6 * P.d * P.grad_bytes);
  constexpr double kDdpFirstBucketBytes = 1048576.0;
  std::vector<Bucket> out;
  Bucket cur;
  for (std::size_t i = 0; i < items.size(); ++i) {
    cur.params += items[i].params;
    cur.expert_params += items[i].expert_params;
    if (items[i].layer >= 0) cur.layers.push_back(items[i].layer);
    const double cap = (ddp && out.empty()) ? std::min(bucket_bytes, kDdpFirstBucketBytes) : bucket_bytes;
    if ((cur.params + cur.expert_params) * P.grad_bytes >= cap ||
        (i + 1 == items.size() && (cur.params + cur.expert_params > 0 || out.empty()))) {
      cur.after_item = static_cast<int>(i);
      out.push_back(std::move(cur));
      cur = Bucket{};
    }
  }
  return out;
}

}  // namespace

namespace {

/// The calibration profile's power/thermal overlay for `gpu`, or null when the scenario's profile
/// has none. Throws std::invalid_argument when it was fitted on another GPU.
const PowerThermalOverlay* power_overlay(const Scenario& sc, const GpuSpec& gpu) {
  const CalibrationProfile* p = sc.cluster.profile.get();
  if (p == nullptr || !p->power_thermal.any()) return nullptr;
  if (p->gpu != gpu.name) {
    throw std::invalid_argument("profile " + (p->origin.empty() ? std::string("(in memory)") : p->origin) +
                                ": power_thermal was fitted on GPU \"" + p->gpu + "\" but the cluster's GPU is \"" +
                                gpu.name + "\" (expected a profile of the same GPU)");
  }
  return &p->power_thermal;
}

/// The default lumped RC with the profile's fitted R and C over it (a scenario's own
/// thermal.r_k_per_w / c_j_per_k are applied by the callers and win).
ThermalRc base_thermal_rc(const Scenario& sc, const GpuSpec& gpu, bool liquid, int rows) {
  ThermalRc rc = default_thermal_rc(gpu, liquid, rows);
  if (const PowerThermalOverlay* o = power_overlay(sc, gpu)) {
    if (o->r_k_per_w) rc.r_k_per_w = *o->r_k_per_w;
    if (o->c_j_per_k) rc.c_j_per_k = *o->c_j_per_k;
  }
  return rc;
}

}  // namespace

bool clock_feedback_possible(const Scenario& sc, const GpuSpec& gpu, const NodeTemplate& node) {
  const PowerSpec& pw = sc.power;
  const ThermalSpec& th = sc.thermal;
  if (pw.gpu_power_limit_w > 0 && pw.gpu_power_limit_w < gpu.tdp_w) return true;
  const bool liquid = th.cooling == Cooling::liquid;
  if (!liquid && th.rack_cooling_capacity_w > 0) return true;
  const NodePowerSpec ns = node_power_spec(node, gpu);
  const int rows = liquid ? 1 : ns.airflow_rows;
  const int lanes = std::max(1, node.gpus_per_node / std::max(1, rows));
  const PowerThermalOverlay* overlay = power_overlay(sc, gpu);
  // A fitted u(compute_bound) > 1: the GPU's TDP caps a tensor-core-bound kernel below the full clock.
  if (overlay && overlay->compute_bound_fraction && *overlay->compute_bound_fraction > 1) return true;
  const ThermalRc base = base_thermal_rc(sc, gpu, liquid, rows);
  auto airflow = [&](int l) {
    return static_cast<std::size_t>(l) < th.gpu_airflow_fraction.size() ? th.gpu_airflow_fraction[l] : 1.0;
  };
  for (int l = 0; l < node.gpus_per_node; ++l) {
    double r = th.r_k_per_w > 0 ? th.r_k_per_w : base.r_k_per_w;
    if (!liquid) r /= std::pow(airflow(l), 0.8);
    double inlet = liquid ? th.coolant_c : th.supply_air_c;
    if (!liquid)
      for (int u = l % lanes; u < l; u += lanes) inlet += gpu.tdp_w * preheat_k_per_w(gpu, rows, airflow(u));
    if (inlet + gpu.tdp_w * r >= gpu.slowdown_temp_c) return true;
  }
  return false;
}

PowerThermalSetup power_thermal_setup(const Scenario& sc, const Cluster& cluster, const TrainingGraph& job,
                                      const ThermalStartState& start) {
  PowerThermalSetup ps;
  const GpuSpec& gpu = cluster.gpu_spec(0);
  const NodeTemplate& node = cluster.node_template();
  const PowerSpec& pw = sc.power;
  const ThermalSpec& th = sc.thermal;
  const bool liquid = th.cooling == Cooling::liquid;
  ps.curve = power_curve_of(gpu);
  if (const PowerThermalOverlay* o = power_overlay(sc, gpu)) {
    if (o->idle_w) ps.curve.idle_w = *o->idle_w;
    if (o->compute_bound_fraction)
      ps.curve.activity_fraction[static_cast<int>(Activity::compute_bound)] = *o->compute_bound_fraction;
  }
  if (pw.memory_bound_fraction)
    ps.curve.activity_fraction[static_cast<int>(Activity::memory_bound)] = *pw.memory_bound_fraction;
  if (pw.comm_fraction) ps.curve.activity_fraction[static_cast<int>(Activity::comm)] = *pw.comm_fraction;
  ps.power_limit_w = pw.gpu_power_limit_w;
  ps.node = node_power_spec(node, gpu);
  if (pw.psu_redundant) ps.node.psu_redundant = *pw.psu_redundant;
  ps.cpu_load_fraction = pw.cpu_load_fraction;
  ps.pue = pw.pue;
  ps.liquid = liquid;
  ps.supply_c = liquid ? th.coolant_c : th.supply_air_c;
  ps.nodes_per_rack = std::max(1, th.nodes_per_rack);
  ps.gpus_per_node = cluster.gpus_per_node();
  ps.sockets = node.sockets;
  ps.rack_cooling_capacity_w = th.rack_cooling_capacity_w;
  ps.node_airflow_m3_per_s = node_airflow_m3_per_s(ps.node, gpu, cluster.gpus_per_node(), node.sockets);
  ps.iterations = job.iterations;
  ps.periodic_correction = start.periodic_correction;
  ps.thermal_events = clock_feedback_possible(sc, gpu, node);
  ps.gpu_scale = static_cast<double>(job.dp) / job.replicas;
  const int rows = liquid ? 1 : ps.node.airflow_rows;
  const int gpn = cluster.gpus_per_node();
  const int lanes = std::max(1, gpn / std::max(1, rows));
  const ThermalRc base = base_thermal_rc(sc, gpu, liquid, rows);
  auto airflow = [&](int local) {
    return static_cast<std::size_t>(local) < th.gpu_airflow_fraction.size() ? th.gpu_airflow_fraction[local] : 1.0;
  };
  const int t = job.tp, d = job.dp;
  std::vector<int> sim_of(static_cast<std::size_t>(cluster.num_gpus()), -1);
  ps.worker_gpus.resize(job.worker_gpus.size());
  for (std::size_t w = 0; w < job.worker_gpus.size(); ++w)
    for (int g : job.worker_gpus[w]) {
      sim_of[static_cast<std::size_t>(g)] = static_cast<int>(ps.gpus.size());
      ps.worker_gpus[w].push_back(static_cast<int>(ps.gpus.size()));
      PowerThermalSetup::Gpu pg;
      pg.global = g;
      pg.worker = static_cast<std::uint32_t>(w);
      pg.actual_node = cluster.node_of(g);
      pg.rc = base;
      if (th.r_k_per_w > 0) pg.rc.r_k_per_w = th.r_k_per_w;
      if (th.c_j_per_k > 0) pg.rc.c_j_per_k = th.c_j_per_k;
      if (start.no_thermal_slowdown) pg.rc.slowdown_c = std::numeric_limits<double>::infinity();
      if (!liquid) pg.rc.r_k_per_w /= std::pow(airflow(cluster.local_rank(g)), 0.8);
      ps.gpus.push_back(pg);
    }
  // Representative of real GPU g = tp + t (dp + d stage): the same TP rank and stage in a
  // simulated replica.
  auto rep_of = [&](int g) {
    const int k = g % t, r = (g / t) % d, st = g / (t * d);
    return sim_of[static_cast<std::size_t>(k + t * (r % job.replicas + d * st))];
  };
  ps.rep_node_of_gpu.resize(static_cast<std::size_t>(cluster.num_gpus()));
  for (int g = 0; g < cluster.num_gpus(); ++g)
    ps.rep_node_of_gpu[static_cast<std::size_t>(g)] = ps.gpus[static_cast<std::size_t>(rep_of(g))].actual_node;
  if (!liquid)
    for (auto& pg : ps.gpus) {
      const int node_first = cluster.node_of(pg.global) * gpn, l = cluster.local_rank(pg.global);
      for (int u = l % lanes; u < l; u += lanes)
        pg.upstream.emplace_back(rep_of(node_first + u), preheat_k_per_w(gpu, rows, airflow(u)));
    }
  std::map<std::vector<int>, int> kind_index;
  for (int n = 0; n < cluster.num_nodes(); ++n) {
    std::vector<int> members;
    for (int l = 0; l < gpn; ++l) members.push_back(rep_of(n * gpn + l));
    auto [it, added] = kind_index.emplace(members, static_cast<int>(ps.node_kinds.size()));
    if (added) ps.node_kinds.push_back({members, 0});
    ++ps.node_kinds[static_cast<std::size_t>(it->second)].count;
    ps.kind_of_node.push_back(it->second);
  }
  for (auto& pg : ps.gpus) pg.node_kind = ps.kind_of_node[static_cast<std::size_t>(pg.actual_node)];
  ps.rack_rise_start_c = start.rack_rise_c;
  for (std::size_t i = 0; i < ps.gpus.size(); ++i) {
    auto& pg = ps.gpus[i];
    double inlet = ps.supply_c;
    const auto rack = static_cast<std::size_t>(pg.actual_node / ps.nodes_per_rack);
    if (!liquid && rack < start.rack_rise_c.size()) inlet += start.rack_rise_c[rack];
    for (const auto& [j, k_per_w] : pg.upstream) inlet += ps.curve.idle_w * k_per_w;
    pg.start_c = i < start.start_c.size() ? start.start_c[i] : inlet + ps.curve.idle_w * pg.rc.r_k_per_w;
    pg.start_throttled = pg.start_c >= pg.rc.slowdown_c;
  }
  return ps;
}

namespace {

/// The storage stall in the timeline is derived from the iteration without storage,
/// compute_iteration_s (0: no stall, as without a storage section).
struct StorageStall {
  double compute_iteration_s = 0;
};

/// Fills r.straggler's GPU (the slowest rank's TP-group GPU with the lowest mean SM clock while
/// computing; the first on ties), node, clock, temperature and cause from the power and thermal
/// reports (training_report found the rank and the input-copy cause).
void name_straggler(const Cluster& cluster, Report& r) {
  StragglerReport& st = r.straggler;
  if (!st.found) return;
  const GpuPower* slowest = nullptr;
  for (int g : st.tp_group_gpus)
    for (const GpuPower& gp : r.power.gpus)
      if (gp.gpu == g && (slowest == nullptr || gp.compute_clock_fraction_mean < slowest->compute_clock_fraction_mean))
        slowest = &gp;
  if (slowest != nullptr) {
    st.gpu = slowest->gpu;
    st.sm_clock_mhz = slowest->compute_clock_fraction_mean * st.boost_clock_mhz;
  } else {
    st.sm_clock_mhz = st.boost_clock_mhz;
  }
  st.node = cluster.node_of(st.gpu);
  st.local_gpu = st.gpu - st.node * cluster.gpus_per_node();
  for (const GpuThermal& gt : r.thermal.gpus)
    if (gt.gpu == st.gpu) {
      st.temperature_c = gt.average_c;
      st.throttled_time_fraction = gt.throttled_time_fraction;
    }
  // Thermal slowdown first, then a clock below boost (power cap); else training_report's cause.
  if (st.throttled_time_fraction > 0)
    st.cause = "thermal";
  else if (slowest != nullptr && slowest->compute_clock_fraction_mean < 1.0 - 1e-9)
    st.cause = "power_cap";
}

/// One pass of the whole job; `start` gives the thermal starting point and receives the end state.
/// The storage stall is part of the simulated timeline. With `job_effects`, storage figures,
/// failures/goodput and cost (issue 4) follow, each only when the scenario asks, the cost's energy
/// at the power model's facility draw.
Report simulate_pass(const Scenario& sc, sim::TraceRecorder* trace, ThermalStartState& start, bool job_effects,
                     const StorageStall& storage) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  CollectiveEngine coll(sim, net, cluster);
  const double stall_s =
      storage.compute_iteration_s > 0 ? storage_stall_per_iteration_s(sc, cluster, storage.compute_iteration_s) : 0.0;
  TrainingGraph job = build_training_graph(sc, cluster, stall_s);
  PowerThermalSetup setup = power_thermal_setup(sc, cluster, job, start);
  setup.trace = trace;
  PowerThermalModel power(sim, std::move(setup));
  run_op_graph(sim, coll, job.graph, &power);
  Report r = training_report(sc, cluster, net, sim.events_processed(), job, trace);
  std::int64_t end_ns = 0;
  for (const Op& op : job.graph.ops) end_ns = std::max(end_ns, op.end_ns);
  power.finish(end_ns, r.iteration_time_s, r.time_to_train_s, r.power, r.thermal);
  name_straggler(cluster, r);
  if (job_effects) {
    apply_job_effects(sc, cluster, r, r.power.facility_average_w, storage.compute_iteration_s);
    // The facility average includes the storage stall, when the GPUs draw idle power.
    r.power.energy_to_train_kwh = r.time_to_train_s > 0 ? r.power.facility_average_w * r.time_to_train_s / 3.6e6 : 0.0;
  }
  start.periodic_c = power.periodic_start_c();
  start.rack_rise_out_c = power.rack_rise_c();
  start.asymmetric = power.asymmetric();
  start.folded = job.folded;
  return r;
}

}  // namespace

TrainingGraph build_training_graph(const Scenario& sc, const Cluster& cluster, double storage_stall_s) {
  const GpuSpec& gpu = cluster.gpu_spec(0);
  const ComputeParams params = compute_params(gpu, sc.cluster.profile);

  Plan P;
  P.sc = &sc;
  P.t = sc.parallel.tp;
  P.p = sc.parallel.pp;
  P.cp = std::max(1, sc.parallel.cp);
  P.d = sc.parallel.dp * P.cp;
  P.ep = std::max(1, sc.parallel.ep);
  if (P.cp > 1 && (P.ep > 1 || sc.model.num_experts > 0 || sc.model.family != ModelFamily::transformer ||
                   !sc.training.flash_attention || sc.model.seq_length % (2 * P.cp) != 0))
    throw std::invalid_argument("cp = " + std::to_string(P.cp) +
                                " needs a dense transformer with flash attention and seq_length divisible by 2 * cp");
  if (P.d % P.ep != 0 || (P.ep > 1 && sc.model.num_experts % P.ep != 0))
    throw std::invalid_argument("ep = " + std::to_string(P.ep) + " must divide dp and num_experts");
  P.v = sc.parallel.schedule == PipelineSchedule::interleaved_one_f_one_b ? std::max(1, sc.parallel.virtual_stages) : 1;
  if (P.t * P.p * P.d != cluster.num_gpus())
    throw std::invalid_argument("tp*cp*pp*dp = " + std::to_string(P.t * P.p * P.d) + " but the cluster has " +
                                std::to_string(cluster.num_gpus()) + " GPUs");
  P.m = sc.training.global_batch_size / (sc.parallel.dp * sc.training.micro_batch_size);
  P.iterations = std::max(1, sc.options.iterations);
  if (sc.parallel.zero_stage >= 1 && sc.parallel.overlap_param_gather && P.d > 1)
    P.iterations = std::max(P.iterations, 2);
  const bool resnet = sc.model.family == ModelFamily::resnet;
  if (resnet && (P.t != 1 || P.p != 1 || P.ep != 1))
    throw std::invalid_argument("a ResNet is trained data-parallel only (DDP): tp, pp and ep must be 1");
  P.programs = resnet ? build_resnet_programs(sc, gpu, params) : build_transformer_programs(sc, gpu, params);
  // Layers as the generator lays them out (transformer layers, or ResNet bottleneck blocks).
  const int num_layers = static_cast<int>(P.programs.layer_kind.size());
  const bool fp32 = sc.training.precision == Precision::fp32 || sc.training.precision == Precision::tf32;
  P.grad_bytes = (fp32 || sc.training.fp32_grad_accumulation) ? 4 : 2;
  P.weight_bytes = fp32 ? 4 : 2;

  // Folding (DESIGN §3): identical DP replicas are simulated once when each replica fills whole
  // nodes and the fabric is non-blocking, so replicas' TP/PP traffic shares no link.
  // With expert parallelism the unit of symmetry is one EP group of ep replicas (they exchange
  // tokens), so ep replicas are simulated.
  // Context parallelism likewise: a CP group's cp replicas exchange K/V (ep and cp are not combined).
  const int unit = P.ep * P.cp;
  const bool whole_nodes = (P.t * P.p * unit) % cluster.gpus_per_node() == 0;
  bool folded = sc.options.fold_symmetric && P.d > unit && whole_nodes && sc.cluster.fabric.oversubscription <= 1.0;
  // A GPU that stands for others must sit at the same place in its node when its temperature can
  // slow it down (airflow position, preheat); otherwise the replicas are not symmetric.
  if (folded && clock_feedback_possible(sc, gpu, cluster.node_template())) {
    for (int g = 0; g < cluster.num_gpus() && folded; ++g) {
      const int k = g % P.t, r = (g / P.t) % P.d, st = g / (P.t * P.d);
      if (cluster.local_rank(P.gpu(k, r % unit, st)) != cluster.local_rank(g)) folded = false;
    }
  }
  P.replicas = folded ? unit : P.d;

  // Layers per stage and chunk.
  const std::vector<int> stage_layers = layers_per_stage(num_layers, P.p);
  P.chunk_layers = chunk_layer_counts(num_layers, P.p, P.v);
  P.chunk_first_layer = chunk_first_layers(P.chunk_layers);

  // Labels (trace names), interned once so builders only look them up.
  std::vector<const Program*> all_programs;
  for (const LayerPrograms& lp : P.programs.layer_kinds)
    for (const Program* prog : {&lp.forward, &lp.recompute, &lp.backward}) all_programs.push_back(prog);
  for (const Program* prog : {&P.programs.embedding_forward, &P.programs.embedding_backward, &P.programs.head_forward,
                              &P.programs.head_backward})
    all_programs.push_back(prog);
  for (const Program* prog : all_programs)
    for (const Segment& seg : *prog)
      if (std::find(P.labels.begin(), P.labels.end(), seg.label) == P.labels.end()) P.labels.push_back(seg.label);
  // Input copies (workload.data_loader): one host copy per GPU and micro-batch from the memory of
  // its loader's socket; every replica's first-stage GPUs load at once.
  if (sc.data_loader && resnet) {
    const DataLoaderSpec& dl = *sc.data_loader;
    P.input_copies = true;
    // A prefetched copy hides under the previous iteration's compute: the report (of the last
    // iteration) shows that steady state only from the second iteration on.
    if (dl.prefetch) P.iterations = std::max(P.iterations, 2);
    P.input_prefetch = dl.prefetch;
    P.input_bytes = static_cast<double>(sc.training.micro_batch_size) * 3.0 * sc.model.image_size *
                    sc.model.image_size * dl.input_bytes_per_element;
    const int sockets = std::max(1, cluster.node_template().sockets);
    P.input_buffers.socket_of_gpu.assign(static_cast<std::size_t>(cluster.num_gpus()), -1);
    for (int r = 0; r < P.d; ++r)
      for (int k = 0; k < P.t; ++k) {
        const int g = P.gpu(k, r, 0);
        const int home = cluster.socket_of_gpu(cluster.local_rank(g));
        const int socket = dl.numa_binding == NumaBinding::correct        ? home
                           : dl.numa_binding == NumaBinding::other_socket ? (home + 1) % sockets
                                                                          : 0;
        P.input_buffers.socket_of_gpu[static_cast<std::size_t>(g)] = socket;
      }
    P.labels.emplace_back("h2d_input");
  }
  for (const char* l : {"pp_send_fwd", "pp_send_bwd", "dp_grad_sync", "dp_param_gather", "dp_param_gather_fwd",
                        "dp_param_gather_bwd", "optimizer", "barrier", "offload_d2h", "cpu_adam", "offload_h2d"})
    P.labels.emplace_back(l);
  if (storage_stall_s > 0) {
    P.storage_stall_ns = sim::Time::from_seconds(storage_stall_s).ns();
    P.labels.emplace_back("storage_stall");
  }
  for (const Program* prog : all_programs) {
    Plan::ProgramInfo info{prog, {}, {}, {}};
    for (const Segment& seg : *prog) {
      info.label_ids.push_back(P.label(seg.label));
      info.duration_ns.push_back(seg.is_collective ? 0 : sim::Time::from_seconds(seg.seconds).ns());
      info.compute_fraction.push_back(seg.seconds > 0 ? seg.compute_bound_seconds / seg.seconds : 0.0);
    }
    P.program_info.push_back(std::move(info));
  }

  // Group table: TP groups, PP send pairs, DP groups.
  P.tp_group_base = 0;
  for (int r = 0; r < P.replicas; ++r)
    for (int s = 0; s < P.p; ++s) {
      for (int k = 0; k < P.t; ++k) P.groups.gpus.push_back(P.gpu(k, r, s));
      P.groups.close_group();
    }
  P.pp_group_base = P.groups.size();
  for (int r = 0; r < P.replicas; ++r)
    for (int s = 0; s < P.p; ++s)
      for (int dir = 0; dir < 2; ++dir)
        for (int k = 0; k < P.t; ++k) {
          const int dst = dir == 0 ? (s + 1) % P.p : (s - 1 + P.p) % P.p;
          P.groups.add({P.gpu(k, r, s), P.gpu(k, r, dst)});
        }
  P.dp_group_base = P.groups.size();
  for (int s = 0; s < P.p; ++s)
    for (int k = 0; k < P.t; ++k) {
      for (int r = 0; r < P.d; ++r) P.groups.gpus.push_back(P.gpu(k, r, s));
      P.groups.close_group();
    }
  // Expert parallelism: EP groups (ep consecutive replicas) and expert-data-parallel groups
  // (the replicas holding the same experts), one per TP rank.
  const bool moe = sc.model.num_experts > 0;
  P.ep_group_base = P.groups.size();
  if (P.ep > 1)
    for (int g = 0; g < P.d / P.ep; ++g)
      for (int s = 0; s < P.p; ++s)
        for (int k = 0; k < P.t; ++k) {
          for (int j = 0; j < P.ep; ++j) P.groups.gpus.push_back(P.gpu(k, g * P.ep + j, s));
          P.groups.close_group();
        }
  // Context-parallel ring pairs: per CP group, stage and TP rank, rank j sends to rank j + 1 mod cp.
  P.cp_group_base = P.groups.size();
  if (P.cp > 1)
    for (int g = 0; g < P.d / P.cp; ++g)
      for (int s = 0; s < P.p; ++s)
        for (int k = 0; k < P.t; ++k)
          for (int j = 0; j < P.cp; ++j)
            P.groups.add({P.gpu(k, g * P.cp + j, s), P.gpu(k, g * P.cp + (j + 1) % P.cp, s)});
  P.edp_group_base = P.groups.size();
  if (moe)
    for (int s = 0; s < P.p; ++s)
      for (int j = 0; j < P.ep; ++j)
        for (int k = 0; k < P.t; ++k) {
          for (int r = j; r < P.d; r += P.ep) P.groups.gpus.push_back(P.gpu(k, r, s));
          P.groups.close_group();
        }

  // Buckets and the shared DP tasks of every iteration (layout: Plan::grad_task and below).
  const bool zero = sc.parallel.zero_stage >= 1;
  P.zero_stage = sc.parallel.zero_stage;
  P.grad_reductions = sc.parallel.zero_stage >= 2 ? P.m : 1;
  P.buckets.resize(static_cast<std::size_t>(P.p));
  P.dp_task_base.resize(static_cast<std::size_t>(P.p));
  P.zero_extra_base.resize(static_cast<std::size_t>(P.p));
  std::vector<Task> dp_tasks;
  std::uint32_t per_iter = 0;
  std::vector<Task> iter_tasks;
  P.stage_params.assign(static_cast<std::size_t>(P.p), 0.0);
  std::vector<double> stage_expert_params(static_cast<std::size_t>(P.p), 0.0);
  const auto expert_replicas = static_cast<std::uint32_t>(P.replicas / P.ep);  // simulated per expert-DP group
  for (int s = 0; s < P.p; ++s)
    for (int c = 0; c < P.v; ++c) {
      auto bks = plan_buckets(P, s, c);
      P.dp_task_base[static_cast<std::size_t>(s)].push_back(per_iter);
      auto dp_task = [&](CollectiveOp op, double bytes) {
        Task t;
        t.op = op;
        t.bytes = bytes;
        t.group_begin = P.dp_group(s);
        t.group_count = static_cast<std::uint32_t>(P.t);
        t.expected = static_cast<std::uint32_t>(P.replicas);
        iter_tasks.push_back(t);
        ++per_iter;
      };
      for (const Bucket& b : bks) P.stage_params[static_cast<std::size_t>(s)] += b.params;
      // Round 0 of the gradient reductions, then the post-step gathers of ZeRO-1/2 (MoE's layout).
      for (const Bucket& b : bks)
        dp_task(zero ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce, b.params * P.grad_bytes);
      for (const Bucket& b : bks) dp_task(CollectiveOp::all_gather, b.params * P.weight_bytes);
      // Expert gradients and (ZeRO-1) expert parameter gathers: per bucket, one task per EP rank.
      std::uint32_t expert_tasks = 0;
      if (moe) {
        for (int pass = 0; pass < 2; ++pass)
          for (const Bucket& b : bks)
            for (int j = 0; j < P.ep; ++j) {
              Task t;
              t.op = pass == 1 ? CollectiveOp::all_gather
                               : (zero ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce);
              t.bytes = b.expert_params * (pass == 1 ? P.weight_bytes : P.grad_bytes);
              t.group_begin = P.edp_group(s, j);
              t.group_count = static_cast<std::uint32_t>(P.t);
              t.expected = expert_replicas;
              iter_tasks.push_back(t);
              ++expert_tasks;
              if (pass == 0 && j == 0) stage_expert_params[static_cast<std::size_t>(s)] += b.expert_params;
            }
      }
      per_iter += expert_tasks;
      // ZeRO-2/3 after MoE's tasks: gradient rounds 1..m-1, then ZeRO-3's per-item gathers.
      P.zero_extra_base[static_cast<std::size_t>(s)].push_back(per_iter -
                                                               P.dp_task_base[static_cast<std::size_t>(s)].back());
      for (int round = 1; round < P.grad_reductions; ++round)
        for (const Bucket& b : bks)
          dp_task(zero ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce, b.params * P.grad_bytes);
      if (P.zero_stage == 3) {
        // Per-item parameters in forward order: embedding, layers, head (Plan::gather_task).
        std::vector<double> item_params;
        if (s == 0 && c == 0) item_params.push_back(P.programs.embedding_params_per_rank);
        for (int l = 0; l < P.chunk_layers[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)]; ++l)
          item_params.push_back(P.layer(s, c, l).params_per_rank);
        if (s == P.p - 1 && c == P.v - 1) item_params.push_back(P.programs.head_params_per_rank);
        for (int dir = 0; dir < 2; ++dir)
          for (int mb = 0; mb < P.m; ++mb)
            for (double params_of_item : item_params)
              dp_task(CollectiveOp::all_gather, params_of_item * P.weight_bytes);
      }
      P.buckets[static_cast<std::size_t>(s)].push_back(std::move(bks));
    }
  P.dp_tasks_per_iteration = per_iter;
  for (int it = 0; it < P.iterations; ++it) dp_tasks.insert(dp_tasks.end(), iter_tasks.begin(), iter_tasks.end());

  // Optimizer step per stage: Adam over the local shard, memory bound: read fp32 grad (4),
  // read+write master, m, v (24), write 16-bit weight (2), grad-norm read (4) = 34 B/param.
  // ResNet: SGD with momentum on fp32 weights (torchvision reference recipe): read the grad (4),
  // read+write the weight (8) and the momentum (8) = 20 B/param.
  // CPU offload: CPU-Adam over the shard in host memory (models/workload/offload.h), every GPU of
  // a socket stepping at once on its share of the socket's DRAM bandwidth.
  const double optimizer_bytes_per_param = resnet ? 20.0 : 34.0;
  P.offload = sc.offload.optimizer;
  const double host_bw = P.offload ? offload_host_memory_bytes_per_s(sc, cluster.node_template()) : 0.0;
  if (P.offload && !(host_bw > 0))
    throw std::invalid_argument("offload: no host-memory bandwidth for CPU '" + cluster.node_template().cpu +
                                "' (set workload.offload.host_memory_bytes_per_s)");
  const int sockets = std::max(1, cluster.node_template().sockets);
  const int gpus_per_socket = (cluster.gpus_per_node() + sockets - 1) / sockets;
  for (int s = 0; s < P.p; ++s) {
    double shard = P.stage_params[static_cast<std::size_t>(s)] / (zero ? P.d : 1);
    if (moe) shard += stage_expert_params[static_cast<std::size_t>(s)] / (zero ? P.d / P.ep : 1);
    const Kernel k{KernelKind::optimizer, 0, optimizer_bytes_per_param * shard};
    const double seconds = P.offload ? cpu_adam_seconds(shard, host_bw, sc.offload.cpu_adam_efficiency, gpus_per_socket)
                                     : kernel_seconds(k, gpu, params, sc.training.precision);
    P.optimizer_ns.push_back(sim::Time::from_seconds(seconds).ns());
    P.offload_h2d_bytes.push_back(shard * P.weight_bytes);
  }

  // Refuse graphs that would not fit in memory (about 100 bytes per op with its edges) before
  // building them, with what to change.
  {
    double per_microbatch = 0;  // ops of one micro-batch through one stage (all chunks)
    const int layers_max = *std::max_element(stage_layers.begin(), stage_layers.end());
    std::size_t layer_ops = 0;
    for (const LayerPrograms& lp : P.programs.layer_kinds)
      layer_ops = std::max(layer_ops, lp.forward.size() + lp.recompute.size() + lp.backward.size());
    per_microbatch += static_cast<double>(layers_max) * static_cast<double>(layer_ops);
    per_microbatch += static_cast<double>(P.programs.embedding_forward.size() + P.programs.embedding_backward.size() +
                                          P.programs.head_forward.size() + P.programs.head_backward.size() + 2);
    if (P.zero_stage == 3) per_microbatch += 2.0 * (layers_max + 2);  // per-item gathers, both passes
    const double ops = per_microbatch * P.m * P.iterations * static_cast<double>(P.replicas * P.p);
    constexpr double kMaxOps = 40e6;  // ~4 GB of op graph
    if (ops > kMaxOps)
      throw std::invalid_argument(
          "the job would need about " + std::to_string(static_cast<long long>(ops / 1e6)) +
          " million ops to simulate (limit " + std::to_string(static_cast<long long>(kMaxOps / 1e6)) +
          " million): reduce options.iterations or global_batch_size, or keep options.fold_symmetric on");
  }

  // Build every worker's graph (in parallel when asked; each worker is independent).
  const int workers = P.replicas * P.p;
  std::vector<WorkerGraph> graphs(static_cast<std::size_t>(workers));
  {
    auto build_one = [&](int w) {
      GraphBuilder b(P, w / P.p, w % P.p, graphs[static_cast<std::size_t>(w)]);
      b.build();
    };
    const int threads = std::max(1, sc.options.threads);
    if (threads > 1) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
      tbb::parallel_for(0, workers, build_one);
    } else {
      for (int w = 0; w < workers; ++w) build_one(w);
    }
  }

  // Merge into global arrays: ops, tasks (shared DP tasks first), participants, dependents (CSR).
  std::vector<std::uint32_t> op_base(static_cast<std::size_t>(workers) + 1, 0);
  std::vector<std::uint32_t> task_base(static_cast<std::size_t>(workers) + 1, 0);
  op_base[0] = 0;
  task_base[0] = static_cast<std::uint32_t>(dp_tasks.size());
  for (int w = 0; w < workers; ++w) {
    op_base[w + 1] = op_base[w] + static_cast<std::uint32_t>(graphs[w].ops.size());
    task_base[w + 1] = task_base[w] + static_cast<std::uint32_t>(graphs[w].tasks.size());
  }
  const std::uint32_t barrier_base = op_base[workers];
  TrainingGraph job;
  OpGraph& G = job.graph;
  G.workers = static_cast<std::uint32_t>(workers);
  std::vector<Op>& ops = G.ops;
  ops.reserve(barrier_base + static_cast<std::size_t>(P.iterations));
  std::vector<Task>& tasks = G.tasks;
  if (P.input_copies) G.host_buffers.push_back(P.input_buffers);  // kInputBuffers
  tasks = dp_tasks;
  tasks.reserve(task_base[workers]);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (int w = 0; w < workers; ++w) {
    WorkerGraph& g = graphs[static_cast<std::size_t>(w)];
    for (Op op : g.ops) {
      if (op.task != kNone) {
        const bool shared = op.role == Role::dp_grad || op.role == Role::dp_param;
        op.task = shared ? op.task : op.task + task_base[w];
      }
      ops.push_back(op);
    }
    for (Task t : g.tasks) tasks.push_back(t);
    // Expert-parallel all-to-alls: every replica of an EP group joins its first replica's task.
    if (const int replica = w / P.p; P.ep > 1 && replica % P.ep != 0) {
      const int leader = (replica - replica % P.ep) * P.p + w % P.p;
      const WorkerGraph& lg = graphs[static_cast<std::size_t>(leader)];
      if (lg.ep_tasks.size() != g.ep_ops.size())
        throw std::logic_error("executor: expert-parallel peers emitted different all-to-alls");
      for (std::size_t i = 0; i < g.ep_ops.size(); ++i)
        ops[op_base[w] + g.ep_ops[i]].task = lg.ep_tasks[i] + task_base[static_cast<std::size_t>(leader)];
    }
    // Context-parallel ring steps: every replica of a CP group joins its first replica's task.
    if (const int replica = w / P.p; P.cp > 1 && replica % P.cp != 0) {
      const int leader = (replica - replica % P.cp) * P.p + w % P.p;
      const WorkerGraph& lg = graphs[static_cast<std::size_t>(leader)];
      if (lg.cp_tasks.size() != g.cp_ops.size())
        throw std::logic_error("executor: context-parallel peers emitted different ring steps");
      for (std::size_t i = 0; i < g.cp_ops.size(); ++i)
        ops[op_base[w] + g.cp_ops[i]].task = lg.cp_tasks[i] + task_base[static_cast<std::size_t>(leader)];
    }
    for (const auto& [dep, op] : g.edges) edges.emplace_back(dep + op_base[w], op + op_base[w]);
    for (const RemoteDep& r : g.remote) {
      const std::uint32_t src = graphs[r.src_worker].sends.at(r.slot);
      if (src == kNone) throw std::logic_error("executor: pipeline receive without a matching send");
      edges.emplace_back(src + op_base[r.src_worker], r.local_op + op_base[w]);
    }
    for (std::size_t k = 0; k < g.barrier_deps.size(); ++k) {
      if (g.barrier_deps[k] == kNone) continue;
      edges.emplace_back(g.barrier_deps[k] + op_base[w], barrier_base + g.barrier_dep_iteration[k]);
    }
    for (std::size_t it = 0; it < g.optimizer_ops.size(); ++it)
      edges.emplace_back(barrier_base + static_cast<std::uint32_t>(it), g.optimizer_ops[it] + op_base[w]);
    // Release as we go; `sends` stays for later workers' receives.
    g.ops = {};
    g.edges = {};
    g.tasks = {};
  }
  for (int it = 0; it < P.iterations; ++it) {
    Op b;
    b.role = Role::barrier;
    b.stream = kNoStream;
    b.iteration = static_cast<std::uint16_t>(it);
    b.worker = 0;
    b.label = P.label("barrier");
    ops.push_back(b);
  }
  // Participants of every task: the ops that name it, in op order (one for a private TP/PP
  // task; one per simulated replica for a DP task; ep for an expert-parallel all-to-all).
  std::vector<std::uint32_t>& participants = G.participants;
  {
    std::vector<std::uint32_t> offset(tasks.size() + 1, 0);
    for (const Op& op : ops)
      if (op.task != kNone) ++offset[op.task + 1u];
    for (std::size_t t = 0; t < tasks.size(); ++t) offset[t + 1] += offset[t];
    participants.assign(offset.back(), 0);
    std::vector<std::uint32_t> fill(offset.begin(), offset.end() - 1);
    for (std::uint32_t i = 0; i < ops.size(); ++i)
      if (ops[i].task != kNone) participants[fill[ops[i].task]++] = i;
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      tasks[t].participant_begin = offset[t];
      tasks[t].participant_count = offset[t + 1] - offset[t];
      if (tasks[t].participant_count != 0 && tasks[t].participant_count != tasks[t].expected)
        throw std::logic_error("executor: a collective's participants do not match its group (" +
                               std::to_string(tasks[t].participant_count) + " of " + std::to_string(tasks[t].expected) +
                               ")");
    }
  }
  G.set_edges(edges);
  G.groups = std::move(P.groups);

  job.labels = std::move(P.labels);
  job.op_base = std::move(op_base);
  job.tp = P.t;
  job.pp = P.p;
  job.dp = P.d;
  job.cp = P.cp;
  job.virtual_stages = P.v;
  job.micro_batches = P.m;
  job.replicas = P.replicas;
  job.iterations = P.iterations;
  job.folded = folded;
  job.input_copies = P.input_copies;
  job.stage_layers = stage_layers;
  job.chunk_layers = std::move(P.chunk_layers);
  job.worker_gpus.resize(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w)
    for (int k = 0; k < P.t; ++k) job.worker_gpus[static_cast<std::size_t>(w)].push_back(P.gpu(k, w / P.p, w % P.p));
  return job;
}

Report training_report(const Scenario& sc, const Cluster& cluster, const sim::FlowNetwork& net, std::uint64_t events,
                       const TrainingGraph& job, sim::TraceRecorder* trace) {
  const GpuSpec& gpu = cluster.gpu_spec(0);
  const std::vector<Op>& ops = job.graph.ops;
  const std::vector<std::uint32_t>& op_base = job.op_base;
  const int workers = static_cast<int>(job.graph.workers);
  const std::vector<int>& stage_layers = job.stage_layers;
  struct {
    int t, p, d, v, m, iterations;
    const std::vector<std::vector<int>>& chunk_layers;
    const std::vector<std::string>& labels;
  } const P{job.tp,         job.pp,           job.dp,    job.virtual_stages, job.micro_batches,
            job.iterations, job.chunk_layers, job.labels};

  Report r;
  r.scenario = sc.name;
  r.gpu = gpu.name;
  r.num_gpus = cluster.num_gpus();
  r.num_nodes = cluster.num_nodes();
  r.tp = P.t;
  r.pp = P.p;
  r.dp = P.d / std::max(1, job.cp);
  r.cp = std::max(1, job.cp);
  r.ep = std::max(1, sc.parallel.ep);
  r.micro_batches = P.m;
  r.folded = job.folded;
  r.iterations_simulated = P.iterations;
  r.events = events;

  // Iteration boundaries: last compute-stream op of each iteration over all workers.
  std::vector<std::int64_t> boundary(static_cast<std::size_t>(P.iterations) + 1, 0);
  for (const Op& op : ops)
    if (op.stream == kCompute) boundary[op.iteration + 1u] = std::max(boundary[op.iteration + 1u], op.end_ns);
  const int last = P.iterations - 1;
  const std::int64_t t0 = boundary[static_cast<std::size_t>(last)], t1 = boundary[static_cast<std::size_t>(last) + 1];
  const double iter_s = static_cast<double>(t1 - t0) * 1e-9;
  r.iteration_time_s = iter_s;
  const double tokens = static_cast<double>(sc.training.global_batch_size) * tokens_per_sample(sc.model);
  r.tokens_per_s = tokens / iter_s;
  r.samples_per_s = static_cast<double>(sc.training.global_batch_size) / iter_s;
  r.model_flops_per_iteration = model_flops_per_iteration(sc);
  r.hardware_flops_per_iteration = hardware_flops_per_iteration(sc);
  r.peak_flops_per_gpu = peak_flops(gpu, sc.training.precision);
  r.tflops_per_gpu = r.model_flops_per_iteration / iter_s / r.num_gpus / 1e12;
  r.hardware_tflops_per_gpu = r.hardware_flops_per_iteration / iter_s / r.num_gpus / 1e12;
  r.mfu = r.tflops_per_gpu * 1e12 / r.peak_flops_per_gpu;
  r.hfu = r.hardware_tflops_per_gpu * 1e12 / r.peak_flops_per_gpu;
  if (sc.training.train_tokens > 0) {
    r.train_tokens = sc.training.train_tokens;
    // Whole iterations: an optimizer step trains a whole global batch, so a part of one still costs one.
    r.time_to_train_s = std::ceil(sc.training.train_tokens / tokens) * iter_s;
  }

  // Breakdown on one worker in the last iteration: the busiest stage (compute-stream time) of the
  // fastest replica (least kernel time on that stage; the first on ties, so replica 0 in any
  // homogeneous job), so that time lost to a slower replica shows as straggler wait.
  std::vector<double> busy(static_cast<std::size_t>(workers), 0.0), kernel(static_cast<std::size_t>(workers), 0.0);
  for (const Op& op : ops) {
    if (op.stream != kCompute || op.iteration != last) continue;
    busy[op.worker] += static_cast<double>(op.end_ns - op.start_ns);
    if (op.role == Role::compute || op.role == Role::optimizer)
      kernel[op.worker] += static_cast<double>(op.end_ns - op.start_ns);
  }
  auto busiest_stage = [&](int replica) {
    int w = replica * P.p;
    for (int s = 1; s < P.p; ++s)
      if (busy[static_cast<std::size_t>(replica * P.p + s)] > busy[static_cast<std::size_t>(w)]) w = replica * P.p + s;
    return w;
  };
  const int replicas = workers / std::max(1, P.p);
  int ref = busiest_stage(0);
  for (int rep = 1; rep < replicas; ++rep) {
    const int w = busiest_stage(rep);
    if (kernel[static_cast<std::size_t>(w)] < kernel[static_cast<std::size_t>(ref)]) ref = w;
  }
  // Arrival skew along the critical path (models/executor/straggler.h): shared DP/EP/CP
  // collectives; a pipeline send's wait is a bubble, an input copy is the GPU's own.
  const std::vector<Task>& tasks = job.graph.tasks;
  StragglerWalk skew(job.graph, static_cast<std::uint32_t>(ref), [&](std::uint32_t d) {
    const Op& o = ops[d];
    return o.task != kNone && o.role != Role::input_copy && o.role != Role::pp_send &&
           tasks[o.task].kind == TaskKind::collective && tasks[o.task].participant_count >= 2;
  });
  TimeBreakdown& b = r.breakdown;
  std::int64_t cursor = t0, straggler_ns = 0;
  for (std::uint32_t i = op_base[static_cast<std::size_t>(ref)]; i < op_base[static_cast<std::size_t>(ref) + 1]; ++i) {
    const Op& op = ops[i];
    if (op.stream != kCompute || op.iteration != last) continue;
    const std::int64_t start = std::max(op.start_ns, cursor);
    if (start > cursor) {
      // Attribute the wait to what the op waited for last. A wait on another stage's op is
      // bubble until that op started, then that op's kind (its transfer was in flight).
      std::uint32_t dep = op.last_dep;
      if (dep != kNone && ops[dep].role == Role::barrier) dep = ops[dep].last_dep;
      const Role role = dep == kNone ? Role::barrier : ops[dep].role;
      const std::int64_t began = dep == kNone ? start : std::clamp(ops[dep].start_ns, cursor, start);
      // A data- or expert-parallel peer of the same stage (another replica) runs the same program
      // as this worker: waiting for its collective is that collective's cost, not a bubble.
      const bool own = dep != kNone &&
                       ops[dep].worker % static_cast<std::uint32_t>(P.p) == static_cast<std::uint32_t>(ref % P.p) &&
                       role != Role::pp_send;
      const std::int64_t before_ns = own ? 0 : began - cursor;
      const double before = static_cast<double>(before_ns) * 1e-9;
      // Of the rest, the time the collective waited for a slower peer is straggler wait.
      const std::int64_t skew_ns = dep == kNone ? 0 : skew.wait(dep, cursor + before_ns, start);
      straggler_ns += skew_ns;
      const double after = static_cast<double>(start - cursor - before_ns - skew_ns) * 1e-9;
      switch (role) {
        case Role::pp_send:
          b.pipeline_bubble_s += before, b.pp_comm_exposed_s += after;
          break;
        case Role::dp_grad:
        case Role::dp_param:
          b.pipeline_bubble_s += before, b.dp_comm_exposed_s += after;
          break;
        case Role::tp_comm:
          b.pipeline_bubble_s += before, b.tp_comm_exposed_s += after;
          break;
        case Role::ep_comm:
          b.pipeline_bubble_s += before, b.ep_comm_exposed_s += after;
          break;
        case Role::offload:
          b.pipeline_bubble_s += before, b.offload_s += after;
          break;
        case Role::cp_comm:
          b.pipeline_bubble_s += before, b.cp_comm_exposed_s += after;
          break;
        case Role::input_copy:
          b.pipeline_bubble_s += before, b.input_copy_exposed_s += after;
          break;
        default:
          b.pipeline_bubble_s += before + after;
          break;
      }
    }
    // A shared collective on the compute stream (MoE all-to-all) waits there for its last peer.
    const std::int64_t skew_ns = skew.wait(i, start, op.end_ns);
    straggler_ns += skew_ns;
    const double dur = static_cast<double>(op.end_ns - start - skew_ns) * 1e-9;
    switch (op.role) {
      case Role::tp_comm:
        b.tp_comm_exposed_s += dur;
        break;
      case Role::ep_comm:
        b.ep_comm_exposed_s += dur;
        break;
      case Role::cp_comm:
        b.cp_comm_exposed_s += dur;
        break;
      case Role::input_copy:
        b.input_copy_exposed_s += dur;
        break;
      case Role::dp_grad:
      case Role::dp_param:
        b.dp_comm_exposed_s += dur;
        break;
      case Role::optimizer:
        b.optimizer_s += dur;
        break;
      case Role::offload:  // the CPU-Adam step and the host-to-device copy on the critical path
        b.offload_s += dur;
        break;
      case Role::storage_stall:
        b.storage_stall_s += dur;
        break;
      default:
        b.compute_s += dur;
        break;
    }
    cursor = std::max(cursor, op.end_ns);
  }
  b.pipeline_bubble_s += static_cast<double>(std::max<std::int64_t>(0, t1 - cursor)) * 1e-9;
  b.straggler_wait_s = static_cast<double>(straggler_ns) * 1e-9;
  {
    // The slowest rank: the worker whose late arrivals ref waited for longest (the first on ties).
    StragglerReport& st = r.straggler;
    st.breakdown_replica = ref / std::max(1, P.p);
    st.breakdown_kernel_s = kernel[static_cast<std::size_t>(ref)] * 1e-9;
    const int slow = skew.slowest();
    if (straggler_ns > 0 && slow >= 0) {
      st.found = true;
      st.slowest_replica = slow / std::max(1, P.p);
      st.slowest_kernel_s = kernel[static_cast<std::size_t>(slow)] * 1e-9;
      st.tp_group_gpus = job.worker_gpus[static_cast<std::size_t>(slow)];
      st.gpu = st.tp_group_gpus.front();  // name_straggler picks the TP rank from the clocks
      st.boost_clock_mhz = gpu.boost_clock_mhz;
      double copy_slow = 0, copy_ref = 0;
      for (const Op& op : ops)
        if (op.iteration == last && op.role == Role::input_copy) {
          if (op.worker == static_cast<std::uint32_t>(slow)) copy_slow += static_cast<double>(op.end_ns - op.start_ns);
          if (op.worker == static_cast<std::uint32_t>(ref)) copy_ref += static_cast<double>(op.end_ns - op.start_ns);
        }
      st.cause = copy_slow > copy_ref ? "input_copy" : "other";
    }
  }

  // Memory: the stage with the highest peak.
  for (int s = 0; s < P.p; ++s) {
    const auto steps = pipeline_steps(s, P.p, P.m, P.v);
    const double inflight = peak_inflight_layers(steps, P.chunk_layers[static_cast<std::size_t>(s)]);
    MemoryBreakdown mb = sc.model.family == ModelFamily::resnet
                             ? resnet_memory(sc, gpu)
                             : stage_memory(sc, gpu, s, stage_layers[static_cast<std::size_t>(s)], inflight);
    if (s == 0 || mb.peak_bytes_per_gpu > r.memory.peak_bytes_per_gpu) r.memory = mb;
  }

  // Busiest links over the whole simulated run.
  const double total_s = static_cast<double>(t1) * 1e-9;
  std::vector<LinkUsage> links;
  for (sim::ResourceId id = 0; id < net.num_resources(); ++id) {
    const sim::ResourceStats st = net.stats(id);
    if (st.bytes_carried <= 0) continue;
    LinkUsage u;
    u.name = net.resource_name(id);
    u.capacity_bytes_per_s = net.capacity(id);
    u.bytes = st.bytes_carried / P.iterations;
    u.utilization = total_s > 0 ? st.bytes_carried / (net.capacity(id) * total_s) : 0.0;
    links.push_back(std::move(u));
  }
  std::stable_sort(links.begin(), links.end(),
                   [](const LinkUsage& a, const LinkUsage& c) { return a.utilization > c.utilization; });
  if (links.size() > 3) links.resize(3);
  r.busiest_links = std::move(links);

  // Utilisation: compute-busy fraction per simulated worker (kernels only, last iteration) and
  // NVLink / NIC resources' average utilisation over the run.
  {
    UtilizationReport& u = r.utilization;
    std::vector<double> kernel_ns(static_cast<std::size_t>(workers), 0.0);
    for (const Op& op : ops)
      if (op.stream == kCompute && op.iteration == last && (op.role == Role::compute || op.role == Role::optimizer))
        kernel_ns[op.worker] += static_cast<double>(op.end_ns - op.start_ns);
    double sum = 0;
    u.gpu_compute_busy_fraction_min = 1.0;
    for (double ns : kernel_ns) {
      const double f = iter_s > 0 ? ns * 1e-9 / iter_s : 0.0;
      sum += f;
      u.gpu_compute_busy_fraction_min = std::min(u.gpu_compute_busy_fraction_min, f);
      u.gpu_compute_busy_fraction_max = std::max(u.gpu_compute_busy_fraction_max, f);
    }
    u.gpu_compute_busy_fraction_mean = workers > 0 ? sum / workers : 0.0;
    double nvl_sum = 0, nic_sum = 0;
    for (sim::ResourceId id = 0; id < net.num_resources(); ++id) {
      const LinkKind kind = cluster.link_kind(id);
      if (kind != LinkKind::nvlink && kind != LinkKind::nic) continue;
      const sim::ResourceStats st = net.stats(id);
      if (st.bytes_carried <= 0 || total_s <= 0) continue;
      const double util = st.bytes_carried / (net.capacity(id) * total_s);
      if (kind == LinkKind::nvlink) {
        nvl_sum += util, ++u.nvlink_links_used;
        u.nvlink_utilization_max = std::max(u.nvlink_utilization_max, util);
      } else {
        nic_sum += util, ++u.nic_links_used;
        u.nic_utilization_max = std::max(u.nic_utilization_max, util);
      }
    }
    if (u.nvlink_links_used > 0) u.nvlink_utilization_mean = nvl_sum / u.nvlink_links_used;
    if (u.nic_links_used > 0) u.nic_utilization_mean = nic_sum / u.nic_links_used;
  }

  if (trace != nullptr) {
    // "stage S / replica R (GPU a-b)": the trace's process of worker w.
    auto trace_process = [&](int w) {
      const int g0 = job.worker_gpus[static_cast<std::size_t>(w)].front();
      const int g1 = job.worker_gpus[static_cast<std::size_t>(w)].back();
      std::string proc = "stage " + std::to_string(w % P.p) + " / replica " + std::to_string(w / P.p) + " (GPU ";
      proc += std::to_string(g0);
      if (g1 != g0) {
        proc += '-';
        proc += std::to_string(g1);
      }
      proc += ")";
      return proc;
    };
    std::vector<std::array<std::uint32_t, kNumStreams>> track_ids(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w) {
      const std::string proc = trace_process(w);
      for (int s = kCompute; s <= kDp; ++s)  // the streams the generator uses
        track_ids[static_cast<std::size_t>(w)][static_cast<std::size_t>(s)] =
            trace->track(w, proc, s, kStreamNames[static_cast<std::size_t>(s)]);
      if (job.cp > 1) track_ids[static_cast<std::size_t>(w)][kCp] = trace->track(w, proc, kCp, kStreamNames[kCp]);
      if (job.input_copies)
        track_ids[static_cast<std::size_t>(w)][kH2d] = trace->track(w, proc, kH2d, kStreamNames[kH2d]);
    }
    std::vector<std::uint32_t> name_ids;
    for (const std::string& l : P.labels) name_ids.push_back(trace->name(l));
    // Straggler waits of the breakdown's worker (last iteration), on a track of their own.
    if (!skew.waits().empty()) {
      const std::uint32_t tr = trace->track(ref, trace_process(ref), kNumStreams, "waiting for slower GPUs");
      for (const auto& [from, to, w] : skew.waits())
        trace->span(tr, trace->name("waiting for " + trace_process(static_cast<int>(w))), sim::Time::from_ns(from),
                    sim::Time::from_ns(to));
    }
    for (const Op& op : ops) {
      if (op.stream == kNoStream) continue;
      trace->span(track_ids[op.worker][op.stream], name_ids[op.label], sim::Time::from_ns(op.start_ns),
                  sim::Time::from_ns(op.end_ns), op.micro_batch);
    }
  }
  return r;
}

namespace {

/// simulate_training's passes: from idle or the periodic steady state, unfolded when folding
/// broke symmetry. `no_slowdown`: without thermal slowdown (attribution); `job_effects`: see
/// simulate_pass.
Report simulate_passes(const Scenario& sc, sim::TraceRecorder* trace, bool no_slowdown, bool job_effects,
                       const StorageStall& storage) {
  const NodeTemplate& node = find_node_template(sc.cluster.node_template);
  const GpuSpec& gpu = find_gpu(sc.cluster.gpu.empty() ? node.gpu : sc.cluster.gpu);
  const bool steady = sc.thermal.start == ThermalStart::steady_state;
  if (!clock_feedback_possible(sc, gpu, node)) {
    // Temperature feeds nothing back: one pass, reported in the periodic steady state.
    ThermalStartState start;
    start.periodic_correction = steady;
    start.no_thermal_slowdown = no_slowdown;
    return simulate_pass(sc, trace, start, job_effects, storage);
  }
  Scenario unfolded;
  const Scenario* s = &sc;
  for (int attempt = 0; attempt < 2; ++attempt) {
    ThermalStartState first;
    first.no_thermal_slowdown = no_slowdown;
    if (!steady) {
      Report r = simulate_pass(*s, trace, first, job_effects, storage);
      if (!(first.asymmetric && first.folded)) return r;
    } else {
      // Pass 1 from idle gives the periodic steady state; pass 2 starts there. A rack over its
      // cooling capacity feeds one pass's heat into the next one's inlet, and a throttled clock
      // changes the heat: further passes follow until the last iteration's thermal state repeats
      // (thermal.steady_state) or kMaxSteadyPasses; the report says which.
      constexpr int kMaxSteadyPasses = 6;
      simulate_pass(*s, nullptr, first, false, storage);
      bool asymmetric = first.asymmetric, folded = false;
      ThermalStartState prev = first;
      Report r;
      for (int pass = 2;; ++pass) {
        ThermalStartState next;
        next.start_c = prev.periodic_c;
        next.rack_rise_c = prev.rack_rise_out_c;
        next.no_thermal_slowdown = no_slowdown;
        sim::TraceRecorder pass_trace;  // only the reported pass's trace is kept
        r = simulate_pass(*s, trace != nullptr ? &pass_trace : nullptr, next, job_effects, storage);
        if (trace != nullptr) *trace = std::move(pass_trace);
        asymmetric = asymmetric || next.asymmetric;
        folded = next.folded;
        if (r.thermal.steady_state || pass >= kMaxSteadyPasses) break;
        prev = std::move(next);
      }
      if (!(asymmetric && folded)) return r;
    }
    // Racks saw different inlets for GPUs that one simulated GPU stood for: run every replica.
    unfolded = sc;
    unfolded.options.fold_symmetric = false;
    s = &unfolded;
  }
  throw std::logic_error("executor: an unfolded run reported folding asymmetry");
}

}  // namespace

Report simulate_training(const Scenario& sc, sim::TraceRecorder* trace) {
  StorageStall storage;
  if (sc.storage) {
    // The stall is the loader's read time beyond the iteration without storage (and the
    // checkpoint stall per iteration): simulate that iteration first, then the job with the stall
    // in its timeline, where the GPUs wait idle (power, temperature and utilisation see it).
    Scenario without = sc;
    without.storage.reset();
    without.reliability.reset();
    without.cost.reset();
    storage.compute_iteration_s = simulate_passes(without, nullptr, false, false, {}).iteration_time_s;
  }
  Report r = simulate_passes(sc, trace, false, true, storage);
  if (r.thermal.throttled_gpus > 0) {
    // Attribution: the same job with no thermal slowdown (a power cap still holds).
    const Report cool = simulate_passes(sc, nullptr, true, false, storage);
    const double hot_s = r.iteration_time_s - r.breakdown.storage_stall_s;
    const double cool_s = cool.iteration_time_s - cool.breakdown.storage_stall_s;
    r.thermal.throttle_iteration_increase_s = hot_s - cool_s;
    r.thermal.throttle_iteration_increase_fraction = r.thermal.throttle_iteration_increase_s / cool_s;
  }
  return r;
}

}  // namespace traincast::models
