#pragma once
// A ready-to-run op graph and the runner that executes it on the engine (DESIGN §1, §3). Every
// workload ends up here: the training graph builder (graph_builder.cc, worker_graph.cc) builds one, and so can
// any other front end (e.g. an execution-trace importer). An op runs on one stream of one worker
// (a simulated GPU group acting in lockstep) once its dependencies are done; ops on one stream run
// in the order they were added. Compute ops take a fixed duration; collective ops join a Task,
// which starts its collective calls on the CollectiveEngine when all participants have arrived.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/power/worker_activity_model.h"
#include "sim/simulator.h"

namespace traincast::models {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

/// What an op is, for time accounting.
/// ep_comm: expert-parallel all-to-all (MoE token dispatch/combine).
/// offload: CPU offload (gradient copies to the host, the CPU optimizer step, parameter copies back).
/// cp_comm: context-parallel ring send/recv (K/V blocks, backward dK/dV).
/// input_copy: a host-to-device copy of an input batch (a from_host task of the GPU's own group).
/// storage_stall: the GPUs wait for the data loader and the checkpoint (scenario `storage`), idle.
enum class Role : std::uint8_t {
  compute,
  optimizer,
  tp_comm,
  pp_send,
  dp_grad,
  dp_param,
  barrier,
  ep_comm,
  offload,
  cp_comm,
  input_copy,
  storage_stall
};
/// CUDA-stream-like queues per worker; ops on one stream run in program order. kCpu: the host
/// thread (execution traces' CPU ops; the transformer generator does not use it). kDp carries
/// gradient reductions; kDpParam parameter all-gathers (ZeRO-3 / FSDP runs them on a stream of
/// their own so a prefetch does not queue behind a reduce-scatter).
enum Stream : std::uint8_t {
  kCompute = 0,
  kTp = 1,
  kPp = 2,
  kDp = 3,
  kCpu = 4,
  kDpParam = 5,
  kCp = 6,   ///< context-parallel ring send/recv beside the attention kernels
  kH2d = 7,  ///< input-batch copies from host memory (the data loader's prefetch stream)
  kEp = 8,   ///< expert-parallel all-to-all beside the shared experts (moe_shared_expert_overlap)
  kNumStreams = 9,
  kNoStream = 9
};
static_assert(static_cast<unsigned>(kCompute) == kComputeStream && kNumStreams <= kMaxWorkerStreams,
              "Stream follows WorkerActivityModel's stream numbering (models/power/worker_activity_model.h)");
constexpr std::array<const char*, kNumStreams> kStreamNames = {"compute",  "tp comm", "pp comm",   "dp comm", "cpu",
                                                               "dp param", "cp comm", "h2d input", "ep comm"};

struct Op {
  std::int64_t duration_ns = 0;    ///< compute ops
  std::int64_t start_ns = -1;      ///< set by the runner
  std::int64_t end_ns = -1;        ///< set by the runner
  std::uint32_t task = kNone;      ///< collective task (index into OpGraph::tasks), kNone for compute
  std::uint32_t remaining = 0;     ///< unresolved dependencies (set by OpGraph::set_edges)
  std::uint32_t last_dep = kNone;  ///< the dependency that finished last (set by the runner)
  std::uint32_t label = 0;         ///< index into the front end's label table (trace names)
  std::int32_t micro_batch = -1;
  std::uint32_t worker = 0;
  std::uint16_t iteration = 0;
  Role role = Role::compute;
  Stream stream = kCompute;
  /// What the GPUs do while it runs (power); collectives are Activity::comm whatever this says.
  Activity activity = Activity::compute_bound;
  /// Part of duration_ns that is compute-bound (scales with 1/clock), as q / 65535.
  std::uint16_t compute_fraction_q = 0;
  double compute_fraction() const { return compute_fraction_q / 65535.0; }
  void set_compute_fraction(double c) {
    compute_fraction_q = static_cast<std::uint16_t>(std::lround(std::clamp(c, 0.0, 1.0) * 65535.0));
  }
};

/// What a task moves: a collective among the group's GPUs, (CPU offload, input batches) a copy
/// between each GPU of the group and its host buffer (CollectiveEngine::start_host_copy), or
/// (PyTorch async TP's chunk copies) a copy-engine copy from the first GPU of each of the task's
/// groups to its second, all groups at once (CollectiveEngine::start_peer_copy).
enum class TaskKind : std::uint8_t { collective, to_host, from_host, peer_copy };

/// A collective launched when all its participants have arrived: one call per GPU group in
/// [group_begin, group_begin + group_count) of the group table (e.g. one data-parallel gradient
/// reduction is t calls, one per tensor-parallel rank).
struct Task {
  TaskKind kind = TaskKind::collective;  ///< host and peer copies ignore `op`; bytes are per GPU (pair)
  CollectiveOp op = CollectiveOp::all_reduce;
  double bytes = 0;  ///< per rank, nccl-tests convention
  std::uint32_t group_begin = 0;
  std::uint32_t group_count = 0;
  std::uint32_t expected = 1;  ///< participant ops that must arrive before it starts
  std::uint32_t arrived = 0;
  std::uint32_t pending = 0;
  std::uint32_t participant_begin = 0;  ///< into OpGraph::participants
  std::uint32_t participant_count = 0;
  /// Host copies: where the buffers lie and who copies at once, an index into
  /// OpGraph::host_buffers; kNone: every GPU's buffer on its own socket (HostBuffers{}).
  std::uint32_t host_buffers = kNone;
  MoeDispatch moe{};  ///< all_to_all of a MoE layer: flat or deepep (CollectiveCall::moe)
};

/// GPU lists that collectives run over (global GPU indices of the Cluster).
struct GroupTable {
  std::vector<int> gpus;
  std::vector<std::uint32_t> offset{0};  ///< size groups + 1

  /// Appends a group; returns its id.
  std::uint32_t add(std::initializer_list<int> group) {
    for (int g : group) gpus.push_back(g);
    return close_group();
  }
  /// Ends the group made of the GPUs pushed onto `gpus` since the last one; returns its id.
  std::uint32_t close_group() {
    offset.push_back(static_cast<std::uint32_t>(gpus.size()));
    return static_cast<std::uint32_t>(offset.size() - 2);
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(offset.size() - 1); }
};

/// The whole job: ops of every worker, collective tasks with their participant ops, and the
/// dependents of every op in CSR form.
struct OpGraph {
  std::vector<Op> ops;
  std::vector<Task> tasks;
  std::vector<std::uint32_t> participants;  ///< op ids, per task [participant_begin, +count)
  std::vector<std::uint32_t> dep_offset;    ///< size ops + 1
  std::vector<std::uint32_t> dependents;
  GroupTable groups;
  std::vector<HostBuffers> host_buffers;  ///< host copies' buffers (Task::host_buffers indexes this)
  std::uint32_t workers = 0;

  /// Sets dependencies from (dependency, op) pairs: fills dep_offset/dependents and each op's
  /// `remaining`. Clears `edges`. Throws std::logic_error for an op id out of range.
  void set_edges(std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges);
};

/// Executes `graph` on `sim` (whose FlowNetwork `coll` uses); fills every op's start_ns, end_ns
/// and last_dep. Compute ops take duration_ns at speed 1; with `model` their progress follows
/// the model's speed (duration_ns x (1 - c + c / f) at a constant clock fraction f).
/// `worker_sms` (empty: off; else one entry per worker, its GPUs' SM count): NCCL's kernels take
/// SMs from compute (issue 17). While collective ops (TaskKind::collective) run on a worker's
/// other streams, from their op's start (the kernel is resident from its launch, also while it
/// waits for its peers) to their end, they hold CollectiveEngine::kernel_ctas CTAs (tensor-parallel
/// ones, Transformer Engine's userbuffers: 1 SM per all-gather, 16 otherwise), one SM each,
/// and the worker's compute op runs its compute-bound part (Op::compute_fraction) on the SMs
/// left: time d (1 - c + c S / (S - k)) for k CTAs of S SMs held throughout (at least one SM is
/// left to compute), its memory-bound part unchanged (HBM bandwidth is reached with fewer SMs;
/// the collective's own HBM traffic is not modelled). With `model` too, the two speeds multiply.
/// Throws std::overflow_error when an op would end beyond the engine's range, and
/// std::logic_error when the graph deadlocks (a dependency cycle or a task that never gets all
/// its participants), Interrupted (models/spec/run_control.h) when an interrupt is requested
/// (polled after every event). `stop_when_done`: stop stepping `sim` once every op has ended (events
/// still queued, e.g. persistent background flows' drains, are left unrun); else run it to the end.
void run_op_graph(sim::Simulator& sim, CollectiveEngine& coll, OpGraph& graph, WorkerActivityModel* model = nullptr,
                  bool stop_when_done = false, std::span<const int> worker_sms = {});

/// Speed of a compute op (work per ns at full speed) whose compute-bound fraction is
/// `compute_fraction` while `ctas` of the GPU's `sms` SMs are held by NCCL kernels:
/// 1 / (1 - c + c S / (S - k)), with S - k at least 1; 1 when sms <= 0 or ctas <= 0.
double sm_share_speed(double compute_fraction, int sms, int ctas);

}  // namespace traincast::models
