// NCCL's NVLS heads with a slowed NIC (nvls_plans.cc nvls_heads): the NVLS graph search
// (NVIDIA/nccl src/graph/search.cc, 2.19+) skips a NIC below the speed it searches at and lowers
// the speed only to .49 of its best graph's, so a NIC a little slow stays a head and a much
// slower one heads nothing, on every node of the group (the model runs a head at the same place
// on every node).

#include <gtest/gtest.h>

#include <string>

#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;
using test_support::iota;

struct Heads {
  int channels = 0;          ///< NVLS tree heads (the plan's channels)
  double slowed_tx = 0;      ///< bytes sent by the slowed NIC (node1/nic2)
  double same_rail_tx = 0;   ///< bytes sent by node0/nic2, its rail on the healthy node
  double other_rail_tx = 0;  ///< bytes sent by node1/nic3
};

/// 2 x DGX H100 (8 NICs of 400 Gb/s: 48 GB/s to the search), node1/nic2 at `factor` (1: no
/// override), or failed; a 64 MiB all-reduce forced to NVLS tree.
Heads heads_with(double factor, bool failed = false, const std::string& nccl_version = "") {
  ClusterSpec spec = Bench::make("dgx_h100", 2);
  spec.collectives.nccl_version = nccl_version;
  if (factor != 1.0 || failed) {
    ElementOverride o;
    o.select = "node1/nic2";
    if (failed) {
      o.failed = true;
    } else {
      o.bandwidth_factor = factor;
    }
    spec.overrides.push_back(o);
  }
  Bench b(spec);
  const auto c = call(CollectiveOp::all_reduce, iota(0, 16), 64.0 * 1024 * 1024, CollectiveAlgorithm::nvls_tree);
  Heads h;
  h.channels = b.engine.choose(c).channels;
  b.run(c);
  h.slowed_tx = b.carried("node1.nic2.tx");
  h.same_rail_tx = b.carried("node0.nic2.tx");
  h.other_rail_tx = b.carried("node1.nic3.tx");
  return h;
}

TEST(NvlsHeads, HealthyDgxH100HasOneHeadPerNic) {
  const Heads h = heads_with(1.0);
  EXPECT_EQ(h.channels, 8);
  EXPECT_GT(h.slowed_tx, 0);
  EXPECT_DOUBLE_EQ(h.slowed_tx, h.other_rail_tx);  // 8 heads, each S/16 per tree
}

// At 0.75 (36 GB/s) the search, finding 7 channels at 48-40 GB/s, reaches 30 GB/s, where the NIC
// passes and 8 channels beat 7 ("the more the better"): it stays a head and carries a head's share.
TEST(NvlsHeads, NicAtThreeQuartersStaysAHead) {
  const Heads h = heads_with(0.75);
  EXPECT_EQ(h.channels, 8);
  EXPECT_GT(h.slowed_tx, 0);
  EXPECT_DOUBLE_EQ(h.slowed_tx, h.other_rail_tx);
}

// At 0.1 (4.8 GB/s) the search stops before its speed falls that low (22 / 45 < .49): 7 heads, and
// the NIC's rail carries nothing on either node.
TEST(NvlsHeads, NicAtATenthIsNotAHead) {
  const Heads h = heads_with(0.1);
  EXPECT_EQ(h.channels, 7);
  EXPECT_EQ(h.slowed_tx, 0);
  EXPECT_EQ(h.same_rail_tx, 0);
  EXPECT_GT(h.other_rail_tx, 0);
  // As a failed NIC: the same heads.
  const Heads f = heads_with(1.0, true);
  EXPECT_EQ(f.channels, 7);
  EXPECT_EQ(f.same_rail_tx, 0);
  EXPECT_DOUBLE_EQ(f.other_rail_tx, h.other_rail_tx);
}

// The edge of the .49 rule: the lowest speed the search tries after 7 channels at 45 GB/s is 24
// (24 / 45 > .49; 22 / 45 < .49). At 0.5 the NIC has 24 GB/s and heads; at 0.4 (19.2) it does not.
TEST(NvlsHeads, TheSearchReachesDownToHalfTheBestSpeed) {
  EXPECT_EQ(heads_with(0.5).channels, 8);
  EXPECT_EQ(heads_with(0.4).channels, 7);
}

// NCCL 2.18's NVLS search ("NVLS needs to balance on all NICs") heads channel c by the c-th net's
// GPU whatever that net's speed: every NIC up heads.
TEST(NvlsHeads, Nccl218KeepsEveryNicUpAsAHead) {
  const Heads h = heads_with(0.1, false, "2.18.3");
  EXPECT_EQ(h.channels, 8);
  EXPECT_GT(h.slowed_tx, 0);
}

}  // namespace
}  // namespace traincast::models
