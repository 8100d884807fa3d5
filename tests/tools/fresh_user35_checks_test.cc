// What a fresh user found (session 35): a num_nodes beyond the simulator's range took 21 s and 3 GB
// to refuse when the scenario had cluster.overrides; one node in a rack declared for 4 saw a quarter
// of its recirculated heat (empty slots counted as airflow); a pipeline job's slow GPU was said to
// be held by the power limit; chakra export noted a --set the user never typed; a JSON string with
// bytes that are not UTF-8 got protobuf's message at 1:1; nccl-tests ran an empty file as the
// default DGX H100; a failure without a rate and a restart overhead of 1e300 s were accepted; a case
// whose scenario was its own cases file was told to run the command just run.

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::has;
using test_support::Result;
using test_support::run;

TEST(FreshUser35Checks, ANodeCountBeyondTheRangeIsRefusedWithoutBuildingTheOverridesCluster) {
  // 10^8 nodes with a missing GPU: the GPU-count error, and no sizes-only cluster of 10^8 nodes
  // behind it (21 s and 3 GB before; not timed here: a crash or the memory limit would show).
  const Result r =
      run({"run", kSrc + "/scenarios/topology/missing_gpu.textproto", "--set", "cluster.num_nodes=100000000"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "cluster.num_nodes: 100000000 nodes of 8 GPUs = 800000000 GPUs (expected at most 1048576"))
      << r.err;
  // A NIC selector (the full network would be built) on a cluster-only command: the network-size
  // refusal.
  const Result n = run({"nccl-tests", kSrc + "/scenarios/topology/failed_nic.textproto", "--op", "all_reduce", "-b",
                        "1M", "-e", "1M", "--set", "cluster.num_nodes=50000000"});
  EXPECT_EQ(n.status, 2);
  EXPECT_TRUE(has(n.err, "beyond the simulator's limit of 4,000,000")) << n.err;
}

TEST(FreshUser35Checks, EmptyRackSlotsMoveNoAir) {
  // One DGX H100 with 1 W of rack cooling: the answer no longer depends on how many empty slots the
  // rack is declared with (before: 38.8 C at 1 node per rack, 28.7 C at 4, 25.0 C at 1,000).
  std::string inlet;
  for (const std::string slots : {"1", "4", "1000"}) {
    const Result r =
        run({"run", "--set", "thermal.rack_cooling_capacity_w=1", "--set", "thermal.nodes_per_rack=" + slots});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::size_t at = r.out.find("rack inlet up to ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    if (inlet.empty()) inlet = line;
    EXPECT_EQ(line, inlet) << slots << " slots";
  }
  EXPECT_FALSE(has(inlet, "rack inlet up to 25.0 C")) << inlet;  // the excess heat recirculates
}

TEST(FreshUser35Checks, APipelineStagesSlowGpuIsHeldByItsClockFactor) {
  const traincast::test_support::TempDir dir("fresh_user35_pp_slow");
  std::string text = traincast::test_support::slurp(kSrc + "/scenarios/default.textproto");
  text.replace(text.find("cluster {"), 9, "cluster {\n  overrides { select: \"node0/gpu3\" clock_factor: 0.8 }");
  const std::string f = dir.write("pp.textproto", text);
  const Result r = run({"run", f, "--set", "workload.parallel.tp=4", "--set", "workload.parallel.pp=2", "--set",
                        "workload.parallel.dp=1", "--set", "workload.training.global_batch_size=8"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "SM clock down to 0.800 of the maximum (GPU 3;")) << r.out;
  EXPECT_TRUE(has(r.out, "held by its cluster.overrides clock_factor")) << r.out;
  EXPECT_FALSE(has(r.out, "W power limit\n")) << r.out;
}

TEST(FreshUser35Checks, ChakraExportNotesNoSetTheUserDidNotType) {
  const traincast::test_support::TempDir dir("fresh_user35_chakra");
  const std::string bad = dir.write("bad.textproto", "cluster { node_template: \"dgx_h100\" num_nodes: 0 }\n");
  const Result r = run({"chakra", "export", bad, "--out", dir.file("out")});
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(has(r.err, "options.fold_symmetric")) << r.err;
  EXPECT_TRUE(has(r.err, "traincast chakra run)")) << r.err;
}

TEST(FreshUser35Checks, AJsonStringThatIsNotUtf8IsNamedAtItsField) {
  const traincast::test_support::TempDir dir("fresh_user35_utf8");
  const std::string f = dir.write("bad.json", "{\n  \"name\": \"\xff\xfe\"\n}\n");
  const Result r = run({"nccl-tests", f, "--op", "all_reduce", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "bad.json:2:11: name: is not valid UTF-8 (expected UTF-8 text)")) << r.err;
  EXPECT_FALSE(has(r.err, "\xff")) << r.err;
}

TEST(FreshUser35Checks, ClusterOnlyCommandsRefuseAFileWithoutACluster) {
  const traincast::test_support::TempDir dir("fresh_user35_empty");
  const std::string f = dir.write("empty.textproto", "");
  for (const std::string cmd : {"nccl-tests", "explain"}) {
    const Result r =
        cmd == "explain" ? run({"explain", f}) : run({"nccl-tests", f, "--op", "all_reduce", "-b", "1M", "-e", "1M"});
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_TRUE(has(r.err, "empty.textproto:1:1: cluster: the file has no cluster section (expected a cluster { ... }"))
        << cmd << "\n"
        << r.err;
  }
}

TEST(FreshUser35Checks, AFailureWithoutARateAndAnEndlessRestartAreRefusedAtTheirFields) {
  const traincast::test_support::TempDir dir("fresh_user35_reliability");
  const std::string base = traincast::test_support::slurp(kSrc + "/scenarios/default.textproto");
  const Result no_rate =
      run({"run", dir.write("a.textproto", base + "reliability { horizon_s: 1e6 failure { cause: \"x\" } }\n")});
  EXPECT_EQ(no_rate.status, 2);
  EXPECT_TRUE(has(no_rate.err, "reliability.failure[0]: has no rate (expected per_gpu_hour or per_node_hour"))
      << no_rate.err;
  const Result zero =
      run({"run", dir.write("b.textproto",
                            base + "reliability { horizon_s: 1e6 failure { cause: \"x\" per_gpu_hour: 0 } }\n")});
  EXPECT_EQ(zero.status, 0) << zero.err;  // a stated 0 is a cause that never fails
  const Result endless =
      run({"run", dir.write("c.textproto", base + "reliability { horizon_s: 1e6 restart_overhead_s: 1e300 }\n")});
  EXPECT_EQ(endless.status, 2);
  EXPECT_TRUE(has(endless.err, "c.textproto:")) << endless.err;
  EXPECT_TRUE(has(endless.err, "reliability.restart_overhead_s: got 1e300 (expected at most 3.2e8 s")) << endless.err;
}

TEST(FreshUser35Checks, ACaseWhoseScenarioIsItsOwnCasesFileIsNamedAtThatField) {
  const traincast::test_support::TempDir dir("fresh_user35_cases");
  const std::string f = dir.write("v.cases.textproto",
                                  "source: \"x\"\ncase {\n  name: \"c1\"\n  scenario: \"v.cases.textproto\"\n"
                                  "  metric: \"iteration_time_s\"\n  measured: 1\n}\n");
  const Result r = run({"validate", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "v.cases.textproto:4:3: case[0].scenario: \"v.cases.textproto\" is this cases file itself"))
      << r.err;
}

TEST(FreshUser35Checks, ATorusDimensionOfExtentOneIsRefused) {
  // [16, 1] ran the same ring at half of [16]'s bandwidth: two of four NIC port groups led nowhere.
  const traincast::test_support::TempDir dir("fresh_user35_torus");
  const std::string f =
      dir.write("t.textproto",
                "cluster { node_template: \"dgx_h100\" num_nodes: 16 fabric { kind: torus torus_dims: [16, 1] } }\n");
  const Result bad = run({"explain", f});
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(has(bad.err, "cluster.fabric.torus_dims[1]: got 1 beside other dimensions")) << bad.err;
  EXPECT_TRUE(has(bad.err, "e.g. [16] for one ring)")) << bad.err;
  const Result ring = run({"explain", dir.write("r.textproto",
                                                "cluster { node_template: \"dgx_h100\" num_nodes: 16 "
                                                "fabric { kind: torus torus_dims: [16] } }\n")});
  EXPECT_EQ(ring.status, 0) << ring.err;
}

TEST(FreshUser35Checks, ChakraRunNeverWritesItsTraceOverAnInputTrace) {
  // Round 2: --trace DIR/NAME.0.et --force overwrote rank 0's input trace with the Chrome trace.
  const traincast::test_support::TempDir dir("fresh_user35_chakra_trace");
  const std::string scenario = kSrc + "/scenarios/chakra/gpt_small_export.textproto";
  const Result e = run({"chakra", "export", scenario, "--out", dir.file("et"), "--name", "g"});
  ASSERT_EQ(e.status, 0) << e.err;
  const std::string rank0 = dir.file("et") + "/g.0.et";
  const std::string before = traincast::test_support::slurp(rank0);
  for (const std::string& given : {dir.file("et") + "/g", dir.file("et")}) {
    const Result r = run({"chakra", "run", scenario, given, "--trace", rank0, "--force"});
    EXPECT_EQ(r.status, 2) << given << "\n" << r.out;
    EXPECT_TRUE(has(r.err, "is one of the input files")) << r.err;
  }
  EXPECT_EQ(traincast::test_support::slurp(rank0), before);
}

TEST(FreshUser35Checks, ChakraExportsReplayLineCarriesItsSetValues) {
  // Round 2: the printed replay left the --set values out and failed (16 ranks vs 8 GPUs).
  const traincast::test_support::TempDir dir("fresh_user35_chakra_replay");
  const std::string scenario = kSrc + "/scenarios/chakra/gpt_small_export.textproto";
  const Result e =
      run({"chakra", "export", scenario, "--out", dir.file("et"), "--name", "g", "--set", "cluster.num_nodes=2",
           "--set", "workload.parallel.dp=4", "--set", "workload.training.global_batch_size=32"});
  ASSERT_EQ(e.status, 0) << e.err;
  // Only what chakra run reads (the cluster, the precision): the layout is in the traces.
  EXPECT_TRUE(has(e.out, "/g --set cluster.num_nodes=2\n")) << e.out;
  const Result r = run({"chakra", "run", scenario, dir.file("et") + "/g", "--set", "cluster.num_nodes=2"});
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace traincast::cli
