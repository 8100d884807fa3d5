// Whole-run wall time and events/s of the largest published Megatron rows (SC21 Table 1):
// 145B on 1536 A100s and 1T on 3072 A100s. Run: build/release/tests/benchmarks/training_run_bench
// (each run takes seconds; 3 repetitions, the median is what to quote).
#include <benchmark/benchmark.h>

#include <string>

#include "models/executor/training_executor.h"
#include "models/io/scenario_io.h"

namespace {

traincast::models::Scenario sc21_case(const std::string& name, bool fold) {
  for (auto& c : traincast::io::load_validation_cases(std::string(TRAINCAST_SOURCE_DIR) +
                                                      "/scenarios/validation/megatron_sc21_table1.cases.textproto"))
    if (c.name == name) {
      c.scenario.options.fold_symmetric = fold;
      return c.scenario;
    }
  throw std::runtime_error("no case " + name);
}

void run(benchmark::State& state, const std::string& name, bool fold) {
  const auto sc = sc21_case(name, fold);
  double events = 0;
  for (auto _ : state) {
    const auto report = traincast::models::simulate_training(sc);
    events = static_cast<double>(report.events);
    benchmark::DoNotOptimize(report.iteration_time_s);
  }
  state.counters["events"] = events;
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Sc21_145B_1536Gpus(benchmark::State& s) { run(s, "sc21-145B", true); }
void BM_Sc21_1T_3072Gpus(benchmark::State& s) { run(s, "sc21-1T", true); }
void BM_Sc21_1T_3072Gpus_Unfolded(benchmark::State& s) { run(s, "sc21-1T", false); }

BENCHMARK(BM_Sc21_145B_1536Gpus)->Unit(benchmark::kSecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_Sc21_1T_3072Gpus)->Unit(benchmark::kSecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true);
BENCHMARK(BM_Sc21_1T_3072Gpus_Unfolded)->Unit(benchmark::kSecond)->Iterations(1)->Repetitions(1);

}  // namespace

BENCHMARK_MAIN();
