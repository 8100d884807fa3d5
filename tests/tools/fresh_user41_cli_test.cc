// Session 41's fresh-user leftovers on cluster.overrides: two entries for one element were taken
// silently; a node number past int range read "expected A <= B"; a bad override in a sweep's base
// file was reported per point without a position; nccl-tests took GPU overrides it does not model
// silently; `traincast cluster` dropped a one-node job's NIC override silently; a NIC of the one
// node left in service was "no GPU, NIC or link named"; a torus with a missing GPU drew a second,
// knock-on error at workload.parallel.dp.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::count;
using test_support::has;
using test_support::Result;
using test_support::run;

/// A small TP 8 x DP `dp` job on `nodes` DGX H100, `lines` (each ending in "\n") in its cluster
/// block from line 4 on.
std::string scenario(const std::string& lines, int nodes = 2, int dp = 2, const std::string& fabric = "") {
  return "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: " + std::to_string(nodes) + "\n" + lines + fabric +
         "}\nworkload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: " +
         std::to_string(dp) + " }\n  training { global_batch_size: 16 }\n}\n";
}

// Before: no word; the later entry acted, an exact repeat changed nothing, and the factor of a
// failed NIC had no effect, all silently.
TEST(FreshUser41Overrides, EntriesNamingOneElementWithOneFieldAreWarnedAtTheLaterOne) {
  const traincast::test_support::TempDir dir("fresh_user41_dup");
  const std::string path =
      dir.write("dup.textproto", scenario("  overrides { select: \"node1\" clock_factor: 0.8 }\n"
                                          "  overrides { select: \"node1/gpu5\" clock_factor: 0.9 }\n"
                                          "  overrides { select: \"node1/gpu5\" clock_factor: 0.9 }\n"
                                          "  overrides { select: \"node0/nic0\" bandwidth_factor: 0.5 }\n"
                                          "  overrides { select: \"node0.nic0.tx\" failed: true }\n"));
  const Result r = run({"run", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path +
                             ":5:3: cluster.overrides[1]: clock_factor 0.9 on \"node1/gpu5\" and cluster.overrides[0] "
                             "(clock_factor 0.8 on \"node1\") both name node1/gpu5: the later one acts there, "
                             "clock_factor 0.9, as overrides apply in order (expected each element named once per "
                             "field)\n"))
      << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path +
                             ":6:3: cluster.overrides[2]: repeats cluster.overrides[1] (clock_factor 0.9 on "
                             "\"node1/gpu5\"), so it changes nothing (expected each override once)\n"))
      << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path +
                             ":8:3: cluster.overrides[4]: failed: true on \"node0.nic0.tx\" fails node0.nic0.tx and 1 "
                             "more link, which cluster.overrides[3] (bandwidth_factor 0.5 on \"node0/nic0\") slows: "
                             "failed acts there, in either order, so cluster.overrides[3]'s bandwidth_factor has no "
                             "effect at all"))
      << r.err;
  EXPECT_EQ(count(r.err, "cluster.overrides[2]:"), 1) << r.err;  // one pair, not also with entry 0
}

// Overlapping ranges: the earlier entry is named as having no effect left where the later covers it all.
TEST(FreshUser41Overrides, AnEarlierRangeCoveredByALaterOneIsSaidToHaveNoEffectLeft) {
  const traincast::test_support::TempDir dir("fresh_user41_ranges");
  const std::string path =
      dir.write("ranges.textproto", scenario("  overrides { select: \"node1/gpu2\" power_cap_w: 400 }\n"
                                             "  overrides { select: \"node0-1\" power_cap_w: 500 }\n"));
  const Result r = run({"run", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path +
                             ":5:3: cluster.overrides[1]: power_cap_w 500 on \"node0-1\" and cluster.overrides[0] "
                             "(power_cap_w 400 on \"node1/gpu2\") both name node1/gpu2: the later one acts there, "
                             "power_cap_w 500, as overrides apply in order; cluster.overrides[0] has no effect left"))
      << r.err;
  // Different fields on one GPU both act: no warning.
  const Result both =
      run({"run", dir.write("both.textproto", scenario("  overrides { select: \"node1/gpu2\" power_cap_w: 400 }\n"
                                                       "  overrides { select: \"node1\" clock_factor: 0.9 }\n"))});
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_FALSE(has(both.err, "both name")) << both.err;
}

// Before: `bad node range in "node0-99999999999/gpu1" (expected node<A>-<B> with A <= B, e.g.
// node0-15)` and `missing: "node99999999999/gpu0" is not one GPU`.
TEST(FreshUser41Overrides, ANodeNumberPastIntRangeIsOutOfRange) {
  const traincast::test_support::TempDir dir("fresh_user41_range");
  const std::string range =
      dir.write("range.textproto", scenario("  overrides { select: \"node0-99999999999/gpu1\" clock_factor: 0.9 }\n"));
  Result r = run({"run", range});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, range + ":4:")) << r.err;
  EXPECT_TRUE(has(r.err,
                  "cluster.overrides[0].select: node number 99999999999 is out of range (expected a node index "
                  "from 0 to 1: the cluster has node0-1)"))
      << r.err;
  EXPECT_FALSE(has(r.err, "A <= B")) << r.err;
  const std::string one =
      dir.write("one.textproto", scenario("  overrides { select: \"node99999999999/gpu0\" missing: true }\n"));
  r = run({"run", one});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, one + ":4:")) << r.err;
  EXPECT_TRUE(has(r.err, "cluster.overrides[0].select: node number 99999999999 is out of range")) << r.err;
  EXPECT_FALSE(has(r.err, "is not one GPU")) << r.err;
  // A GPU index too.
  r = run({"run", dir.write("gpu.textproto",
                            scenario("  overrides { select: \"node1/gpu99999999999\" clock_factor: 0.9 }\n"))});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(
      has(r.err, "gpu number 99999999999 is out of range (expected an index from 0 to 7 on node1: it has gpu0-7)"))
      << r.err;
}

// Before: the sweep ran every point, each row's reason "cluster.overrides[0].select: no node9 ..."
// without a position, then exited 2.
TEST(FreshUser41Sweep, ABadOverrideInTheBaseFileIsRefusedOnceWithItsPosition) {
  const traincast::test_support::TempDir dir("fresh_user41_sweep");
  const std::string base =
      dir.write("base.textproto", scenario("  overrides { select: \"node9/gpu0\" clock_factor: 0.9 }\n"));
  const std::string file =
      dir.write("s.sweep.textproto",
                "scenario_file: \"base.textproto\"\n"
                "axis { path: \"workload.training.global_batch_size\" values: [\"16\", \"32\"] }\n");
  const std::string csv = dir.file("s.csv");
  const Result r = run({"sweep", file, "--out", csv});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, base + ":4:15: cluster.overrides[0].select: no node9 (the cluster has node0-1)")) << r.err;
  EXPECT_EQ(count(r.err, "no node9"), 1) << r.err;
  EXPECT_FALSE(has(r.err, "every point is invalid")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(csv));
  // An axis over the cluster may make the entry good at some points: each point says so.
  const std::string varied = dir.write("v.sweep.textproto",
                                       "scenario_file: \"base.textproto\"\n"
                                       "axis { path: \"cluster.num_nodes\" values: [\"2\", \"16\"] }\n"
                                       "axis { path: \"workload.parallel.dp\" values: [\"2\", \"16\"] }\n"
                                       "constraint: \"tp * dp == gpus\"\n");
  const Result v = run({"sweep", varied, "--out", dir.file("v.csv")});
  EXPECT_EQ(v.status, 0) << v.err;
}

// Before: clock_factor, power_cap_w and supply_c changed no row and drew no word (the power cap
// at or above the limit drew its own note, which now gives way to this one).
TEST(FreshUser41NcclTests, GpuOverridesAreWarnedOfOnceEach) {
  const traincast::test_support::TempDir dir("fresh_user41_nccl");
  const std::string path = dir.write("gpu.textproto",
                                     "cluster { node_template: \"dgx_h100\" num_nodes: 2\n"
                                     "  overrides { select: \"node0/gpu1\" clock_factor: 0.9 }\n"
                                     "  overrides { select: \"node1\" power_cap_w: 700 }\n"
                                     "  overrides { select: \"node0\" supply_c: 35 }\n"
                                     "  overrides { select: \"node1/nic0\" bandwidth_factor: 0.5 } }\n");
  const Result r = run({"nccl-tests", path, "-b", "1M", "-e", "1M"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path +
                             ":2:36: cluster.overrides[0].clock_factor has no effect in traincast nccl-tests: its "
                             "model times each collective by its transfers over NVLink, PCIe and the network, which a "
                             "GPU's clock does not change (expected bandwidth_factor or failed on a link or NIC, or "
                             "missing: true on a GPU, for nccl-tests; traincast run models clock_factor)\n"))
      << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path + ":3:"));
  EXPECT_TRUE(has(r.err, "cluster.overrides[1].power_cap_w has no effect in traincast nccl-tests")) << r.err;
  EXPECT_EQ(count(r.err, "cluster.overrides[1].power_cap_w"), 1) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path + ":4:"));
  EXPECT_TRUE(has(r.err, "cluster.overrides[2].supply_c has no effect in traincast nccl-tests")) << r.err;
  EXPECT_FALSE(has(r.err, "cluster.overrides[3]")) << r.err;  // a NIC's factor acts
}

// Before: the job on node0 ran as if node0/nic0 were healthy, silently (documented).
TEST(FreshUser41Cluster, ANicOverrideLeftOutOfAOneNodeJobIsWarned) {
  const traincast::test_support::TempDir dir("fresh_user41_cluster");
  const std::string jobs =
      "scheduler { policy: fifo placement: packed }\n"
      "workload {\n  model { name: \"small\" num_layers: 4 hidden_size: 4096 num_attention_heads: 32 "
      "ffn_hidden_size: 16384 vocab_size: 32000 seq_length: 2048 }\n  parallel { tp: 1 pp: 1 dp: 8 zero_stage: 0 "
      "overlap_grad_reduce: false }\n  training { global_batch_size: 8 micro_batch_size: 1 precision: bf16 }\n}\n";
  const std::string path = dir.write("one.textproto",
                                     "cluster { node_template: \"dgx_h100\" num_nodes: 2\n"
                                     "  overrides { select: \"node0/nic0\" bandwidth_factor: 0.5 } }\n" +
                                         jobs + "job { name: \"A\" gpus: 8 tokens: 2e8 }\n");
  const Result r = run({"cluster", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + path +
                             ":2:3: cluster.overrides[0] has no effect on job A (node0), of one node: a one-node "
                             "job's traffic never leaves its node, so the NIC \"node0/nic0\" names carries none of it "
                             "(expected a NIC override on the nodes of a job of 2 or more nodes)\n"))
      << r.err;
  // A job of two nodes uses it: no warning.
  const Result two = run({"cluster", dir.write("two.textproto",
                                               "cluster { node_template: \"dgx_h100\" num_nodes: 2\n"
                                               "  overrides { select: \"node0/nic0\" bandwidth_factor: 0.5 } }\n" +
                                                   jobs + "job { name: \"A\" gpus: 16 tokens: 2e8 }\n")});
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_FALSE(has(two.err, "has no effect on job")) << two.err;
}

// Before: `no GPU, NIC or link named "node1.nic3.tx" (...)`, where one node of 1 got the one-node message.
TEST(FreshUser41Overrides, ANicOfTheOnlyNodeInServiceGetsTheOneNodeMessage) {
  const traincast::test_support::TempDir dir("fresh_user41_drained_nic");
  for (const std::string select : {"node1/nic3", "node1.nic3.tx"}) {
    const std::string path = dir.write("d.textproto", scenario("  overrides { select: \"node0/gpu2\" missing: true }\n"
                                                               "  overrides { select: \"" +
                                                                   select + "\" bandwidth_factor: 0.5 }\n",
                                                               2, 1));
    const Result r = run({"run", path});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(has(r.err, path + ":5:")) << r.err;
    EXPECT_TRUE(has(r.err, "cluster.overrides[1].select: \"" + select +
                               "\": node1 is the only node in service (node0 is drained: its GPU node0/gpu2 is "
                               "missing (cluster.overrides[0])), so the job runs on one node, without a network, and "
                               "its NICs carry nothing"))
        << r.err;
    EXPECT_FALSE(has(r.err, "no GPU, NIC or link named")) << r.err;
  }
  // A one-node cluster's NIC by its direction's name: the one-node message too.
  const Result one =
      run({"run", dir.write("one.textproto",
                            scenario("  overrides { select: \"node0.nic3.tx\" bandwidth_factor: 0.5 }\n", 1, 1))});
  EXPECT_EQ(one.status, 2) << one.err;
  EXPECT_TRUE(has(one.err, "\"node0.nic3.tx\": a one-node cluster has no network, so its NICs carry nothing"))
      << one.err;
}

// Before: the torus refusal, then "workload.parallel.dp: tp * cp * pp * dp = 32 GPUs, but node1 is
// drained ..." for a node the torus never drains.
TEST(FreshUser41Overrides, AMissingGpuOnATorusIsOneError) {
  const traincast::test_support::TempDir dir("fresh_user41_torus");
  const std::string path =
      dir.write("torus.textproto", scenario("  overrides { select: \"node1/gpu0\" missing: true }\n", 4, 4,
                                            "  fabric { kind: torus torus_dims: [2, 2] }\n"));
  const Result r = run({"run", path});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, path + ":4:")) << r.err;
  EXPECT_TRUE(has(r.err, "cluster.overrides[0].missing: on a torus fabric")) << r.err;
  EXPECT_FALSE(has(r.err, "workload.parallel.dp")) << r.err;
}

}  // namespace
}  // namespace traincast::cli
