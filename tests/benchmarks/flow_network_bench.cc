// FlowNetwork max-min solver costs.
//
//   FullSolve            10k flows on 1k links, random paths of 3-6 distinct links: one batched
//                        solve of the whole (single, giant) component.
//   ArrivalDeparture/.   in that loaded network, one extra small flow arrives (re-solve) and
//                        departs (re-solve). "random": paths over all links (one giant component,
//                        so incremental == full); "clustered": paths inside groups of 8 links
//                        (125 components of ~80 flows: the selective update only re-solves one).
//   Churn/C              many small components: 4096 links in groups of 4 (rails), C flows in
//                        flight, each completion starts a new flow on 1-3 links of a random
//                        group. Items = completed flows (flows/s includes the event loop).
//   Churn_FullRecompute  the same with set_full_recompute(true), to show what selective update saves.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace {

using traincast::sim::FlowId;
using traincast::sim::FlowListener;
using traincast::sim::FlowNetwork;
using traincast::sim::ResourceId;
using traincast::sim::Simulator;
using traincast::sim::Time;

constexpr double kGBps = 1e9;

std::string name(int i) {
  std::string s = "l";
  s += std::to_string(i);
  return s;
}

/// A loaded network: `links` resources (10-100 GB/s), `flows` huge flows (they never finish
/// during the benchmark) on paths of 3-6 distinct links, drawn over all links (group == links)
/// or inside consecutive groups of `group` links.
struct Loaded {
  Simulator sim;
  FlowNetwork net{sim};
  std::mt19937_64 rng{7};

  Loaded(int links, int flows, int group) {
    std::uniform_real_distribution<double> cap(10.0, 100.0);
    for (int i = 0; i < links; ++i) net.add_resource(cap(rng) * kGBps, Time::from_ns(100), name(i));
    std::vector<ResourceId> path;
    for (int f = 0; f < flows; ++f) {
      random_path(links, group, path);
      net.start_flow(path, 1e18, nullptr, 0);
    }
  }

  void random_path(int links, int group, std::vector<ResourceId>& path) {
    const int len = std::uniform_int_distribution<int>(3, 6)(rng);
    const int groups = links / group;
    const int base = std::uniform_int_distribution<int>(0, groups - 1)(rng) * group;
    path.clear();
    while (static_cast<int>(path.size()) < len) {
      const auto r = static_cast<ResourceId>(base + std::uniform_int_distribution<int>(0, group - 1)(rng));
      if (std::find(path.begin(), path.end(), r) == path.end()) path.push_back(r);
    }
  }
};

void BM_FullSolve_10kFlows_1kLinks(benchmark::State& state) {
  std::uint64_t rounds = 0;
  std::uint64_t solves = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto loaded = std::make_unique<Loaded>(1000, 10000, 1000);  // starts flows; solve is deferred
    const auto before = loaded->net.counters();
    state.ResumeTiming();
    loaded->net.update();  // one batched solve of all 10k flows
    state.PauseTiming();
    rounds += loaded->net.counters().rounds - before.rounds;
    solves += loaded->net.counters().solves - before.solves;
    loaded.reset();
    state.ResumeTiming();
  }
  state.counters["rounds"] = benchmark::Counter(static_cast<double>(rounds), benchmark::Counter::kAvgIterations);
  state.counters["solves"] = benchmark::Counter(static_cast<double>(solves), benchmark::Counter::kAvgIterations);
}

/// Flags its completion.
struct DoneFlag : FlowListener {
  bool done = false;
  void on_flow_complete(FlowId, std::uint64_t) override { done = true; }
};

void arrival_departure(benchmark::State& state, int group) {
  Loaded loaded(1000, 10000, group);
  loaded.net.update();
  std::vector<ResourceId> path;
  DoneFlag flag;
  const auto before = loaded.net.counters();
  for (auto _ : state) {
    loaded.random_path(1000, group, path);
    flag.done = false;
    loaded.net.start_flow(path, 1e3, &flag, 0);
    loaded.net.update();                   // arrival: re-solve its component
    while (!flag.done) loaded.sim.step();  // departure at its drain date, then the listener
  }
  const auto after = loaded.net.counters();
  state.counters["flows_solved"] = benchmark::Counter(static_cast<double>(after.flows_solved - before.flows_solved),
                                                      benchmark::Counter::kAvgIterations);
  state.counters["rate_changes"] = benchmark::Counter(static_cast<double>(after.rate_changes - before.rate_changes),
                                                      benchmark::Counter::kAvgIterations);
}

void BM_ArrivalDeparture_Loaded_random(benchmark::State& state) { arrival_departure(state, 1000); }
void BM_ArrivalDeparture_Loaded_clustered(benchmark::State& state) { arrival_departure(state, 8); }

/// Self-sustaining churn: every completion starts a replacement flow.
class Churn : public FlowListener {
 public:
  Churn(int links, int group, bool full) : links_(links), group_(group) {
    net_.set_full_recompute(full);
    std::uniform_real_distribution<double> cap(10.0, 100.0);
    for (int i = 0; i < links; ++i) net_.add_resource(cap(rng_) * kGBps, Time::from_ns(500), name(i));
  }
  void start_one() {
    const int len = std::uniform_int_distribution<int>(1, 3)(rng_);
    const int base = std::uniform_int_distribution<int>(0, links_ / group_ - 1)(rng_) * group_;
    const int offset = static_cast<int>(rng_() % static_cast<std::uint64_t>(group_));
    path_.clear();
    for (int i = 0; i < len; ++i) path_.push_back(static_cast<ResourceId>(base + (offset + i) % group_));
    const double bytes = std::exp(std::uniform_real_distribution<double>(std::log(1e4), std::log(1e7))(rng_));
    net_.start_flow(path_, bytes, this, 0);
  }
  void on_flow_complete(FlowId, std::uint64_t) override {
    ++completed;
    start_one();
  }
  Simulator sim_;
  FlowNetwork net_{sim_};
  std::uint64_t completed = 0;

 private:
  int links_;
  int group_;
  std::mt19937_64 rng_{11};
  std::vector<ResourceId> path_;
};

void churn(benchmark::State& state, bool full) {
  const int in_flight = static_cast<int>(state.range(0));
  Churn c(4096, 4, full);
  for (int i = 0; i < in_flight; ++i) c.start_one();
  const std::uint64_t events0 = c.sim_.events_processed();
  std::uint64_t done0 = c.completed;
  for (auto _ : state) {
    const std::uint64_t target = c.completed + 1000;
    while (c.completed < target) c.sim_.step();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(c.completed - done0));
  state.counters["events_per_flow"] =
      static_cast<double>(c.sim_.events_processed() - events0) / static_cast<double>(c.completed - done0);
  state.counters["flows_solved_per_flow"] = static_cast<double>(c.net_.counters().flows_solved) /
                                            static_cast<double>(std::max<std::uint64_t>(1, c.completed));
}

void BM_Churn(benchmark::State& state) { churn(state, false); }
void BM_Churn_FullRecompute(benchmark::State& state) { churn(state, true); }

BENCHMARK(BM_FullSolve_10kFlows_1kLinks)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ArrivalDeparture_Loaded_random)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ArrivalDeparture_Loaded_clustered)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Churn)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Churn_FullRecompute)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
