#include "models/executor/chakra_executor.h"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "models/collectives/collective.h"
#include "models/compute/compute_model.h"
#include "models/executor/straggler.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// Communication kinds, in report order.
enum CommKind : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kBarrier,
  kSendRecv,
  kNumCommKinds
};
constexpr std::array<const char*, kNumCommKinds> kCommKindNames = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "barrier", "send_recv"};

/// What an op is for the breakdown and the trace.
enum Category : std::uint8_t { kCatCompute, kCatCpu, kCatMemory, kCatNone, kCatComm };

std::string where(const ChakraRankTrace& t, const ChakraNode& n) {
  return t.path + ": byte " + std::to_string(n.file_offset) + ": node " + std::to_string(n.id) + " (" + n.name + "): ";
}

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

}  // namespace

ChakraGraph build_chakra_graph(const Scenario& sc, const Cluster& cluster, const std::vector<ChakraRankTrace>& ranks,
                               const ChakraRunOptions& options) {
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

  ChakraGraph out;
  OpGraph& G = out.graph;
  G.workers = static_cast<std::uint32_t>(R);
  std::unordered_map<std::string, std::uint32_t> label_ids;
  auto label = [&](const std::string& s) {
    auto [it, fresh] = label_ids.emplace(s, static_cast<std::uint32_t>(out.labels.size()));
    if (fresh) out.labels.push_back(s);
    return it->second;
  };

  // Process groups: the union of every file's definitions (they must agree).
  std::map<std::string, ProcessGroup> pgs;
  for (const ChakraRankTrace& t : ranks)
    for (const ChakraProcessGroup& def : t.process_groups) {
      std::vector<int> members = def.ranks;
      if (members.empty())
        for (int r = 0; r < R; ++r) members.push_back(r);
      for (int m : members)
        if (m >= R)
          throw std::invalid_argument(t.path + ": process group " + def.name + " lists rank " + std::to_string(m) +
                                      " but the trace has " + std::to_string(R) + " ranks (0.." +
                                      std::to_string(R - 1) + ")");
      auto [it, fresh] = pgs.try_emplace(def.name);
      if (fresh) {
        it->second.ranks = std::move(members);
        it->second.defined_in = t.path;
      } else if (it->second.ranks != members) {
        throw std::invalid_argument(t.path + ": process group " + def.name + " has other ranks than in " +
                                    it->second.defined_in);
      }
    }
  ProcessGroup world;
  for (int r = 0; r < R; ++r) world.ranks.push_back(r);
  world.defined_in = "(all ranks)";

  // Send/receive endpoints by (src, dst, tag), in issue order.
  struct P2pEnd {
    std::uint32_t op;
    int rank;
    const ChakraNode* node;
  };
  std::map<std::tuple<int, int, std::int64_t>, std::pair<std::deque<P2pEnd>, std::deque<P2pEnd>>> p2p;

  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::vector<std::vector<std::uint32_t>> task_participants;
  std::map<std::string, ComputeParams> params_by_gpu;

  auto add_op = [&](int rank, Stream stream, Category cat, std::uint32_t lbl) {
    Op op;
    op.worker = static_cast<std::uint32_t>(rank);
    op.stream = stream;
    op.label = lbl;
    G.ops.push_back(op);
    out.op_category.push_back(cat);
    return static_cast<std::uint32_t>(G.ops.size() - 1);
  };

  ChakraRunReport& counts = out.counts;
  counts.ranks = R;
  counts.num_gpus = cluster.num_gpus();
  out.node_op.resize(static_cast<std::size_t>(R));
  for (int r = 0; r < R; ++r) {
    const ChakraRankTrace& t = ranks[static_cast<std::size_t>(r)];
    const std::size_t n = t.nodes.size();
    counts.dropped_deps += t.dropped_deps;
    const GpuSpec& gpu = cluster.gpu_spec(r);
    auto pit = params_by_gpu.find(gpu.name);
    if (pit == params_by_gpu.end())
      pit = params_by_gpu.emplace(gpu.name, compute_params(gpu, sc.cluster.profile)).first;
    const ComputeParams& params = pit->second;

    // Dependencies as indices (deduplicated), then a topological order with file order on ties.
    std::unordered_map<std::uint64_t, std::uint32_t> index;
    index.reserve(n);
    for (std::size_t i = 0; i < n; ++i) index.emplace(t.nodes[i].id, static_cast<std::uint32_t>(i));
    std::vector<std::vector<std::uint32_t>> deps(n);
    std::vector<std::vector<std::uint32_t>> users(n);
    std::vector<std::uint32_t> indegree(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      auto& d = deps[i];
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
    std::vector<std::uint32_t> order;
    order.reserve(n);
    while (!ready.empty()) {
      const std::uint32_t i = ready.top();
      ready.pop();
      order.push_back(i);
      for (std::uint32_t u : users[i])
        if (--indegree[u] == 0) ready.push(u);
    }
    if (order.size() != n) {
      std::size_t i = 0;
      while (indegree[i] == 0) ++i;
      throw std::invalid_argument(where(t, t.nodes[i]) +
                                  "is on a dependency cycle (the nodes of a trace must form a DAG)");
    }

    auto& node_op = out.node_op[static_cast<std::size_t>(r)];
    node_op.assign(n, kNone);
    for (std::uint32_t i : order) {
      const ChakraNode& node = t.nodes[i];
      ++counts.nodes;
      std::uint32_t op = kNone;
      // Communication nodes on the host (is_cpu_op: a PyTorch c10d launch, its GPU kernel is a
      // separate node) are replayed as CPU ops, as ASTRA-sim replays every CPU op.
      const bool host_comm =
          node.is_cpu_op && (node.type == ChakraNodeType::comm_coll || node.type == ChakraNodeType::comm_send ||
                             node.type == ChakraNodeType::comm_recv);
      switch (host_comm ? ChakraNodeType::comp : node.type) {
        case ChakraNodeType::metadata:
          ++counts.metadata_nodes;
          op = add_op(r, kNoStream, kCatNone, label(node.name));
          break;
        case ChakraNodeType::comp:
        case ChakraNodeType::mem_load:
        case ChakraNodeType::mem_store: {
          const bool mem = node.type != ChakraNodeType::comp;
          const bool cpu = !mem && node.is_cpu_op;
          if (mem)
            ++counts.mem_nodes;
          else if (cpu)
            ++counts.cpu_nodes;
          else
            ++counts.comp_nodes;
          op = add_op(r, mem ? kNoStream : (cpu ? kCpu : kCompute), mem ? kCatMemory : (cpu ? kCatCpu : kCatCompute),
                      label(node.name));
          std::int64_t ns = node.duration_ns;
          if (ns < 0 && !cpu && (node.num_ops > 0 || node.tensor_size_bytes > 0)) {
            Kernel k;
            if (mem)
              k = Kernel{KernelKind::copy, 0, node.tensor_size_bytes};
            else if (node.num_ops > 0)
              k = Kernel{KernelKind::gemm, node.num_ops, std::max(0.0, node.tensor_size_bytes)};
            else
              k = Kernel{KernelKind::elementwise, 0, node.tensor_size_bytes};
            ns = sim::Time::from_seconds(kernel_seconds(k, gpu, params, sc.training.precision)).ns();
            ++counts.modelled_nodes;
          } else if (ns < 0) {
            ++counts.zero_time_nodes;
            ns = 0;
          }
          G.ops[op].duration_ns = ns;
          break;
        }
        case ChakraNodeType::comm_coll: {
          ++counts.comm_coll_nodes;
          ProcessGroup* pg = &world;
          if (!node.pg_name.empty()) {
            auto it = pgs.find(node.pg_name);
            if (it == pgs.end())
              throw std::invalid_argument(where(t, node) + "pg_name " + node.pg_name +
                                          " is not defined (no \"## process_group:init ##\" metadata node of the "
                                          "trace names it)");
            pg = &it->second;
          }
          if (std::find(pg->ranks.begin(), pg->ranks.end(), r) == pg->ranks.end())
            throw std::invalid_argument(where(t, node) + "rank " + std::to_string(r) +
                                        " is not a member of process group " + node.pg_name);
          if (pg->issued.empty()) pg->issued.assign(static_cast<std::size_t>(R), 0);
          const auto seq = static_cast<std::size_t>(pg->issued[static_cast<std::size_t>(r)]++);
          const auto type = static_cast<ChakraCollective>(node.comm_type);
          const double bytes = std::max(0.0, node.comm_size_bytes);
          if (seq == pg->instances.size()) {
            CollInstance c;
            c.type = type;
            c.bytes = bytes;
            c.expected = static_cast<std::uint32_t>(pg->ranks.size());
            c.first_rank = r;
            c.first = &node;
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
            if (type == ChakraCollective::barrier && bytes <= 0) {
              c.join = add_op(r, kNoStream, kCatNone, label(node.name));
              out.join_ops.push_back(c.join);
            } else {
              if (pg->group == kNone) {
                for (int m : pg->ranks) G.groups.gpus.push_back(m);
                pg->group = G.groups.close_group();
              }
              Task task;
              task.op = cop;
              task.bytes = bytes;
              task.group_begin = pg->group;
              task.group_count = 1;
              task.expected = c.expected;
              G.tasks.push_back(task);
              task_participants.emplace_back();
              out.task_kind.push_back(kind);
              c.task = static_cast<std::uint32_t>(G.tasks.size() - 1);
            }
            pg->instances.push_back(c);
          }
          CollInstance& c = pg->instances[seq];
          if (c.type != type || c.bytes != bytes) {
            const ChakraRankTrace& ft = ranks[static_cast<std::size_t>(c.first_rank)];
            throw std::invalid_argument(
                where(t, node) + "collective #" + std::to_string(seq + 1) + " on process group " +
                (node.pg_name.empty() ? std::string("(all ranks)") : node.pg_name) + " is " + chakra_name(type) +
                " of " + std::to_string(static_cast<long long>(bytes)) + " bytes, but on rank " +
                std::to_string(c.first_rank) + " it is " + chakra_name(c.type) + " of " +
                std::to_string(static_cast<long long>(c.bytes)) + " bytes (" + where(ft, *c.first) +
                "); ranks must issue a group's collectives in the same order");
          }
          ++c.arrived;
          if (c.join != kNone) {
            op = c.join;
          } else {
            op = add_op(r, kNoStream, kCatComm, label(node.name));
            G.ops[op].task = c.task;
            task_participants[c.task].push_back(op);
          }
          break;
        }
        case ChakraNodeType::comm_send:
        case ChakraNodeType::comm_recv: {
          ++counts.comm_p2p_nodes;
          const bool send = node.type == ChakraNodeType::comm_send;
          const int peer = send ? node.comm_dst : node.comm_src;
          if (peer >= R)
            throw std::invalid_argument(where(t, node) + (send ? "comm_dst " : "comm_src ") + std::to_string(peer) +
                                        " is not a rank of the trace (0.." + std::to_string(R - 1) + ")");
          if (peer == r) throw std::invalid_argument(where(t, node) + "sends to or receives from its own rank");
          op = add_op(r, kNoStream, kCatComm, label(node.name));
          auto& ends = p2p[{send ? r : peer, send ? peer : r, node.comm_tag}];
          (send ? ends.first : ends.second).push_back(P2pEnd{op, r, &node});
          break;
        }
      }
      node_op[i] = op;
    }
    // Dependencies (a barrier's join op may receive edges from several ranks).
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint32_t d : deps[i]) {
        const std::uint32_t from = node_op[d], to = node_op[i];
        if (from != to) edges.emplace_back(from, to);
      }
  }

  // Every collective reached by all members of its group.
  auto check_complete = [&](const std::string& name, const ProcessGroup& pg) {
    for (std::size_t k = 0; k < pg.instances.size(); ++k) {
      const CollInstance& c = pg.instances[k];
      if (c.arrived == c.expected) continue;
      int short_rank = -1;
      for (int m : pg.ranks)
        if (static_cast<std::size_t>(pg.issued[static_cast<std::size_t>(m)]) <= k) {
          short_rank = m;
          break;
        }
      const ChakraRankTrace& ft = ranks[static_cast<std::size_t>(c.first_rank)];
      throw std::invalid_argument(
          where(ft, *c.first) + "collective #" + std::to_string(k + 1) + " on process group " + name + " (" +
          chakra_name(c.type) + ", " + std::to_string(static_cast<long long>(c.bytes)) + " bytes) is issued by " +
          std::to_string(c.arrived) + " of its " + std::to_string(c.expected) + " ranks: rank " +
          std::to_string(short_rank) + " (" + ranks[static_cast<std::size_t>(short_rank)].path + ") issues only " +
          std::to_string(pg.issued[static_cast<std::size_t>(short_rank)]) + " collectives on it");
    }
  };
  check_complete("(all ranks)", world);
  for (const auto& [name, pg] : pgs) check_complete(name, pg);

  // Send/receive pairs.
  for (auto& [key, ends] : p2p) {
    auto& [sends, recvs] = ends;
    const auto [src, dst, tag] = key;
    const std::size_t pairs = std::min(sends.size(), recvs.size());
    if (sends.size() != recvs.size()) {
      const P2pEnd& extra = sends.size() > recvs.size() ? sends[pairs] : recvs[pairs];
      const ChakraRankTrace& et = ranks[static_cast<std::size_t>(extra.rank)];
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
        throw std::invalid_argument(where(ranks[static_cast<std::size_t>(v.rank)], *v.node) + "receives " +
                                    std::to_string(static_cast<long long>(v.node->comm_size_bytes)) +
                                    " bytes but the matching send (" +
                                    where(ranks[static_cast<std::size_t>(s.rank)], *s.node) + ") sends " +
                                    std::to_string(static_cast<long long>(s.node->comm_size_bytes)));
      Task task;
      task.op = CollectiveOp::send_recv;
      task.bytes = s.node->comm_size_bytes;
      task.group_begin = G.groups.add({src, dst});
      task.group_count = 1;
      task.expected = 2;
      G.tasks.push_back(task);
      out.task_kind.push_back(kSendRecv);
      const auto id = static_cast<std::uint32_t>(G.tasks.size() - 1);
      task_participants.push_back({s.op, v.op});
      G.ops[s.op].task = id;
      G.ops[v.op].task = id;
    }
  }

  for (std::size_t k = 0; k < G.tasks.size(); ++k) {
    G.tasks[k].participant_begin = static_cast<std::uint32_t>(G.participants.size());
    G.tasks[k].participant_count = static_cast<std::uint32_t>(task_participants[k].size());
    G.participants.insert(G.participants.end(), task_participants[k].begin(), task_participants[k].end());
  }
  G.set_edges(edges);
  return out;
}

ChakraRunReport simulate_chakra(const Scenario& sc, const std::vector<ChakraRankTrace>& ranks,
                                sim::TraceRecorder* trace, const ChakraRunOptions& options) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  CollectiveEngine coll(sim, net, cluster);
  ChakraGraph cg = build_chakra_graph(sc, cluster, ranks, options);
  run_op_graph(sim, coll, cg.graph);
  const OpGraph& G = cg.graph;

  ChakraRunReport r = cg.counts;
  r.scenario = sc.name;
  r.gpu = cluster.gpu_spec(0).name;
  r.events = sim.events_processed();
  const int R = static_cast<int>(ranks.size());
  std::vector<std::int64_t> last_end(static_cast<std::size_t>(R), 0);
  std::int64_t makespan = 0;
  for (const Op& op : G.ops) {
    makespan = std::max(makespan, op.end_ns);
    last_end[op.worker] = std::max(last_end[op.worker], op.end_ns);
  }
  r.iteration_time_s = static_cast<double>(makespan) * 1e-9;
  // GPU compute (COMP op) time per rank.
  std::vector<std::int64_t> compute_ns(static_cast<std::size_t>(R), 0);
  for (std::size_t i = 0; i < G.ops.size(); ++i)
    if (cg.op_category[i] == kCatCompute) compute_ns[G.ops[i].worker] += G.ops[i].end_ns - G.ops[i].start_ns;
  // The rank that finishes last; among ranks that finish together the one with the least GPU
  // compute (the lowest on ties, so rank 0 when the ranks are alike), so that time lost to a
  // slower rank shows as waiting for it (as `traincast run` describes its fastest replica).
  int ref = 0;
  for (int k = 1; k < R; ++k) {
    const auto kk = static_cast<std::size_t>(k), rr = static_cast<std::size_t>(ref);
    if (last_end[kk] > last_end[rr] || (last_end[kk] == last_end[rr] && compute_ns[kk] < compute_ns[rr])) ref = k;
  }
  r.reference_rank = ref;

  // Waiting for slower ranks: the arrival skew of the reference rank's collectives (not
  // send/recv: a receive waiting for its sender is a pipeline bubble), as `traincast run` splits it.
  StragglerWalk skew(G, static_cast<std::uint32_t>(ref), [&](std::uint32_t d) {
    const Op& o = G.ops[d];
    return cg.op_category[d] == kCatComm && o.task != kNone && cg.task_kind[o.task] != kSendRecv &&
           G.tasks[o.task].participant_count >= 2;
  });

  // Breakdown on the reference rank: sweep over its ops' intervals.
  // Slots: 0 compute, 1 memory, 2..2+kNumCommKinds comm kinds, then straggler wait, then cpu.
  constexpr int kSlotMem = 1, kSlotComm = 2, kSlotWait = kSlotComm + kNumCommKinds, kSlotCpu = kSlotWait + 1,
                kSlots = kSlotCpu + 1;
  std::vector<std::tuple<std::int64_t, int, int>> events;  // (time, +1/-1, slot)
  for (std::size_t i = 0; i < G.ops.size(); ++i) {
    const Op& op = G.ops[i];
    if (op.worker != static_cast<std::uint32_t>(ref) || op.end_ns <= op.start_ns) continue;
    std::int64_t start = op.start_ns;
    if (cg.op_category[i] == kCatComm) {
      // Its wait for a later member, then the transfer.
      if (const std::int64_t wait = skew.wait(static_cast<std::uint32_t>(i), op.start_ns, op.end_ns); wait > 0) {
        events.emplace_back(start, +1, kSlotWait);
        events.emplace_back(start + wait, -1, kSlotWait);
        start += wait;
        if (start >= op.end_ns) continue;
      }
    }
    int slot = -1;
    switch (cg.op_category[i]) {
      case kCatCompute:
        slot = 0;
        break;
      case kCatMemory:
        slot = kSlotMem;
        break;
      case kCatCpu:
        slot = kSlotCpu;
        break;
      case kCatComm:
        slot = kSlotComm + cg.task_kind[op.task];
        break;
      default:
        break;
    }
    if (slot < 0) continue;
    events.emplace_back(start, +1, slot);
    events.emplace_back(op.end_ns, -1, slot);
  }
  std::sort(events.begin(), events.end());
  std::array<int, kSlots> active{};
  std::array<double, kSlots> sum{};
  double idle = 0;
  std::int64_t cursor = 0;
  for (const auto& [time, delta, slot] : events) {
    if (time > cursor) {
      const double dt = static_cast<double>(time - cursor) * 1e-9;
      if (active[0] > 0) {
        sum[0] += dt;
      } else if (active[kSlotMem] > 0) {
        sum[kSlotMem] += dt;
      } else {
        int comm = 0;
        for (int k = 0; k < kNumCommKinds; ++k) comm += active[static_cast<std::size_t>(kSlotComm + k)] > 0 ? 1 : 0;
        if (comm > 0) {
          for (int k = 0; k < kNumCommKinds; ++k)
            if (active[static_cast<std::size_t>(kSlotComm + k)] > 0)
              sum[static_cast<std::size_t>(kSlotComm + k)] += dt / comm;
        } else if (active[kSlotWait] > 0) {
          sum[kSlotWait] += dt;
        } else if (active[kSlotCpu] > 0) {
          sum[kSlotCpu] += dt;
        } else {
          idle += dt;
        }
      }
      cursor = time;
    }
    active[static_cast<std::size_t>(slot)] += delta;
  }
  idle += static_cast<double>(std::max<std::int64_t>(0, makespan - cursor)) * 1e-9;
  r.compute_s = sum[0];
  r.memory_s = sum[kSlotMem];
  r.cpu_s = sum[kSlotCpu];
  r.idle_s = idle;
  r.straggler_wait_s = sum[kSlotWait];
  if (const int slow = skew.slowest(); slow >= 0 && r.straggler_wait_s > 0) {
    // The rank the reference rank waited for longest, and both ranks' GPU compute time.
    StragglerReport& st = r.straggler;
    st.found = true;
    st.gpu = slow;
    st.node = cluster.node_of(slow);
    st.local_gpu = slow - st.node * cluster.gpus_per_node();
    st.cause = "other";
    st.slowest_replica = slow;
    st.breakdown_replica = ref;
    st.slowest_kernel_s = static_cast<double>(compute_ns[static_cast<std::size_t>(slow)]) * 1e-9;
    st.breakdown_kernel_s = static_cast<double>(compute_ns[static_cast<std::size_t>(ref)]) * 1e-9;
    st.tp_group_gpus = {slow};
  }
  std::array<int, kNumCommKinds> calls{};
  std::array<double, kNumCommKinds> bytes{};
  for (std::size_t k = 0; k < G.tasks.size(); ++k) {
    ++calls[cg.task_kind[k]];
    bytes[cg.task_kind[k]] += G.tasks[k].bytes;
  }
  calls[kBarrier] += static_cast<int>(cg.join_ops.size());  // zero-time barriers have no task
  for (int k = 0; k < kNumCommKinds; ++k) {
    if (calls[static_cast<std::size_t>(k)] == 0 && sum[static_cast<std::size_t>(kSlotComm + k)] == 0) continue;
    r.comm.push_back(ChakraCommTime{kCommKindNames[static_cast<std::size_t>(k)],
                                    sum[static_cast<std::size_t>(kSlotComm + k)], calls[static_cast<std::size_t>(k)],
                                    bytes[static_cast<std::size_t>(k)]});
  }

  // Busiest links over the step.
  const double total_s = r.iteration_time_s;
  std::vector<LinkUsage> links;
  for (sim::ResourceId id = 0; id < net.num_resources(); ++id) {
    const sim::ResourceStats st = net.stats(id);
    if (st.bytes_carried <= 0) continue;
    LinkUsage u;
    u.name = net.resource_name(id);
    u.capacity_bytes_per_s = net.capacity(id);
    u.bytes = st.bytes_carried;
    u.utilization = total_s > 0 ? st.bytes_carried / (net.capacity(id) * total_s) : 0.0;
    links.push_back(std::move(u));
  }
  std::stable_sort(links.begin(), links.end(),
                   [](const LinkUsage& a, const LinkUsage& c) { return a.utilization > c.utilization; });
  if (links.size() > 3) links.resize(3);
  r.busiest_links = std::move(links);

  if (trace != nullptr) {
    constexpr std::array<const char*, 5> kThreads = {"compute", "cpu", "collectives", "send/recv", "memory"};
    std::vector<std::uint32_t> name_ids;
    name_ids.reserve(cg.labels.size());
    for (const std::string& l : cg.labels) name_ids.push_back(trace->name(l));
    for (std::size_t i = 0; i < G.ops.size(); ++i) {
      const Op& op = G.ops[i];
      if (op.end_ns <= op.start_ns) continue;
      int thread = 0;
      switch (cg.op_category[i]) {
        case kCatCompute:
          thread = 0;
          break;
        case kCatCpu:
          thread = 1;
          break;
        case kCatMemory:
          thread = 4;
          break;
        case kCatComm:
          thread = cg.task_kind[op.task] == kSendRecv ? 3 : 2;
          break;
        default:
          continue;
      }
      const auto w = static_cast<std::int32_t>(op.worker);
      const std::uint32_t track = trace->track(w, "rank " + std::to_string(w) + " (GPU " + std::to_string(w) + ")",
                                               thread, kThreads[static_cast<std::size_t>(thread)]);
      trace->span(track, name_ids[op.label], sim::Time::from_ns(op.start_ns), sim::Time::from_ns(op.end_ns));
    }
    // The reference rank's waits for slower ranks, on a track of their own (as `traincast run`).
    for (const StragglerWalk::Wait& w : skew.waits()) {
      const std::uint32_t track = trace->track(
          ref, "rank " + std::to_string(ref) + " (GPU " + std::to_string(ref) + ")", 5, "waiting for slower GPUs");
      trace->span(track, trace->name("waiting for rank " + std::to_string(w.worker)), sim::Time::from_ns(w.start_ns),
                  sim::Time::from_ns(w.end_ns));
    }
  }
  return r;
}

}  // namespace traincast::models
