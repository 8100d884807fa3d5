// Builds a training job's op graph: plan, every worker's graph (in parallel batches when asked),
// each merged into the global ops, tasks, participants and dependency edges as it is built.
#include "models/executor/graph_builder.h"

#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/executor/graph_size.h"
#include "models/executor/huge_pages.h"
#include "models/executor/training_plan.h"
#include "models/executor/worker_graph.h"
#include "models/reliability/worker_threads.h"

namespace traincast::models {
namespace {

using Edges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// Builds the workers' graphs in order and merges each into the global arrays as soon as it is
/// built, releasing it then: only a batch of worker graphs is alive at once (one without
/// threads), not all of them beside the merged ops (3,072 GPUs unfolded, SC21 1T: 13.4 M ops,
/// 0.75 GB, in each copy). The merged arrays and the edges' order are those of merging all
/// graphs at once: ops, tasks (shared DP tasks first) and edges worker by worker; the edges that
/// name an op not merged yet (a later worker's pipeline send, an iteration barrier) are filled
/// in at the end (finish).
class StreamingMerge {
 public:
  StreamingMerge(const TrainingPlan& P, OpGraph& G) : P_(P), G_(G) {
    const auto workers = static_cast<std::size_t>(P.replicas) * static_cast<std::size_t>(P.pp);
    op_base_.assign(workers + 1, 0);
    task_base_.assign(workers + 1, 0);
    task_base_[0] = static_cast<std::uint32_t>(P.dp_tasks.size());
    kept_.resize(workers);
    G_.workers = static_cast<std::uint32_t>(workers);
    // Reserving address space for the estimated op count costs no memory until it is written,
    // and spares the copy (and its doubled peak) of growing the largest array one worker at a
    // time. The estimate (check_graph_size's) is the op count of the job's longest stage for every
    // stage, a bound in practice; if it is short, the vector grows as usual.
    const double estimate =
        graph_ops(P.programs, P.stage_layers, P.zero_stage, P.m, P.iterations, P.replicas, P.pp) + P.iterations;
    if (estimate > 0 && estimate < 4e9) {
      G_.ops.reserve(static_cast<std::size_t>(estimate));
      advise_huge_pages(G_.ops.data(), G_.ops.capacity() * sizeof(Op));  // 0.75 GB, SC21 1T unfolded
    }
    if (P.input_copies) G_.host_buffers.push_back(P.input_buffers);  // kInputBuffers
    G_.tasks = P.dp_tasks;
  }

  /// Merges worker w's graph (workers in order) and releases it.
  void add(int w, WorkerGraph& g) {
    const auto wi = static_cast<std::size_t>(w);
    op_base_[wi + 1] = op_base_[wi] + static_cast<std::uint32_t>(g.ops.size());
    task_base_[wi + 1] = task_base_[wi] + static_cast<std::uint32_t>(g.tasks.size());
    std::vector<Op>& ops = G_.ops;
    const std::size_t first = ops.size();
    ops.insert(ops.end(), g.ops.begin(), g.ops.end());
    for (std::size_t k = first; k < ops.size(); ++k) {
      Op& op = ops[k];
      if (op.task != kNone && op.role != Role::dp_grad && op.role != Role::dp_param) op.task += task_base_[wi];
    }
    G_.tasks.insert(G_.tasks.end(), g.tasks.begin(), g.tasks.end());
    // Expert-parallel all-to-alls: every replica of an EP group joins its first replica's task.
    join_group_leader(w, P_.ep, &Kept::ep_tasks, g.ep_ops,
                      "executor: expert-parallel peers emitted different all-to-alls");
    // Context-parallel ring steps: every replica of a CP group joins its first replica's task.
    join_group_leader(w, P_.cp, &Kept::cp_tasks, g.cp_ops,
                      "executor: context-parallel peers emitted different ring steps");
    // Dependency edges in global op ids: its own, its pipeline receives (on another worker's
    // send) and its iteration barriers (barrier_base + iteration) both ways.
    const std::uint32_t base = op_base_[wi];
    for (const auto& [dep, op] : g.edges) edges_.emplace_back(dep + base, op + base);
    for (const RemoteDep& r : g.remote) {
      remote_.push_back({edges_.size(), r.src_worker, r.slot});
      edges_.emplace_back(kNone, r.local_op + base);
    }
    for (std::size_t k = 0; k < g.barrier_deps.size(); ++k) {
      if (g.barrier_deps[k] == kNone) continue;
      barrier_second_.push_back(edges_.size());
      edges_.emplace_back(g.barrier_deps[k] + base, g.barrier_dep_iteration[k]);
    }
    for (std::size_t it = 0; it < g.optimizer_ops.size(); ++it) {
      barrier_first_.push_back(edges_.size());
      edges_.emplace_back(static_cast<std::uint32_t>(it), g.optimizer_ops[it] + base);
    }
    // What later workers read: sends (their receives), the EP / CP leaders' tasks.
    kept_[wi].sends = std::move(g.sends);
    kept_[wi].ep_tasks = std::move(g.ep_tasks);
    kept_[wi].cp_tasks = std::move(g.cp_tasks);
    g = WorkerGraph{};
  }

  /// Appends the barrier op of every iteration, fills the edges that named later ops, and returns
  /// the edges; `op_base` receives the first op of each worker (size workers + 1).
  Edges finish(std::vector<std::uint32_t>& op_base) {
    const std::uint32_t barrier_base = op_base_.back();
    for (int it = 0; it < P_.iterations; ++it) {
      Op b;
      b.role = Role::barrier;
      b.stream = kNoStream;
      b.iteration = static_cast<std::uint16_t>(it);
      b.worker = 0;
      b.label = P_.label("barrier");
      G_.ops.push_back(b);
    }
    for (const Remote& r : remote_) {
      const std::uint32_t src = kept_.at(r.src_worker).sends.at(r.slot);
      if (src == kNone) throw std::logic_error("executor: pipeline receive without a matching send");
      edges_[r.edge].first = src + op_base_[r.src_worker];
    }
    for (std::size_t e : barrier_second_) edges_[e].second += barrier_base;
    for (std::size_t e : barrier_first_) edges_[e].first += barrier_base;
    op_base = std::move(op_base_);
    return std::move(edges_);
  }

 private:
  struct Kept {
    std::vector<std::uint32_t> sends, ep_tasks, cp_tasks;
  };
  struct Remote {
    std::size_t edge;
    std::uint32_t src_worker, slot;
  };

  /// Worker w's ops of a collective shared by a group of `group_size` consecutive replicas (EP
  /// all-to-alls, CP ring steps) join the task of the group's first replica (its leader, merged
  /// before it): the i-th entry of the leader's `leader_tasks` for the i-th op of `own`.
  /// Throws std::logic_error with `what` when the peers emitted different collectives.
  void join_group_leader(int w, int group_size, std::vector<std::uint32_t> Kept::*leader_tasks,
                         const std::vector<std::uint32_t>& own, const char* what) {
    const int replica = w / P_.pp;
    if (group_size <= 1 || replica % group_size == 0) return;
    const int leader = (replica - replica % group_size) * P_.pp + w % P_.pp;
    const std::vector<std::uint32_t>& lt = kept_[static_cast<std::size_t>(leader)].*leader_tasks;
    if (lt.size() != own.size()) throw std::logic_error(what);
    for (std::size_t i = 0; i < own.size(); ++i)
      G_.ops[op_base_[static_cast<std::size_t>(w)] + own[i]].task =
          lt[i] + task_base_[static_cast<std::size_t>(leader)];
  }

  const TrainingPlan& P_;
  OpGraph& G_;
  std::vector<std::uint32_t> op_base_, task_base_;
  std::vector<Kept> kept_;
  Edges edges_;
  std::vector<Remote> remote_;
  std::vector<std::size_t> barrier_first_, barrier_second_;
};

/// The merged ops' pages backed (populate_pages) by tasks on the loop's arena a few chunks ahead
/// of the merge, so that the merging thread does not take the page faults and the kernel's
/// zeroing of the reserved array (11 % of the simulation thread's samples in the unfolded GPT-3
/// 4,096-GPU run with the power model on the second thread; docs/speed.md, "The power model on a
/// second thread"). Only within the reservation (StreamingMerge's estimate), and never more than
/// kAheadBytes past what is written, so the pages backed are those the merge is about to write.
class OpPrefault {
 public:
  explicit OpPrefault(const std::vector<Op>& ops)
      : data_(reinterpret_cast<const char*>(ops.data())), capacity_bytes_(ops.capacity() * sizeof(Op)) {}
  OpPrefault(const OpPrefault&) = delete;
  OpPrefault& operator=(const OpPrefault&) = delete;
  ~OpPrefault() { wait(); }

  /// Starts the chunks up to kAheadBytes past ops' end (none once ops has moved: it outgrew the
  /// reservation).
  void ahead_of(const std::vector<Op>& ops) {
    if (reinterpret_cast<const char*>(ops.data()) != data_) return;
    const std::size_t target = std::min(capacity_bytes_, ops.size() * sizeof(Op) + kAheadBytes);
    while (started_bytes_ < target) {
      const std::size_t begin = started_bytes_, bytes = std::min(kChunkBytes, capacity_bytes_ - begin);
      tasks_.run([this, begin, bytes] { populate_pages(data_ + begin, bytes); });
      started_bytes_ += bytes;
    }
  }
  void wait() noexcept { tasks_.wait(); }

 private:
  static constexpr std::size_t kChunkBytes = std::size_t{16} << 20;
  static constexpr std::size_t kAheadBytes = 2 * kChunkBytes;
  const char* data_;
  std::size_t capacity_bytes_;
  std::size_t started_bytes_ = 0;
  tbb::task_group tasks_;
};

/// Builds and merges every worker's graph (StreamingMerge): one at a time with threads == 1, else
/// in batches of 4 x the loop's threads (worker_threads.h: options.threads, 0 for the caller's
/// arena) built in parallel (each worker is independent), the next batch while this one is merged,
/// and merged in order.
Edges build_and_merge(const TrainingPlan& P, int threads, OpGraph& G, std::vector<std::uint32_t>& op_base) {
  const int workers = P.replicas * P.pp;
  StreamingMerge merge(P, G);
  if (threads != 1) {
    with_worker_threads(threads, [&] {
      const int batch = 4 * worker_thread_count(threads);
      // Two batches: the next one is built (by a task, in parallel) while this one is merged.
      std::array<std::vector<WorkerGraph>, 2> graphs;
      for (auto& g : graphs) g.resize(static_cast<std::size_t>(batch));
      auto build = [&](int first, std::vector<WorkerGraph>& into) {
        tbb::parallel_for(0, std::min(batch, workers - first), [&](int k) {
          build_worker_graph(P, (first + k) / P.pp, (first + k) % P.pp, into[static_cast<std::size_t>(k)]);
        });
      };
      OpPrefault prefault(G.ops);
      if (workers > 0) build(0, graphs[0]);
      for (int first = 0, b = 0; first < workers; first += batch, b ^= 1) {
        tbb::task_group next;
        if (first + batch < workers) next.run([&, first, b] { build(first + batch, graphs[b ^ 1]); });
        for (int k = 0; k < std::min(batch, workers - first); ++k) {
          merge.add(first + k, graphs[b][static_cast<std::size_t>(k)]);
          prefault.ahead_of(G.ops);
        }
        next.wait();
      }
      prefault.wait();
    });
  } else {
    WorkerGraph g;
    for (int w = 0; w < workers; ++w) {
      build_worker_graph(P, w / P.pp, w % P.pp, g);
      merge.add(w, g);
    }
  }
  return merge.finish(op_base);
}

/// Participants of every task: the ops that name it, in op order (one for a private TP/PP
/// task; one per simulated replica for a DP task; ep for an expert-parallel all-to-all).
/// Throws std::logic_error when a used task's participants differ from its expected count.
void set_participants(OpGraph& G) {
  const std::vector<Op>& ops = G.ops;
  std::vector<Task>& tasks = G.tasks;
  std::vector<std::uint32_t>& participants = G.participants;
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

}  // namespace

TrainingGraph build_training_graph(const Scenario& sc, const Cluster& cluster, double storage_stall_s) {
  TrainingPlan P = plan_training(sc, cluster, storage_stall_s);
  const int workers = P.replicas * P.pp;
  TrainingGraph job;
  OpGraph& G = job.graph;
  std::vector<std::uint32_t> op_base;
  Edges edges = build_and_merge(P, sc.options.threads, G, op_base);
  set_participants(G);
  G.set_edges(edges);
  G.groups = std::move(P.groups);

  job.labels = std::move(P.labels);
  job.op_base = std::move(op_base);
  job.tp = P.tp;
  job.pp = P.pp;
  job.dp = P.dp;
  job.dp_cp = P.dp_cp;
  job.cp = P.cp;
  job.virtual_stages = P.v;
  job.micro_batches = P.m;
  job.replicas = P.replicas;
  job.iterations = P.iterations;
  job.folded = P.folded;
  job.folding = P.folding;
  job.input_copies = P.input_copies;
  job.ep_stream = sc.parallel.moe_shared_expert_overlap;
  job.stage_layers = P.stage_layers;
  job.chunk_layers = std::move(P.chunk_layers);
  job.worker_gpus.resize(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w)
    for (int k = 0; k < P.tp; ++k)
      job.worker_gpus[static_cast<std::size_t>(w)].push_back(P.gpu(k, P.data_rank_of_replica(w / P.pp), w % P.pp));
  return job;
}

}  // namespace traincast::models
