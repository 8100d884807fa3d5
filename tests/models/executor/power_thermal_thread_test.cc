// The power and thermal model on a second thread (models/executor/power_thermal_thread.h): the
// split answers the runner and reports exactly what one full model does, bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <tbb/task_arena.h>

#include "models/executor/power_thermal_setup.h"
#include "models/executor/power_thermal_thread.h"
#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/power/power_model.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "tests/support/fixtures.h"

namespace traincast::models {
namespace {

/// Two nodes of 4 H100 in one rack, two workers (TP 2) a node; GPU 5 behind GPU 1 in the airflow
/// (another worker's: its inlet follows that GPU's power), GPU 2 at clock factor 0.8, GPU 6 with
/// its own supply air. Nothing can reach the slowdown temperature (thermal_events false).
PowerThermalSetup small_setup() {
  PowerThermalSetup s;
  PowerThermalSetup::Group g;
  g.curve = power_curve_of(find_gpu("H100-SXM5-80GB"));
  g.node.cpu_w_per_socket = 350;
  g.node.other_w = 1500;
  g.node.fan_max_w = 1000;
  g.node.psu_count = 6;
  g.node.psu_capacity_w = 3300;
  g.node_airflow_m3_per_s = 0.4;
  s.groups.push_back(g);
  for (int i = 0; i < 8; ++i) {
    PowerThermalSetup::Gpu gpu;
    gpu.global = i;
    gpu.worker = static_cast<std::uint32_t>(i / 2);
    gpu.node_kind = i / 4;
    gpu.actual_node = i / 4;
    gpu.rc = {0.05, 900.0 + 50.0 * i, 89.0};
    gpu.start_c = 30.0 + i;
    s.gpus.push_back(gpu);
  }
  s.gpus[5].upstream.push_back({1, 0.01});
  s.gpus[2].clock_factor = 0.8;
  s.gpus[6].supply_c = 30.0;
  s.worker_gpus = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  s.node_kinds = {{{0, 1, 2, 3}, 1, 0}, {{4, 5, 6, 7}, 1, 0}};
  s.kind_of_node = {0, 1};
  s.rep_node_of_gpu = {0, 0, 0, 0, 1, 1, 1, 1};
  s.nodes_per_rack = 4;
  s.gpus_per_node = 4;
  s.iterations = 3;
  s.periodic_correction = true;
  s.thermal_events = false;
  return s;
}

/// Makes a fixed random sequence of the runner's calls at random simulated times, and records
/// each speed the model answered. Iteration k's barrier and compute_done come after a third of
/// the calls each.
class Driver : public sim::EventHandler, public WorkerSpeedListener {
 public:
  Driver(sim::Simulator& sim, WorkerActivityModel& model, int calls) : sim_(sim), model_(model), calls_(calls) {
    model_.set_listener(this);
    std::mt19937_64 rng(7);
    std::int64_t t = 0;
    for (int k = 0; k < calls; ++k) {
      t += static_cast<std::int64_t>(rng() % 50'000);  // 0-50 us apart; some at one instant
      sim_.schedule_at(sim::Time::from_ns(t), this, static_cast<std::uint64_t>(k));
    }
  }
  void on_event(std::uint64_t tag) override {
    std::mt19937_64 rng(tag * 7919 + 1);
    const auto worker = static_cast<std::uint32_t>(rng() % 4);
    const auto stream = static_cast<unsigned>(rng() % 3);
    const bool busy = rng() % 3 != 0;
    const auto a = static_cast<Activity>(stream == 0 ? 2 + rng() % 2 : 1);
    const double fraction = stream == 0 && busy ? static_cast<double>(rng() % 1000) / 1000.0 : 0.0;
    speeds.push_back(model_.stream_changed(worker, stream, busy, a, fraction));
    const int third = calls_ / 3;
    if (third > 0 && (static_cast<int>(tag) + 1) % third == 0) {
      const int iteration = (static_cast<int>(tag) + 1) / third - 1;
      model_.compute_done(iteration);
      model_.barrier_done(iteration);
    }
  }
  void speed_changed(std::uint32_t worker, double speed) override { changes.push_back({worker, speed}); }

  std::vector<double> speeds;
  struct Change {
    std::uint32_t worker;
    double speed;
    bool operator==(const Change&) const = default;
  };
  std::vector<Change> changes;

 private:
  sim::Simulator& sim_;
  WorkerActivityModel& model_;
  int calls_;
};

struct Outcome {
  std::vector<double> speeds;
  std::vector<Driver::Change> changes;
  PowerReport power;
  ThermalReport thermal;
  std::vector<double> wait_s, periodic_c;
};

Outcome run(const PowerThermalSetup& setup, int threads, PowerThermalRun::LogSize log, bool* split = nullptr) {
  Outcome out;
  tbb::task_arena arena(2);
  arena.execute([&] {
    sim::Simulator sim;
    PowerThermalRun power(sim, setup, threads, log);
    if (split != nullptr) *split = PowerThermalRun::splits(setup, threads);
    Driver driver(sim, power.activity(), 3000);
    sim.run();
    PowerThermalModel& model = power.finished();
    const std::int64_t end_ns = sim.now().ns();
    model.finish(end_ns, 0.5, 100.0, out.power, out.thermal);
    out.speeds = driver.speeds;
    out.changes = driver.changes;
    out.wait_s = model.compute_wait_s();
    out.periodic_c = model.periodic_start_c();
  });
  return out;
}

void expect_same(const Outcome& a, const Outcome& b) {
  EXPECT_EQ(a.speeds, b.speeds);
  EXPECT_TRUE(a.changes == b.changes);
  EXPECT_TRUE(a.power == b.power);
  EXPECT_TRUE(a.thermal == b.thermal);
  EXPECT_EQ(a.wait_s, b.wait_s);
  EXPECT_EQ(a.periodic_c, b.periodic_c);
}

TEST(PowerThermalThread, SplitReportsWhatOneModelReportsBitForBit) {
  const PowerThermalSetup setup = small_setup();
  bool split_one = true, split_two = false;
  const Outcome one = run(setup, 1, {}, &split_one);
  EXPECT_FALSE(split_one);
  ASSERT_GT(one.changes.size(), 0u);  // the 0.8 GPU makes speeds move with the compute fraction
  // Blocks of 1 to 4,096 calls: the replay task, and the simulation's thread replaying itself
  // when 1 or 2 blocks wait (max_queued_blocks), all in the order logged.
  for (const PowerThermalRun::LogSize log : {PowerThermalRun::LogSize{1, 1}, PowerThermalRun::LogSize{16, 2},
                                             PowerThermalRun::LogSize{4096, 24}, PowerThermalRun::LogSize{}}) {
    const Outcome two = run(setup, 2, log, &split_two);
    EXPECT_TRUE(split_two);
    expect_same(one, two);
  }
  const Outcome all = run(setup, 0, {16, 2});  // 0: the arena's threads
  expect_same(one, all);
}

TEST(PowerThermalThread, OneModelWhereTemperatureCanFeedBackOrATraceIsKept) {
  PowerThermalSetup setup = small_setup();
  EXPECT_TRUE(PowerThermalRun::splits(setup, 2) || tbb::this_task_arena::max_concurrency() < 2);
  EXPECT_FALSE(PowerThermalRun::splits(setup, 1));
  setup.thermal_events = true;  // a GPU can reach its slowdown temperature: clocks follow it
  EXPECT_FALSE(PowerThermalRun::splits(setup, 2));
  setup = small_setup();
  setup.gpus[3].start_throttled = true;
  EXPECT_FALSE(PowerThermalRun::splits(setup, 2));
  setup = small_setup();
  sim::TraceRecorder trace;
  setup.trace = &trace;  // the trace's counters are written on the simulation's thread
  EXPECT_FALSE(PowerThermalRun::splits(setup, 2));
}

/// The whole run: an unfolded job with a slow GPU (the split's case) reports the same at
/// --threads 1 and 2.
TEST(PowerThermalThread, SlowGpuJobReportsTheSameAtOneAndTwoThreads) {
  Scenario sc = test_support::small_h100_job("thread-test");
  sc.options.fold_symmetric = false;
  sc.cluster.overrides.push_back({"node0/gpu3", 0.85, 0.0});
  ASSERT_FALSE(clock_feedback_possible(sc));  // else one model runs at any thread count
  sc.options.threads = 1;
  const Report a = simulate_training(sc);
  sc.options.threads = 2;
  const Report b = simulate_training(sc);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.events, b.events);
  EXPECT_TRUE(a.power == b.power);
  EXPECT_TRUE(a.thermal == b.thermal);
  EXPECT_GT(a.power.gpu_average_w, 0.0);
}

}  // namespace
}  // namespace traincast::models
