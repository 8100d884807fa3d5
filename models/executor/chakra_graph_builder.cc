// Building a Chakra trace's op graph: process groups, each rank's nodes as ops in topological
// order (per node kind), collectives and send/receive pairs matched across ranks, dependency edges.
#include "models/executor/chakra_graph_builder.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/compute/compute_model.h"

namespace traincast::models {
namespace chakra_graph {
namespace {

/// "FILE: byte B: node ID (NAME)": where a node was read.
std::string location(const ChakraRankTrace& t, const ChakraNode& n) {
  return t.path + ": byte " + std::to_string(n.file_offset) + ": node " + std::to_string(n.id) + " (" + n.name + ")";
}

/// location() as a message's prefix: "FILE: byte B: node ID (NAME): ".
std::string where(const ChakraRankTrace& t, const ChakraNode& n) { return location(t, n) + ": "; }

struct CollInstance {
  ChakraCollective type{};
  double bytes = 0;
  std::uint32_t task = kNone;  ///< or kNone for a zero-time barrier (join op)
  std::uint32_t join = kNone;
  std::uint32_t arrived = 0;
  std::uint32_t expected = 0;
  int first_rank = 0;
  const ChakraNode* first = nullptr;
};

struct ProcessGroup {
  std::vector<int> ranks;  ///< resolved (world filled in)
  std::uint32_t group = kNone;
  std::vector<CollInstance> instances;
  std::vector<int> issued;  ///< per rank: collectives issued on this group
  std::string defined_in;
};

/// A send or receive node waiting for its other end.
struct P2pEnd {
  std::uint32_t op;
  int rank;
  const ChakraNode* node;
};

/// One rank's nodes as indices into its file.
struct RankOrder {
  std::vector<std::vector<std::uint32_t>> deps;  ///< per node: its dependencies, deduplicated, ascending
  std::vector<std::uint32_t> order;              ///< topological, file order breaking ties
};

/// Throws std::invalid_argument for no ranks, more ranks than GPUs, or ranks out of order.
void check_ranks(const Scenario& sc, const Cluster& cluster, const std::vector<ChakraRankTrace>& ranks) {
  const int R = static_cast<int>(ranks.size());
  if (R == 0) throw std::invalid_argument("chakra: no ranks to run");
  if (R > cluster.num_gpus())
    throw std::invalid_argument("chakra: the trace has " + std::to_string(R) + " ranks but scenario " + sc.name +
                                " has " + std::to_string(cluster.num_gpus()) +
                                " GPUs (rank r runs on GPU r; use a scenario with at least " + std::to_string(R) +
                                " GPUs)");
  for (int r = 0; r < R; ++r)
    if (ranks[static_cast<std::size_t>(r)].rank != r)
      throw std::invalid_argument("chakra: traces must be given in rank order 0.." + std::to_string(R - 1));
}

/// Dependencies as indices (deduplicated), then a topological order with file order on ties.
/// Throws std::invalid_argument for a dependency outside the file, on itself, or a cycle.
RankOrder order_rank(const ChakraRankTrace& t, const ChakraRunOptions& options) {
  const std::size_t n = t.nodes.size();
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(t.nodes[i].id, static_cast<std::uint32_t>(i));
  RankOrder out;
  out.deps.resize(n);
  std::vector<std::vector<std::uint32_t>> users(n);
  std::vector<std::uint32_t> indegree(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    auto& d = out.deps[i];
    for (const auto* list : {&t.nodes[i].data_deps, &t.nodes[i].ctrl_deps})
      for (std::uint64_t id : *list) {
        if (list == &t.nodes[i].ctrl_deps && !options.wait_on_ctrl_deps) break;
        auto it = index.find(id);
        if (it == index.end())
          throw std::invalid_argument(where(t, t.nodes[i]) + "depends on node " + std::to_string(id) +
                                      ", which is not in the file");
        d.push_back(it->second);
      }
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    for (std::uint32_t x : d) {
      if (x == i) throw std::invalid_argument(where(t, t.nodes[i]) + "depends on itself");
      users[x].push_back(static_cast<std::uint32_t>(i));
    }
    indegree[i] = static_cast<std::uint32_t>(d.size());
  }
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::uint32_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(i);
  out.order.reserve(n);
  while (!ready.empty()) {
    const std::uint32_t i = ready.top();
    ready.pop();
    out.order.push_back(i);
    for (std::uint32_t u : users[i])
      if (--indegree[u] == 0) ready.push(u);
  }
  if (out.order.size() != n) {
    std::size_t i = 0;
    while (indegree[i] == 0) ++i;
    throw std::invalid_argument(where(t, t.nodes[i]) +
                                "is on a dependency cycle (the nodes of a trace must form a DAG)");
  }
  return out;
}

/// The engine collective a COMM_COLL node of `type` runs as, and its report kind.
/// Throws std::invalid_argument for GATHER and SCATTER (no model).
std::pair<CollectiveOp, CommKind> collective_of(ChakraCollective type, const ChakraRankTrace& t,
                                                const ChakraNode& node) {
  CollectiveOp cop = CollectiveOp::all_reduce;
  CommKind kind = kAllReduce;
  switch (type) {
    case ChakraCollective::all_reduce:
      cop = CollectiveOp::all_reduce, kind = kAllReduce;
      break;
    case ChakraCollective::reduce:
      cop = CollectiveOp::reduce, kind = kReduce;
      break;
    case ChakraCollective::all_gather:
      cop = CollectiveOp::all_gather, kind = kAllGather;
      break;
    case ChakraCollective::broadcast:
      cop = CollectiveOp::broadcast, kind = kBroadcast;
      break;
    case ChakraCollective::all_to_all:
      cop = CollectiveOp::all_to_all, kind = kAllToAll;
      break;
    case ChakraCollective::reduce_scatter:
    case ChakraCollective::reduce_scatter_block:
      cop = CollectiveOp::reduce_scatter, kind = kReduceScatter;
      break;
    case ChakraCollective::barrier:
      cop = CollectiveOp::all_reduce, kind = kBarrier;
      break;
    case ChakraCollective::gather:
    case ChakraCollective::scatter:
      throw std::invalid_argument(where(t, node) + "comm_type " + chakra_name(type) +
                                  " is not modelled (supported: ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, "
                                  "ALL_TO_ALL, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, BARRIER)");
  }
  return {cop, kind};
}

/// Builds one ChakraGraph: build() runs the steps in order (process groups; each rank's nodes
/// and edges; collective completeness; send/receive pairs; participant lists and edges).
class GraphBuilder {
 public:
  GraphBuilder(const Scenario& sc, const Cluster& cluster, const std::vector<ChakraRankTrace>& ranks,
               const ChakraRunOptions& options)
      : sc_(sc), cluster_(cluster), ranks_(ranks), options_(options), num_ranks_(static_cast<int>(ranks.size())) {}

  ChakraGraph build();

 private:
  void collect_process_groups();
  std::uint32_t label(const std::string& s);
  std::uint32_t add_op(int rank, Stream stream, Category cat, std::uint32_t lbl);
  void add_rank(int r);
  std::uint32_t add_node(int r, const ChakraRankTrace& t, const ChakraNode& node, const GpuSpec& gpu,
                         const ComputeParams& params);
  std::uint32_t add_compute_node(int r, const ChakraNode& node, const GpuSpec& gpu, const ComputeParams& params);
  std::uint32_t add_collective_node(int r, const ChakraRankTrace& t, const ChakraNode& node);
  ProcessGroup& process_group_of(int r, const ChakraRankTrace& t, const ChakraNode& node);
  CollInstance new_collective(int r, const ChakraRankTrace& t, const ChakraNode& node, ProcessGroup& pg,
                              ChakraCollective type, double bytes);
  std::uint32_t add_p2p_node(int r, const ChakraRankTrace& t, const ChakraNode& node);
  void check_complete(const std::string& name, const ProcessGroup& pg) const;
  void pair_sends_and_receives();
  void write_participants_and_edges();

  const Scenario& sc_;
  const Cluster& cluster_;
  const std::vector<ChakraRankTrace>& ranks_;
  const ChakraRunOptions& options_;
  const int num_ranks_;
  ChakraGraph out_;
  std::unordered_map<std::string, std::uint32_t> label_ids_;
  std::map<std::string, ProcessGroup> pgs_;
  ProcessGroup world_;
  /// Send/receive endpoints by (src, dst, tag), in issue order.
  std::map<std::tuple<int, int, std::int64_t>, std::pair<std::deque<P2pEnd>, std::deque<P2pEnd>>> p2p_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges_;
  std::vector<std::vector<std::uint32_t>> task_participants_;
  std::map<std::string, ComputeParams> params_by_gpu_;
};

ChakraGraph GraphBuilder::build() {
  const int R = num_ranks_;
  out_.graph.workers = static_cast<std::uint32_t>(R);
  collect_process_groups();

  ChakraRunReport& counts = out_.counts;
  counts.ranks = R;
  counts.num_gpus = cluster_.num_gpus();
  out_.node_op.resize(static_cast<std::size_t>(R));
  for (int r = 0; r < R; ++r) add_rank(r);

  // Every collective reached by all members of its group.
  check_complete("(all ranks)", world_);
  for (const auto& [name, pg] : pgs_) check_complete(name, pg);

  pair_sends_and_receives();
  write_participants_and_edges();
  return std::move(out_);
}

/// Process groups: the union of every file's definitions (they must agree).
void GraphBuilder::collect_process_groups() {
  const int R = num_ranks_;
  for (const ChakraRankTrace& t : ranks_)
    for (const ChakraProcessGroup& def : t.process_groups) {
      std::vector<int> members = def.ranks;
      if (members.empty())
        for (int r = 0; r < R; ++r) members.push_back(r);
      for (int m : members)
        if (m >= R)
          throw std::invalid_argument(t.path + ": process group " + def.name + " lists rank " + std::to_string(m) +
                                      " but the trace has " + std::to_string(R) + " ranks (0.." +
                                      std::to_string(R - 1) + ")");
      auto [it, fresh] = pgs_.try_emplace(def.name);
      if (fresh) {
        it->second.ranks = std::move(members);
        it->second.defined_in = t.path;
      } else if (it->second.ranks != members) {
        throw std::invalid_argument(t.path + ": process group " + def.name + " has other ranks than in " +
                                    it->second.defined_in);
      }
    }
  for (int r = 0; r < R; ++r) world_.ranks.push_back(r);
  world_.defined_in = "(all ranks)";
}

std::uint32_t GraphBuilder::label(const std::string& s) {
  auto [it, fresh] = label_ids_.emplace(s, static_cast<std::uint32_t>(out_.labels.size()));
  if (fresh) out_.labels.push_back(s);
  return it->second;
}

std::uint32_t GraphBuilder::add_op(int rank, Stream stream, Category cat, std::uint32_t lbl) {
  OpGraph& G = out_.graph;
  Op op;
  op.worker = static_cast<std::uint32_t>(rank);
  op.stream = stream;
  op.label = lbl;
  G.ops.push_back(op);
  out_.op_category.push_back(cat);
  return static_cast<std::uint32_t>(G.ops.size() - 1);
}

/// Rank r's nodes as ops, in topological order, then their dependency edges.
void GraphBuilder::add_rank(int r) {
  const ChakraRankTrace& t = ranks_[static_cast<std::size_t>(r)];
  const std::size_t n = t.nodes.size();
  out_.counts.dropped_deps += t.dropped_deps;
  const GpuSpec& gpu = cluster_.gpu_spec(r);
  auto pit = params_by_gpu_.find(gpu.name);
  if (pit == params_by_gpu_.end())
    pit = params_by_gpu_.emplace(gpu.name, compute_params(gpu, sc_.cluster.profile)).first;
  const ComputeParams& params = pit->second;

  const RankOrder ro = order_rank(t, options_);
  auto& node_op = out_.node_op[static_cast<std::size_t>(r)];
  node_op.assign(n, kNone);
  for (std::uint32_t i : ro.order) {
    ++out_.counts.nodes;
    node_op[i] = add_node(r, t, t.nodes[i], gpu, params);
  }
  // Dependencies (a barrier's join op may receive edges from several ranks).
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t d : ro.deps[i]) {
      const std::uint32_t from = node_op[d], to = node_op[i];
      if (from != to) edges_.emplace_back(from, to);
    }
}

/// The op of one node, by its kind (kNone for an unknown kind).
std::uint32_t GraphBuilder::add_node(int r, const ChakraRankTrace& t, const ChakraNode& node, const GpuSpec& gpu,
                                     const ComputeParams& params) {
  // Communication nodes on the host (is_cpu_op: a PyTorch c10d launch, its GPU kernel is a
  // separate node) are replayed as CPU ops, as ASTRA-sim replays every CPU op.
  const bool host_comm =
      node.is_cpu_op && (node.type == ChakraNodeType::comm_coll || node.type == ChakraNodeType::comm_send ||
                         node.type == ChakraNodeType::comm_recv);
  switch (host_comm ? ChakraNodeType::comp : node.type) {
    case ChakraNodeType::metadata:
      ++out_.counts.metadata_nodes;
      return add_op(r, kNoStream, kCatNone, label(node.name));
    case ChakraNodeType::comp:
    case ChakraNodeType::mem_load:
    case ChakraNodeType::mem_store:
      return add_compute_node(r, node, gpu, params);
    case ChakraNodeType::comm_coll:
      return add_collective_node(r, t, node);
    case ChakraNodeType::comm_send:
    case ChakraNodeType::comm_recv:
      return add_p2p_node(r, t, node);
  }
  return kNone;
}

/// COMP (GPU or CPU stream) and MEM_LOAD/STORE nodes: measured duration, else the compute model.
std::uint32_t GraphBuilder::add_compute_node(int r, const ChakraNode& node, const GpuSpec& gpu,
                                             const ComputeParams& params) {
  ChakraRunReport& counts = out_.counts;
  const bool mem = node.type != ChakraNodeType::comp;
  const bool cpu = !mem && node.is_cpu_op;
  if (mem)
    ++counts.mem_nodes;
  else if (cpu)
    ++counts.cpu_nodes;
  else
    ++counts.comp_nodes;
  const std::uint32_t op = add_op(r, mem ? kNoStream : (cpu ? kCpu : kCompute),
                                  mem ? kCatMemory : (cpu ? kCatCpu : kCatCompute), label(node.name));
  std::int64_t ns = node.duration_ns;
  if (ns < 0 && !cpu && (node.num_ops > 0 || node.tensor_size_bytes > 0)) {
    Kernel k;
    if (mem)
      k = Kernel{KernelKind::copy, 0, node.tensor_size_bytes};
    else if (node.num_ops > 0)
      k = Kernel{KernelKind::gemm, node.num_ops, std::max(0.0, node.tensor_size_bytes)};
    else
      k = Kernel{KernelKind::elementwise, 0, node.tensor_size_bytes};
    ns = sim::Time::from_seconds(kernel_seconds(k, gpu, params, sc_.training.precision)).ns();
    ++counts.modelled_nodes;
  } else if (ns < 0) {
    ++counts.zero_time_nodes;
    ns = 0;
  }
  out_.graph.ops[op].duration_ns = ns;
  return op;
}

/// The process group a COMM_COLL node names (all ranks when none); rank r must be a member.
ProcessGroup& GraphBuilder::process_group_of(int r, const ChakraRankTrace& t, const ChakraNode& node) {
  ProcessGroup* pg = &world_;
  if (!node.pg_name.empty()) {
    auto it = pgs_.find(node.pg_name);
    if (it == pgs_.end())
      throw std::invalid_argument(where(t, node) + "pg_name " + node.pg_name +
                                  " is not defined (no \"## process_group:init ##\" metadata node of the "
                                  "trace names it)");
    pg = &it->second;
  }
  if (std::find(pg->ranks.begin(), pg->ranks.end(), r) == pg->ranks.end())
    throw std::invalid_argument(where(t, node) + "rank " + std::to_string(r) + " is not a member of process group " +
                                node.pg_name);
  return *pg;
}

/// A collective first issued (by rank r) on `pg`: a join op for a zero-size barrier, else a task
/// on the group's GPUs.
CollInstance GraphBuilder::new_collective(int r, const ChakraRankTrace& t, const ChakraNode& node, ProcessGroup& pg,
                                          ChakraCollective type, double bytes) {
  OpGraph& G = out_.graph;
  CollInstance c;
  c.type = type;
  c.bytes = bytes;
  c.expected = static_cast<std::uint32_t>(pg.ranks.size());
  c.first_rank = r;
  c.first = &node;
  const auto [cop, kind] = collective_of(type, t, node);
  if (type == ChakraCollective::barrier && bytes <= 0) {
    c.join = add_op(r, kNoStream, kCatNone, label(node.name));
    out_.join_ops.push_back(c.join);
  } else {
    if (pg.group == kNone) {
      for (int m : pg.ranks) G.groups.gpus.push_back(m);
      pg.group = G.groups.close_group();
    }
    Task task;
    task.op = cop;
    task.bytes = bytes;
    task.group_begin = pg.group;
    task.group_count = 1;
    task.expected = c.expected;
    G.tasks.push_back(task);
    task_participants_.emplace_back();
    out_.task_kind.push_back(kind);
    c.task = static_cast<std::uint32_t>(G.tasks.size() - 1);
  }
  return c;
}

/// COMM_COLL: the k-th collective rank r issues on its group meets every other member's k-th.
std::uint32_t GraphBuilder::add_collective_node(int r, const ChakraRankTrace& t, const ChakraNode& node) {
  ++out_.counts.comm_coll_nodes;
  ProcessGroup& pg = process_group_of(r, t, node);
  if (pg.issued.empty()) pg.issued.assign(static_cast<std::size_t>(num_ranks_), 0);
  const auto seq = static_cast<std::size_t>(pg.issued[static_cast<std::size_t>(r)]++);
  const auto type = static_cast<ChakraCollective>(node.comm_type);
  const double bytes = std::max(0.0, node.comm_size_bytes);
  if (seq == pg.instances.size()) pg.instances.push_back(new_collective(r, t, node, pg, type, bytes));
  CollInstance& c = pg.instances[seq];
  if (c.type != type || c.bytes != bytes) {
    const ChakraRankTrace& ft = ranks_[static_cast<std::size_t>(c.first_rank)];
    throw std::invalid_argument(
        where(t, node) + "collective #" + std::to_string(seq + 1) + " on process group " +
        (node.pg_name.empty() ? std::string("(all ranks)") : node.pg_name) + " is " + chakra_name(type) + " of " +
        std::to_string(static_cast<long long>(bytes)) + " bytes, but on rank " + std::to_string(c.first_rank) +
        " it is " + chakra_name(c.type) + " of " + std::to_string(static_cast<long long>(c.bytes)) + " bytes (" +
        location(ft, *c.first) + "); ranks must issue a group's collectives in the same order");
  }
  ++c.arrived;
  if (c.join != kNone) return c.join;
  const std::uint32_t op = add_op(r, kNoStream, kCatComm, label(node.name));
  out_.graph.ops[op].task = c.task;
  task_participants_[c.task].push_back(op);
  return op;
}

/// COMM_SEND / COMM_RECV: one op, queued by (src, dst, comm_tag) for pairing.
std::uint32_t GraphBuilder::add_p2p_node(int r, const ChakraRankTrace& t, const ChakraNode& node) {
  const int R = num_ranks_;
  ++out_.counts.comm_p2p_nodes;
  const bool send = node.type == ChakraNodeType::comm_send;
  const int peer = send ? node.comm_dst : node.comm_src;
  if (peer >= R)
    throw std::invalid_argument(where(t, node) + (send ? "comm_dst " : "comm_src ") + std::to_string(peer) +
                                " is not a rank of the trace (0.." + std::to_string(R - 1) + ")");
  if (peer == r) throw std::invalid_argument(where(t, node) + "sends to or receives from its own rank");
  const std::uint32_t op = add_op(r, kNoStream, kCatComm, label(node.name));
  auto& ends = p2p_[{send ? r : peer, send ? peer : r, node.comm_tag}];
  (send ? ends.first : ends.second).push_back(P2pEnd{op, r, &node});
  return op;
}

/// Throws std::invalid_argument for a collective of `pg` that some member never issues.
void GraphBuilder::check_complete(const std::string& name, const ProcessGroup& pg) const {
  for (std::size_t k = 0; k < pg.instances.size(); ++k) {
    const CollInstance& c = pg.instances[k];
    if (c.arrived == c.expected) continue;
    int short_rank = -1;
    for (int m : pg.ranks)
      if (static_cast<std::size_t>(pg.issued[static_cast<std::size_t>(m)]) <= k) {
        short_rank = m;
        break;
      }
    const ChakraRankTrace& ft = ranks_[static_cast<std::size_t>(c.first_rank)];
    throw std::invalid_argument(
        where(ft, *c.first) + "collective #" + std::to_string(k + 1) + " on process group " + name + " (" +
        chakra_name(c.type) + ", " + std::to_string(static_cast<long long>(c.bytes)) + " bytes) is issued by " +
        std::to_string(c.arrived) + " of its " + std::to_string(c.expected) + " ranks: rank " +
        std::to_string(short_rank) + " (" + ranks_[static_cast<std::size_t>(short_rank)].path + ") issues only " +
        std::to_string(pg.issued[static_cast<std::size_t>(short_rank)]) + " collectives on it");
  }
}

/// Send/receive pairs: the k-th send and k-th receive of each (src, dst, tag) become one task.
void GraphBuilder::pair_sends_and_receives() {
  OpGraph& G = out_.graph;
  for (auto& [key, ends] : p2p_) {
    auto& [sends, recvs] = ends;
    const auto [src, dst, tag] = key;
    const std::size_t pairs = std::min(sends.size(), recvs.size());
    if (sends.size() != recvs.size()) {
      const P2pEnd& extra = sends.size() > recvs.size() ? sends[pairs] : recvs[pairs];
      const ChakraRankTrace& et = ranks_[static_cast<std::size_t>(extra.rank)];
      throw std::invalid_argument(
          where(et, *extra.node) +
          (sends.size() > recvs.size() ? "COMM_SEND to rank " + std::to_string(dst)
                                       : "COMM_RECV from rank " + std::to_string(src)) +
          " (comm_tag " + std::to_string(tag) + ") has no matching " +
          (sends.size() > recvs.size() ? "COMM_RECV in rank " + std::to_string(dst) + "'s file"
                                       : "COMM_SEND in rank " + std::to_string(src) + "'s file") +
          " (" + std::to_string(sends.size()) + " sends, " + std::to_string(recvs.size()) + " receives)");
    }
    for (std::size_t k = 0; k < pairs; ++k) {
      const P2pEnd& s = sends[k];
      const P2pEnd& v = recvs[k];
      if (v.node->comm_size_bytes >= 0 && v.node->comm_size_bytes != s.node->comm_size_bytes)
        throw std::invalid_argument(where(ranks_[static_cast<std::size_t>(v.rank)], *v.node) + "receives " +
                                    std::to_string(static_cast<long long>(v.node->comm_size_bytes)) +
                                    " bytes but the matching send (" +
                                    where(ranks_[static_cast<std::size_t>(s.rank)], *s.node) + ") sends " +
                                    std::to_string(static_cast<long long>(s.node->comm_size_bytes)));
      Task task;
      task.op = CollectiveOp::send_recv;
      task.bytes = s.node->comm_size_bytes;
      task.group_begin = G.groups.add({src, dst});
      task.group_count = 1;
      task.expected = 2;
      G.tasks.push_back(task);
      out_.task_kind.push_back(kSendRecv);
      const auto id = static_cast<std::uint32_t>(G.tasks.size() - 1);
      task_participants_.push_back({s.op, v.op});
      G.ops[s.op].task = id;
      G.ops[v.op].task = id;
    }
  }
}

/// The tasks' participant lists (CSR) and the dependency edges, into the graph.
void GraphBuilder::write_participants_and_edges() {
  OpGraph& G = out_.graph;
  for (std::size_t k = 0; k < G.tasks.size(); ++k) {
    G.tasks[k].participant_begin = static_cast<std::uint32_t>(G.participants.size());
    G.tasks[k].participant_count = static_cast<std::uint32_t>(task_participants_[k].size());
    G.participants.insert(G.participants.end(), task_participants_[k].begin(), task_participants_[k].end());
  }
  G.set_edges(edges_);
}

}  // namespace
}  // namespace chakra_graph

ChakraGraph build_chakra_graph(const Scenario& sc, const Cluster& cluster, const std::vector<ChakraRankTrace>& ranks,
                               const ChakraRunOptions& options) {
  chakra_graph::check_ranks(sc, cluster, ranks);
  return chakra_graph::GraphBuilder(sc, cluster, ranks, options).build();
}

}  // namespace traincast::models
