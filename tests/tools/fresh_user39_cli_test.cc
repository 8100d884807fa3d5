// What session 38's fresh-user rounds left open, fixed in session 39: nccl-tests logs whose rows
// no run prints (the parser's own cases: tests/calibrate/nccl_tests_log_test.cc), `traincast
// nccl-tests` rounding a size below one element to 0 bytes without a word, Boost's bare message for
// a repeated option, `--out .json`, and the settings warnings that were not positioned.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;
using test_support::slurp;

const std::string kNcclScenario = std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/nccl/h100_ib400_2node.textproto";

// Before: a double row in the middle of a float table was taken as a table of its own type, exit 0.
TEST(FreshUser39Cli, AFitRefusesARowOfAnotherTypeMidTable) {
  const traincast::test_support::TempDir dir("fresh_user39_type");
  const std::string log = dir.write(
      "ar.txt",
      "# all_reduce_perf -b 1K -e 4K\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "1024 256 float sum -1 10.00 0.10 0.10 0 10.00 0.10 0.10 0\n"
      "2048 256 double sum -1 10.00 0.20 0.20 0 10.00 0.20 0.20 0\n"
      "4096 1024 float sum -1 10.00 0.41 0.41 0 10.00 0.41 0.41 0\n");
  const std::string out = (dir.path() / "p.json").string();
  const Result r = run({"calibrate", "fit", log, "--base", kNcclScenario, "--out", out});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, log + ":4: type double after float on line 3 (expected float: nccl-tests runs each data "
                               "type over all its sizes before the next, starting again from the table's first "
                               "size, 1024 bytes"))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// Before: `-b 6 -e 6 -d double` printed a 0-byte row and nothing else. nccl-tests rounds the same
// way (count = size / 8 = 0); the table stays as nccl-tests prints it, and a warning says why.
TEST(FreshUser39Cli, NcclTestsSaysWhereASizeRoundsDownToWholeElements) {
  const Result r = run({"nccl-tests", kNcclScenario, "-b", "6", "-e", "6", "-d", "double"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "           0             0    double     sum      -1")) << r.out;
  EXPECT_EQ(r.err,
            "warning: -b/-e 6 is not a whole number of 8-byte double elements: nccl-tests rounds a size down to "
            "whole elements (count 0), so its row runs 0 bytes, as printed (expected a multiple of 8 bytes for the "
            "size asked)\n");
  // Per rank for all_gather: 16 ranks x 4 bytes; whole sizes say nothing.
  const Result ag = run({"nccl-tests", kNcclScenario, "--op", "all_gather", "-b", "100", "-e", "128"});
  ASSERT_EQ(ag.status, 0) << ag.err;
  EXPECT_EQ(ag.err,
            "warning: -b 100 is not a whole number of 4-byte float elements per rank on 16 ranks (64 bytes): "
            "nccl-tests rounds a size down to whole elements (count 1 per rank), so its row runs 64 bytes, as "
            "printed (expected a multiple of 64 bytes for the size asked)\n");
}

// Before: "traincast: option '--vary' cannot be specified more than once" (Boost's words).
TEST(FreshUser39Cli, ARepeatedSingleValueOptionIsNamedFirst) {
  const Result r = run({"compare", kNcclScenario, "--vary", "cluster.num_nodes=1,2", "--vary", "cluster.num_nodes=4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: --vary: given more than once (expected it once: it takes a single value; see --help)\n");
  // An option with a short form is named by both (second round: `-b 8 -b 16` read "--minbytes").
  const Result b = run({"nccl-tests", kNcclScenario, "-b", "8", "-b", "16"});
  EXPECT_EQ(b.status, 2);
  EXPECT_EQ(b.err,
            "traincast: -b/--minbytes: given more than once (expected it once: it takes a single value; see "
            "--help)\n");
}

// Before: "--out .json: unknown file extension \"\"", which read as a bug.
TEST(FreshUser39Cli, AProfileNamedOnlyByItsExtensionIsRefusedWithWhy) {
  const traincast::test_support::TempDir dir("fresh_user39_dotfile");
  const std::string out = (dir.path() / ".json").string();
  const std::string log = dir.write("ar.txt", "# all_reduce_perf\n");  // not read: --out is checked first
  const Result r = run({"calibrate", "fit", log, "--base", kNcclScenario, "--out", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: --out " + out +
                       ": the name \".json\" has no extension: a name that starts with its only dot is a hidden "
                       "file's whole name (expected a name before the extension, e.g. profile.json, with "
                       ".textproto, .txtpb, .pbtxt, .txt or .json: --profile reads the profile back by its "
                       "extension)\n");
}

// Before: a log of 128 MiB to 1 GiB only (n09, li-plus/playground: its rows verbatim) fitted latency
// x30 without a word; the default latency is 0.6% of its smallest size's time.
TEST(FreshUser39Cli, AFitOfLargeSizesOnlySaysTheLatencyIsNotConstrained) {
  const traincast::test_support::TempDir dir("fresh_user39_latency");
  const std::string log = dir.write(
      "n09.txt",
      "# command: ./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8\n# ranks: 8  nodes: 1  gpu: A100\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "   134217728      33554432     float     sum      -1   1211.2  110.81  110.81      0   1211.8  110.76  110.76   "
      " "
      "N/A\n"
      "   268435456      67108864     float     sum      -1   1423.3  188.60  188.60      0   1420.2  189.01  189.01   "
      " "
      "N/A\n"
      "   536870912     134217728     float     sum      -1   2785.4  192.75  192.75      0   2772.2  193.66  193.66   "
      " "
      "N/A\n"
      "  1073741824     268435456     float     sum      -1   5503.4  195.10  195.10      0   5490.5  195.56  195.56   "
      " "
      "N/A\n");
  const Result r = run({"calibrate", "fit", log, "--base", "dgx_a100", "--out", (dir.path() / "p.json").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "  sendrecv on 8 GPUs: latency x30.4 is not constrained: the smallest fit size, 134217728 "
                  "B, takes 1211 us, of which the model's default latency (7.2 us) is 0.594%; no size below "
                  "about 26691500 B, where it is 5% or more, is in the fit (expected a log down to small "
                  "sizes, e.g. nccl-tests -b 8, for the latency to be measured; here it only shapes the large "
                  "sizes' times)\n"))
      << r.out;
}

const std::string kModel =
    "model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
    "parallel { tp: 8 dp: 4 }\n"
    "training { global_batch_size: 16 }\n";

// Before: "rail-optimized fabric (2.0:1)" beside the warning that 2:1 acts as 1:1. Now the ratio
// the leaves are built with (as `traincast cluster` and `explain` print it), and the asked one
// where they differ; an asked ratio the cluster has stays as it was printed.
TEST(FreshUser39Cli, RunHeaderPrintsTheOversubscriptionTheLeavesHave) {
  const traincast::test_support::TempDir dir("fresh_user39_ratio");
  const std::string file = dir.write("r.textproto",
                                     "cluster { node_template: \"dgx_h100\" num_nodes: 4 fabric { kind: rail_optimized "
                                     "oversubscription: 2 nodes_per_leaf: 1 } }\nworkload {\n" +
                                         kModel + "}\n");
  const Result r = run({"run", file});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "rail-optimized fabric (1:1, 1:1 ports per leaf; 2.0:1 asked)\n")) << r.out;
  EXPECT_TRUE(has(r.err, "oversubscription 2:1 acts as 1:1")) << r.err;
  const Result two = run({"run", file, "--set", "cluster.fabric.nodes_per_leaf=2"});
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_TRUE(has(two.out, "rail-optimized fabric (2.0:1)\n")) << two.out;
  const Result one = run({"run", file, "--set", "cluster.fabric.nodes_per_leaf=4"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_TRUE(has(one.out, "rail-optimized fabric (non-blocking: one leaf group; 2.0:1 asked)\n")) << one.out;
}

// Before: "warning: cluster.collectives.min_channels 64 changed no row's time: ..." named no place,
// where the other settings warnings put FILE:LINE:COL: (or --set:) in front.
TEST(FreshUser39Cli, MinChannelsWithoutEffectIsPositioned) {
  const traincast::test_support::TempDir dir("fresh_user39_min_channels");
  const std::string file =
      dir.write("c.textproto",
                "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 4\n  fabric { kind: rail_optimized }\n"
                "  collectives { min_channels: 64 }\n}\n");
  const Result r = run({"nccl-tests", file, "-b", "64M", "-e", "64M"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + file + ":5:17: cluster.collectives.min_channels 64 changed no row's time: "))
      << r.err;
}

// Before: `compare --vary` and `cluster --set` printed "warning: cluster.fabric.oversubscription ..."
// with no place, where `run` puts "--set: " in front. Now the cause: --vary:, --set: or the file's
// FILE:LINE:COL:.
TEST(FreshUser39Cli, CompareAndClusterWarningsNameTheirCause) {
  const traincast::test_support::TempDir dir("fresh_user39_cause");
  const std::string file = dir.write("r.textproto",
                                     "cluster { node_template: \"dgx_h100\" num_nodes: 4 fabric { kind: rail_optimized "
                                     "nodes_per_leaf: 1 } }\nworkload {\n" +
                                         kModel + "}\n");
  const Result vary = run({"compare", file, "--vary", "cluster.fabric.oversubscription=1,2"});
  ASSERT_EQ(vary.status, 0) << vary.err;
  EXPECT_TRUE(has(vary.err, "warning: --vary: cluster.fabric.oversubscription 2:1 acts as 1:1: ")) << vary.err;
  const std::string copy = dir.write("s.textproto", slurp(file));
  const Result sets = run({"compare", file, copy, "--set", "cluster.fabric.oversubscription=2"});
  ASSERT_EQ(sets.status, 0) << sets.err;
  EXPECT_TRUE(has(sets.err, "warning: --set: cluster.fabric.oversubscription 2:1 acts as 1:1: ")) << sets.err;
  const Result cluster =
      run({"cluster", std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/cluster/six_jobs_fifo_vs_backfill.textproto",
           "--set", "cluster.fabric.oversubscription=2"});
  ASSERT_EQ(cluster.status, 0) << cluster.err;
  EXPECT_TRUE(has(cluster.err, "warning: --set: cluster.fabric.oversubscription 2:1 has no effect: ")) << cluster.err;
}

}  // namespace
}  // namespace traincast::cli
