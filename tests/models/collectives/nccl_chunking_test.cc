// NCCL's tree chunk (tree_chunk_bytes; NVIDIA/nccl src/enqueue.cc calcCollChunking) worked by
// hand, and the tree's chunk pipeline fill (tree_pipeline_fill_s): never negative, linear in the
// links' time per byte, 0 where there is no pipeline (nccl_chunking.h).

#include "models/collectives/nccl_chunking.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::iota;

constexpr int kLL = 0;
constexpr int kLL128 = 1;
constexpr int kSimple = 2;
constexpr double kMiB = 1024.0 * 1024.0;

CollectivePlan tree_plan(int nodes, int ppn, int channels) {
  CollectivePlan p;
  p.algorithm = CollectiveAlgorithm::tree;
  p.op = CollectiveOp::all_reduce;
  p.ranks = iota(0, nodes * ppn);
  p.num_nodes = nodes;
  p.channels = channels;
  p.nccl_channels = channels;
  return p;
}

TEST(TreeChunking, Ll128HalvingWorkedByHand) {
  // n04a: 8 nodes x 8 GPUs, 16 channels. LL128 step 4915200 / 8 = 614400, data 614400 / 16 x 15
  // = 576000. nstepsLL128 = 1 + 3 + 0.8 = 4.8; first loop (< 4.8 x 64 / 8 = 38.4, chunk > 131072):
  // 576000 -> 288000 -> 144000 -> 72000. 4 MiB: second loop (< 9.6, chunk > 32768):
  // 4194304 / (16 x 72000) = 3 -> 36000; 4194304 / (16 x 36000) = 7 -> 18000; aligned down to
  // 1920 B grains: 9 x 1920 = 17280.
  const CollectivePlan n04a = tree_plan(8, 8, 16);
  EXPECT_EQ(tree_chunk_bytes(n04a, kLL128, 4 * kMiB, 16), 17280);
  // 8 MiB: 8388608 / (16 x 36000) = 14 >= 9.6 stops at 36000 -> 18 x 1920 = 34560.
  EXPECT_EQ(tree_chunk_bytes(n04a, kLL128, 8 * kMiB, 16), 34560);
  // 16 MiB: 16777216 / (16 x 72000) = 14 >= 9.6 stops at 72000 -> 37 x 1920 = 71040.
  EXPECT_EQ(tree_chunk_bytes(n04a, kLL128, 16 * kMiB, 16), 71040);
  // 128 MiB: 134217728 / (16 x 144000) = 58 >= 38.4 stops the first loop at 144000 -> 75 x 1920.
  EXPECT_EQ(tree_chunk_bytes(n04a, kLL128, 128 * kMiB, 16), 144000);
  // n04b: 2 nodes, nstepsLL128 2.8: thresholds 22.4 and 5.6; 4 MiB: 4194304 / (16 x 36000) = 7
  // stops at 36000 -> 34560.
  const CollectivePlan n04b = tree_plan(2, 8, 16);
  EXPECT_EQ(tree_chunk_bytes(n04b, kLL128, 4 * kMiB, 16), 34560);
  EXPECT_EQ(tree_chunk_bytes(n04b, kLL128, 2 * kMiB, 16), 17280);
  // LL: 524288 / 8 / 2 = 32768; Simple: 4 MiB / 8 = 524288; no halving for either.
  EXPECT_EQ(tree_chunk_bytes(n04a, kLL, 4 * kMiB, 16), 32768);
  EXPECT_EQ(tree_chunk_bytes(n04a, kSimple, 4 * kMiB, 16), 524288);
  // Not a tree: no tree chunk.
  CollectivePlan ring = n04a;
  ring.algorithm = CollectiveAlgorithm::ring;
  EXPECT_EQ(tree_chunk_bytes(ring, kLL128, 4 * kMiB, 16), 0);
}

TEST(TreeChunking, HopsUpAndDownTheInterNodeTree) {
  EXPECT_EQ(tree_pipeline_hops(tree_plan(1, 8, 16)), 0);
  EXPECT_EQ(tree_pipeline_hops(tree_plan(2, 8, 16)), 2);
  EXPECT_EQ(tree_pipeline_hops(tree_plan(4, 8, 16)), 4);
  EXPECT_EQ(tree_pipeline_hops(tree_plan(8, 8, 16)), 6);
  EXPECT_EQ(tree_pipeline_hops(tree_plan(10, 8, 16)), 6);
}

TEST(TreeChunking, FillWorkedByHand) {
  const CollectivePlan n04a = tree_plan(8, 8, 16);
  CollectivePhase ph;
  ph.num_flows = 1;
  ph.tuner_seconds_per_byte = 1e-11;
  // 4 MiB: chunk 17280, 4194304 / (16 x 17280) = 15.2 chunks per channel (ramp 1); 6 hops x 4.8
  // chunk times, each 17280 B x 16 channels x 1e-11 s/B / (15 / 16).
  const double chunk_s = 17280.0 * 16 * 1e-11 / (15.0 / 16.0);
  EXPECT_NEAR(tree_pipeline_fill_s(n04a, ph, kLL128, 4 * kMiB), 6 * NcclChunking::fill_chunks_per_hop * chunk_s, 1e-15);
  // 256 KiB: 262144 / (16 x 17280) < 1 chunk per channel: no pipeline, no fill.
  EXPECT_EQ(tree_pipeline_fill_s(n04a, ph, kLL128, 0.25 * kMiB), 0);
  // LL and Simple, one node, nothing moving, no bytes: no fill.
  EXPECT_EQ(tree_pipeline_fill_s(n04a, ph, kLL, 4 * kMiB), 0);
  EXPECT_EQ(tree_pipeline_fill_s(n04a, ph, kSimple, 64 * kMiB), 0);
  EXPECT_EQ(tree_pipeline_fill_s(tree_plan(1, 8, 16), ph, kLL128, 4 * kMiB), 0);
  EXPECT_EQ(tree_pipeline_fill_s(n04a, CollectivePhase{}, kLL128, 4 * kMiB), 0);
  EXPECT_EQ(tree_pipeline_fill_s(n04a, ph, kLL128, 0), 0);
}

TEST(TreeChunking, FillNeverNegativeAndFallsWithFasterLinks) {
  for (int nodes : {2, 4, 8, 16}) {
    const CollectivePlan plan = tree_plan(nodes, 8, 16);
    for (int k = 3; k <= 34; ++k) {  // 8 B .. 16 GiB
      const double s = std::ldexp(1.0, k);
      double prev = -1;
      for (double spb : {4e-11, 2e-11, 1e-11, 5e-12}) {  // ever faster links
        CollectivePhase ph;
        ph.num_flows = 1;
        ph.tuner_seconds_per_byte = spb;
        const double fill = tree_pipeline_fill_s(plan, ph, kLL128, s);
        EXPECT_GE(fill, 0) << nodes << " " << s;
        if (prev >= 0) {
          EXPECT_LE(fill, prev) << nodes << " " << s;
          EXPECT_NEAR(fill, prev / 2, 1e-18) << nodes << " " << s;  // linear in the time per byte
        }
        prev = fill;
      }
    }
  }
}

TEST(TreeChunking, FillNeverShrinksWithSize) {
  for (int nodes : {2, 4, 8, 10}) {
    const CollectivePlan plan = tree_plan(nodes, 8, 16);
    CollectivePhase ph;
    ph.num_flows = 1;
    ph.tuner_seconds_per_byte = 1e-11;
    double prev = 0;
    for (int k = 40; k <= 34 * 4; ++k) {  // 1 KiB .. 16 GiB in quarter octaves
      const double s = std::ldexp(1.0, k / 4) * std::pow(2.0, (k % 4) / 4.0);
      const double fill = tree_pipeline_fill_s(plan, ph, kLL128, s);
      EXPECT_GE(fill, prev) << nodes << " " << s;
      prev = fill;
    }
  }
}

}  // namespace
}  // namespace traincast::models
