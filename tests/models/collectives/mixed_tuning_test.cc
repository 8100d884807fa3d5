// NCCL's tuning on a mixed cluster (ClusterSpec::node_groups): a collective inside a node group is
// tuned and timed for that group's GPU, as on a cluster of that GPU alone. It took node_group[0]'s
// GPU for every collective (an H100 node's NVLink ran at the A100's efficiency and LL caps).

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "models/collectives/nccl_tuning.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;

std::vector<int> gpus(int first, int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(MixedTuning, AGroupsCollectiveIsChosenAndTimedAsOnItsOwnGpu) {
  ClusterSpec mixed;
  mixed.node_groups = {{"dgx_a100", 1, ""}, {"dgx_h100", 1, ""}};
  mixed.node_template = "dgx_a100";
  mixed.num_nodes = 2;
  mixed.nic = "IB-HDR-200";  // one fabric at one line rate (docs/cluster.md, mixed clusters)
  ClusterSpec h100 = Bench::make("dgx_h100", 2);
  h100.nic = "IB-HDR-200";
  ClusterSpec a100 = Bench::make("dgx_a100", 2);
  a100.nic = "IB-HDR-200";
  const Bench m(mixed), h(h100), a(a100);
  for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
    for (double bytes = 1024; bytes <= 1024.0 * 1024 * 1024; bytes *= 8) {
      SCOPED_TRACE(std::to_string(static_cast<int>(op)) + " " + std::to_string(bytes));
      // The H100 node is node 1 of the mixed cluster; the same collective on node 0 of two H100s.
      const CollectiveChoice on_h100_group = m.engine.choose(call(op, gpus(8, 8), bytes));
      const CollectiveChoice on_h100 = h.engine.choose(call(op, gpus(0, 8), bytes));
      EXPECT_EQ(on_h100_group.algorithm, on_h100.algorithm);
      EXPECT_EQ(on_h100_group.protocol, on_h100.protocol);
      EXPECT_DOUBLE_EQ(on_h100_group.seconds(), on_h100.seconds());
      // The A100 node keeps the A100's figures.
      const CollectiveChoice on_a100_group = m.engine.choose(call(op, gpus(0, 8), bytes));
      const CollectiveChoice on_a100 = a.engine.choose(call(op, gpus(0, 8), bytes));
      EXPECT_EQ(on_a100_group.algorithm, on_a100.algorithm);
      EXPECT_EQ(on_a100_group.protocol, on_a100.protocol);
      EXPECT_DOUBLE_EQ(on_a100_group.seconds(), on_a100.seconds());
    }
  }
}

}  // namespace
}  // namespace traincast::models
