// Straggler wait (TimeBreakdown::straggler_wait_s, Report::straggler): the time a GPU waits at a
// shared collective for the last participant to arrive is split from the collective's transfer.
#include <gtest/gtest.h>

#include <string>

#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "tests/support/breakdown.h"
#include "tests/support/fixtures.h"

namespace traincast::models {
namespace {

using traincast::test_support::sum_breakdown;

/// A small GPT-style job on one DGX H100: TP 2 x DP 4 (GEMM-heavy: hidden 8192), every replica
/// simulated (no folding), two iterations.
Scenario h100_job() {
  Scenario sc = test_support::small_h100_job("straggler-test");
  sc.options.fold_symmetric = false;
  return sc;
}

// Identical replicas arrive together at every gradient reduction: nobody waits for anyone, in one
// node (NVSwitch) and across two nodes (every replica's traffic crosses the fabric alike).
TEST(Straggler, HomogeneousJobWaitsForNoOne) {
  for (int nodes : {1, 2}) {
    Scenario sc = h100_job();
    sc.cluster.num_nodes = nodes;
    sc.parallel.dp = 4 * nodes;
    sc.training.global_batch_size = 16 * nodes;
    const Report r = simulate_training(sc);
    EXPECT_FALSE(r.folded);
    EXPECT_LT(r.breakdown.straggler_wait_s, 1e-6 * r.iteration_time_s) << nodes << " node(s)";
    EXPECT_GT(r.breakdown.dp_comm_exposed_s, 0.0);
    EXPECT_NEAR(sum_breakdown(r), r.iteration_time_s, 1e-9 * r.iteration_time_s);
    EXPECT_EQ(r.straggler.breakdown_replica, 0);
  }
}

// Blocked airflow at GPUs 3 and 4 (35 % of the design air): they throttle, and the healthy GPUs
// the breakdown describes wait for them at the gradient reduction. Expectations from independent
// figures, not from the printed breakdown:
// - the DP transfer not hidden under compute is the same as in the same job with full airflow (the
//   throttled peer does not make the network slower): within 5 %;
// - the wait is the straggler's extra kernel time. A compute-bound kernel of the slow GPU does the
//   work W of the healthy GPU at mean clock f (fraction of boost): time W / f, so the extra time is
//   at most (compute_s + optimizer_s) x (1/f - 1), with f = the slowest GPU's mean SM clock while
//   computing (memory-bound kernels do not stretch: the wait is below that bound, not far);
// - the iteration grows by the wait: iteration(hot) - iteration(full airflow) within 5 % of it.
TEST(Straggler, BlockedAirflowWaitIsNotDpCommunication) {
  Scenario sc = h100_job();
  const Report base = simulate_training(sc);
  sc.thermal.gpu_airflow_fraction = {1, 1, 1, 0.35, 0.35, 1, 1, 1};
  const Report hot = simulate_training(sc);
  ASSERT_GT(hot.thermal.throttled_gpus, 0);
  const TimeBreakdown& b = hot.breakdown;
  EXPECT_NEAR(sum_breakdown(hot), hot.iteration_time_s, 1e-9 * hot.iteration_time_s);
  EXPECT_NEAR(b.dp_comm_exposed_s, base.breakdown.dp_comm_exposed_s, 0.05 * base.breakdown.dp_comm_exposed_s);

  const StragglerReport& s = hot.straggler;
  ASSERT_TRUE(s.found);
  EXPECT_TRUE(s.gpu == 3 || s.gpu == 4) << s.gpu;
  EXPECT_EQ(s.node, 0);
  EXPECT_EQ(s.local_gpu, s.gpu);
  EXPECT_EQ(s.cause, "thermal");
  EXPECT_GT(s.throttled_time_fraction, 0.0);
  EXPECT_EQ(s.boost_clock_mhz, find_gpu("H100-SXM5-80GB").boost_clock_mhz);
  ASSERT_GT(s.sm_clock_mhz, 0.0);
  ASSERT_LT(s.sm_clock_mhz, s.boost_clock_mhz);
  EXPECT_NE(s.slowest_replica, s.breakdown_replica);
  const double bound = (b.compute_s + b.optimizer_s) * (s.boost_clock_mhz / s.sm_clock_mhz - 1.0);
  EXPECT_LE(b.straggler_wait_s, bound * 1.001);
  EXPECT_GE(b.straggler_wait_s, 0.9 * bound);
  const double grew = hot.iteration_time_s - base.iteration_time_s;
  EXPECT_NEAR(b.straggler_wait_s, grew, 0.05 * grew);
  EXPECT_GT(b.straggler_wait_s, 0.01 * hot.iteration_time_s);
}

// The breakdown describes the fastest replica: a throttled GPU in replica 0 (GPU 0) moves the
// breakdown to another replica, which waits for replica 0.
TEST(Straggler, SlowGpuInReplicaZeroMovesTheBreakdown) {
  Scenario sc = h100_job();
  sc.thermal.gpu_airflow_fraction = {0.35, 1, 1, 1, 1, 1, 1, 1};
  const Report hot = simulate_training(sc);
  ASSERT_GT(hot.thermal.throttled_gpus, 0);
  ASSERT_TRUE(hot.straggler.found);
  EXPECT_EQ(hot.straggler.gpu, 0);
  EXPECT_EQ(hot.straggler.slowest_replica, 0);
  EXPECT_NE(hot.straggler.breakdown_replica, 0);
  EXPECT_GT(hot.breakdown.straggler_wait_s, 0.01 * hot.iteration_time_s);
  EXPECT_NEAR(sum_breakdown(hot), hot.iteration_time_s, 1e-9 * hot.iteration_time_s);
}

// Same report whatever the thread count.
TEST(Straggler, SameFiguresAtAnyThreadCount) {
  Scenario sc = h100_job();
  sc.thermal.gpu_airflow_fraction = {1, 1, 1, 0.35, 0.35, 1, 1, 1};
  sc.options.threads = 1;
  const Report one = simulate_training(sc);
  sc.options.threads = 4;
  const Report four = simulate_training(sc);
  EXPECT_EQ(one.breakdown.straggler_wait_s, four.breakdown.straggler_wait_s);
  EXPECT_EQ(one.breakdown.dp_comm_exposed_s, four.breakdown.dp_comm_exposed_s);
  EXPECT_EQ(one.straggler.gpu, four.straggler.gpu);
  EXPECT_EQ(one.straggler.sm_clock_mhz, four.straggler.sm_clock_mhz);
}

}  // namespace
}  // namespace traincast::models
