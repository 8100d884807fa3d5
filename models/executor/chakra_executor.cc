// Running a Chakra trace: its op graph (chakra_graph_builder.h) on the runner, then the report:
// step time, the reference rank's breakdown, communication totals, busiest links, trace spans.
#include "models/executor/chakra_executor.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/collectives/collective.h"
#include "models/executor/chakra_graph_builder.h"
#include "models/executor/straggler.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

using chakra_graph::kBarrier;
using chakra_graph::kCatComm;
using chakra_graph::kCatCompute;
using chakra_graph::kCatCpu;
using chakra_graph::kCatMemory;
using chakra_graph::kCommKindNames;
using chakra_graph::kNumCommKinds;
using chakra_graph::kSendRecv;

}  // namespace

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
