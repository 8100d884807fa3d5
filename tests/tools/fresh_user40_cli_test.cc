// Session 39's fresh-user leftovers (session 40): `traincast cluster` called a leaf0->spine1
// selector "no GPU, NIC or link named"; thermal.supply_air_c: 25 under liquid cooling (its default)
// drew no warning; a cluster.overrides power_cap_w above the GPUs' limit was silent yet split the
// folding classes; the cluster footer's cache keys left out the overrides; compare judged two runs
// on one GPU by two independent bands; nccl-tests counted all of HBM as buffer space; a sweep's
// warning raised at one axis value did not say which.

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

const std::string kSrc = TRAINCAST_SOURCE_DIR;

/// A small TP 8 x DP 2 job on two DGX H100 with `cluster_extra` in its cluster block and `rest`
/// after the workload (the fresh_user39b scenario).
std::string two_nodes(const std::string& cluster_extra, const std::string& rest = "") {
  return "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n  " + cluster_extra +
         "\n}\nworkload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: 2 }\n  training { global_batch_size: 16 }\n}\n" +
         rest;
}

/// Four DGX H100 in two leaves of two (adaptive routing, the default), jobs A and B of 2 nodes
/// each, packed FIFO; `extra` inside cluster { }.
std::string four_nodes(const std::string& extra) {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 4 fabric { kind: fat_tree nodes_per_leaf: 2 } " + extra +
         " }\nscheduler { policy: fifo placement: packed }\n"
         "workload {\n  model { name: \"small\" num_layers: 4 hidden_size: 4096 num_attention_heads: 32 "
         "ffn_hidden_size: 16384 vocab_size: 32000 seq_length: 2048 }\n  parallel { tp: 1 pp: 1 dp: 8 zero_stage: 0 "
         "overlap_grad_reduce: false }\n  training { global_batch_size: 8 micro_batch_size: 1 precision: bf16 }\n}\n"
         "job { name: \"A\" gpus: 16 tokens: 2e8 }\njob { name: \"B\" gpus: 16 tokens: 2e8 }\n";
}

// Before: adaptive routing pools leaf0's up-links as leaf0->spines, so the whole-cluster check
// said `no GPU, NIC or link named "leaf0->spine1" (expected ... or leaf0->spine1 ...)`: it quoted
// the selector it refused as an example, and docs/cluster.md quoted another message.
TEST(FreshUser40Cluster, ASwitchLinkSelectorIsNamedAsSharedWithTheSelectorsClusterAccepts) {
  const traincast::test_support::TempDir dir("fresh_user40_leaf");
  const std::string leaf =
      dir.write("leaf.textproto", four_nodes("overrides { select: \"leaf0->spine1\" bandwidth_factor: 0.5 }"));
  Result r = run({"cluster", leaf});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, leaf + ":1:")) << r.err;
  EXPECT_TRUE(has(r.err,
                  ": cluster.overrides[0].select: \"leaf0->spine1\" is a link between switches "
                  "or nodes, which the jobs share; traincast cluster simulates each job on a "
                  "sub-cluster of its own nodes, which has no such link (expected, in traincast "
                  "cluster, a selector inside the nodes a job is placed on: node<N>/gpu<K>, node<N>, "
                  "node<A>-<B>, node<A>-<B>/gpu<K>, node<N>/nic<K> or a node's own link node<N>.<link>"))
      << r.err;
  EXPECT_FALSE(has(r.err, "no GPU, NIC or link named")) << r.err;
  EXPECT_EQ(r.out, "");
  // A selector of no form at all is named as such, with the same accepted forms.
  r = run({"cluster", dir.write("gpu.textproto", four_nodes("overrides { select: \"gpu3\" clock_factor: 0.5 }"))});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "cluster.overrides[0].select: \"gpu3\" names no GPU, node, NIC or node-internal link "
                  "(expected, in traincast cluster, a selector inside the nodes"))
      << r.err;
}

// Before: "Detailed simulations 1 (cached per workload, GPUs, leaves spanned and co-runners)",
// although the cache keys on each job's nodes' overrides too: a job on a slowed node is simulated
// apart (2 simulations), which the footer now says.
TEST(FreshUser40Cluster, TheFooterNamesTheOverridesTheCacheKeysOn) {
  const traincast::test_support::TempDir dir("fresh_user40_footer");
  const std::string footer =
      "(cached per workload, GPUs, leaves spanned, the cluster.overrides of its nodes and co-runners)";
  const Result healthy = run({"cluster", dir.write("healthy.textproto", four_nodes(""))});
  ASSERT_EQ(healthy.status, 0) << healthy.err;
  EXPECT_TRUE(has(healthy.out, "Detailed simulations 1 " + footer)) << healthy.out;
  const Result slow =
      run({"cluster", dir.write("slow.textproto", four_nodes("overrides { select: \"node3\" clock_factor: 0.5 }"))});
  ASSERT_EQ(slow.status, 0) << slow.err;
  EXPECT_TRUE(has(slow.out, "Detailed simulations 2 " + footer)) << slow.out;
  // A power cap without effect (the TDP) is warned and keys nothing: one simulation, as healthy.
  const Result tdp =
      run({"cluster", dir.write("tdp.textproto", four_nodes("overrides { select: \"node3\" power_cap_w: 700 }"))});
  ASSERT_EQ(tdp.status, 0) << tdp.err;
  EXPECT_TRUE(has(tdp.err, "cluster.overrides[0].power_cap_w has no effect: 700 W")) << tdp.err;
  EXPECT_TRUE(has(tdp.out, "Detailed simulations 1 " + footer)) << tdp.out;
}

// Before: 25 equals the default, so supply_air_c: 25 under liquid read as unset and drew nothing
// (40 was warned); likewise coolant_c: 35 under air. Now the field's presence counts.
TEST(FreshUser40Thermal, AnAirOnlyFieldAtItsDefaultIsWarnedUnderLiquid) {
  const traincast::test_support::TempDir dir("fresh_user40_liquid");
  const std::string liquid =
      dir.write("liquid.textproto", two_nodes("", "thermal {\n  cooling: liquid\n  supply_air_c: 25\n}\n"));
  Result r = run({"run", liquid});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + liquid + ":13:3: thermal.supply_air_c has no effect: cooling is liquid"))
      << r.err;
  const std::string air = dir.write("air.textproto", two_nodes(""));
  r = run({"run", air, "--set", "thermal.coolant_c=35"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: --set: thermal.coolant_c has no effect: cooling is air")) << r.err;

  // A printed scenario writes the inlet its cooling uses (defaults filled in) and not the other,
  // so it reads back without a warning it did not earn.
  r = run({"run", air, "--print-scenario"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  supply_air_c: 25\n")) << r.out;
  EXPECT_FALSE(has(r.out, "coolant_c")) << r.out;
  const std::string printed = dir.write("printed.textproto", r.out);
  r = run({"run", printed});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.err, "has no effect")) << r.err;
  r = run({"run", air, "--set", "thermal.cooling=liquid", "--print-scenario"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  coolant_c: 35\n")) << r.out;
  EXPECT_FALSE(has(r.out, "supply_air_c")) << r.out;
  // Given, it is printed, and warned again on reading back.
  r = run({"run", liquid, "--print-scenario"});
  EXPECT_TRUE(has(r.out, "  supply_air_c: 25\n")) << r.out;
}

// Before: a 600 W cap under a 500 W cluster limit printed nothing, and "Folding: 2 replicas in 2
// classes, 2 simulated: replicas 0 (nominal); replicas 1 (power_cap_w 600 on node1/gpu0)" (6,621
// events against 3,476 folded, the same iteration). Now a positioned warning, one class.
TEST(FreshUser40Power, ACapAboveTheLimitIsWarnedAndSplitsNoClass) {
  const traincast::test_support::TempDir dir("fresh_user40_cap");
  const std::string loose = dir.write(
      "loose.textproto",
      two_nodes("overrides { select: \"node1/gpu0\" power_cap_w: 600 }", "power { gpu_power_limit_w: 500 }\n"));
  const Result r = run({"run", loose});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + loose +
                             ":4:36: cluster.overrides[0].power_cap_w has no effect: 600 W is at or above the power "
                             "limit of 500 W of the GPUs it names (power.gpu_power_limit_w); a cap only lowers a "
                             "GPU's limit (expected below 500 W, or no override)\n"))
      << r.err;
  EXPECT_FALSE(has(r.out, "Folding:")) << r.out;
  EXPECT_TRUE(has(r.out, "identical DP replicas simulated once")) << r.out;
  const Result plain = run({"run", dir.write("plain.textproto", two_nodes("", "power { gpu_power_limit_w: 500 }\n"))});
  ASSERT_EQ(plain.status, 0) << plain.err;
  const auto iteration = [](const std::string& out) { return out.substr(out.find("Iteration"), 80); };
  EXPECT_EQ(iteration(r.out), iteration(plain.out));

  // At the TDP, without a cluster limit: the TDP is named.
  const Result tdp =
      run({"run", dir.write("tdp.textproto", two_nodes("overrides { select: \"node1\" power_cap_w: 700 }"))});
  ASSERT_EQ(tdp.status, 0) << tdp.err;
  EXPECT_TRUE(has(tdp.err,
                  "power_cap_w has no effect: 700 W is at or above the power limit of 700 W of the GPUs it "
                  "names (the TDP of H100-SXM5-80GB)"))
      << tdp.err;
  // A cap that binds draws nothing and keeps its class.
  const Result binds =
      run({"run", dir.write("binds.textproto", two_nodes("overrides { select: \"node1\" power_cap_w: 400 }"))});
  ASSERT_EQ(binds.status, 0) << binds.err;
  EXPECT_FALSE(has(binds.err, "power_cap_w has no effect")) << binds.err;
  EXPECT_TRUE(has(binds.out, "(power_cap_w 400 on node1/gpu0 (+7 more GPUs))")) << binds.out;
}

// Before: the judgement combined the two sides' H100 bands in quadrature (+/-10.2 %) as if their
// errors were independent; two runs on one GPU share its systematic error. Now the band of a
// ratio measured on the GPU's gated runs, and the text says so.
TEST(FreshUser40Compare, TwoRunsOnOneGpuAreJudgedByTheRatioBand) {
  const traincast::test_support::TempDir dir("fresh_user40_compare");
  const std::string a = dir.write("a.textproto", two_nodes(""));
  std::string four = two_nodes("");
  four.replace(four.find("tp: 8 dp: 2"), 11, "tp: 4 dp: 4");
  const Result r = run({"compare", a, dir.write("b.textproto", four)});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  " model error (+/-11.4 %, the error of a ratio of two runs on one H100-SXM5-80GB: 90 pairs "
                  "of its gated runs)"))
      << r.out;
}

// Before: -e up to 2 x size within all of HBM was taken (a 26.7 GB+ all_reduce on H100 printed
// rows), where nccl-tests reduces -e to (memory - reserve - 1 GiB) / 3 and says so.
TEST(FreshUser40NcclTests, TheLimitIsNcclTestsOwnAndSaidToBeAnUpperBound) {
  const std::string h100 = kSrc + "/scenarios/nccl/dgx_h100.textproto";
  // (85520809984 - 4 GiB - 1 GiB) / 3 = 26717366954.7: the largest size of 8-byte elements is ...952.
  const Result fits = run({"nccl-tests", h100, "--op", "all_reduce", "-b", "26717366952", "-e", "26717366952"});
  EXPECT_EQ(fits.status, 0) << fits.err;
  const Result r = run({"nccl-tests", h100, "--op", "all_reduce", "-b", "26717366960", "-e", "26717366960"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "-e 26717366960: all_reduce at 26717366960 bytes is more than nccl-tests runs on "
                  "H100-SXM5-80GB: it reduces -e to at most 26717366954 bytes"))
      << r.err;
  EXPECT_TRUE(has(r.err,
                  "(expected -e 26717366952 or less; an upper bound: CUDA reports somewhat less memory than "
                  "the HBM, so a real run's limit is a little lower)"))
      << r.err;
}

// Before: "warning: cluster.fabric.kind has no effect: the cluster is one node, ..." printed
// without the axis value that raised it.
TEST(FreshUser40Sweep, AWarningOfSomeAxisValuesNamesThem) {
  const traincast::test_support::TempDir dir("fresh_user40_sweep");
  const std::string file = dir.write(
      "s.sweep.textproto",
      "scenario {\n" + two_nodes("fabric { kind: fat_tree }") +
          "}\naxis { path: \"cluster.num_nodes\" values: [\"1\", \"2\"] }\naxis { path: \"workload.parallel.dp\" "
          "values: [\"1\", \"2\"] }\nconstraint: \"tp * dp == gpus\"\n");
  const Result r = run({"sweep", file, "--out", dir.file("s.csv")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err,
                  "warning: cluster.fabric.kind has no effect: the cluster is one node, so no traffic crosses "
                  "the fabric (expected num_nodes > 1 for fabric settings to act) (at cluster.num_nodes=1)\n"))
      << r.err;
}

}  // namespace
}  // namespace traincast::cli
