#pragma once
// The power and thermal model of one simulation, on a second thread where its answers to the
// runner cannot depend on temperature (issue 18, "threads inside one run").
//
// The runner asks the model each worker's speed at every op start and end (stream_changed), and
// the model also integrates every GPU's power, temperature and energy for the report: about a
// quarter of an unfolded run's CPU time (docs/speed.md, "The power model on a second thread").
// When no GPU can reach its slowdown temperature and no cap binds (PowerThermalSetup::
// thermal_events false: clock_feedback_possible), a speed depends on the worker's activity, caps
// and clock factors only. Then PowerThermalRun answers the runner from a `speeds_only` model and
// logs each call with its simulated time; a `replay` model is told the log, in order, in blocks,
// by a task on the run's TBB arena (the thread that is free; the simulation's own thread when
// none is, or when more than PowerThermalLogSize::max_queued_blocks wait). Both models run the code of
// PowerThermalModel, so the report is the one-thread report, bit for bit, whatever the threads.
// Otherwise (a trace, a binding cap, a reachable slowdown, options.threads 1, one hardware
// thread) one `full` model does everything on the simulation's thread, as before.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <tbb/task_group.h>

#include "models/power/power_thermal.h"
#include "sim/simulator.h"

namespace traincast::models {

/// PowerThermalRun's log of calls: calls per block (24 bytes each), and the blocks that may wait
/// before the simulation's thread replays some itself. The defaults: 192 KiB blocks, at most
/// 4.5 MiB waiting; smaller ones only change who replays when (tests use them).
struct PowerThermalLogSize {
  std::size_t block_calls = 8192;
  std::size_t max_queued_blocks = 24;
};

class PowerThermalRun {
 public:
  using LogSize = PowerThermalLogSize;
  /// `threads`: options.threads (0 = the current arena's threads, 1 = this thread alone).
  PowerThermalRun(sim::Simulator& sim, PowerThermalSetup setup, int threads, LogSize log = {});
  PowerThermalRun(const PowerThermalRun&) = delete;
  PowerThermalRun& operator=(const PowerThermalRun&) = delete;
  ~PowerThermalRun();

  /// Whether the model runs on a second thread (the split above) for this setup and `threads`.
  static bool splits(const PowerThermalSetup& setup, int threads);
  /// What the runner talks to (run_op_graph's model).
  WorkerActivityModel& activity();
  /// After the run: the model that kept power, temperature and energy, every logged call told
  /// to it. Rethrows what the replay threw.
  PowerThermalModel& finished();

 private:
  class Split;
  std::optional<PowerThermalModel> full_;
  std::unique_ptr<Split> split_;
};

}  // namespace traincast::models
