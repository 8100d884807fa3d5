// Exporting a generated training job as Chakra traces: one ChakraRankTrace per GPU, its ops as
// COMP / COMM_COLL / COMM_SEND nodes, receives and the global barrier added where it depends on them.
#include "models/executor/chakra_export.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace traincast::models {
namespace {

constexpr std::int64_t kTagStride = 1 << 16;  // tag = send op * stride + group: unique per pair

/// Throws std::invalid_argument for a job with no Chakra form here (context parallelism, folded,
/// host input copies), std::logic_error when its worker tables do not match its graph.
void check_exportable(const TrainingGraph& job) {
  if (job.cp > 1)
    throw std::invalid_argument(
        "chakra export: context parallelism (cp = " + std::to_string(job.cp) +
        ") is not exported: its ring send/recvs are shared by several workers (expected cp: 1)");
  if (job.replicas != job.dp)
    throw std::invalid_argument("chakra export: the job was built folded (one replica for " + std::to_string(job.dp) +
                                "); build it with options.fold_symmetric=false so every GPU has its ops");
  if (job.input_copies)
    throw std::invalid_argument(
        "chakra export: host-to-device input copies (workload.data_loader) have no Chakra form here (expected a "
        "scenario without data_loader)");
  const auto W = static_cast<std::size_t>(job.graph.workers);
  if (job.worker_gpus.size() != W || job.op_base.size() != W + 1)
    throw std::logic_error("chakra export: worker tables do not match the graph");
}

/// The worker of every GPU 0..num_gpus-1. Throws std::invalid_argument for a GPU without one.
std::vector<int> gpu_workers(const TrainingGraph& job, int num_gpus) {
  const auto W = static_cast<std::size_t>(job.graph.workers);
  std::vector<int> gpu_worker(static_cast<std::size_t>(num_gpus), -1);
  for (std::size_t w = 0; w < W; ++w)
    for (int g : job.worker_gpus[w]) {
      if (g < 0 || g >= num_gpus || gpu_worker[static_cast<std::size_t>(g)] >= 0)
        throw std::logic_error("chakra export: GPU " + std::to_string(g) + " outside the cluster or in two workers");
      gpu_worker[static_cast<std::size_t>(g)] = static_cast<int>(w);
    }
  for (int g = 0; g < num_gpus; ++g)
    if (gpu_worker[static_cast<std::size_t>(g)] < 0)
      throw std::invalid_argument("chakra export: GPU " + std::to_string(g) + " runs no part of the job");
  return gpu_worker;
}

/// Dependencies of every op (reverse of the CSR dependents), ascending.
std::vector<std::vector<std::uint32_t>> op_dependencies(const OpGraph& G) {
  std::vector<std::vector<std::uint32_t>> deps(G.ops.size());
  for (std::uint32_t d = 0; d < G.ops.size(); ++d)
    for (std::uint32_t k = G.dep_offset[d]; k < G.dep_offset[d + 1]; ++k) deps[G.dependents[k]].push_back(d);
  return deps;
}

/// Process-group names from the role of the ops that use each group.
std::vector<std::string> process_group_names(const OpGraph& G) {
  std::vector<std::string> group_name(G.groups.size());
  for (const Task& t : G.tasks) {
    if (t.op == CollectiveOp::send_recv || t.participant_count == 0) continue;
    const Role role = G.ops[G.participants[t.participant_begin]].role;
    const char* prefix = role == Role::tp_comm                               ? "tp"
                         : (role == Role::dp_grad || role == Role::dp_param) ? "dp"
                         : role == Role::ep_comm                             ? "ep"
                                                                             : "pg";
    for (std::uint32_t k = 0; k < t.group_count; ++k)
      group_name[t.group_begin + k] = std::string(prefix) + "." + std::to_string(t.group_begin + k);
  }
  return group_name;
}

std::vector<int> group_gpus(const OpGraph& G, std::uint32_t group) {
  return std::vector<int>(G.groups.gpus.begin() + G.groups.offset[group],
                          G.groups.gpus.begin() + G.groups.offset[group + 1]);
}

/// The call of task t that GPU g takes part in (as sender for send_recv).
std::uint32_t group_of(const OpGraph& G, const Task& t, int g, bool sender_only) {
  for (std::uint32_t k = 0; k < t.group_count; ++k) {
    const std::uint32_t grp = t.group_begin + k;
    const auto b = G.groups.gpus.begin() + G.groups.offset[grp], e = G.groups.gpus.begin() + G.groups.offset[grp + 1];
    if (sender_only ? (b != e && *b == g) : std::find(b, e, g) != e) return grp;
  }
  throw std::logic_error("chakra export: GPU " + std::to_string(g) + " is in no group of its task");
}

ChakraCollective comm_type(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce:
      return ChakraCollective::all_reduce;
    case CollectiveOp::all_gather:
      return ChakraCollective::all_gather;
    case CollectiveOp::reduce_scatter:
      return ChakraCollective::reduce_scatter;
    case CollectiveOp::broadcast:
      return ChakraCollective::broadcast;
    case CollectiveOp::reduce:
      return ChakraCollective::reduce;
    case CollectiveOp::all_to_all:
      return ChakraCollective::all_to_all;
    case CollectiveOp::send_recv:
      break;
  }
  throw std::logic_error("chakra export: send_recv is not a collective");
}

/// Writes the trace of one GPU g (worker w): its worker's ops in order, each preceded by the
/// barrier and receive nodes it is the first to depend on.
class RankExporter {
 public:
  RankExporter(const TrainingGraph& job, const std::vector<std::vector<std::uint32_t>>& deps,
               const std::vector<std::string>& group_name, int g, std::uint32_t w, std::uint64_t& next_recv_id)
      : job_(job),
        graph_(job.graph),
        deps_(deps),
        group_name_(group_name),
        g_(g),
        lo_(job.op_base[w]),
        hi_(job.op_base[w + 1]),
        next_recv_id_(next_recv_id) {
    prev_.fill(kNone);
  }

  void write(ChakraRankTrace& tr);

 private:
  bool local(std::uint32_t d) const { return d >= lo_ && d < hi_; }
  void add_dependencies(ChakraRankTrace& tr, ChakraNode& node, std::uint32_t i);
  ChakraNode barrier_node(std::uint32_t d) const;
  ChakraNode receive_node(std::uint32_t d);
  void set_kind(ChakraNode& node, const Op& op, std::uint32_t i);

  const TrainingGraph& job_;
  const OpGraph& graph_;
  const std::vector<std::vector<std::uint32_t>>& deps_;
  const std::vector<std::string>& group_name_;
  const int g_;
  const std::uint32_t lo_, hi_;
  std::uint64_t& next_recv_id_;
  std::vector<std::uint32_t> used_groups_;
  std::unordered_map<std::uint32_t, std::uint64_t> barrier_emitted_;  // barrier op -> node id
  std::array<std::uint32_t, kNumStreams> prev_{};
};

void RankExporter::write(ChakraRankTrace& tr) {
  tr.rank = g_;
  tr.version = "0.0.4";
  tr.schema = "traincast export";
  for (std::uint32_t i = lo_; i < hi_; ++i) {
    const Op& op = graph_.ops[i];
    ChakraNode node;
    node.id = i;
    node.name = job_.labels[op.label];
    add_dependencies(tr, node, i);
    if (op.stream != kNoStream) {  // stream order, as a dependency every Chakra tool honours
      const std::uint32_t p = prev_[op.stream];
      if (p != kNone && std::find(node.data_deps.begin(), node.data_deps.end(), p) == node.data_deps.end())
        node.data_deps.push_back(p);
      prev_[op.stream] = i;
    }
    set_kind(node, op, i);
    tr.nodes.push_back(std::move(node));
  }
  std::sort(used_groups_.begin(), used_groups_.end());
  used_groups_.erase(std::unique(used_groups_.begin(), used_groups_.end()), used_groups_.end());
  for (std::uint32_t grp : used_groups_)
    tr.process_groups.push_back(ChakraProcessGroup{group_name_[grp], group_gpus(graph_, grp)});
}

/// Op i's dependencies as node.data_deps; a barrier or receive it depends on is written first.
void RankExporter::add_dependencies(ChakraRankTrace& tr, ChakraNode& node, std::uint32_t i) {
  const std::vector<Op>& ops = graph_.ops;
  for (std::uint32_t d : deps_[i]) {
    if (local(d)) {
      node.data_deps.push_back(d);
    } else if (ops[d].role == Role::barrier) {
      if (!barrier_emitted_.count(d)) {
        tr.nodes.push_back(barrier_node(d));
        barrier_emitted_.emplace(d, d);
      }
      node.data_deps.push_back(d);
    } else if (ops[d].task != kNone && graph_.tasks[ops[d].task].op == CollectiveOp::send_recv) {
      ChakraNode v = receive_node(d);
      node.data_deps.push_back(v.id);
      tr.nodes.push_back(std::move(v));
    } else {
      throw std::logic_error("chakra export: a dependency on another worker that is not a send or the barrier");
    }
  }
}

/// The step's global sync (op d, on another worker) as a size-less BARRIER on this GPU.
ChakraNode RankExporter::barrier_node(std::uint32_t d) const {
  ChakraNode b;
  b.id = d;
  b.name = job_.labels[graph_.ops[d].label];
  b.type = ChakraNodeType::comm_coll;
  b.comm_type = static_cast<int>(ChakraCollective::barrier);
  for (std::uint32_t bd : deps_[d])
    if (local(bd)) b.data_deps.push_back(bd);
  return b;
}

/// The receive of send op d (on another worker) to this GPU, with a fresh node id.
ChakraNode RankExporter::receive_node(std::uint32_t d) {
  const Task& t = graph_.tasks[graph_.ops[d].task];
  std::uint32_t grp = kNone;
  for (std::uint32_t k = 0; k < t.group_count; ++k) {
    const std::uint32_t c = t.group_begin + k;
    if (graph_.groups.offset[c + 1] - graph_.groups.offset[c] == 2 &&
        graph_.groups.gpus[graph_.groups.offset[c] + 1] == g_)
      grp = c;
  }
  if (grp == kNone) throw std::logic_error("chakra export: a receive without a send to this GPU");
  ChakraNode v;
  v.id = next_recv_id_++;
  v.name = job_.labels[graph_.ops[d].label] + "_recv";
  v.type = ChakraNodeType::comm_recv;
  v.comm_src = graph_.groups.gpus[graph_.groups.offset[grp]];
  v.comm_tag = static_cast<std::int64_t>(d) * kTagStride + (grp - t.group_begin);
  v.comm_size_bytes = t.bytes;
  return v;
}

/// COMP with the op's duration, COMM_SEND for a send, else COMM_COLL on its group's name.
void RankExporter::set_kind(ChakraNode& node, const Op& op, std::uint32_t i) {
  if (op.task == kNone) {
    node.type = ChakraNodeType::comp;
    node.duration_ns = op.duration_ns;
    return;
  }
  const Task& t = graph_.tasks[op.task];
  if (t.op == CollectiveOp::send_recv) {
    const std::uint32_t grp = group_of(graph_, t, g_, true);
    node.type = ChakraNodeType::comm_send;
    node.comm_dst = graph_.groups.gpus[graph_.groups.offset[grp] + 1];
    node.comm_tag = static_cast<std::int64_t>(i) * kTagStride + (grp - t.group_begin);
  } else {
    const std::uint32_t grp = group_of(graph_, t, g_, false);
    node.type = ChakraNodeType::comm_coll;
    node.comm_type = static_cast<int>(comm_type(t.op));
    node.pg_name = group_name_[grp];
    used_groups_.push_back(grp);
  }
  node.comm_size_bytes = t.bytes;
}

}  // namespace

std::vector<ChakraRankTrace> export_training_chakra(const TrainingGraph& job, int num_gpus) {
  check_exportable(job);
  const std::vector<int> gpu_worker = gpu_workers(job, num_gpus);
  const OpGraph& G = job.graph;
  const std::vector<std::vector<std::uint32_t>> deps = op_dependencies(G);
  for (const Task& t : G.tasks) {
    if (t.op == CollectiveOp::send_recv && t.participant_count > 0 &&
        G.ops[G.participants[t.participant_begin]].role == Role::tp_comm)
      throw std::invalid_argument(
          "chakra export: async TP's chunk copies between TP ranks (tp_overlap_implementation async_tp) are not "
          "exported (expected userbuffers)");
    if (t.kind != TaskKind::collective)
      throw std::invalid_argument(
          "chakra export: the job copies to or from host memory (CPU offload), which Chakra's node types "
          "do not describe (expected workload.offload.optimizer: false)");
  }
  const std::vector<std::string> group_name = process_group_names(G);

  std::vector<ChakraRankTrace> out(static_cast<std::size_t>(num_gpus));
  std::uint64_t next_recv_id = G.ops.size();
  for (int g = 0; g < num_gpus; ++g) {
    const auto w = static_cast<std::uint32_t>(gpu_worker[static_cast<std::size_t>(g)]);
    RankExporter(job, deps, group_name, g, w, next_recv_id).write(out[static_cast<std::size_t>(g)]);
  }
  return out;
}

}  // namespace traincast::models
