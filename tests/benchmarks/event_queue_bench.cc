// EventQueue throughput against a naive std::priority_queue of (time, seq, std::function<void()>),
// in the same run. Prints "ratio baseline/ours = X" (CPU time per operation) per workload and
// size, from medians when --benchmark_repetitions is given (e.g. --benchmark_repetitions=5).
//
// Workloads (per operation = one pop + dispatch + one push, or one push + one pop):
//   Hold/N       classic "hold" model: N pending events; pop the earliest, call it, push a new one
//                at its time + a random delay (pre-drawn, same for both queues).
//   FillDrain/N  push N events at random times, then pop and call all of them.
// The baseline's closure captures a pointer and a tag (16 bytes, small enough for libstdc++'s
// std::function local buffer: the baseline's most favourable case, no heap allocation).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace {

using traincast::sim::Event;
using traincast::sim::EventHandler;
using traincast::sim::EventQueue;
using traincast::sim::Time;

/// Random delays in [0, 1000) ns with many ties, drawn once.
const std::vector<std::int64_t>& delays() {
  static const std::vector<std::int64_t> d = [] {
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> dist(0, 999);
    std::vector<std::int64_t> v(1 << 16);
    for (auto& x : v) x = dist(rng);
    return v;
  }();
  return d;
}

class Counter : public EventHandler {
 public:
  void on_event(std::uint64_t tag) override { sum += tag; }
  std::uint64_t sum = 0;
};

struct BaselineEntry {
  std::int64_t at;
  std::uint64_t seq;
  std::function<void()> fn;
};
struct BaselineLater {
  bool operator()(const BaselineEntry& a, const BaselineEntry& b) const {
    return a.at > b.at || (a.at == b.at && a.seq > b.seq);
  }
};
using BaselineQueue = std::priority_queue<BaselineEntry, std::vector<BaselineEntry>, BaselineLater>;

void BM_Ours_Hold(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto& d = delays();
  Counter c;
  EventQueue q;
  q.reserve(n);
  for (std::size_t i = 0; i < n; ++i) q.push(Time::from_ns(d[i % d.size()]), &c, i);
  std::size_t k = 0;
  for (auto _ : state) {
    const Event e = q.pop();
    e.handler->on_event(e.tag);
    q.push(e.at + Time::from_ns(d[k++ & (d.size() - 1)]), e.handler, e.tag);
  }
  benchmark::DoNotOptimize(c.sum);
  state.SetItemsProcessed(state.iterations());
}

void BM_Baseline_Hold(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto& d = delays();
  Counter c;
  BaselineQueue q;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Counter* cp = &c;
    const std::uint64_t tag = i;
    q.push(BaselineEntry{d[i % d.size()], seq++, [cp, tag] { cp->on_event(tag); }});
  }
  std::size_t k = 0;
  for (auto _ : state) {
    BaselineEntry e = q.top();  // the naive way: copy, pop, call
    q.pop();
    e.fn();
    q.push(BaselineEntry{e.at + d[k++ & (d.size() - 1)], seq++, std::move(e.fn)});
  }
  benchmark::DoNotOptimize(c.sum);
  state.SetItemsProcessed(state.iterations());
}

void BM_Ours_FillDrain(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto& d = delays();
  Counter c;
  EventQueue q;
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i)
      q.push(Time::from_ns(d[i & (d.size() - 1)] * 7 + static_cast<std::int64_t>(i)), &c, i);
    while (!q.empty()) {
      const Event e = q.pop();
      e.handler->on_event(e.tag);
    }
  }
  benchmark::DoNotOptimize(c.sum);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

void BM_Baseline_FillDrain(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto& d = delays();
  Counter c;
  BaselineQueue q;
  std::uint64_t seq = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) {
      Counter* cp = &c;
      const std::uint64_t tag = i;
      q.push(BaselineEntry{d[i & (d.size() - 1)] * 7 + static_cast<std::int64_t>(i), seq++,
                           [cp, tag] { cp->on_event(tag); }});
    }
    while (!q.empty()) {
      BaselineEntry e = q.top();
      q.pop();
      e.fn();
    }
  }
  benchmark::DoNotOptimize(c.sum);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

BENCHMARK(BM_Ours_Hold)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK(BM_Baseline_Hold)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK(BM_Ours_FillDrain)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK(BM_Baseline_FillDrain)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

/// Console output as usual, plus the per-item CPU time of every run (median when repeated).
/// CPU time rather than wall time: the ratio should not depend on other load on the machine.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& reports) override {
    ConsoleReporter::ReportRuns(reports);
    for (const Run& r : reports) {
      if (r.error_occurred) continue;
      const bool aggregate = r.run_type == Run::RT_Aggregate;
      if (aggregate && r.aggregate_name != "median") continue;
      // name without the "_median" suffix: function_name/args
      const std::string key = r.run_name.function_name + "/" + r.run_name.args;
      if (aggregate || !medians_.count(key)) times_[key] = r.GetAdjustedCPUTime();
      if (aggregate) medians_[key] = true;
    }
  }
  void print_ratios() const {
    for (const auto& [key, ours] : times_) {
      const std::string prefix = "BM_Ours_";
      if (key.rfind(prefix, 0) != 0) continue;
      const std::string base_key = "BM_Baseline_" + key.substr(prefix.size());
      const auto it = times_.find(base_key);
      if (it == times_.end() || ours <= 0.0) continue;
      std::printf("ratio baseline/ours = %.2f  (%s)\n", it->second / ours, key.substr(prefix.size()).c_str());
    }
  }

 private:
  std::map<std::string, double> times_;
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
