// NCCL's channel cut for small sizes (nccl_channel_cut, nccl_channel_share; NVIDIA/nccl
// src/enqueue.cc topoGetAlgoInfo, "Ring/Tree channel tuning"): the figures worked by hand from
// NCCL's loop, and through the engine on a GB200 NVL72 rack.

#include <gtest/gtest.h>

#include <cmath>

#include "models/collectives/collective_engine.h"
#include "models/collectives/nccl_tuning.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;
using test_support::iota;

constexpr int kLL = 0;
constexpr int kLL128 = 1;
constexpr int kSimple = 2;

CollectivePlan plan_of(CollectiveAlgorithm a, CollectiveOp op, int ranks, int nccl_channels) {
  CollectivePlan p;
  p.algorithm = a;
  p.op = op;
  p.ranks = iota(0, ranks);
  p.nccl_channels = nccl_channels;
  return p;
}

TEST(NcclChannelCut, RingLlThresholdGrowsWithTheRanks) {
  // Ring LL: threadThreshold 8 x nRanks = 576 B per thread on 72 ranks, 512 threads: a channel
  // per 294,912 B. 1 MiB keeps 3 of 32 channels (3 x 294,912 = 884,736 <= 1,048,576 < 4 x).
  const CollectivePlan p = plan_of(CollectiveAlgorithm::ring, CollectiveOp::all_gather, 72, 32);
  NcclChannelCut c = nccl_channel_cut(p, kLL, 1048576.0);
  EXPECT_EQ(c.channels, 3);
  EXPECT_EQ(c.threads, 512);
  EXPECT_DOUBLE_EQ(nccl_channel_share(p, kLL, 1048576.0), 3.0 / 32.0);
  // All 32 from 32 x 294,912 = 9,437,184 B; one byte less keeps 31.
  EXPECT_EQ(nccl_channel_cut(p, kLL, 9437184.0).channels, 32);
  EXPECT_EQ(nccl_channel_cut(p, kLL, 9437183.0).channels, 31);
  EXPECT_DOUBLE_EQ(nccl_channel_share(p, kLL, 1e12), 1.0);
  // 1 KiB: one channel, then the threads halved while 1024 < nt x 576 and nt is a multiple of
  // 128: 512 -> 256 -> 128 -> 64 (64 is not a multiple of 128: the loop stops).
  c = nccl_channel_cut(p, kLL, 1024.0);
  EXPECT_EQ(c.channels, 1);
  EXPECT_EQ(c.threads, 64);
  // The share counts channels only (the thread cut is not charged, nccl_tuning.h).
  EXPECT_DOUBLE_EQ(nccl_channel_share(p, kLL, 1024.0), 1.0 / 32.0);
  // The threshold grows with the ranks: 8 ranks keep all 32 channels from 32 x 512 x 64 = 1 MiB.
  const CollectivePlan eight = plan_of(CollectiveAlgorithm::ring, CollectiveOp::all_gather, 8, 32);
  EXPECT_EQ(nccl_channel_cut(eight, kLL, 1048576.0).channels, 32);
  EXPECT_EQ(nccl_channel_cut(eight, kLL, 1048575.0).channels, 31);
}

TEST(NcclChannelCut, Ll128AndSimpleThresholdsAndThreads) {
  const CollectivePlan ring = plan_of(CollectiveAlgorithm::ring, CollectiveOp::all_reduce, 16, 32);
  // LL128: 640 threads x 8 B = 5,120 B a channel, whatever the ranks: 100 KiB keeps 20.
  EXPECT_EQ(nccl_channel_cut(ring, kLL128, 102400.0).channels, 20);
  EXPECT_EQ(nccl_channel_cut(ring, kLL128, 163840.0).channels, 32);
  // 640 halves once (320 is not a multiple of 128).
  EXPECT_EQ(nccl_channel_cut(ring, kLL128, 1024.0).threads, 320);
  // Simple: 512 x 64 = 32 KiB a channel; 256 threads (a ring graph of <= 12 GB/s): 16 KiB.
  EXPECT_EQ(nccl_channel_cut(ring, kSimple, 65536.0).channels, 2);
  CollectivePlan pcie = ring;
  pcie.ring_simple_threads = 256;
  EXPECT_EQ(nccl_channel_cut(pcie, kSimple, 65536.0).channels, 4);
  EXPECT_EQ(nccl_channel_cut(pcie, kSimple, 1e12).threads, 256);  // nothing cut: maxThreads itself
  // Tree: the same channel loop, all threads kept (NCCL_MAX_NTHREADS in 2.28).
  const CollectivePlan tree = plan_of(CollectiveAlgorithm::tree, CollectiveOp::all_reduce, 16, 32);
  const NcclChannelCut t = nccl_channel_cut(tree, kLL, 1024.0);
  EXPECT_EQ(t.channels, 1);
  EXPECT_EQ(t.threads, 512);
  // Tree LL's threshold is not multiplied by the ranks: 32 x 512 x 8 = 128 KiB.
  EXPECT_EQ(nccl_channel_cut(tree, kLL, 131072.0).channels, 32);
}

TEST(NcclChannelCut, NotForNvlsP2pOrUnsetPlans) {
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::nvls, CollectiveAlgorithm::nvls_tree,
                                CollectiveAlgorithm::collnet_direct, CollectiveAlgorithm::hierarchical}) {
    const CollectivePlan p = plan_of(a, CollectiveOp::all_reduce, 8, 16);
    EXPECT_EQ(nccl_channel_cut(p, kSimple, 1024.0).channels, 0);
    EXPECT_DOUBLE_EQ(nccl_channel_share(p, kSimple, 1024.0), 1.0);
  }
  EXPECT_DOUBLE_EQ(nccl_channel_share(plan_of(CollectiveAlgorithm::ring, CollectiveOp::all_to_all, 8, 32), kLL, 1.0),
                   1.0);
  EXPECT_DOUBLE_EQ(nccl_channel_share(plan_of(CollectiveAlgorithm::ring, CollectiveOp::all_gather, 8, 0), kLL, 1.0),
                   1.0);
}

TEST(NcclChannelCut, Gb200RackRingRunsOnTheChannelsNcclKeeps) {
  // A 72-GPU all_gather runs as a ring (NCCL 2.27+: NVLS all_gather on <= 32 GPUs) with LL at
  // 1 MiB: 3 of the comm's 32 channels. The tuner's figure (its choice) keeps all 32; the time
  // takes the bandwidth term 32 / 3 times longer; the simulated run agrees with the closed form;
  // the kernel launches the 3 CTAs.
  Bench b("gb200_nvl72", 1);
  const auto c = call(CollectiveOp::all_gather, iota(0, 72), 1048576.0);
  const CollectiveChoice ch = b.engine.choose(c);
  ASSERT_EQ(ch.algorithm, CollectiveAlgorithm::ring);
  ASSERT_EQ(ch.protocol, CollectiveProtocol::ll);
  EXPECT_NEAR(ch.bandwidth_s, ch.tuner_bandwidth_s * 32.0 / 3.0, 1e-9 * ch.bandwidth_s);
  EXPECT_EQ(b.engine.kernel_ctas(c), 3);
  const double t = b.run(c);
  EXPECT_NEAR(t, ch.seconds(), 0.01 * t);
  // At 16 MiB every channel runs: no cut.
  const auto big = call(CollectiveOp::all_gather, iota(0, 72), 16.0 * 1048576.0);
  const CollectiveChoice bc = b.engine.choose(big);
  EXPECT_NEAR(bc.bandwidth_s, bc.tuner_bandwidth_s, 1e-9 * bc.bandwidth_s);
  EXPECT_EQ(b.engine.kernel_ctas(big), 32);
}

}  // namespace
}  // namespace traincast::models
