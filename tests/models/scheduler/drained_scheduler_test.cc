// models/scheduler/: a drained node (a missing GPU, cluster.overrides missing) is never given to a
// job, does not count as busy, and a job that fits only with it never fits.

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "models/scheduler/scheduler.h"

namespace traincast::models {
namespace {

sim::Time s(double seconds) { return sim::Time::from_seconds(seconds); }

// By hand, 4 nodes on leaves {0, 1} and {2, 3}, node 1 drained, packed, FIFO:
//   t=0  J0 (1 node, 10 s) takes node 0; J1 (2 nodes, 5 s) the lowest free ones, 2 and 3 (node 1
//        is never free); J2 (4 nodes) asks for more than the 3 in service: never fits.
//   t=5  J1 ends; t=10 J0 ends. Busy nodes: 3 from 0, 1 from 5, 0 from 10 (the drained node never counts).
TEST(DrainedScheduler, ADrainedNodeIsNeverGivenAndNeverBusy) {
  const std::vector<QueuedJob> jobs = {{1, s(0), 0, s(10)}, {2, s(0), 0, s(5)}, {4, s(0), 0, s(1)}};
  ClusterShape shape{4, 2, {1}};
  const Schedule r = run_scheduler(jobs, shape, {SchedulerPolicy::fifo, JobPlacement::packed},
                                   [&](std::size_t j, const std::vector<int>&) { return jobs[j].estimate; });
  EXPECT_EQ(r.jobs[0].nodes, std::vector<int>{0});
  EXPECT_EQ(r.jobs[1].nodes, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.jobs[1].leaves, 1);
  EXPECT_TRUE(r.jobs[2].never_fits);
  EXPECT_EQ(r.busy_nodes, (std::vector<std::pair<sim::Time, int>>{{s(0), 3}, {s(5), 1}, {s(10), 0}}));
  // Without the drain J1 takes nodes 1 and 2, across both leaves, and J2 waits for all four.
  shape.drained.clear();
  const Schedule all = run_scheduler(jobs, shape, {SchedulerPolicy::fifo, JobPlacement::packed},
                                     [&](std::size_t j, const std::vector<int>&) { return jobs[j].estimate; });
  EXPECT_EQ(all.jobs[1].nodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(all.jobs[1].leaves, 2);
  EXPECT_FALSE(all.jobs[2].never_fits);
  EXPECT_THROW(run_scheduler(jobs, {4, 2, {4}}, {}, [](std::size_t, const std::vector<int>&) { return s(1); }),
               std::invalid_argument);
}

}  // namespace
}  // namespace traincast::models
