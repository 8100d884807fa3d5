// Running a Chakra trace: its op graph (chakra_graph_builder.h) on the runner, then the report:
// step time, the reference rank's breakdown, communication totals, busiest links, trace spans.
#include "models/executor/chakra_executor.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
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

// Breakdown slots: 0 compute, 1 memory, 2..2+kNumCommKinds comm kinds, then straggler wait, then cpu.
constexpr int kSlotMem = 1, kSlotComm = 2, kSlotWait = kSlotComm + kNumCommKinds, kSlotCpu = kSlotWait + 1,
              kSlots = kSlotCpu + 1;

/// The breakdown slot of comm kind `k` (0 <= k < kNumCommKinds), as an index.
constexpr std::size_t comm_slot(int k) { return static_cast<std::size_t>(kSlotComm) + static_cast<std::size_t>(k); }

/// A breakdown interval's start or end: (time [ns], +1 start / -1 end, slot).
using SlotEvent = std::tuple<std::int64_t, int, int>;

/// When the ranks of a run graph finish and how long they compute.
struct RankTimes {
  std::int64_t makespan = 0;             ///< last op's end over all ranks [ns]
  std::vector<std::int64_t> last_end;    ///< per rank: its last op's end [ns]
  std::vector<std::int64_t> compute_ns;  ///< per rank: GPU compute (COMP op) time [ns]
};

/// Seconds per breakdown slot on the reference rank, and the time nothing ran.
struct Breakdown {
  std::array<double, kSlots> sum{};
  double idle = 0;
};

RankTimes rank_times(const ChakraGraph& cg, int R) {
  const OpGraph& G = cg.graph;
  RankTimes out;
  out.last_end.assign(static_cast<std::size_t>(R), 0);
  for (const Op& op : G.ops) {
    out.makespan = std::max(out.makespan, op.end_ns);
    out.last_end[op.worker] = std::max(out.last_end[op.worker], op.end_ns);
  }
  // GPU compute (COMP op) time per rank.
  out.compute_ns.assign(static_cast<std::size_t>(R), 0);
  for (std::size_t i = 0; i < G.ops.size(); ++i)
    if (cg.op_category[i] == kCatCompute) out.compute_ns[G.ops[i].worker] += G.ops[i].end_ns - G.ops[i].start_ns;
  return out;
}

/// The rank that finishes last; among ranks that finish together the one with the least GPU
/// compute (the lowest on ties, so rank 0 when the ranks are alike), so that time lost to a
/// slower rank shows as waiting for it (as `traincast run` describes its fastest replica).
int reference_rank(const RankTimes& times, int R) {
  const auto& last_end = times.last_end;
  const auto& compute_ns = times.compute_ns;
  int ref = 0;
  for (int k = 1; k < R; ++k) {
    const auto kk = static_cast<std::size_t>(k), rr = static_cast<std::size_t>(ref);
    if (last_end[kk] > last_end[rr] || (last_end[kk] == last_end[rr] && compute_ns[kk] < compute_ns[rr])) ref = k;
  }
  return ref;
}

/// The reference rank's op intervals by slot, sorted; a collective's wait for a later member is
/// split off as straggler wait (found by `skew`).
std::vector<SlotEvent> breakdown_events(const ChakraGraph& cg, int ref, StragglerWalk& skew) {
  const OpGraph& G = cg.graph;
  std::vector<SlotEvent> events;
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
  return events;
}

/// Sweep over sorted `events` up to `makespan`: each moment goes to GPU compute, else memory,
/// else the communication kinds in flight (split evenly), else straggler wait, else CPU, else idle.
Breakdown sweep(const std::vector<SlotEvent>& events, std::int64_t makespan) {
  std::array<int, kSlots> active{};
  Breakdown b;
  auto& sum = b.sum;
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
        for (int k = 0; k < kNumCommKinds; ++k) comm += active[comm_slot(k)] > 0 ? 1 : 0;
        if (comm > 0) {
          for (int k = 0; k < kNumCommKinds; ++k)
            if (active[comm_slot(k)] > 0) sum[comm_slot(k)] += dt / comm;
        } else if (active[kSlotWait] > 0) {
          sum[kSlotWait] += dt;
        } else if (active[kSlotCpu] > 0) {
          sum[kSlotCpu] += dt;
        } else {
          b.idle += dt;
        }
      }
      cursor = time;
    }
    active[static_cast<std::size_t>(slot)] += delta;
  }
  b.idle += static_cast<double>(std::max<std::int64_t>(0, makespan - cursor)) * 1e-9;
  return b;
}

/// The rank the reference rank waited for longest, and both ranks' GPU compute time (when it
/// waited at all).
void fill_straggler(ChakraRunReport& r, const StragglerWalk& skew, const RankTimes& times, const Cluster& cluster) {
  const int ref = r.reference_rank;
  if (const int slow = skew.slowest(); slow >= 0 && r.straggler_wait_s > 0) {
    StragglerReport& st = r.straggler;
    st.found = true;
    st.gpu = slow;
    st.node = cluster.node_of(slow);
    st.local_gpu = slow - st.node * cluster.gpus_per_node();
    st.cause = "other";
    st.slowest_replica = slow;
    st.breakdown_replica = ref;
    st.slowest_kernel_s = static_cast<double>(times.compute_ns[static_cast<std::size_t>(slow)]) * 1e-9;
    st.breakdown_kernel_s = static_cast<double>(times.compute_ns[static_cast<std::size_t>(ref)]) * 1e-9;
    st.tp_group_gpus = {slow};
  }
}

/// Per communication kind that occurs: exposed time, calls and bytes, in report order.
std::vector<ChakraCommTime> comm_times(const ChakraGraph& cg, const Breakdown& b) {
  const OpGraph& G = cg.graph;
  std::array<int, kNumCommKinds> calls{};
  std::array<double, kNumCommKinds> bytes{};
  for (std::size_t k = 0; k < G.tasks.size(); ++k) {
    ++calls[cg.task_kind[k]];
    bytes[cg.task_kind[k]] += G.tasks[k].bytes;
  }
  calls[kBarrier] += static_cast<int>(cg.join_ops.size());  // zero-time barriers have no task
  std::vector<ChakraCommTime> out;
  for (int k = 0; k < kNumCommKinds; ++k) {
    if (calls[static_cast<std::size_t>(k)] == 0 && b.sum[comm_slot(k)] == 0) continue;
    out.push_back(ChakraCommTime{kCommKindNames[static_cast<std::size_t>(k)], b.sum[comm_slot(k)],
                                 calls[static_cast<std::size_t>(k)], bytes[static_cast<std::size_t>(k)]});
  }
  return out;
}

/// Busiest links over the step (`total_s` long): the top 3 by utilisation.
std::vector<LinkUsage> busiest_links(const sim::FlowNetwork& net, double total_s) {
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
  return links;
}

/// One span per op that takes time (process per rank, a thread per category), then the
/// reference rank's waits for slower ranks.
void write_trace(const ChakraGraph& cg, const StragglerWalk& skew, int ref, sim::TraceRecorder& trace) {
  const OpGraph& G = cg.graph;
  constexpr std::array<const char*, 5> kThreads = {"compute", "cpu", "collectives", "send/recv", "memory"};
  std::vector<std::uint32_t> name_ids;
  name_ids.reserve(cg.labels.size());
  for (const std::string& l : cg.labels) name_ids.push_back(trace.name(l));
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
    const std::uint32_t track = trace.track(w, "rank " + std::to_string(w) + " (GPU " + std::to_string(w) + ")", thread,
                                            kThreads[static_cast<std::size_t>(thread)]);
    trace.span(track, name_ids[op.label], sim::Time::from_ns(op.start_ns), sim::Time::from_ns(op.end_ns));
  }
  // The reference rank's waits for slower ranks, on a track of their own (as `traincast run`).
  for (const StragglerWalk::Wait& w : skew.waits()) {
    const std::uint32_t track = trace.track(ref, "rank " + std::to_string(ref) + " (GPU " + std::to_string(ref) + ")",
                                            5, "waiting for slower GPUs");
    trace.span(track, trace.name("waiting for rank " + std::to_string(w.worker)), sim::Time::from_ns(w.start_ns),
               sim::Time::from_ns(w.end_ns));
  }
}

}  // namespace

ChakraRunReport simulate_chakra(const Scenario& sc, const std::vector<ChakraRankTrace>& ranks,
                                sim::TraceRecorder* trace, const ChakraRunOptions& options) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  // Link and NIC overrides act through the network; a GPU clock needs the power model, which
  // traces do not run (their compute nodes take the compute model's time).
  if (!cluster.slowed_gpus().empty())
    throw std::invalid_argument(
        "cluster.overrides: clock_factor and power_cap_w are not applied to Chakra traces (expected "
        "bandwidth_factor or failed overrides only, or `traincast run` for a slow or capped GPU)");
  CollectiveEngine coll(sim, net, cluster);
  ChakraGraph cg = build_chakra_graph(sc, cluster, ranks, options);
  run_op_graph(sim, coll, cg.graph);
  const OpGraph& G = cg.graph;

  ChakraRunReport r = cg.counts;
  r.scenario = sc.name;
  r.gpu = cluster.gpu_spec(0).name;
  r.events = sim.events_processed();
  const int R = static_cast<int>(ranks.size());
  const RankTimes times = rank_times(cg, R);
  r.iteration_time_s = static_cast<double>(times.makespan) * 1e-9;
  const int ref = reference_rank(times, R);
  r.reference_rank = ref;

  // Waiting for slower ranks: the arrival skew of the reference rank's collectives (not
  // send/recv: a receive waiting for its sender is a pipeline bubble), as `traincast run` splits it.
  StragglerWalk skew(G, static_cast<std::uint32_t>(ref), [&](std::uint32_t d) {
    const Op& o = G.ops[d];
    return cg.op_category[d] == kCatComm && o.task != kNone && cg.task_kind[o.task] != kSendRecv &&
           G.tasks[o.task].participant_count >= 2;
  });

  // Breakdown on the reference rank: sweep over its ops' intervals.
  const Breakdown b = sweep(breakdown_events(cg, ref, skew), times.makespan);
  r.compute_s = b.sum[0];
  r.memory_s = b.sum[kSlotMem];
  r.cpu_s = b.sum[kSlotCpu];
  r.idle_s = b.idle;
  r.straggler_wait_s = b.sum[kSlotWait];
  fill_straggler(r, skew, times, cluster);
  r.comm = comm_times(cg, b);
  r.busiest_links = busiest_links(net, r.iteration_time_s);
  if (trace != nullptr) write_trace(cg, skew, ref, *trace);
  return r;
}

}  // namespace traincast::models
