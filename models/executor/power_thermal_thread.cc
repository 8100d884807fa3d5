#include "models/executor/power_thermal_thread.h"

#include <algorithm>
#include <utility>

#include <tbb/task_arena.h>

namespace traincast::models {

namespace {

/// One call the runner made, with the simulated time it was made at.
struct Call {
  enum Kind : std::uint8_t { stream_changed, barrier_done, compute_done };
  std::int64_t now_ns = 0;
  double compute_fraction = 0;
  std::uint32_t worker_or_iteration = 0;
  Kind kind = stream_changed;
  std::uint8_t stream = 0;
  bool busy = false;
  Activity activity = Activity::idle;
};

}  // namespace

/// The two models of the split (power_thermal_thread.h) and the log between them.
class PowerThermalRun::Split final : public WorkerActivityModel {
 public:
  Split(sim::Simulator& sim, const PowerThermalSetup& setup, LogSize log)
      : sim_(sim),
        log_(log),
        speeds_(sim, setup, PowerThermalRole::speeds_only),
        replay_(sim, setup, PowerThermalRole::replay) {
    log_.block_calls = std::max<std::size_t>(1, log_.block_calls);
    current_.reserve(log_.block_calls);
  }
  Split(const Split&) = delete;
  Split& operator=(const Split&) = delete;
  ~Split() noexcept override {
    // A run that threw leaves the replay task to finish; its own error goes with it.
    try {
      tasks_.wait();
    } catch (...) {  // NOLINT(bugprone-empty-catch): the run's own exception is on its way out
    }
  }

  double stream_changed(std::uint32_t worker, unsigned stream, bool busy, Activity a,
                        double compute_fraction) override {
    log({sim_.now().ns(), compute_fraction, worker, Call::stream_changed, static_cast<std::uint8_t>(stream), busy, a});
    return speeds_.stream_changed(worker, stream, busy, a, compute_fraction);
  }
  void barrier_done(int iteration) override {
    log({sim_.now().ns(), 0.0, static_cast<std::uint32_t>(iteration), Call::barrier_done, 0, false, Activity::idle});
  }
  void compute_done(int iteration) override {
    log({sim_.now().ns(), 0.0, static_cast<std::uint32_t>(iteration), Call::compute_done, 0, false, Activity::idle});
  }
  void set_listener(WorkerSpeedListener* listener) override { speeds_.set_listener(listener); }

  PowerThermalModel& finished() {
    if (!current_.empty()) hand_over(false);
    while (replay_next_block()) {
    }
    tasks_.wait();  // the replay task, if it started, finds the log empty; rethrows its error
    return replay_;
  }

 private:
  void log(const Call& c) {
    current_.push_back(c);
    if (current_.size() >= log_.block_calls) hand_over(true);
  }

  /// Queues the block being filled; starts the replay task when none runs (`spawn`), and
  /// replays blocks on this thread while more than max_queued_blocks wait.
  void hand_over(bool spawn) {
    bool start = false;
    std::size_t queued = 0;
    {
      const std::lock_guard lock(queue_mutex_);
      queue_.push_back(std::move(current_));
      queued = queue_.size();
      if (spawn && !replaying_) replaying_ = start = true;
      if (!free_.empty()) {  // else current_ stays the moved-from (empty) vector
        current_ = std::move(free_.back());
        free_.pop_back();
      }
    }
    current_.clear();
    current_.reserve(log_.block_calls);
    if (start) tasks_.run([this] { replay_all(); });
    while (queued > log_.max_queued_blocks && replay_next_block()) {
      const std::lock_guard lock(queue_mutex_);
      queued = queue_.size();
    }
  }

  /// The replay task: blocks until the log is empty.
  void replay_all() {
    for (;;) {
      if (replay_next_block()) continue;
      const std::lock_guard lock(queue_mutex_);
      if (queue_.empty()) {
        replaying_ = false;
        return;
      }
    }
  }

  /// Tells the replay model the oldest queued block; false when none is queued. Whoever holds
  /// replay_mutex_ takes the block and replays it, so blocks are replayed in the order logged.
  bool replay_next_block() {
    const std::lock_guard replay_lock(replay_mutex_);
    std::vector<Call> block;
    {
      const std::lock_guard lock(queue_mutex_);
      if (queue_.empty()) return false;
      block = std::move(queue_.front());
      queue_.pop_front();
    }
    for (const Call& c : block) {
      replay_.set_replay_time(c.now_ns);
      switch (c.kind) {
        case Call::stream_changed:
          replay_.stream_changed(c.worker_or_iteration, c.stream, c.busy, c.activity, c.compute_fraction);
          break;
        case Call::barrier_done:
          replay_.barrier_done(static_cast<int>(c.worker_or_iteration));
          break;
        case Call::compute_done:
          replay_.compute_done(static_cast<int>(c.worker_or_iteration));
          break;
      }
    }
    block.clear();
    const std::lock_guard lock(queue_mutex_);
    free_.push_back(std::move(block));
    return true;
  }

  sim::Simulator& sim_;
  LogSize log_;
  PowerThermalModel speeds_;
  PowerThermalModel replay_;
  std::vector<Call> current_;            ///< the block being filled (simulation's thread)
  std::mutex queue_mutex_;               ///< guards queue_, free_, replaying_
  std::deque<std::vector<Call>> queue_;  ///< full blocks, oldest first
  std::vector<std::vector<Call>> free_;  ///< replayed blocks, for reuse
  bool replaying_ = false;               ///< a replay task is running or queued
  std::mutex replay_mutex_;              ///< held while a block is replayed
  tbb::task_group tasks_;
};

bool PowerThermalRun::splits(const PowerThermalSetup& setup, int threads) {
  if (threads == 1 || setup.thermal_events || setup.trace != nullptr) return false;
  if (tbb::this_task_arena::max_concurrency() < 2) return false;
  return std::none_of(setup.gpus.begin(), setup.gpus.end(),
                      [](const PowerThermalSetup::Gpu& g) { return g.start_throttled; });
}

PowerThermalRun::PowerThermalRun(sim::Simulator& sim, PowerThermalSetup setup, int threads, LogSize log) {
  if (splits(setup, threads)) {
    split_ = std::make_unique<Split>(sim, setup, log);
  } else {
    full_.emplace(sim, std::move(setup));
  }
}

PowerThermalRun::~PowerThermalRun() = default;

WorkerActivityModel& PowerThermalRun::activity() {
  if (split_) return *split_;
  return *full_;
}

PowerThermalModel& PowerThermalRun::finished() {
  if (split_) return split_->finished();
  return *full_;
}

}  // namespace traincast::models
