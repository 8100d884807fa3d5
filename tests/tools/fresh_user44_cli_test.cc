// Session 44's leftovers from the earlier fresh users: numeric options read "007" as 7 where a
// scenario file and --set refuse a leading zero; a sweep axis over cluster.overrides pointed to
// `run --set`, which varies nothing; an index without its "]" read as an unknown field; the
// batch divisibility error placed at an override did not say which; compare's note on a --set that
// failed on one scenario read "the --set above", which a list of errors (Python) has no "above" for;
// GH200-96GB held 96 GiB where nvidia-smi reports 97871 MiB; a rack cut into 64-GPU domains counted
// its 8 spare GPUs at 0 W without saying so.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

const std::string kSrc = TRAINCAST_SOURCE_DIR;

/// A small TP 8 x DP 2 job on 2 DGX H100, `training` the fields of its training block.
std::string scenario(const std::string& training = "global_batch_size: 16") {
  return "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n}\nworkload {\n  model { num_layers: 4 "
         "hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n  parallel { tp: 8 dp: 2 }\n"
         "  training { " +
         training + " }\n}\n";
}

// ---- 1. numeric options refuse a leading zero ---------------------------------------------------

// Before: `run --threads 007` ran with 7 threads, `--shard 00/2` ran shard 0, `--gpus 00,1` GPUs 0 and 1,
// where `--set options.threads=007` was refused.
TEST(FreshUser44LeadingZeros, NumericOptionsRefuseALeadingZeroAsSetDoes) {
  Result r = run({"run", "--threads", "007"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --threads: got \"007\": a number has no leading zero, as in a scenario file and --set "
            "(expected 7)\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = run({"run", "--set", "options.threads=007"});  // the rule it follows
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "007 has a leading zero")) << r.err;
  // A double option written as an integer, and another command's count.
  r = run({"compare", "--vary", "workload.parallel.tp=2,4", "--tokens", "01"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "traincast: --tokens: got \"01\": a number has no leading zero, as in a scenario file and --set (expected 1)\n");
  r = run({"compare", "--vary", "workload.parallel.tp=2,4", "--jobs", "00"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "traincast: --jobs: got \"00\": a number has no leading zero, as in a scenario file and --set (expected 0)\n");
  // A lone 0 is a number, not a leading zero.
  r = run({"run", "--threads", "0"});
  EXPECT_EQ(r.status, 0) << r.err;
  // Options that hold numbers in text of their own.
  const traincast::test_support::TempDir dir("fresh_user44_zeros");
  r = run({"sweep", kSrc + "/tests/tools/data/small.sweep.textproto", "--out", dir.file("s.csv"), "--shard", "00/2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --shard: \"00/2\": 00 has a leading zero (expected i/N in decimal without leading zeros, e.g. "
            "0/2)\n");
  r = run({"sweep", kSrc + "/tests/tools/data/small.sweep.textproto", "--out", dir.file("s.csv"), "--shard", "1/02"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "02 has a leading zero (expected i/N in decimal without leading zeros, e.g. 1/2)")) << r.err;
  r = run({"nccl-tests", kSrc + "/scenarios/default.textproto", "--gpus", "00,1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --gpus: bad GPU list '00,1': 00 has a leading zero (expected ids and ranges in decimal without "
            "leading "
            "zeros, e.g. 0)\n");
}

// ---- 2. a sweep axis over a list entry says what varies one ---------------------------------------

// Before: "... to vary one entry of a list, sweep over scenario files, or set it with traincast run
// --set cluster.overrides[i]...)": run --set sets one value, and a sweep has one base file.
TEST(FreshUser44ListAxis, TheRefusalNamesCompareVaryAndTheSweepsSetAndBothWork) {
  const traincast::test_support::TempDir dir("fresh_user44_axis");
  const std::string base = dir.write("base.textproto", scenario());
  const std::string sweep = dir.write(
      "s.sweep.textproto",
      "scenario_file: \"base.textproto\"\naxis { path: \"cluster.overrides[0].clock_factor\" values: [\"0.9\", "
      "\"0.8\"] }\n");
  Result r = run({"sweep", sweep, "--out", dir.file("s.csv"), "--progress", "never"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            sweep +
                ":2:8: axis[0].path: cluster.overrides is a repeated field, a sweep axis names a singular scalar "
                "field (expected a path such as workload.parallel.tp; to compare values of one entry, traincast "
                "compare --vary cluster.overrides[i].FIELD=v1,v2 with --set for the entry's other fields; to "
                "give every point the same entry, this sweep file's set: \"cluster.overrides[i].FIELD=value\")\n");
  // What it names works: compare --vary over the entry's field, the select from --set.
  r = run({"compare", base, "--set", "cluster.overrides[0].select=node1/gpu3", "--vary",
           "cluster.overrides[0].clock_factor=0.9,0.8"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  [0] node1/gpu3 clock_factor 0.9: SM clock")) << r.out;
  EXPECT_TRUE(has(r.out, "  [0] node1/gpu3 clock_factor 0.8: SM clock")) << r.out;
  // ... and a sweep's set: the same slow GPU at every point of another axis.
  const std::string set = dir.write(
      "set.sweep.textproto",
      "scenario_file: \"base.textproto\"\nset: \"cluster.overrides[0].select=node1/gpu3\"\nset: "
      "\"cluster.overrides[0].clock_factor=0.8\"\naxis { path: \"workload.training.global_batch_size\" values: "
      "[\"16\", \"32\"] }\n");
  r = run({"sweep", set, "--out", dir.file("set.csv"), "--progress", "never"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string csv = traincast::test_support::slurp(dir.file("set.csv"));
  EXPECT_TRUE(has(csv, "\n0,16,ok,")) << csv;
  EXPECT_TRUE(has(csv, "\n1,32,ok,")) << csv;
  // A job list is traincast cluster's: the message says so, not compare.
  const std::string jobs = dir.write(
      "j.sweep.textproto", "scenario_file: \"base.textproto\"\naxis { path: \"job[0].gpus\" values: [\"8\"] }\n");
  r = run({"sweep", jobs, "--out", dir.file("j.csv"), "--progress", "never"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "job is a repeated field, a sweep axis names a singular scalar field (expected a path such as "
                  "workload.parallel.tp; a job list is traincast cluster's: traincast cluster --set job[i].FIELD=value "
                  "changes one job)"))
      << r.err;
}

// ---- 3. an index without its "]" --------------------------------------------------------------

// Before: "--set: cluster.overrides[0: unknown field, did you mean "overrides"? (expected one of:
// node_template, ...)", where "overrides" is what the user wrote.
TEST(FreshUser44UnclosedIndex, TheMessageSaysWhereTheBracketGoes) {
  Result r = run({"run", "--set", "cluster.overrides[0.select=node0/gpu1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: cluster.overrides[0: \"[\" is not closed (expected \"]\" after the index, at character 20: "
            "cluster.overrides[0].select)\n");
  EXPECT_FALSE(has(r.err, "unknown field")) << r.err;
  // At the end of the path, and on a list of numbers.
  r = run({"run", "--set", "workload.parallel.pipeline_stage_layers[0=4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: workload.parallel.pipeline_stage_layers[0: \"[\" is not closed (expected \"]\" after the index, at "
            "character 42: workload.parallel.pipeline_stage_layers[0])\n");
  // Text after the "]".
  r = run({"run", "--set", "cluster.overrides[0]x.select=node0/gpu1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "--set: cluster.overrides[0]x: \"x\" after \"]\" (expected \".\" and a field, or \"=\", at character 21)\n");
  // compare --vary reads the same path once for all its values: one message.
  r = run({"compare", "--vary", "cluster.overrides[0.clock_factor=0.9,0.8"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--vary: cluster.overrides[0: \"[\" is not closed (expected \"]\" after the index, at character 20: "
            "cluster.overrides[0].clock_factor)\n");
}

// ---- 4 and 5. the divisibility error names the overrides of the fields it reads ----------------

// Before: "--set: workload.training.global_batch_size: 16 is not divisible by dp * micro_batch_size =
// 2 * 3 = 6 (expected a multiple of 6)" for both --set, naming neither.
TEST(FreshUser44BatchOverrides, SeveralSetsAreEachNamedWithTheirValues) {
  const traincast::test_support::TempDir dir("fresh_user44_batch");
  const std::string base = dir.write("base.textproto", scenario());
  Result r = run({"run", base, "--set", "workload.training.micro_batch_size=3", "--set", "workload.parallel.tp=4",
                  "--set", "workload.parallel.dp=4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: workload.training.global_batch_size: 16 is not divisible by dp * micro_batch_size = 4 * 3 = 12 "
            "(expected a multiple of 12); micro_batch_size and dp as changed by --set "
            "workload.training.micro_batch_size=3 --set workload.parallel.dp=4\n");
  // One --set: named too; the field the rule is about set as well: all three.
  r = run({"run", base, "--set", "workload.training.micro_batch_size=3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "(expected a multiple of 6); micro_batch_size as changed by --set "
                  "workload.training.micro_batch_size=3\n"))
      << r.err;
  r = run({"run", base, "--set", "workload.training.global_batch_size=20", "--set",
           "workload.training.micro_batch_size=4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "--set: workload.training.global_batch_size: 20 is not divisible by dp * micro_batch_size = "
                  "2 * 4 = 8 (expected a multiple of 8); global_batch_size and micro_batch_size as changed by "
                  "--set workload.training.global_batch_size=20 --set workload.training.micro_batch_size=4\n"))
      << r.err;
  // compare's --vary by its value.
  r = run({"compare", base, "--vary", "workload.training.micro_batch_size=1,3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "(expected a multiple of 6); micro_batch_size as changed by --vary "
                  "workload.training.micro_batch_size=3\n"))
      << r.err;
  // An error the file's own values make: at its line, nothing added.
  const std::string odd = dir.write("odd.textproto", scenario("global_batch_size: 15"));
  r = run({"run", odd});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, odd +
                       ":8:14: workload.training.global_batch_size: 15 is not divisible by dp * micro_batch_size = 2 * "
                       "1 = 2 (expected a multiple of 2)\n");
}

// Before: a dp axis tied to a tp axis by a constraint was placed at the dp value but read
// "workload.training.global_batch_size: 12 is not divisible ..." alone, the base's field.
TEST(FreshUser44BatchOverrides, ASweepPointNamesTheAxisValueThatBrokeIt) {
  const traincast::test_support::TempDir dir("fresh_user44_axis_dp");
  dir.write("base.textproto", scenario("global_batch_size: 12"));
  const std::string sweep = dir.write("s.sweep.textproto",
                                      "scenario_file: \"base.textproto\"\n"
                                      "axis { path: \"workload.parallel.tp\" values: [\"2\", \"4\", \"8\"] }\n"
                                      "axis { path: \"workload.parallel.dp\" values: [\"2\", \"4\", \"8\"] }\n"
                                      "constraint: \"tp * pp * dp == gpus\"\n");
  const Result r = run({"sweep", sweep, "--out", dir.file("s.csv"), "--progress", "never"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string csv = traincast::test_support::slurp(dir.file("s.csv"));
  // tp 2 x dp 8: 12 is not a multiple of 8, at the dp value "8" (line 3, column 56), naming it.
  EXPECT_TRUE(has(csv, "\n0,2,8,invalid,")) << csv;
  EXPECT_TRUE(has(csv, sweep +
                           ":3:56: workload.training.global_batch_size: 12 is not divisible by dp * micro_batch_size = "
                           "8 * 1 = 8 (expected a multiple of 8); dp as changed by workload.parallel.dp=8\n"))
      << csv;
  EXPECT_TRUE(has(csv, "\n1,4,4,ok,")) << csv;
  EXPECT_TRUE(has(csv, "\n2,8,2,ok,")) << csv;
}

// ---- 6. compare's note names the --set it means --------------------------------------------------

// Before: "one.textproto: note: the --set above failed on this scenario; ...".
TEST(FreshUser44CompareNote, TheNoteNamesTheSetByItsField) {
  const traincast::test_support::TempDir dir("fresh_user44_note");
  const std::string one = dir.write("one.textproto", scenario());
  const std::string small =
      dir.write("small.textproto",
                "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 1\n}\nworkload {\n  "
                "model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
                "seq_length: 2048 }\n  parallel { tp: 8 }\n  training { global_batch_size: 16 }\n}\n");
  const Result r = run({"compare", one, small, "--set", "cluster.overrides[0].select=node1/gpu1", "--set",
                        "cluster.overrides[0].clock_factor=0.8"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "--set: cluster.overrides[0].select: no node1 (the cluster has node0)\n" + small +
                       ": note: --set cluster.overrides[0].select failed on this scenario; compare applies every --set "
                       "to each scenario\n");
  EXPECT_FALSE(has(r.err, "above")) << r.err;
}

// ---- 7. the spare GPUs of a partitioned rack --------------------------------------------------

// Before: the Power section of a gb200_nvl72/64 run said nothing of the 8 GPUs per rack outside the
// domain, which the power model charges 0 W (docs/hardware.md said it; the report did not).
TEST(FreshUser44SpareGpus, ThePowerSectionSaysTheyAreNotCountedAndWhatTheyWouldDrawIdle) {
  const traincast::test_support::TempDir dir("fresh_user44_spare");
  auto rack = [&](const std::string& name, const std::string& tmpl, const std::string& parallel) {
    return dir.write(name, "cluster {\n  node_template: \"" + tmpl +
                               "\"\n  num_nodes: 1\n}\nthermal { cooling: liquid }\nworkload {\n  model { num_layers: "
                               "4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n  "
                               "parallel { " +
                               parallel + " }\n  training { global_batch_size: 72 }\n}\n");
  };
  Result r = run({"run", rack("p64.textproto", "gb200_nvl72/64", "tp: 8 dp: 8")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(
      has(r.out,
          "\n  Spare GPUs: gb200_nvl72/64 leaves 8 GPUs of each gb200_nvl72 rack in no NVLink domain; the model "
          "counts them at 0 W, with their trays' share of CPUs, NICs and switch chips; installed and idle, the "
          "GPUs alone would draw 8 x 140 W = 1.1 kW more before PUE (GB200 idle power, an estimate)\n"))
      << r.out;
  // The whole rack, and a cut that leaves none (2 x 36), have no spares: no line.
  r = run({"run", rack("whole.textproto", "gb200_nvl72", "tp: 8 dp: 9")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.out, "Spare GPUs")) << r.out;
  r = run({"run", rack("p36.textproto", "gb200_nvl72/36", "tp: 4 dp: 9")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.out, "Spare GPUs")) << r.out;
}

// ---- 8. GH200-96GB's capacity is nvidia-smi's ----------------------------------------------------

// Before: "GH200-96GB  990.0 TFLOP/s  96.0 GiB" (96 x 1024 MiB); nvidia-smi prints "NVIDIA GH200
// 480GB ... 97871MiB", as the H100 SXM5 80GB's 81559 MiB (79.6 GiB).
TEST(FreshUser44Gh200, CapacityIsWhatNvidiaSmiReports) {
  const Result r = run({"catalog"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::size_t at = r.out.find("  GH200-96GB  ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_TRUE(has(line, " 95.6 GiB ")) << line;
  EXPECT_TRUE(has(line, "(97871 MiB)")) << line;
}

}  // namespace
}  // namespace traincast::cli
