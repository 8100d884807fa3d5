// What a fresh user found on the command line (session 32, fixed in 33): a written price of 0 was
// read as "the catalog's price" without a word; explain said "3 PCIe switches (3 GPUs each)" for 8
// GPUs and "1 PCIe switches"; merge met a part with CR LF line ends with an error about a "?" in
// some cell; a trace of hundreds of MB was written without a word about opening it; a failed leaf
// up-link under adaptive routing was "no link named" without the pooled link's name; an unfolded
// run repeated one reason per replica on its Folding line.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/cli_util.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::has;
using test_support::Result;
using test_support::run;

TEST(FreshUser33Cli, AWrittenZeroPriceIsRefusedAndAnAbsentOneIsTheDefault) {
  for (const std::string field : {"cost.node_price_usd", "cost.cloud_price_per_gpu_hour_usd"}) {
    const Result r = run({"run", "--set", field + "=0"});
    EXPECT_EQ(r.status, 2) << field << "\n" << r.out;
    EXPECT_TRUE(has(r.err, field + ": got 0 (expected a price > 0 and <= ")) << r.err;
    EXPECT_TRUE(has(r.err, "; leave the field out for the GPU's default price")) << r.err;
    // One error only: not also "no public price is recorded" (fresh user, session 33).
    EXPECT_EQ(r.err.find("no public rent or purchase price"), std::string::npos) << r.err;
    const Result negative = run({"run", "--set", field + "=-5"});
    EXPECT_EQ(negative.status, 2);
    EXPECT_TRUE(has(negative.err, field + ": got -5 (expected a price > 0 and <= ")) << negative.err;
  }
  const Result d = run({"run"});
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_TRUE(has(d.out, "rent $15,491 at $3.20/GPU-hour")) << d.out;
  const Result given = run({"run", "--set", "cost.cloud_price_per_gpu_hour_usd=1.6"});
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_TRUE(has(given.out, "at $1.60/GPU-hour (scenario)")) << given.out;
}

/// An 8-GPU PCIe box with `switches` PCIe switches (GPU g under switch g / ceil(8 / switches)).
std::string pcie_box(int switches) {
  return "node_template {\n"
         "  name: \"fresh33_box\" gpu: \"L40S\" gpus_per_node: 8 scale_up: none\n"
         "  nic: \"RoCE-200GbE\" nics: 1 sockets: 1 pcie_generation: 4 pcie_switches: " +
         std::to_string(switches) +
         "\n"
         "  cpu: \"Intel Xeon (Ice Lake)\" source: \"test box\"\n"
         "}\n"
         "cluster { node_template: \"fresh33_box\" num_nodes: 1 }\n";
}

TEST(FreshUser33Cli, ExplainCountsTheGpusOfAnUnevenPcieTree) {
  const traincast::test_support::TempDir dir("fresh_user33_pcie");
  const Result three = run({"explain", dir.write("three.textproto", pcie_box(3))});
  ASSERT_EQ(three.status, 0) << three.err;
  EXPECT_TRUE(has(three.out, "3 PCIe switches (3 GPUs each, the last 2), uplink")) << three.out;
  const Result one = run({"explain", dir.write("one.textproto", pcie_box(1))});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_TRUE(has(one.out, "1 PCIe switch (8 GPUs), uplink")) << one.out;
  const Result four = run({"explain", dir.write("four.textproto", pcie_box(4))});
  ASSERT_EQ(four.status, 0) << four.err;
  EXPECT_TRUE(has(four.out, "4 PCIe switches (2 GPUs each), uplink")) << four.out;
}

// Fresh user (session 33): 8 DGX H100 on one leaf printed the leaf group's capacity ("256 down
// ports, 32 nodes per leaf group"), not what is cabled.
TEST(FreshUser33Cli, ExplainCountsTheLeafPortsThatAreCabled) {
  const traincast::test_support::TempDir dir("fresh_user33_leaf");
  const Result r = run({"explain", dir.write("leaf.textproto",
                                             "cluster { node_template: \"dgx_h100\" num_nodes: 8 "
                                             "fabric { kind: fat_tree } }\n")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "1 leaf switch (64 down ports, 8 nodes per leaf group)")) << r.out;
}

TEST(FreshUser33Cli, MergeNamesCrLfLineEnds) {
  const traincast::test_support::TempDir dir("fresh_user33_merge");
  // Two points of the default scenario: the merge check needs two shards' parts, not a long sweep
  // (the shipped buy-vs-rent sweep took 100 s of the CI's ASan stage).
  const std::string sweep = dir.write(
      "crlf.sweep.textproto", "name: \"crlf\"\nscenario_file: \"" + kSrc +
                                  "/scenarios/default.textproto\"\n"
                                  "axis { path: \"workload.training.micro_batch_size\" values: [\"1\", \"2\"] }\n"
                                  "metric: [\"iteration_time_s\"]\n");
  const std::string a = (dir.path() / "a.csv").string(), b = (dir.path() / "b.csv").string();
  ASSERT_EQ(run({"sweep", sweep, "--shard", "0/2", "--out", a}).status, 0);
  ASSERT_EQ(run({"sweep", sweep, "--shard", "1/2", "--out", b}).status, 0);
  std::stringstream lf;
  lf << std::ifstream(b).rdbuf();
  std::string crlf;
  for (const char c : lf.str()) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  dir.write("b.csv", crlf);
  const Result r = run({"merge", (dir.path() / "out.csv").string(), a, b});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.err, b + ":1: line ends in CR LF")) << r.err;
  EXPECT_FALSE(has(r.err, "\"?\"")) << r.err;
}

/// 4 DGX H100 on a 2-node-per-leaf fat tree, DP 32, with `override` in cluster.
std::string fat_tree_job(const std::string& override) {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 4 overrides { " + override +
         " }\n"
         "  fabric { kind: fat_tree nodes_per_leaf: 2 } }\n"
         "workload { model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 1024 } parallel { dp: 32 } training { global_batch_size: 64 } }\n";
}

TEST(FreshUser33Cli, AFailedCableUnderAdaptiveRoutingNamesThePooledLink) {
  const traincast::test_support::TempDir dir("fresh_user33_pooled");
  const Result r = run({"run", dir.write("f.textproto", fat_tree_job("select: \"leaf0->spine0\" failed: true"))});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.err, "links such as: leaf0->spines")) << r.err;
  EXPECT_TRUE(has(r.err, "adaptive routing pools a leaf's up-links as one link, leaf0->spines")) << r.err;
  const Result d = run({"run", dir.write("d.textproto", fat_tree_job("select: \"leaf0->spine0\" failed: true")),
                        "--set", "cluster.fabric.routing=d_mod_k"});
  EXPECT_EQ(d.status, 0) << d.err;
}

TEST(FreshUser33Cli, AnUnfoldedRunSaysItsReasonOnce) {
  const traincast::test_support::TempDir dir("fresh_user33_folding");
  const Result r = run({"run", dir.write("s.textproto", fat_tree_job("select: \"node1/gpu3\" clock_factor: 0.9")),
                        "--set", "cluster.fabric.oversubscription=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "Folding: 32 replicas, none folded (network position: replicas' own traffic may share "
                  "links (docs/models.md, folding))\n"))
      << r.out;
}

TEST(FreshUser33Cli, ATraceTooLargeForTheBrowserGetsANote) {
  EXPECT_EQ(large_trace_note("t.json", std::size_t{256} << 20), "");
  const std::string note = large_trace_note("t.json", std::size_t{491} << 20);
  EXPECT_TRUE(has(note, "note: --trace t.json is 491 MiB")) << note;
  EXPECT_TRUE(has(note, "trace_processor --httpd")) << note;
  // And what writing it takes (fresh user 44b: 15.7 GB peak RSS for a 4.96 GiB trace).
  EXPECT_TRUE(has(note, "traincast needs about 3x that in memory to write it")) << note;
}

}  // namespace
}  // namespace traincast::cli
