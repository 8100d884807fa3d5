// Builds a training job's op graph: plan, every worker's graph (in parallel when asked), then the
// merge into global ops, tasks, participants and dependency edges.
#include "models/executor/graph_builder.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/executor/training_plan.h"
#include "models/executor/worker_graph.h"

namespace traincast::models {
namespace {

using Edges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// Every worker's graph (in parallel when asked; each worker is independent).
std::vector<WorkerGraph> build_worker_graphs(const TrainingPlan& P, int threads) {
  const int workers = P.replicas * P.pp;
  std::vector<WorkerGraph> graphs(static_cast<std::size_t>(workers));
  auto build_one = [&](int w) { build_worker_graph(P, w / P.pp, w % P.pp, graphs[static_cast<std::size_t>(w)]); };
  if (threads > 1) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    tbb::parallel_for(0, workers, build_one);
  } else {
    for (int w = 0; w < workers; ++w) build_one(w);
  }
  return graphs;
}

/// Worker w's ops of a collective shared by a group of `group_size` consecutive replicas (EP
/// all-to-alls, CP ring steps) join the task of the group's first replica (its leader):
/// `leader_tasks` / `ops` are the i-th shared tasks and ops of the leader / of worker w.
/// Throws std::logic_error with `what` when the peers emitted different collectives.
void join_group_leader(const TrainingPlan& P, int w, int group_size, const std::vector<WorkerGraph>& graphs,
                       std::vector<std::uint32_t> WorkerGraph::*leader_tasks,
                       std::vector<std::uint32_t> WorkerGraph::*peer_ops, const std::vector<std::uint32_t>& op_base,
                       const std::vector<std::uint32_t>& task_base, std::vector<Op>& ops, const char* what) {
  const int replica = w / P.pp;
  if (group_size <= 1 || replica % group_size == 0) return;
  const int leader = (replica - replica % group_size) * P.pp + w % P.pp;
  const std::vector<std::uint32_t>& lt = graphs[static_cast<std::size_t>(leader)].*leader_tasks;
  const std::vector<std::uint32_t>& own = graphs[static_cast<std::size_t>(w)].*peer_ops;
  if (lt.size() != own.size()) throw std::logic_error(what);
  for (std::size_t i = 0; i < own.size(); ++i)
    ops[op_base[static_cast<std::size_t>(w)] + own[i]].task = lt[i] + task_base[static_cast<std::size_t>(leader)];
}

/// Worker w's dependency edges in global op ids: its own, its pipeline receives (on another
/// worker's send) and its iteration barriers (barrier_base + iteration) both ways.
void add_worker_edges(const std::vector<WorkerGraph>& graphs, int w, const std::vector<std::uint32_t>& op_base,
                      std::uint32_t barrier_base, Edges& edges) {
  const WorkerGraph& g = graphs[static_cast<std::size_t>(w)];
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
}

/// Merge into global arrays: ops, tasks (shared DP tasks first), host buffers, and the edges
/// (returned); then the barrier op of every iteration. Returns the first op of each worker
/// (size workers + 1) in `op_base`. Releases the workers' ops, edges and tasks as it goes.
Edges merge_worker_graphs(const TrainingPlan& P, std::vector<WorkerGraph>& graphs, OpGraph& G,
                          std::vector<std::uint32_t>& op_base) {
  const int workers = static_cast<int>(graphs.size());
  op_base.assign(static_cast<std::size_t>(workers) + 1, 0);
  std::vector<std::uint32_t> task_base(static_cast<std::size_t>(workers) + 1, 0);
  op_base[0] = 0;
  task_base[0] = static_cast<std::uint32_t>(P.dp_tasks.size());
  for (int w = 0; w < workers; ++w) {
    op_base[w + 1] = op_base[w] + static_cast<std::uint32_t>(graphs[w].ops.size());
    task_base[w + 1] = task_base[w] + static_cast<std::uint32_t>(graphs[w].tasks.size());
  }
  const std::uint32_t barrier_base = op_base[workers];
  G.workers = static_cast<std::uint32_t>(workers);
  std::vector<Op>& ops = G.ops;
  ops.reserve(barrier_base + static_cast<std::size_t>(P.iterations));
  std::vector<Task>& tasks = G.tasks;
  if (P.input_copies) G.host_buffers.push_back(P.input_buffers);  // kInputBuffers
  tasks = P.dp_tasks;
  tasks.reserve(task_base[workers]);
  Edges edges;
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
    join_group_leader(P, w, P.ep, graphs, &WorkerGraph::ep_tasks, &WorkerGraph::ep_ops, op_base, task_base, ops,
                      "executor: expert-parallel peers emitted different all-to-alls");
    // Context-parallel ring steps: every replica of a CP group joins its first replica's task.
    join_group_leader(P, w, P.cp, graphs, &WorkerGraph::cp_tasks, &WorkerGraph::cp_ops, op_base, task_base, ops,
                      "executor: context-parallel peers emitted different ring steps");
    add_worker_edges(graphs, w, op_base, barrier_base, edges);
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
  return edges;
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
  std::vector<WorkerGraph> graphs = build_worker_graphs(P, std::max(1, sc.options.threads));
  const int workers = static_cast<int>(graphs.size());
  TrainingGraph job;
  OpGraph& G = job.graph;
  std::vector<std::uint32_t> op_base;
  Edges edges = merge_worker_graphs(P, graphs, G, op_base);
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
  job.stage_layers = P.stage_layers;
  job.chunk_layers = std::move(P.chunk_layers);
  job.worker_gpus.resize(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w)
    for (int k = 0; k < P.tp; ++k)
      job.worker_gpus[static_cast<std::size_t>(w)].push_back(P.gpu(k, P.data_rank_of_replica(w / P.pp), w % P.pp));
  return job;
}

}  // namespace traincast::models
