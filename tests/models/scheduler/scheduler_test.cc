// models/scheduler/: the event loop's policies against a case worked by hand, and placement.

#include <gtest/gtest.h>

#include <vector>

#include "models/scheduler/placement.h"
#include "models/scheduler/scheduler.h"

namespace traincast::models {
namespace {

sim::Time s(double seconds) { return sim::Time::from_seconds(seconds); }

/// The six jobs of scenarios/cluster/six_jobs_fifo_vs_backfill.textproto on 4 nodes (one leaf):
/// (nodes, arrival s, run time s) = J0 (2, 0, 10), J1 (4, 1, 5), J2 (1, 2, 8), J3 (1, 3, 20),
/// J4 (2, 4, 3), J5 (1, 5, 4). Run times are fixed, so estimate = actual run time.
std::vector<QueuedJob> six_jobs() {
  const double nodes[] = {2, 4, 1, 1, 2, 1};
  const double run[] = {10, 5, 8, 20, 3, 4};
  std::vector<QueuedJob> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back({static_cast<int>(nodes[i]), s(i), 0, s(run[i])});
  return jobs;
}

Schedule run_six(SchedulerPolicy policy) {
  const std::vector<QueuedJob> jobs = six_jobs();
  return run_scheduler(jobs, {4, 4}, {policy, JobPlacement::packed},
                       [&](std::size_t j, const std::vector<int>&) { return jobs[j].estimate; });
}

// FIFO by hand:
//   t=0  J0 starts (2 of 4 nodes busy), ends 10.
//   t=1  J1 needs 4, 2 free: waits at the head; J2..J5 queue behind it as they arrive.
//   t=10 J0 ends, 4 free: J1 starts, ends 15 (0 free).
//   t=15 J1 ends: J2 (1), J3 (1), J4 (2) start (0 free); J5 waits. J4 ends 18.
//   t=18 J5 starts, ends 22. J2 ends 23, J3 ends 35.
// Starts 0, 10, 15, 15, 15, 18; waits 0, 9, 13, 12, 11, 13.
TEST(SchedulerHandCase, FifoStartTimes) {
  const Schedule r = run_six(SchedulerPolicy::fifo);
  const double start[] = {0, 10, 15, 15, 15, 18};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.jobs[static_cast<std::size_t>(i)].start, s(start[i])) << "J" << i;
  EXPECT_EQ(r.makespan, s(35));
}

// EASY backfill by hand:
//   t=0  J0 starts (ends 10), 2 free.
//   t=1  J1 (4) does not fit: reservation at the shadow time 10 (J0's end frees 4), 0 nodes spare.
//   t=2  J2 (1 node, 8 s) fits and ends at 2 + 8 = 10 <= 10: starts, 1 free.
//   t=3  J3 (1 node, 20 s): ends 23 > 10 and 1 > 0 spare: waits.
//   t=4  J4 (2 nodes): 1 free, does not fit.
//   t=5  J5 (1 node, 4 s) ends 9 <= 10: starts, 0 free. Ends 9 (1 free; J3, J4 still cannot).
//   t=10 J0 and J2 end, 4 free: J1 starts on time (ends 15). J3 is the new head, 0 free.
//   t=15 J1 ends: J3 and J4 start.
// Starts 0, 10, 2, 15, 15, 5; waits 0, 9, 0, 12, 11, 0: J1 (the head) starts at 10 as under FIFO.
TEST(SchedulerHandCase, BackfillStartTimes) {
  const Schedule r = run_six(SchedulerPolicy::backfill);
  const double start[] = {0, 10, 2, 15, 15, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.jobs[static_cast<std::size_t>(i)].start, s(start[i])) << "J" << i;
  EXPECT_EQ(r.makespan, s(35));
}

// Busy nodes: 78 node-seconds (2x10 + 4x5 + 8 + 20 + 2x3 + 4) over 4 nodes x 35 s under both.
TEST(SchedulerHandCase, BusyNodeSeconds) {
  for (SchedulerPolicy p : {SchedulerPolicy::fifo, SchedulerPolicy::backfill}) {
    const Schedule r = run_six(p);
    double busy = 0.0;
    for (std::size_t k = 0; k < r.busy_nodes.size(); ++k) {
      const sim::Time next = k + 1 < r.busy_nodes.size() ? r.busy_nodes[k + 1].first : r.makespan;
      busy += (next - r.busy_nodes[k].first).seconds() * r.busy_nodes[k].second;
    }
    EXPECT_DOUBLE_EQ(busy, 78.0);
    EXPECT_EQ(r.busy_nodes.back().second, 0);
  }
}

TEST(Scheduler, PriorityGoesFirstAndTooLargeIsReported) {
  // Two jobs wait for the full cluster; the later, higher-priority one goes first. A 5-node job
  // on 4 nodes never fits and is reported.
  std::vector<QueuedJob> jobs = {{4, s(0), 0, s(10)}, {4, s(1), 0, s(10)}, {4, s(2), 5, s(10)}, {5, s(0), 0, s(1)}};
  const Schedule r =
      run_scheduler(jobs, {4, 2}, {}, [&](std::size_t j, const std::vector<int>&) { return jobs[j].estimate; });
  EXPECT_EQ(r.jobs[0].start, s(0));
  EXPECT_EQ(r.jobs[2].start, s(10));
  EXPECT_EQ(r.jobs[1].start, s(20));
  EXPECT_TRUE(r.jobs[3].never_fits);
  EXPECT_FALSE(r.jobs[0].never_fits);
}

// Co-runners: each job runs at half speed while both run (run time doubled). By hand:
//   J0 (1 node, 10 s alone) starts at 0; J1 (1 node, 10 s alone) arrives at 5, J0 half done.
//   5..15: both at half rate: J0's remaining half takes 0.5 x 20 = 10 s, ends 15; J1 does 10 / 20
//   = half its work. 15..20: J1 alone, its remaining half takes 5 s: ends 20.
TEST(Scheduler, CoRunnersMoveEndTimesByRemainingWork) {
  const std::vector<QueuedJob> jobs = {{1, s(0), 0, s(10)}, {1, s(5), 0, s(10)}};
  const Schedule r = run_scheduler(
      jobs, {2, 2}, {SchedulerPolicy::fifo, JobPlacement::packed},
      [&](std::size_t j, const std::vector<int>&) { return jobs[j].estimate; },
      [&](std::size_t j, const std::vector<RunningJob>& running) {
        return running.size() > 1 ? jobs[j].estimate + jobs[j].estimate : jobs[j].estimate;
      });
  EXPECT_EQ(r.jobs[0].end, s(15));
  EXPECT_EQ(r.jobs[1].start, s(5));
  EXPECT_EQ(r.jobs[1].end, s(20));
  EXPECT_EQ(r.makespan, s(20));
}

TEST(Scheduler, RefusesBadInput) {
  const RunTimeOf one = [](std::size_t, const std::vector<int>&) { return s(1); };
  EXPECT_THROW(run_scheduler({{0, s(0), 0, s(1)}}, {4, 4}, {}, one), std::invalid_argument);
  EXPECT_THROW(run_scheduler({{1, s(0), 0, s(1)}}, {0, 4}, {}, one), std::invalid_argument);
}

// 8 nodes, 2 per leaf; free: node 1 (leaf 0), 2 and 3 (leaf 1), 6 (leaf 3).
const std::vector<bool> kFree = {false, true, true, true, false, false, true, false};

TEST(Placement, Packed) { EXPECT_EQ(place_job(kFree, 2, 3, JobPlacement::packed), (std::vector<int>{1, 2, 3})); }

TEST(Placement, SpreadTakesOneNodePerLeafInTurn) {
  const std::vector<int> nodes = place_job(kFree, 2, 3, JobPlacement::spread);
  EXPECT_EQ(nodes, (std::vector<int>{1, 2, 6}));
  EXPECT_EQ(leaves_spanned(nodes, 2), 3);
}

TEST(Placement, TopologyAwareUsesFewestLeaves) {
  // Two nodes fit leaf 1 alone; three need leaf 1 (2 free) and then leaf 0 (lowest index of the 1-free leaves).
  EXPECT_EQ(place_job(kFree, 2, 2, JobPlacement::topology_aware), (std::vector<int>{2, 3}));
  const std::vector<int> three = place_job(kFree, 2, 3, JobPlacement::topology_aware);
  EXPECT_EQ(three, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(leaves_spanned(three, 2), 2);
  // Best fit: a one-node job goes to a leaf with one free node, not into leaf 1's pair.
  EXPECT_EQ(place_job(kFree, 2, 1, JobPlacement::topology_aware), (std::vector<int>{1}));
}

TEST(Placement, TopologyAwareNeverSpansMoreLeavesThanSpreadOrPacked) {
  // Every free-node pattern of 8 nodes in leaves of 2, every job size that fits.
  for (unsigned mask = 0; mask < 256; ++mask) {
    std::vector<bool> free(8);
    int count = 0;
    for (int i = 0; i < 8; ++i) count += (free[static_cast<std::size_t>(i)] = ((mask >> i) & 1U) != 0) ? 1 : 0;
    for (int n = 1; n <= count; ++n) {
      const int topo = leaves_spanned(place_job(free, 2, n, JobPlacement::topology_aware), 2);
      EXPECT_LE(topo, leaves_spanned(place_job(free, 2, n, JobPlacement::spread), 2)) << mask << " " << n;
      EXPECT_LE(topo, leaves_spanned(place_job(free, 2, n, JobPlacement::packed), 2)) << mask << " " << n;
      EXPECT_EQ(place_job(free, 2, n, JobPlacement::spread).size(), static_cast<std::size_t>(n));
    }
  }
}

}  // namespace
}  // namespace traincast::models
