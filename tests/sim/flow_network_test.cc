// Tests for sim::FlowNetwork: max-min fair rates, exact completion times, latency, caps,
// statistics, errors, and randomized property + differential (incremental vs full) tests.
// Units: capacities in bytes/s, sizes in bytes, times in ns. GB/s = 1e9 bytes/s.

#include "sim/flow_network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "sim/simulator.h"

namespace traincast::sim {
namespace {

constexpr double kGBps = 1e9;

/// Records (completion time [ns], tag) for every flow.
class Recorder : public FlowListener {
 public:
  explicit Recorder(Simulator& sim) : sim_(sim) {}
  void on_flow_complete(FlowId, std::uint64_t tag) override { done[tag] = sim_.now().ns(); }
  std::map<std::uint64_t, std::int64_t> done;

 private:
  Simulator& sim_;
};

std::vector<ResourceId> path_of(std::initializer_list<ResourceId> ids) { return std::vector<ResourceId>(ids); }

TEST(FlowNetworkTest, TwoEqualFlowsShareOneLinkEqually) {
  // 1 GB/s link, two 1 MB flows at t = 0: each gets 0.5 GB/s, both drain at 1e6 / 5e8 s = 2 ms.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::zero(), "l");
  Recorder rec(sim);
  const auto p = path_of({l});
  const FlowId a = net.start_flow(p, 1e6, &rec, 1);
  const FlowId b = net.start_flow(p, 1e6, &rec, 2);
  EXPECT_DOUBLE_EQ(net.rate(a), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(b), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.load(l), 1 * kGBps);
  EXPECT_EQ(net.active_flows(), 2u);
  sim.run();
  EXPECT_EQ(rec.done.at(1), 2'000'000);
  EXPECT_EQ(rec.done.at(2), 2'000'000);
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_EQ(net.rate(a), 0.0);
}

TEST(FlowNetworkTest, ShorterFlowLeavesAndTheOtherSpeedsUp) {
  // 1 GB/s link; A = 1 MB, B = 3 MB at t = 0. Both at 0.5 GB/s until A drains at 2 ms
  // (B has sent 1 MB), then B alone at 1 GB/s: 2 MB more = 2 ms, so B completes at 4 ms.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::zero(), "l");
  Recorder rec(sim);
  const auto p = path_of({l});
  net.start_flow(p, 1e6, &rec, 1);
  const FlowId b = net.start_flow(p, 3e6, &rec, 2);
  sim.run(Time::from_ns(2'000'000));
  EXPECT_EQ(rec.done.at(1), 2'000'000);
  EXPECT_DOUBLE_EQ(net.rate(b), 1 * kGBps);
  EXPECT_NEAR(net.remaining_bytes(b), 2e6, 1e-6);
  sim.run();
  EXPECT_EQ(rec.done.at(2), 4'000'000);
}

TEST(FlowNetworkTest, LateArrivalSlowsTheFirstFlow) {
  // 1 GB/s link. A = 1 MB at t = 0 alone (1 GB/s). B = 1 MB arrives at 0.5 ms: A has 0.5 MB left.
  // Both at 0.5 GB/s: A drains after 1 ms more, at 1.5 ms; B has then sent 0.5 MB and finishes
  // the other 0.5 MB alone at 1 GB/s in 0.5 ms: B completes at 2.0 ms.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::zero(), "l");
  Recorder rec(sim);
  const auto p = path_of({l});
  net.start_flow(p, 1e6, &rec, 1);
  sim.run(Time::from_ns(500'000));
  net.start_flow(p, 1e6, &rec, 2);
  sim.run();
  EXPECT_EQ(rec.done.at(1), 1'500'000);
  EXPECT_EQ(rec.done.at(2), 2'000'000);
}

TEST(FlowNetworkTest, ClassicMaxMinBottleneckElsewhereLeavesCapacity) {
  // L1 = 10 GB/s carries a and b; L2 = 4 GB/s carries b and c.
  // Progressive filling: L2's share 4/2 = 2 < L1's 10/2 = 5, so b and c are fixed at 2 GB/s;
  // L1 has 10 - 2 = 8 GB/s left for a alone: a = 8 GB/s. Equal sharing would give a only 5.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l1 = net.add_resource(10 * kGBps, Time::zero(), "L1");
  const ResourceId l2 = net.add_resource(4 * kGBps, Time::zero(), "L2");
  const FlowId a = net.start_flow(path_of({l1}), 1e9, nullptr, 0);
  const FlowId b = net.start_flow(path_of({l1, l2}), 1e9, nullptr, 0);
  const FlowId c = net.start_flow(path_of({l2}), 1e9, nullptr, 0);
  EXPECT_DOUBLE_EQ(net.rate(a), 8 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(b), 2 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(c), 2 * kGBps);
  EXPECT_DOUBLE_EQ(net.load(l1), 10 * kGBps);
  EXPECT_DOUBLE_EQ(net.load(l2), 4 * kGBps);
}

TEST(FlowNetworkTest, BertsekasGallagerThreeLevels) {
  // Chain of links A(1), B(2), C(3) GB/s. Flows: f0 on A,B,C; f1 on A; f2 on B; f3 on C; f4 on C.
  // Shares: A 1/2, B 2/2, C 3/3 -> A saturates first at 0.5: f0 = f1 = 0.5.
  // B left 1.5 for f2 alone -> 1.5; C left 2.5 for f3, f4 -> 1.25 each. Next level is 1.25 (C),
  // then 1.5 (B).
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId a = net.add_resource(1 * kGBps, Time::zero(), "A");
  const ResourceId b = net.add_resource(2 * kGBps, Time::zero(), "B");
  const ResourceId c = net.add_resource(3 * kGBps, Time::zero(), "C");
  const FlowId f0 = net.start_flow(path_of({a, b, c}), 1e9, nullptr, 0);
  const FlowId f1 = net.start_flow(path_of({a}), 1e9, nullptr, 0);
  const FlowId f2 = net.start_flow(path_of({b}), 1e9, nullptr, 0);
  const FlowId f3 = net.start_flow(path_of({c}), 1e9, nullptr, 0);
  const FlowId f4 = net.start_flow(path_of({c}), 1e9, nullptr, 0);
  EXPECT_DOUBLE_EQ(net.rate(f0), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f1), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f2), 1.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f3), 1.25 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f4), 1.25 * kGBps);
}

TEST(FlowNetworkTest, RateCapBindsBelowTheFairShare) {
  // 10 GB/s link; a capped at 1 GB/s, b and c uncapped: a = 1, b = c = (10 - 1) / 2 = 4.5 GB/s.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(10 * kGBps, Time::zero(), "l");
  const auto p = path_of({l});
  const FlowId a = net.start_flow(p, 1e9, nullptr, 0, 1 * kGBps);
  const FlowId b = net.start_flow(p, 1e9, nullptr, 0);
  const FlowId c = net.start_flow(p, 1e9, nullptr, 0);
  EXPECT_DOUBLE_EQ(net.rate(a), 1 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(b), 4.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(c), 4.5 * kGBps);
}

TEST(FlowNetworkTest, RateCapAboveTheFairShareDoesNotBind) {
  // 10 GB/s link; two flows capped at 8 GB/s: fair share 5 < 8, so each gets 5 GB/s.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(10 * kGBps, Time::zero(), "l");
  const auto p = path_of({l});
  const FlowId a = net.start_flow(p, 1e9, nullptr, 0, 8 * kGBps);
  const FlowId b = net.start_flow(p, 1e9, nullptr, 0, 8 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(a), 5 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(b), 5 * kGBps);
}

TEST(FlowNetworkTest, EmptyPathFlowRunsAtItsCap) {
  // No resources: 1e3 bytes at a 1 GB/s cap drain in 1000 ns.
  Simulator sim;
  FlowNetwork net(sim);
  Recorder rec(sim);
  const FlowId f = net.start_flow({}, 1e3, &rec, 5, 1 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(f), 1 * kGBps);
  sim.run();
  EXPECT_EQ(rec.done.at(5), 1000);
}

TEST(FlowNetworkTest, LatencyIsAddedOncePerResource) {
  // Path L1 (100 ns) -> L2 (250 ns), both 1 GB/s: 1000 bytes drain in 1000 ns, the listener is
  // told at 1000 + 100 + 250 = 1350 ns. The flow leaves the links at 1000 ns.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l1 = net.add_resource(1 * kGBps, Time::from_ns(100), "L1");
  const ResourceId l2 = net.add_resource(1 * kGBps, Time::from_ns(250), "L2");
  Recorder rec(sim);
  const FlowId f = net.start_flow(path_of({l1, l2}), 1e3, &rec, 1);
  sim.run(Time::from_ns(1000));
  EXPECT_EQ(net.rate(f), 0.0);
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_TRUE(rec.done.empty());
  sim.run();
  EXPECT_EQ(rec.done.at(1), 1350);
  EXPECT_EQ(net.stats(l1).busy_ns, 1000.0);
}

TEST(FlowNetworkTest, CompletionTimesRoundUpToTheNanosecond) {
  // 3 GB/s link, one flow at a time:
  //   1 byte    -> 1/3 ns          -> 1 ns (a positive transfer never takes zero time)
  //   1000 bytes -> 333.33... ns   -> 334 ns
  //   3000 bytes -> 1000 ns exactly -> 1000 ns (no spurious +1)
  for (const auto& [bytes, expect_ns] :
       std::vector<std::pair<double, std::int64_t>>{{1.0, 1}, {1000.0, 334}, {3000.0, 1000}, {1e-6, 1}}) {
    Simulator sim;
    FlowNetwork net(sim);
    const ResourceId l = net.add_resource(3 * kGBps, Time::zero(), "l");
    Recorder rec(sim);
    net.start_flow(path_of({l}), bytes, &rec, 0);
    sim.run();
    EXPECT_EQ(rec.done.at(0), expect_ns) << bytes << " bytes";
  }
}

TEST(FlowNetworkTest, ZeroByteFlowCompletesAfterLatencyOnly) {
  // 0 bytes over L1 (100 ns) + L2 (250 ns): told at 350 ns; it takes no bandwidth, so the 1 MB
  // flow on L1 keeps the full 1 GB/s and completes at 1 ms (+100 ns latency).
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l1 = net.add_resource(1 * kGBps, Time::from_ns(100), "L1");
  const ResourceId l2 = net.add_resource(1 * kGBps, Time::from_ns(250), "L2");
  Recorder rec(sim);
  const FlowId z = net.start_flow(path_of({l1, l2}), 0.0, &rec, 1);
  const FlowId big = net.start_flow(path_of({l1}), 1e6, &rec, 2);
  EXPECT_EQ(net.rate(z), 0.0);
  EXPECT_DOUBLE_EQ(net.rate(big), 1 * kGBps);
  EXPECT_EQ(net.active_flows(), 1u);
  sim.run();
  EXPECT_EQ(rec.done.at(1), 350);
  EXPECT_EQ(rec.done.at(2), 1'000'100);
  EXPECT_EQ(net.stats(l1).flows, 2u);
  EXPECT_EQ(net.stats(l2).flows, 1u);
}

TEST(FlowNetworkTest, ZeroByteFlowWithoutLatencyCompletesAtNowThroughAnEvent) {
  Simulator sim;
  FlowNetwork net(sim);
  Recorder rec(sim);
  net.start_flow({}, 0.0, &rec, 3);
  EXPECT_TRUE(rec.done.empty());  // never re-entrant from start_flow
  sim.run();
  EXPECT_EQ(rec.done.at(3), 0);
}

TEST(FlowNetworkTest, StatsCountBytesBusyTimeAndFlows) {
  // 1 GB/s link, A = 1 MB at t = 0 (alone: 1 ms), idle, B = 2 MB at t = 3 ms (2 ms).
  // Mid-B at 4 ms: bytes = 1 MB + 1 MB, busy = 1 ms + 1 ms. At the end: 3 MB, 3 ms, 2 flows.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::zero(), "l");
  const auto p = path_of({l});
  net.start_flow(p, 1e6, nullptr, 0);
  sim.run(Time::from_ns(3'000'000));
  EXPECT_DOUBLE_EQ(net.stats(l).busy_ns, 1e6);
  net.start_flow(p, 2e6, nullptr, 0);
  sim.run(Time::from_ns(4'000'000));
  ResourceStats s = net.stats(l);
  EXPECT_DOUBLE_EQ(s.bytes_carried, 2e6);
  EXPECT_DOUBLE_EQ(s.busy_ns, 2e6);
  EXPECT_EQ(s.flows, 2u);
  sim.run();
  s = net.stats(l);
  EXPECT_DOUBLE_EQ(s.bytes_carried, 3e6);
  EXPECT_DOUBLE_EQ(s.busy_ns, 3e6);
  EXPECT_EQ(sim.now().ns(), 5'000'000);
}

TEST(FlowNetworkTest, ExtremeSizesNeitherLoopNorOverflow) {
  // 1e-300 bytes still takes 1 ns; 1e18 bytes at 1 byte/s (3e10 years) is beyond Time's range:
  // it keeps its bandwidth and is simply never completed, and the run ends.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId slow = net.add_resource(1.0, Time::zero(), "slow");
  const ResourceId fast = net.add_resource(1 * kGBps, Time::zero(), "fast");
  Recorder rec(sim);
  const FlowId huge = net.start_flow(path_of({slow}), 1e18, &rec, 1);
  net.start_flow(path_of({fast}), 1e-300, &rec, 2);
  sim.run();
  EXPECT_EQ(rec.done.at(2), 1);
  EXPECT_EQ(rec.done.count(1), 0u);
  EXPECT_EQ(net.rate(huge), 1.0);
  EXPECT_EQ(net.active_flows(), 1u);
  EXPECT_LT(sim.events_processed(), 10u);
}

TEST(FlowNetworkTest, ResourceAccessors) {
  Simulator sim;
  FlowNetwork net(sim);
  EXPECT_EQ(net.add_resource(25 * kGBps, Time::from_ns(500), "nvlink0"), 0u);
  EXPECT_EQ(net.add_resource(50 * kGBps, Time::zero(), "ib0"), 1u);
  EXPECT_EQ(net.num_resources(), 2u);
  EXPECT_EQ(net.resource_name(1), "ib0");
  EXPECT_EQ(net.capacity(0), 25 * kGBps);
  EXPECT_EQ(net.latency(0).ns(), 500);
  EXPECT_EQ(net.load(0), 0.0);
}

/// Starts a follow-up flow from the completion callback (the executor's usual pattern).
class Chainer : public FlowListener {
 public:
  Chainer(Simulator& sim, FlowNetwork& net, ResourceId r) : sim_(sim), net_(net), r_(r) {}
  void on_flow_complete(FlowId flow, std::uint64_t tag) override {
    log.emplace_back(sim_.now().ns(), flow, tag);
    if (tag < 3) {
      const ResourceId p[] = {r_};
      net_.start_flow(p, 1e3, this, tag + 1);
    }
  }
  std::vector<std::tuple<std::int64_t, FlowId, std::uint64_t>> log;

 private:
  Simulator& sim_;
  FlowNetwork& net_;
  ResourceId r_;
};

TEST(FlowNetworkTest, ListenerMayStartFlowsAndSlotsAreReused) {
  // 1 GB/s link, 10 ns latency: each 1000-byte flow takes 1000 + 10 ns and starts the next one.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::from_ns(10), "l");
  Chainer ch(sim, net, l);
  const ResourceId p[] = {l};
  net.start_flow(p, 1e3, &ch, 0);
  sim.run();
  using T = std::tuple<std::int64_t, FlowId, std::uint64_t>;
  // Slot 0 is freed before the listener is called, so every flow reuses id 0.
  EXPECT_EQ(ch.log, (std::vector<T>{{1010, 0, 0}, {2020, 0, 1}, {3030, 0, 2}, {4040, 0, 3}}));
}

TEST(FlowNetworkTest, ManySimultaneousCompletionsKeepStartOrder) {
  // 4 equal flows on one 4 GB/s link: all drain at the same ns; listeners are told in start order.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(4 * kGBps, Time::zero(), "l");
  std::vector<std::uint64_t> order;
  struct Ord : FlowListener {
    std::vector<std::uint64_t>* out;
    void on_flow_complete(FlowId, std::uint64_t tag) override { out->push_back(tag); }
  } ord;
  ord.out = &order;
  const ResourceId p[] = {l};
  for (std::uint64_t t : {7, 3, 9, 1}) net.start_flow(p, 1e6, &ord, t);
  sim.run();
  EXPECT_EQ(order, (std::vector<std::uint64_t>{7, 3, 9, 1}));
  EXPECT_EQ(sim.now().ns(), 1'000'000);  // 4 MB at 4 GB/s
}

TEST(FlowNetworkTest, ManyDueFlowsPastThePrefetchWindowKeepStartOrderAndBytes) {
  // complete_due_flows pops every flow due at an instant, then completes them in that order
  // while loading records ahead (kPrefetchAhead = 8): 45 flows due at once, on routes of 0, 1 and
  // 2 hops, with slot ids reused in scrambled order, must be told in start order and charge
  // every byte. Each flow k has its own 1 GB/s link d_k (for an empty route: a 1 GB/s cap), and
  // every third also crosses a shared 1 TB/s link s that never binds: 1 MB drains in 1 ms.
  Simulator sim;
  FlowNetwork net(sim);
  constexpr int kFlows = 45;
  std::vector<ResourceId> own;
  for (int k = 0; k < kFlows; ++k) own.push_back(net.add_resource(1 * kGBps, Time::zero(), "d" + std::to_string(k)));
  const ResourceId shared = net.add_resource(1000 * kGBps, Time::zero(), "s");
  std::vector<std::uint64_t> order;
  struct Ord : FlowListener {
    std::vector<std::uint64_t>* out;
    void on_flow_complete(FlowId, std::uint64_t tag) override { out->push_back(tag); }
  } ord;
  ord.out = &order;
  // Warm-up: flows of different sizes on the own links free their slots in a scrambled order.
  for (int k = 0; k < kFlows; ++k) {
    const ResourceId p[] = {own[static_cast<std::size_t>(k)]};
    net.start_flow(p, 1e3 * static_cast<double>((k * 17) % kFlows + 1), &ord, 1000 + static_cast<std::uint64_t>(k));
  }
  sim.run();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(kFlows));
  order.clear();
  const std::int64_t t0 = sim.now().ns();
  std::vector<std::uint64_t> tags;
  for (int k = 0; k < kFlows; ++k) {
    const std::uint64_t tag = static_cast<std::uint64_t>((k * 7) % kFlows);  // start order != tag order
    tags.push_back(tag);
    const auto i = static_cast<std::size_t>(k);
    if (k % 5 == 4) {
      net.start_flow({}, 1e6, &ord, tag, 1 * kGBps);
    } else if (k % 3 == 0) {
      const ResourceId p[] = {shared, own[i]};
      net.start_flow(p, 1e6, &ord, tag);
    } else {
      const ResourceId p[] = {own[i]};
      net.start_flow(p, 1e6, &ord, tag);
    }
  }
  sim.run();
  EXPECT_EQ(order, tags);
  EXPECT_EQ(sim.now().ns(), t0 + 1'000'000);
  int on_shared = 0;
  for (int k = 0; k < kFlows; ++k) {
    if (k % 5 != 4 && k % 3 == 0) ++on_shared;
    const double warm_up = 1e3 * static_cast<double>((k * 17) % kFlows + 1);
    EXPECT_DOUBLE_EQ(net.stats(own[static_cast<std::size_t>(k)]).bytes_carried, warm_up + (k % 5 == 4 ? 0.0 : 1e6));
  }
  EXPECT_DOUBLE_EQ(net.stats(shared).bytes_carried, 1e6 * on_shared);
  EXPECT_EQ(net.stats(shared).flows, static_cast<std::uint64_t>(on_shared));
  EXPECT_EQ(net.active_flows(), 0u);
}

TEST(FlowNetworkTest, RepeatedResourceCarriesTheFlowTwice) {
  // A path that crosses L twice uses 2x its rate there: alone on a 1 GB/s link it gets 0.5 GB/s.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::zero(), "l");
  const FlowId f = net.start_flow(path_of({l, l}), 1e6, nullptr, 0);
  EXPECT_DOUBLE_EQ(net.rate(f), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.load(l), 1 * kGBps);
  sim.run();
  EXPECT_DOUBLE_EQ(net.stats(l).bytes_carried, 2e6);
}

TEST(FlowNetworkTest, MultiPathFlowSplitsItsBytesAndRunsAtOneRate) {
  // A 7 MB multi-path flow m from NIC n (10 GB/s) over path A = n, a (3 GB/s, latency 500 ns)
  // carrying 3/4 of its bytes and path B = n, b (4 GB/s, latency 2 us) carrying 1/4; s0 (1.5 MB)
  // also crosses a. Weights: n 1, a 3/4, b 1/4. Shares: a 3 / (3/4 + 1) = 12/7 GB/s, b 4 / (1/4)
  // = 16, n 10: m = s0 = 12/7 GB/s. s0 drains at 1.5e6 / (12/7 GB/s) = 875 us; m has sent 1.5 MB,
  // and alone its share on a is 3 / (3/4) = 4 GB/s (b: 16, n: 10): the 5.5 MB left take 1375 us,
  // draining at 2250 us; told after its slowest path's latency, 2 us: 2,252,000 ns. Each link
  // carries its share of m's bytes: a 3/4 x 7 MB + 1.5 MB, b 1/4 x 7 MB, n 7 MB.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId n = net.add_resource(10 * kGBps, Time::zero(), "n");
  const ResourceId a = net.add_resource(3 * kGBps, Time::from_ns(500), "a");
  const ResourceId b = net.add_resource(4 * kGBps, Time::from_ns(2000), "b");
  const auto pa = path_of({n, a});
  const auto pb = path_of({n, b});
  const std::vector<std::span<const ResourceId>> paths{pa, pb};
  const FlowNetwork::MultiPathRoute route = net.multipath_route(paths, std::vector<double>{3.0, 1.0});
  EXPECT_EQ(route.resources, path_of({n, a, b}));
  EXPECT_EQ(route.weights, (std::vector<std::uint64_t>{MaxMinSolver::kUnitWeight, MaxMinSolver::kUnitWeight / 4 * 3,
                                                       MaxMinSolver::kUnitWeight / 4}));
  EXPECT_EQ(route.latency_ns, 2000);
  Recorder rec(sim);
  const FlowId m = net.start_multipath_flow(route, 7e6, &rec, 1);
  net.start_flow(path_of({a}), 1.5e6, &rec, 2);
  EXPECT_DOUBLE_EQ(net.rate(m), 12 * kGBps / 7);
  EXPECT_DOUBLE_EQ(net.load(a), 3 * kGBps);
  EXPECT_DOUBLE_EQ(net.load(b), 3 * kGBps / 7);
  sim.run();
  EXPECT_EQ(rec.done.at(2), 875'000 + 500);
  EXPECT_EQ(rec.done.at(1), 2'252'000);
  EXPECT_NEAR(net.stats(a).bytes_carried, 0.75 * 7e6 + 1.5e6, 1e-3);
  EXPECT_NEAR(net.stats(b).bytes_carried, 0.25 * 7e6, 1e-3);
  EXPECT_NEAR(net.stats(n).bytes_carried, 7e6, 1e-3);
  EXPECT_EQ(net.stats(n).flows, 1u);  // one flow, whatever its paths
  // A path that crosses a resource twice, and mismatched sizes, are refused.
  const auto twice = path_of({n, a, n});
  const std::vector<std::span<const ResourceId>> bad{twice};
  EXPECT_THROW(net.multipath_route(bad, std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(net.multipath_route(paths, std::vector<double>{1.0}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Errors: exact messages
// ---------------------------------------------------------------------------------------------

template <typename F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no std::invalid_argument>";
}

TEST(FlowNetworkTest, BadResourcesThrow) {
  Simulator sim;
  FlowNetwork net(sim);
  EXPECT_EQ(invalid_argument_message([&] { net.add_resource(0.0, Time::zero(), "pcie0"); }),
            "FlowNetwork::add_resource(\"pcie0\"): capacity_bytes_per_s must be finite and > 0");
  EXPECT_EQ(invalid_argument_message([&] { net.add_resource(-1.0, Time::zero(), "x"); }),
            "FlowNetwork::add_resource(\"x\"): capacity_bytes_per_s must be finite and > 0");
  EXPECT_EQ(
      invalid_argument_message([&] { net.add_resource(std::numeric_limits<double>::infinity(), Time::zero(), "x"); }),
      "FlowNetwork::add_resource(\"x\"): capacity_bytes_per_s must be finite and > 0");
  EXPECT_EQ(invalid_argument_message([&] { net.add_resource(std::nan(""), Time::zero(), "x"); }),
            "FlowNetwork::add_resource(\"x\"): capacity_bytes_per_s must be finite and > 0");
  EXPECT_EQ(invalid_argument_message([&] { net.add_resource(1.0, Time::from_ns(-5), "y"); }),
            "FlowNetwork::add_resource(\"y\"): latency must be >= 0");
  EXPECT_EQ(net.num_resources(), 0u);
  EXPECT_EQ(invalid_argument_message([&] { net.capacity(0); }),
            "FlowNetwork::capacity: unknown resource id 0 (network has 0)");
  EXPECT_EQ(invalid_argument_message([&] { net.stats(3); }),
            "FlowNetwork::stats: unknown resource id 3 (network has 0)");
}

TEST(FlowNetworkTest, BadFlowsThrow) {
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::zero(), "l");
  EXPECT_EQ(invalid_argument_message([&] {
              net.start_flow(path_of({l, 7}), 1.0, nullptr, 0);
            }),
            "FlowNetwork::start_flow: path[1] = 7 is not a resource id (network has 1)");
  EXPECT_EQ(invalid_argument_message([&] { net.start_flow(path_of({l}), -1.0, nullptr, 0); }),
            "FlowNetwork::start_flow: bytes must be finite and >= 0");
  EXPECT_EQ(invalid_argument_message([&] { net.start_flow(path_of({l}), std::nan(""), nullptr, 0); }),
            "FlowNetwork::start_flow: bytes must be finite and >= 0");
  EXPECT_EQ(invalid_argument_message(
                [&] { net.start_flow(path_of({l}), std::numeric_limits<double>::infinity(), nullptr, 0); }),
            "FlowNetwork::start_flow: bytes must be finite and >= 0");
  EXPECT_EQ(invalid_argument_message([&] { net.start_flow(path_of({l}), 1.0, nullptr, 0, 0.0); }),
            "FlowNetwork::start_flow: rate_cap_bytes_per_s must be > 0 (infinity = uncapped)");
  EXPECT_EQ(invalid_argument_message([&] { net.start_flow({}, 1.0, nullptr, 0); }),
            "FlowNetwork::start_flow: a flow with an empty path and bytes > 0 needs a finite rate_cap_bytes_per_s");
  EXPECT_EQ(invalid_argument_message([&] { net.rate(0); }), "FlowNetwork::rate: unknown flow id 0");
  EXPECT_EQ(net.active_flows(), 0u);  // nothing half-started
}

// ---------------------------------------------------------------------------------------------
// Randomized properties and differential test
// ---------------------------------------------------------------------------------------------

/// A random scenario: resources, and flows arriving over time (some from completion callbacks),
/// with periodic checks of the max-min invariants. Everything is drawn from one seeded RNG,
/// and the RNG is only consulted in an order fixed by the event order, so the same seed gives
/// the same scenario in both solver modes.
class RandomScenario : public FlowListener, public EventHandler {
 public:
  struct FlowInfo {
    std::vector<ResourceId> path;
    double bytes;
    double cap;
    bool active;
    std::vector<double> weights{};  ///< per path entry: fraction of the rate (empty: 1 each)
    double weight(std::size_t i) const { return weights.empty() ? 1.0 : weights[i]; }
  };

  /// multipath: a third of the flows are multi-path (FlowNetwork::MultiPathRoute, 2-3 paths).
  RandomScenario(std::uint64_t seed, bool full_recompute, bool with_checks = true, bool multipath = false)
      : rng_(seed), net_(sim_), multipath_(multipath) {
    net_.set_full_recompute(full_recompute);
    std::uniform_int_distribution<int> nres(3, 40);
    const int n = nres(rng_);
    std::uniform_real_distribution<double> cap(0.5, 50.0);
    std::uniform_int_distribution<std::int64_t> lat(0, 2000);
    for (int i = 0; i < n; ++i) {
      std::string name = "r";
      name += std::to_string(i);
      net_.add_resource(cap(rng_) * kGBps, Time::from_ns(lat(rng_)), name);
    }
    // Arrivals and checks as events.
    std::uniform_int_distribution<std::int64_t> when(0, 2'000'000);
    for (int i = 0; i < 150; ++i) sim_.schedule_at(Time::from_ns(when(rng_)), this, kArrival);
    for (int i = 0; i < 60; ++i) {
      const Time t = Time::from_ns(when(rng_));  // drawn either way: same scenario with or without checks
      if (with_checks) sim_.schedule_at(t, this, kCheck);
    }
    // Some simultaneous arrivals (a collective step starting many flows at once).
    const std::int64_t burst = when(rng_);
    for (int i = 0; i < 30; ++i) sim_.schedule_at(Time::from_ns(burst), this, kArrival);
  }

  void run() { sim_.run(); }

  void on_event(std::uint64_t tag) override {
    if (tag == kArrival) {
      start_random_flow();
    } else {
      check_invariants();
    }
  }

  void on_flow_complete(FlowId, std::uint64_t tag) override {
    completions.emplace_back(sim_.now().ns(), tag);
    flows[tag].active = false;
    if (std::uniform_int_distribution<int>(0, 3)(rng_) == 0) start_random_flow();  // chained flow
  }

  void start_random_flow() {
    if (multipath_ && std::uniform_int_distribution<int>(0, 2)(rng_) == 0) return start_random_multipath_flow();
    const auto n = static_cast<ResourceId>(net_.num_resources());
    std::uniform_int_distribution<int> len(0, 5);
    std::uniform_int_distribution<ResourceId> res(0, n - 1);
    FlowInfo info;
    // Mostly local paths (small components), sometimes long ones (merging components).
    const int l = len(rng_);
    const ResourceId base = res(rng_);
    const bool local = std::uniform_int_distribution<int>(0, 2)(rng_) != 0;
    for (int i = 0; i < l; ++i) {
      info.path.push_back(local ? (base + std::uniform_int_distribution<ResourceId>(0, 2)(rng_)) % n : res(rng_));
    }
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng_);
    info.bytes = kind == 0 ? 0.0 : std::exp(std::uniform_real_distribution<double>(std::log(1.0), std::log(1e8))(rng_));
    info.cap = (kind <= 2 || info.path.empty()) ? std::uniform_real_distribution<double>(0.1, 20.0)(rng_) * kGBps
                                                : std::numeric_limits<double>::infinity();
    info.active = info.bytes > 0.0;
    const std::uint64_t tag = flows.size();
    flows.push_back(info);
    const FlowId id = net_.start_flow(info.path, info.bytes, this, tag, info.cap);
    ids.push_back(id);
  }

  /// 2-3 paths of 1-3 distinct resources near one base resource, fractions 0.1-1 of the bytes.
  void start_random_multipath_flow() {
    const auto n = static_cast<ResourceId>(net_.num_resources());
    const ResourceId base = std::uniform_int_distribution<ResourceId>(0, n - 1)(rng_);
    std::vector<std::vector<ResourceId>> paths(std::uniform_int_distribution<std::size_t>(2, 3)(rng_));
    std::vector<double> fractions;
    for (auto& p : paths) {
      const int len = std::uniform_int_distribution<int>(1, 3)(rng_);
      for (int i = 0; i < len; ++i) {
        const ResourceId r = (base + std::uniform_int_distribution<ResourceId>(0, 3)(rng_)) % n;
        if (std::find(p.begin(), p.end(), r) == p.end()) p.push_back(r);
      }
      fractions.push_back(std::uniform_real_distribution<double>(0.1, 1.0)(rng_));
    }
    const std::vector<std::span<const ResourceId>> spans(paths.begin(), paths.end());
    const FlowNetwork::MultiPathRoute route = net_.multipath_route(spans, fractions);
    FlowInfo info;
    info.path = route.resources;
    for (const std::uint64_t w : route.weights) info.weights.push_back(MaxMinSolver::weight_fraction(w));
    info.bytes = std::exp(std::uniform_real_distribution<double>(std::log(1.0), std::log(1e8))(rng_));
    info.cap = std::uniform_int_distribution<int>(0, 2)(rng_) == 0
                   ? std::uniform_real_distribution<double>(0.1, 20.0)(rng_) * kGBps
                   : std::numeric_limits<double>::infinity();
    info.active = true;
    const std::uint64_t tag = flows.size();
    flows.push_back(info);
    ids.push_back(net_.start_multipath_flow(route, info.bytes, this, tag, info.cap));
  }

  void check_invariants() {
    ++checks;
    const auto n = static_cast<ResourceId>(net_.num_resources());
    std::vector<double> load(n, 0.0);
    std::vector<double> max_rate(n, 0.0);
    for (std::size_t t = 0; t < flows.size(); ++t) {
      if (!flows[t].active) continue;
      const double r = net_.rate(ids[t]);
      observed_rates.push_back(r);
      if (r == 0.0) {  // drained, listener not told yet (path latency): holds no bandwidth
        EXPECT_EQ(net_.remaining_bytes(ids[t]), 0.0);
        continue;
      }
      EXPECT_LE(r, flows[t].cap * (1 + 1e-12));
      for (std::size_t i = 0; i < flows[t].path.size(); ++i) {
        const ResourceId x = flows[t].path[i];
        load[x] += r * flows[t].weight(i);
        max_rate[x] = std::max(max_rate[x], r);
      }
    }
    for (ResourceId x = 0; x < n; ++x) {
      EXPECT_LE(load[x], net_.capacity(x) * (1 + 1e-9)) << "resource " << x;
      EXPECT_NEAR(net_.load(x), load[x], 1e-9 * net_.capacity(x));
    }
    // Max-min optimality: every active flow is at its cap, or crosses a saturated resource on
    // which no flow gets more than it does (its bottleneck).
    for (std::size_t t = 0; t < flows.size(); ++t) {
      if (!flows[t].active) continue;
      const double r = net_.rate(ids[t]);
      if (r == 0.0 || r >= flows[t].cap * (1 - 1e-9)) continue;
      bool has_bottleneck = false;
      for (const ResourceId x : flows[t].path) {
        const bool saturated = load[x] >= net_.capacity(x) * (1 - 1e-9);
        if (saturated && r >= max_rate[x] * (1 - 1e-9)) has_bottleneck = true;
      }
      EXPECT_TRUE(has_bottleneck) << "flow " << t << " rate " << r;
    }
  }

  static constexpr std::uint64_t kArrival = 1;
  static constexpr std::uint64_t kCheck = 2;

  std::mt19937_64 rng_;
  Simulator sim_;
  FlowNetwork net_;
  bool multipath_ = false;
  std::vector<FlowInfo> flows;
  std::vector<FlowId> ids;
  std::vector<std::pair<std::int64_t, std::uint64_t>> completions;
  std::vector<double> observed_rates;
  int checks = 0;
};

TEST(FlowNetworkPropertyTest, RandomNetworksKeepInvariantsAndConserveBytes) {
  // Seeds 26-40: a third of the flows are multi-path (weighted loads, bytes by weight).
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomScenario sc(seed, /*full_recompute=*/false, /*with_checks=*/true, /*multipath=*/seed > 25);
    sc.run();
    EXPECT_EQ(sc.checks, 60);
    // Every flow completed exactly once, no earlier than its latency allows.
    ASSERT_EQ(sc.completions.size(), sc.flows.size());
    for (const auto& f : sc.flows) EXPECT_FALSE(f.active);
    EXPECT_EQ(sc.net_.active_flows(), 0u);
    // Bytes conserved: sum of resource bytes == sum over flows of bytes x path length.
    double expect = 0.0;
    for (const auto& f : sc.flows) {
      for (std::size_t i = 0; i < f.path.size(); ++i) expect += f.bytes * f.weight(i);
    }
    double carried = 0.0;
    for (ResourceId x = 0; x < sc.net_.num_resources(); ++x) carried += sc.net_.stats(x).bytes_carried;
    EXPECT_NEAR(carried, expect, 1e-9 * expect);
    // Flows counted per crossing.
    std::uint64_t crossings = 0;
    for (const auto& f : sc.flows) crossings += f.path.size();
    std::uint64_t counted = 0;
    for (ResourceId x = 0; x < sc.net_.num_resources(); ++x) counted += sc.net_.stats(x).flows;
    EXPECT_EQ(counted, crossings);
  }
}

TEST(FlowNetworkPropertyTest, IncrementalAndFullRecomputeAreIdentical) {
  // Seeds 125-139: a third of the flows are multi-path.
  for (std::uint64_t seed = 100; seed < 140; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomScenario inc(seed, /*full_recompute=*/false, /*with_checks=*/true, /*multipath=*/seed >= 125);
    RandomScenario full(seed, /*full_recompute=*/true, /*with_checks=*/true, /*multipath=*/seed >= 125);
    inc.run();
    full.run();
    ASSERT_EQ(inc.flows.size(), full.flows.size());
    EXPECT_EQ(inc.completions, full.completions);        // same ns, same order
    EXPECT_EQ(inc.observed_rates, full.observed_rates);  // bit-identical rates at every check
    for (ResourceId x = 0; x < inc.net_.num_resources(); ++x) {
      // Same pieces, summed in a different order (component discovery order): equal to rounding.
      EXPECT_NEAR(inc.net_.stats(x).bytes_carried, full.net_.stats(x).bytes_carried,
                  1e-12 * full.net_.stats(x).bytes_carried);
      EXPECT_EQ(inc.net_.stats(x).busy_ns, full.net_.stats(x).busy_ns);
    }
    // The point of the incremental mode: it re-solves fewer flows.
    EXPECT_LE(inc.net_.counters().flows_solved, full.net_.counters().flows_solved);
  }
}

TEST(FlowNetworkPropertyTest, ObservingDoesNotChangeResults) {
  // Queries answer "as of now" without touching the committed state: the same scenario with
  // 60 rounds of rate()/load() queries and without them completes identically, bit for bit.
  for (std::uint64_t seed = 200; seed < 215; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomScenario watched(seed, /*full_recompute=*/false, /*with_checks=*/true);
    RandomScenario quiet(seed, /*full_recompute=*/false, /*with_checks=*/false);
    watched.run();
    quiet.run();
    EXPECT_EQ(watched.completions, quiet.completions);
    for (ResourceId x = 0; x < quiet.net_.num_resources(); ++x) {
      EXPECT_EQ(watched.net_.stats(x).bytes_carried, quiet.net_.stats(x).bytes_carried);
      EXPECT_EQ(watched.net_.stats(x).busy_ns, quiet.net_.stats(x).busy_ns);
    }
    EXPECT_EQ(watched.net_.counters().solves, quiet.net_.counters().solves);
  }
}

/// Probes the network from an event that fires at the drain instant, before the network's wake.
class Probe : public EventHandler {
 public:
  Probe(FlowNetwork& net, FlowId a, FlowId b, ResourceId l) : net_(net), a_(a), b_(b), l_(l) {}
  void on_event(std::uint64_t) override {
    rate_a = net_.rate(a_);
    rate_b = net_.rate(b_);
    active = net_.active_flows();
    load = net_.load(l_);
    stats = net_.stats(l_);
    remaining_a = net_.remaining_bytes(a_);
    remaining_b = net_.remaining_bytes(b_);
  }
  double rate_a = -1, rate_b = -1, load = -1, remaining_a = -1, remaining_b = -1;
  std::size_t active = 99;
  ResourceStats stats;

 private:
  FlowNetwork& net_;
  FlowId a_, b_;
  ResourceId l_;
};

TEST(FlowNetworkTest, QueriesAtTheDrainInstantSeeTheDeparture) {
  // 1 GB/s link, A = 1 MB and B = 3 MB at t = 0 (0.5 GB/s each). A drains at 2 ms. A probe
  // scheduled for 2 ms *before* the flows exist fires before the network's wake, yet sees the
  // network as of 2 ms: A gone (rate 0, nothing left), B alone at 1 GB/s with 2 MB left, the
  // link carried 1 MB (A) + 1 MB (B). Completion times are those of the unobserved run (B: 4 ms).
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(1 * kGBps, Time::zero(), "l");
  Recorder rec(sim);
  const auto p = path_of({l});
  Probe probe(net, 0, 1, l);
  sim.schedule_at(Time::from_ns(2'000'000), &probe, 0);
  const FlowId a = net.start_flow(p, 1e6, &rec, 1);
  const FlowId b = net.start_flow(p, 3e6, &rec, 2);
  ASSERT_EQ(a, 0u);
  ASSERT_EQ(b, 1u);
  sim.run();
  EXPECT_EQ(probe.rate_a, 0.0);
  EXPECT_DOUBLE_EQ(probe.rate_b, 1 * kGBps);
  EXPECT_EQ(probe.active, 1u);
  EXPECT_DOUBLE_EQ(probe.load, 1 * kGBps);
  EXPECT_DOUBLE_EQ(probe.stats.bytes_carried, 2e6);
  EXPECT_EQ(probe.remaining_a, 0.0);
  EXPECT_NEAR(probe.remaining_b, 2e6, 1e-6);
  EXPECT_EQ(rec.done.at(1), 2'000'000);
  EXPECT_EQ(rec.done.at(2), 4'000'000);
}

TEST(FlowNetworkTest, QueryBetweenSameInstantArrivalsDoesNotSplitTheSolve) {
  // Three flows started at t = 0 with a rate() query after each: one solve at t = 0, not three.
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(3 * kGBps, Time::zero(), "l");
  const auto p = path_of({l});
  const FlowId a = net.start_flow(p, 1e6, nullptr, 0);
  EXPECT_DOUBLE_EQ(net.rate(a), 3 * kGBps);
  const FlowId b = net.start_flow(p, 1e6, nullptr, 0);
  EXPECT_DOUBLE_EQ(net.rate(a), 1.5 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(b), 1.5 * kGBps);
  net.start_flow(p, 1e6, nullptr, 0);
  EXPECT_DOUBLE_EQ(net.rate(a), 1 * kGBps);
  EXPECT_EQ(net.counters().solves, 0u);  // only views so far
  sim.run();
  EXPECT_EQ(net.counters().solves, 1u);  // t = 0 (three arrivals); at 1 ms nothing is left to solve
  EXPECT_EQ(sim.now().ns(), 1'000'000);
}

TEST(FlowNetworkPropertyTest, DrainTimesMatchAnIndependentFluidIntegration) {
  // One link shared by flows of different sizes, all starting at 0: processor sharing has a
  // closed form. Sizes s_1 <= ... <= s_n on capacity C: flow k drains at
  // t_k = t_{k-1} + (s_k - s_{k-1}) * (n - k + 1) / C.
  const std::vector<double> sizes = {1e5, 3e5, 3e5, 7e5, 2e6};
  const double c = 2 * kGBps;
  Simulator sim;
  FlowNetwork net(sim);
  const ResourceId l = net.add_resource(c, Time::zero(), "l");
  Recorder rec(sim);
  for (std::size_t i = 0; i < sizes.size(); ++i) net.start_flow(path_of({l}), sizes[i], &rec, i);
  sim.run();
  double t_s = 0.0;
  double prev = 0.0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    t_s += (sizes[k] - prev) * static_cast<double>(sizes.size() - k) / c;
    prev = sizes[k];
    EXPECT_EQ(rec.done.at(k), static_cast<std::int64_t>(std::ceil(t_s * 1e9 - 1e-6))) << "flow " << k;
  }
}

}  // namespace
}  // namespace traincast::sim
