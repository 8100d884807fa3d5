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
//   PerCompletion_ManyComponents/N   N flows in flight over N/4 independent groups of 4 links
//                        (4 flows per group on average); each completion starts a replacement in
//                        a random group. The per-completion cost should not grow with N (only
//                        the heap's log N does): issue 18's "per-event cost flat in N".
//   PerCompletion_OneComponent/N     N flows in flight sharing one 8-link component (a PAT phase:
//                        one max-min component whose completions fall at different times); each
//                        completion re-solves all N: the cost grows with N.
//                        Both print cpu_ns_per_completion (thread CPU time, not wall: other load
//                        on the machine does not count) and x_smallest, its ratio to the smallest
//                        N of the same family measured in the same run.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
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

/// CPU time of this thread [ns] (POSIX clock_gettime).
double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

/// Churn on `links` links in groups of `group` with `in_flight` flows: each completion starts a
/// flow in a random group (Churn::start_one: 1-3 links, 1e4-1e7 bytes log-uniform).
void per_completion(benchmark::State& state, int links, int group) {
  const int in_flight = static_cast<int>(state.range(0));
  Churn c(links, group, false);
  for (int i = 0; i < in_flight; ++i) c.start_one();
  c.net_.update();  // the first solve of all N is not a completion's
  const std::uint64_t done0 = c.completed;
  const auto counters0 = c.net_.counters();
  double cpu_ns = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_ns();
    const std::uint64_t target = c.completed + 256;
    while (c.completed < target) c.sim_.step();
    cpu_ns += thread_cpu_ns() - t0;
  }
  const auto done = static_cast<double>(c.completed - done0);
  state.SetItemsProcessed(static_cast<std::int64_t>(done));
  state.counters["cpu_ns_per_completion"] = cpu_ns / done;
  state.counters["flows_solved_per_completion"] =
      static_cast<double>(c.net_.counters().flows_solved - counters0.flows_solved) / done;
}

void BM_PerCompletion_ManyComponents(benchmark::State& state) {
  const int groups = static_cast<int>(state.range(0)) / 4;  // 4 flows per group of 4 links
  per_completion(state, 4 * groups, 4);
}
void BM_PerCompletion_OneComponent(benchmark::State& state) { per_completion(state, 8, 8); }

BENCHMARK(BM_FullSolve_10kFlows_1kLinks)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ArrivalDeparture_Loaded_random)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ArrivalDeparture_Loaded_clustered)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Churn)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Churn_FullRecompute)->Arg(256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PerCompletion_ManyComponents)->RangeMultiplier(4)->Range(1 << 10, 1 << 14)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PerCompletion_OneComponent)->RangeMultiplier(4)->Range(1 << 10, 1 << 14)->Unit(benchmark::kMicrosecond);

/// Console output as usual, then x_smallest for each PerCompletion family: its
/// cpu_ns_per_completion at N over that at the family's smallest N, both from this run (medians
/// when --benchmark_repetitions is given).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& reports) override {
    ConsoleReporter::ReportRuns(reports);
    for (const Run& r : reports) {
      if (r.error_occurred || r.run_name.function_name.rfind("BM_PerCompletion_", 0) != 0) continue;
      const bool aggregate = r.run_type == Run::RT_Aggregate;
      if (aggregate && r.aggregate_name != "median") continue;
      const auto it = r.counters.find("cpu_ns_per_completion");
      if (it == r.counters.end()) continue;
      const std::string key = r.run_name.function_name + "/" + r.run_name.args;
      if (aggregate || !medians_.count(key)) per_n_[r.run_name.function_name][std::stol(r.run_name.args)] = it->second;
      if (aggregate) medians_[key] = true;
    }
  }
  void print_ratios() const {
    for (const auto& [family, by_n] : per_n_) {
      const double smallest = by_n.begin()->second;
      for (const auto& [n, ns] : by_n) {
        std::printf("%s/%ld: %.0f ns per completion, x_smallest = %.2f\n", family.c_str(), n, ns,
                    smallest > 0 ? ns / smallest : 0.0);
      }
    }
  }

 private:
  std::map<std::string, std::map<long, double>> per_n_;  ///< family -> N -> ns per completion
  std::map<std::string, bool> medians_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
