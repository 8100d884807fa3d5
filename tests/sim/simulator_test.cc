// Tests for sim::Simulator: clock advance, ordering, re-entrant scheduling, run(until), errors.

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/simulator.h"

namespace traincast::sim {
namespace {

/// Records (now, tag) of every event it receives.
class Recorder : public EventHandler {
 public:
  explicit Recorder(Simulator& sim) : sim_(sim) {}
  void on_event(std::uint64_t tag) override { log.emplace_back(sim_.now().ns(), tag); }
  std::vector<std::pair<std::int64_t, std::uint64_t>> log;

 private:
  Simulator& sim_;
};

TEST(SimulatorTest, StartsAtZeroAndEmpty) {
  Simulator sim;
  EXPECT_EQ(sim.now(), Time::zero());
  EXPECT_EQ(sim.pending(), 0u);
  EXPECT_FALSE(sim.step());
  EXPECT_EQ(sim.events_processed(), 0u);
}

TEST(SimulatorTest, FiresInTimeThenInsertionOrder) {
  Simulator sim;
  Recorder r(sim);
  sim.schedule_at(Time::from_ns(30), &r, 1);
  sim.schedule_at(Time::from_ns(10), &r, 2);
  sim.schedule_at(Time::from_ns(30), &r, 3);
  sim.schedule_in(Time::from_ns(20), &r, 4);
  EXPECT_EQ(sim.pending(), 4u);
  sim.run();
  using P = std::pair<std::int64_t, std::uint64_t>;
  EXPECT_EQ(r.log, (std::vector<P>{{10, 2}, {20, 4}, {30, 1}, {30, 3}}));
  EXPECT_EQ(sim.now().ns(), 30);
  EXPECT_EQ(sim.events_processed(), 4u);
  EXPECT_EQ(sim.pending(), 0u);
}

/// Schedules a chain: each event schedules the next one `gap` later, plus one at the same time.
class Chain : public EventHandler {
 public:
  Chain(Simulator& sim, int n) : sim_(sim), n_(n) {}
  void on_event(std::uint64_t tag) override {
    log.emplace_back(sim_.now().ns(), tag);
    if (tag >= 1000) return;  // same-time follower: no children
    if (static_cast<int>(tag) + 1 < n_) sim_.schedule_in(Time::from_ns(5), this, tag + 1);
    sim_.schedule_at(sim_.now(), this, 1000 + tag);  // zero-delay event fires after the current one
  }
  std::vector<std::pair<std::int64_t, std::uint64_t>> log;

 private:
  Simulator& sim_;
  int n_;
};

TEST(SimulatorTest, HandlersMayScheduleDuringRun) {
  Simulator sim;
  Chain c(sim, 3);
  sim.schedule_at(Time::zero(), &c, 0);
  sim.run();
  using P = std::pair<std::int64_t, std::uint64_t>;
  // t=0: 0 then its same-time follower 1000; t=5: 1, 1001; t=10: 2, 1002.
  EXPECT_EQ(c.log, (std::vector<P>{{0, 0}, {0, 1000}, {5, 1}, {5, 1001}, {10, 2}, {10, 1002}}));
}

TEST(SimulatorTest, RunUntilStopsAndAdvancesClock) {
  Simulator sim;
  Recorder r(sim);
  sim.schedule_at(Time::from_ns(10), &r, 1);
  sim.schedule_at(Time::from_ns(20), &r, 2);
  sim.schedule_at(Time::from_ns(21), &r, 3);
  sim.run(Time::from_ns(20));  // inclusive: the event at 20 fires
  EXPECT_EQ(r.log.size(), 2u);
  EXPECT_EQ(sim.now().ns(), 20);
  sim.run(Time::from_ns(15));  // in the past: nothing happens, the clock does not go back
  EXPECT_EQ(sim.now().ns(), 20);
  sim.run(Time::from_ns(100));  // fires 21, then the clock stands at 100
  EXPECT_EQ(r.log.size(), 3u);
  EXPECT_EQ(sim.now().ns(), 100);
  EXPECT_EQ(sim.pending(), 0u);
}

TEST(SimulatorTest, StepFiresOneEvent) {
  Simulator sim;
  Recorder r(sim);
  sim.schedule_at(Time::from_ns(4), &r, 9);
  sim.schedule_at(Time::from_ns(8), &r, 10);
  EXPECT_TRUE(sim.step());
  EXPECT_EQ(sim.now().ns(), 4);
  EXPECT_EQ(r.log.size(), 1u);
  EXPECT_TRUE(sim.step());
  EXPECT_FALSE(sim.step());
  EXPECT_EQ(sim.now().ns(), 8);
}

TEST(SimulatorTest, RejectsEventsInThePast) {
  Simulator sim;
  Recorder r(sim);
  sim.schedule_at(Time::from_ns(50), &r, 0);
  sim.run();
  try {
    sim.schedule_at(Time::from_ns(49), &r, 0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "Simulator::schedule_at: event at 49 ns is before now() = 50 ns");
  }
  try {
    sim.schedule_in(Time::from_ns(-1), &r, 0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "Simulator::schedule_in: negative delay -1 ns");
  }
  EXPECT_NO_THROW(sim.schedule_at(Time::from_ns(50), &r, 0));  // "now" is allowed
}

TEST(SimulatorTest, RejectsNullHandlerAndOverflow) {
  Simulator sim;
  try {
    sim.schedule_at(Time::from_ns(1), nullptr, 0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "Simulator::schedule_at: null handler");
  }
  Recorder r(sim);
  sim.schedule_at(Time::from_ns(1), &r, 0);
  sim.run();
  EXPECT_THROW(sim.schedule_in(Time::max(), &r, 0), std::overflow_error);
}

}  // namespace
}  // namespace traincast::sim
