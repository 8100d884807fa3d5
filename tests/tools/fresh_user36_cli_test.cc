// What fresh users found (session 35's rounds, left for session 36): a torus with fewer NICs than
// neighbour directions was simulated with cables that cannot be built; a torus took a tree's
// routing and leaf_up_ports without a word; subnormal numbers (1e-310) gave "MAPE inf %" and "MTBF
// inf days"; a zero failure rate printed "checkpoint every 11574074074.1 days"; nccl-tests' -b 0.5
// ran as 0 bytes; refused values printed as read (1e+300), not as written; bytes that are not
// UTF-8 were echoed raw; `cluster { }` passed the cluster-only commands' refusal; option messages
// without "expected"; 0x2 read as 2; a calibration CSV size of 1e23 taken; one warning per unused
// node template.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
const std::string kDoubleRange =
    "out of range as written (expected 0 or a finite number of magnitude 2.2e-308 to 1.8e308: a double holds no "
    "larger one, and smaller ones only subnormal, with digits lost)";

using test_support::has;
using test_support::Result;
using test_support::run;

std::string default_scenario() { return traincast::test_support::slurp(kSrc + "/scenarios/default.textproto"); }

std::string torus(int nodes, const std::string& dims, const std::string& extra = "") {
  return "cluster { node_template: \"dgx_h100\" num_nodes: " + std::to_string(nodes) + extra +
         " fabric { kind: torus torus_dims: [" + dims + "] } }\n";
}

// Each neighbour direction (2 per dimension, 1 for extent 2) takes whole NIC ports: 1 NIC on a
// 4 x 4 torus gave 8 cables for 32 neighbour links, 3 NICs three quarters of a port a direction.
TEST(FreshUser36Cli, ATorusWithNicsThatDoNotCableItsDirectionsIsRefused) {
  const traincast::test_support::TempDir dir("fresh_user36_torus_nics");
  const Result one = run({"explain", dir.write("one.textproto", torus(16, "4, 4", " nics_per_node: 1"))});
  EXPECT_EQ(one.status, 2);
  EXPECT_TRUE(has(one.err,
                  "one.textproto:1:51: cluster.nics_per_node: 1 NIC per node cannot cable the 4 neighbour "
                  "directions of a 4x4 torus"))
      << one.err;
  EXPECT_TRUE(has(one.err, "(expected cluster.nics_per_node a multiple of 4, e.g. 4;")) << one.err;
  const Result three = run({"explain", dir.write("three.textproto", torus(16, "4, 4", " nics_per_node: 3"))});
  EXPECT_EQ(three.status, 2);
  EXPECT_TRUE(has(three.err, "3 NICs per node cannot cable the 4 neighbour directions")) << three.err;
  const Result six = run({"explain", dir.write("six.textproto", torus(16, "4, 4", " nics_per_node: 6"))});
  EXPECT_EQ(six.status, 2);
  EXPECT_TRUE(has(six.err, "6 NICs per node do not split evenly over the 4 neighbour directions")) << six.err;
  EXPECT_TRUE(has(six.err, "e.g. 4 or 8;")) << six.err;
  // The template's own count: 8 DGX H100 NICs over a 4 x 4 x 4 torus's 6 directions.
  const Result cube = run({"explain", dir.write("cube.textproto", torus(64, "4, 4, 4"))});
  EXPECT_EQ(cube.status, 2);
  EXPECT_TRUE(has(cube.err,
                  "cluster.fabric.torus_dims: the node template \"dgx_h100\"'s 8 NICs per node do not "
                  "split evenly over the 6 neighbour directions of a 4x4x4 torus"))
      << cube.err;
  EXPECT_TRUE(has(cube.err, "e.g. 6 or 12;")) << cube.err;
  // A dimension of extent 2 has one neighbour: [2, 4] has 3 directions, 6 NICs cable it.
  EXPECT_EQ(run({"explain", dir.write("ok.textproto", torus(8, "2, 4", " nics_per_node: 6"))}).status, 0);
  // A ring of 2 nodes is one link each way over all the NICs (it was two, routing used one).
  const Result pair = run({"explain", dir.write("pair.textproto", torus(2, "2"))});
  EXPECT_EQ(pair.status, 0) << pair.err;
  EXPECT_TRUE(has(pair.out, "Fabric: torus 2, 400 GB/s per direction to each neighbour")) << pair.out;
  const std::string doc = traincast::test_support::slurp(kSrc + "/docs/fabric.md");
  EXPECT_TRUE(has(doc, "NICs per\nnode must be a multiple of the directions")) << "docs/fabric.md";
}

// A torus routes one way (dimension order, the shorter way round) and has no switches.
TEST(FreshUser36Cli, TreeFieldsOnATorusAreNamedAndItsHopsAreNotSwitchHops) {
  const std::string t = kSrc + "/scenarios/topology/torus_4x4.textproto";
  const Result r = run({"explain", t, "--set", "cluster.fabric.routing=ecmp_hash", "--set",
                        "cluster.fabric.leaf_up_ports=4", "--set", "cluster.fabric.ecmp_seed=3"});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const std::string field : {"routing", "leaf_up_ports", "ecmp_seed"})
    EXPECT_TRUE(
        has(r.err, "warning: --set: cluster.fabric." + field + " has no effect: a torus has no leaf or spine switches"))
        << r.err;
  EXPECT_TRUE(has(r.out, "dimension-order routing, 130 ns per hop between nodes, cables 0 m")) << r.out;
  EXPECT_FALSE(has(r.out, "per switch hop")) << r.out;
  const Result tree = run({"explain", kSrc + "/scenarios/nccl/h100_ib400_2node.textproto"});
  EXPECT_TRUE(has(tree.out, "130 ns per switch hop")) << tree.out;
}

// 1e-310 is a subnormal: its reciprocal is inf ("MTBF inf days", "MAPE inf %").
TEST(FreshUser36Cli, ASubnormalNumberIsOutOfRangeAsWrittenEverywhere) {
  const traincast::test_support::TempDir dir("fresh_user36_subnormal");
  const Result t =
      run({"run", dir.write("r.textproto", default_scenario() + "reliability { failure { cause: \"gpu\" per_gpu_hour: "
                                                                "1e-310 } horizon_s: 86400 }\n")});
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(has(t.err, "reliability.failure[0].per_gpu_hour: 1e-310 is " + kDoubleRange)) << t.err;
  EXPECT_FALSE(has(t.out, "inf")) << t.out;
  const Result j = run({"run", dir.write("r.json", "{\"cost\": {\"utilization\": 1e-310}}")});
  EXPECT_EQ(j.status, 2);
  EXPECT_TRUE(has(j.err, "cost.utilization: 1e-310 is " + kDoubleRange)) << j.err;
  const Result set = run({"run", "--set", "cost.utilization=1e-310"});
  EXPECT_EQ(set.err, "--set: cost.utilization: invalid value \"1e-310\": " + kDoubleRange + "\n");
  const Result option = run({"compare", "--vary", "workload.parallel.tp=1,2", "--tokens", "-1e-310"});
  EXPECT_EQ(option.err, "traincast: --tokens: got \"-1e-310\": " + kDoubleRange + "\n");
  const Result cases =
      run({"validate", dir.write("v.cases.textproto", "source: \"x\"\ncase {\n  name: \"c1\"\n  scenario: \"" + kSrc +
                                                          "/scenarios/default.textproto\"\n  metric: "
                                                          "\"iteration_time_s\"\n  measured: 1e-310\n}\n")});
  EXPECT_EQ(cases.status, 2);
  EXPECT_TRUE(has(cases.err, "v.cases.textproto:6:13: case[0].measured: 1e-310 is " + kDoubleRange)) << cases.err;
}

TEST(FreshUser36Cli, AJobThatNeverFailsNeedsNoCheckpointInterval) {
  const traincast::test_support::TempDir dir("fresh_user36_never_fails");
  std::string text = default_scenario() +
                     "reliability { failure { cause: \"gpu\" per_gpu_hour: 0 } horizon_s: 86400 }\n"
                     "storage { }\n";
  const Result r = run({"run", dir.write("z.textproto", text)});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "job MTBF      never (every failure rate is 0); no checkpoint needed (the job never fails)"))
      << r.out;
  EXPECT_TRUE(has(r.out, " a checkpoint, none needed (the job never fails); read back")) << r.out;
  EXPECT_FALSE(has(r.out, "11574074074")) << r.out;
}

TEST(FreshUser36Cli, NcclTestsSizesAreWholeBytesAndInRangeAsWritten) {
  const std::string s = kSrc + "/scenarios/nccl/consumer_2x2080ti_nop2p.textproto";
  const Result half = run({"nccl-tests", s, "-b", "0.5", "-e", "1M"});
  EXPECT_EQ(half.status, 2);
  EXPECT_EQ(half.err,
            "traincast: -b: size '0.5' is not a whole number of bytes (expected a whole size, e.g. 8, 64K, or 1.5K = "
            "1536)\n");
  const Result step = run({"nccl-tests", s, "-b", "1M", "-e", "2M", "-i", "1.5"});
  EXPECT_EQ(step.status, 2);
  EXPECT_TRUE(has(step.err, "traincast: -i: size '1.5' is not a whole number of bytes")) << step.err;
  const Result big = run({"nccl-tests", s, "-b", "1e400", "-e", "1M"});
  EXPECT_EQ(big.status, 2);
  EXPECT_EQ(big.err, "traincast: -b: got \"1e400\": " + kDoubleRange + "\n");
  const Result k = run({"nccl-tests", s, "-b", "1.5K", "-e", "1.5K"});
  EXPECT_EQ(k.status, 0) << k.err;
  EXPECT_TRUE(has(k.out, "        1536 ")) << k.out;
}

// The value as the file wrote it, where it reads back as the value refused.
TEST(FreshUser36Cli, ARefusedValueIsEchoedAsWritten) {
  const traincast::test_support::TempDir dir("fresh_user36_as_written");
  const Result big = run({"run", dir.write("b.textproto", default_scenario() + "cost { switch_price_usd: 1e300 }\n")});
  EXPECT_TRUE(has(big.err, "cost.switch_price_usd: got 1e300 (expected a price")) << big.err;
  const Result zero = run({"run", dir.write("z.textproto", default_scenario() + "cost { switch_price_usd: 0.000 }\n")});
  EXPECT_TRUE(has(zero.err, "cost.switch_price_usd: got 0.000 (expected a price")) << zero.err;
  const Result air = run({"run", dir.write("a.textproto", default_scenario() + "thermal { supply_air_c: 1e2 }\n")});
  EXPECT_TRUE(has(air.err, "thermal.supply_air_c: got 1e2 ")) << air.err;
  std::string nodes = default_scenario();
  nodes.replace(nodes.find("num_nodes: 1"), 12, "num_nodes: -0");
  const Result n = run({"run", dir.write("n.textproto", nodes)});
  EXPECT_TRUE(has(n.err, "cluster.num_nodes: got -0 (expected")) << n.err;
}

// Bytes that are not UTF-8 are refused at their field or shown as "?", never echoed raw.
TEST(FreshUser36Cli, TextThatIsNotUtf8IsNeverEchoedRaw) {
  const traincast::test_support::TempDir dir("fresh_user36_utf8");
  const Result e = run({"explain", dir.write("e.json",
                                             "{\"cluster\": {\"node_template\": \"dgx_h100\", \"num_nodes\": "
                                             "2, \"fabric\": {\"kind\": \"\xff\"}}}")});
  EXPECT_EQ(e.status, 2);
  EXPECT_TRUE(has(e.err, "cluster.fabric.kind: invalid value \"?\" (expected one of:")) << e.err;
  const Result key = run({"explain", dir.write("k.json",
                                               "{\"cluster\": {\"node_template\": \"dgx_h100\", "
                                               "\"\xff\xfe\": 2}}")});
  EXPECT_TRUE(has(key.err, "cluster.??: unknown field")) << key.err;
  const Result sel = run({"explain", dir.write("s.textproto",
                                               "cluster { node_template: \"dgx_h100\" num_nodes: 2 "
                                               "overrides { select: \"node0/gpu\xff\" clock_factor: "
                                               "0.5 } }\n")});
  EXPECT_EQ(sel.status, 2);
  EXPECT_TRUE(has(sel.err, "cluster.overrides[0].select: is not valid UTF-8 (expected a GPU")) << sel.err;
  for (const Result* r : {&e, &key, &sel}) EXPECT_FALSE(has(r->err, "\xff")) << r->err;
  const std::string base = kSrc + "/scenarios/default.textproto";
  const Result sweep = run({"sweep",
                            dir.write("w.sweep.textproto", "name: \"w\xff\"\nscenario_file: \"" + base +
                                                               "\"\naxis { path: \"cluster.node_template\" "
                                                               "values: [\"dgx\xfe\"] }\n"),
                            "--out", dir.file("w.csv")});
  EXPECT_EQ(sweep.status, 2);
  EXPECT_TRUE(has(sweep.err, "name: is not valid UTF-8 (expected UTF-8 text)")) << sweep.err;
  EXPECT_TRUE(has(sweep.err, "axis[0].values[0]: value is not valid UTF-8")) << sweep.err;
  EXPECT_FALSE(has(sweep.err, "\xfe")) << sweep.err;
  const Result cases = run({"validate", dir.write("v.cases.textproto",
                                                  "source: \"x\"\ncase {\n  name: \"c\xff\"\n"
                                                  "  scenario: \"" +
                                                      base +
                                                      "\"\n  metric: \"iteration_time_s\"\n"
                                                      "  measured: 1\n}\n")});
  EXPECT_EQ(cases.status, 2);
  EXPECT_TRUE(has(cases.err, "case[0].name: is not valid UTF-8")) << cases.err;
}

TEST(FreshUser36Cli, AnEmptyClusterSectionIsRefusedByTheClusterOnlyCommands) {
  const traincast::test_support::TempDir dir("fresh_user36_empty_cluster");
  const Result t = run({"explain", dir.write("e.textproto", "name: \"x\"\ncluster { }\n")});
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(has(t.err,
                  "e.textproto:2:1: cluster: the cluster section is empty (expected a cluster { ... } block, "
                  "e.g. cluster { node_template: \"dgx_h100\" num_nodes: 2 }"))
      << t.err;
  const Result j = run({"nccl-tests", dir.write("e.json", "{}"), "-b", "1M", "-e", "1M"});
  EXPECT_EQ(j.status, 2);
  EXPECT_TRUE(has(j.err,
                  "e.json:1:1: cluster: the file has no cluster section (expected a \"cluster\": {...} "
                  "object, e.g. \"cluster\": {\"node_template\": \"dgx_h100\", \"num_nodes\": 2}"))
      << j.err;
}

TEST(FreshUser36Cli, OptionMessagesSayWhatIsExpected) {
  const Result top = run({"plan", "--top", "0"});
  EXPECT_EQ(top.err, "traincast: --top: got 0 (expected a whole number >= 1: the layouts to print)\n");
  const Result slack = run({"plan", "--estimate-slack", "-1.5"});
  EXPECT_EQ(slack.err,
            "traincast: --estimate-slack: got -1.5 (expected a percentage >= 0: layouts estimated within this many "
            "percent of the best are simulated)\n");
  const Result rep = run({"chakra", "run", kSrc + "/scenarios/default.textproto", "x", "--replicate", "0"});
  EXPECT_EQ(rep.err,
            "traincast: --replicate: got 0 (expected a whole number >= 1: the ranks that run the one trace)\n");
}

// Found only by simulating the job, the budget's refusal had no file position.
TEST(FreshUser36Cli, AJobBudgetBeyondTheSchedulersClockIsPositioned) {
  const traincast::test_support::TempDir dir("fresh_user36_budget");
  const Result r =
      run({"cluster", dir.write("c.textproto", default_scenario() + "job { name: \"A\" gpus: 8 duration_s: 10 }\n"
                                                                    "job { name: \"B\" gpus: 8 tokens: 1e15 }\n")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "c.textproto:43:25: job[1] (B): its token budget takes")) << r.err;
  EXPECT_FALSE(has(r.err, "traincast: job[1]")) << r.err;
}

TEST(FreshUser36Cli, IntegerFieldsTakeDecimalDigitsNotHex) {
  const traincast::test_support::TempDir dir("fresh_user36_hex");
  std::string text = default_scenario();
  text.replace(text.find("num_nodes: 1"), 12, "num_nodes: 0x2");
  const Result t = run({"run", dir.write("h.textproto", text)});
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(
      has(t.err, "h.textproto:11:14: cluster.num_nodes: 0x2 is hexadecimal (expected a decimal number, e.g. 2)"))
      << t.err;
  const Result set = run({"run", "--set", "cluster.num_nodes=0x2"});
  EXPECT_EQ(set.status, 2);
  EXPECT_TRUE(has(set.err, "--set: cluster.num_nodes: 0x2 is hexadecimal (expected a decimal number, e.g. 2"))
      << set.err;
}

TEST(FreshUser36Cli, ACalibrationCsvSizeIsAWholeNumberOfBytes) {
  const traincast::test_support::TempDir dir("fresh_user36_csv");
  const std::string csv = dir.write("m.csv", "op,size_bytes,time_us\nall_reduce,1e23,100\nall_reduce,1048576,50\n");
  const Result r = run({"calibrate", "fit", csv, "--base", "dgx_h100", "--out", dir.file("p.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "m.csv:2: column 'size_bytes': got 1e23 (expected a whole number of bytes from 1 to "
                  "9007199254740992 = 2^53"))
      << r.err;
}

TEST(FreshUser36Cli, ManyUnusedNodeTemplatesGetOneWarning) {
  const traincast::test_support::TempDir dir("fresh_user36_templates");
  std::string text = "cluster { node_template: \"dgx_h100\" num_nodes: 2 }\n";
  for (int i = 0; i < 200; ++i)
    text += "node_template { name: \"t" + std::to_string(i) +
            "\" gpu: \"V100-SXM2-32GB\" scale_up: none nic: \"IB-EDR-100\" pcie_generation: 3 "
            "socket_link_bytes_per_s: 10e9 source: \"a library\" }\n";
  const Result r = run({"explain", dir.write("t.textproto", text)});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err,
                  "t.textproto:2:17: node_template[0].name: 200 node templates are described but no node uses "
                  "them (\"t0\", \"t1\", \"t2\" and 197 more;"))
      << r.err;
  EXPECT_FALSE(has(r.err, "\"t3\"")) << r.err;
}

}  // namespace
}  // namespace traincast::cli
