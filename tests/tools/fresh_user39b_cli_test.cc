// What a fresh user found in session 39: a cluster.overrides power_cap_w blamed on the cluster's
// 700 W limit; air-only thermal fields silently ignored under liquid cooling (and its coolant
// labelled "rack inlet"); a sweep file's constraint error reported only after its axis and metric
// errors were fixed; `chakra --help` listing its positional arguments as options, a chakra
// mismatch message with an empty fragment, and `--json ""` refused without naming the option.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
using test_support::has;
using test_support::Result;
using test_support::run;

const std::string kSrc = TRAINCAST_SOURCE_DIR;

/// A small TP 8 x DP 2 job on two DGX H100 with `cluster_extra` in its cluster block and `rest`
/// after the workload.
std::string two_nodes(const std::string& cluster_extra, const std::string& rest = "") {
  return "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n  " + cluster_extra +
         "\n}\nworkload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: 2 }\n  training { global_batch_size: 16 }\n}\n" +
         rest;
}

// Before: "(limit 700 W)", "held by the 700 W power limit or a cluster.overrides power_cap_w" and
// "cause: power limit" for a GPU held at 400 W by its own override.
TEST(FreshUser39Buyer, APowerCapOverrideIsNamedWhereItBinds) {
  const traincast::test_support::TempDir dir("fresh_user39_cap");
  const std::string file =
      dir.write("cap.textproto", two_nodes("overrides { select: \"node0/gpu0\" power_cap_w: 400 }"));
  const Result r = run({"run", file});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "(limit 700 W; cluster.overrides power_cap_w 400 W on node0/gpu0); node avg")) << r.out;
  EXPECT_TRUE(has(r.out, "held by its cluster.overrides power_cap_w 400 W (the cluster's limit 700 W)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "cause: cluster.overrides power_cap_w 400 W on node0/gpu0, SM clock ")) << r.out;
  EXPECT_FALSE(has(r.out, "power limit or a cluster.overrides")) << r.out;

  // A cap above the cluster's limit does not bind: the cluster's limit is named alone.
  const std::string loose = dir.write(
      "loose.textproto",
      two_nodes("overrides { select: \"node0/gpu0\" power_cap_w: 600 }", "power { gpu_power_limit_w: 500 }\n"));
  const Result l = run({"run", loose});
  ASSERT_EQ(l.status, 0) << l.err;
  EXPECT_TRUE(has(l.out, "(limit 500 W); node avg")) << l.out;
  EXPECT_TRUE(has(l.out, "held by the 500 W power limit\n")) << l.out;
  EXPECT_FALSE(has(l.out, "cluster.overrides power_cap_w 600")) << l.out;
}

// Before: thermal.supply_air_c and thermal.gpu_airflow_fraction under cooling: liquid changed
// nothing and drew no word; the coolant was labelled "rack inlet".
TEST(FreshUser39Buyer, LiquidCoolingWarnsAboutAirOnlyThermalFields) {
  const traincast::test_support::TempDir dir("fresh_user39_liquid");
  const std::string file =
      dir.write("liquid.textproto", two_nodes("",
                                              "thermal {\n  cooling: liquid\n  supply_air_c: 40\n  "
                                              "gpu_airflow_fraction: [1, 0.5]\n}\n"));
  const Result r = run({"run", file});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + file +
                             ":13:3: thermal.supply_air_c has no effect: cooling is liquid, so the GPUs' inlet is the "
                             "coolant (thermal.coolant_c, 35 C) (expected cooling: air"))
      << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + file + ":14:3: thermal.gpu_airflow_fraction has no effect: cooling is liquid"))
      << r.err;
  EXPECT_TRUE(has(r.out, "  coolant inlet up to 35.0 C;")) << r.out;
  EXPECT_FALSE(has(r.out, "rack inlet")) << r.out;

  // The other way round: a coolant temperature under air cooling, set on the command line.
  const std::string air = dir.write("air.textproto", two_nodes(""));
  const Result a = run({"run", air, "--set", "thermal.coolant_c=30"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_TRUE(has(a.err, "warning: --set: thermal.coolant_c has no effect: cooling is air")) << a.err;
  EXPECT_TRUE(has(a.out, "  rack inlet up to ")) << a.out;
  // Air cooling's own fields draw nothing.
  const Result plain = run({"run", air, "--set", "thermal.supply_air_c=30"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_FALSE(has(plain.err, "has no effect")) << plain.err;
}

// Before: the constraint's syntax error came only after the axis and metric errors were fixed.
TEST(FreshUser39Buyer, ASweepFilesFieldErrorsComeInOnePass) {
  const traincast::test_support::TempDir dir("fresh_user39_sweep");
  const std::string file =
      dir.write("b.sweep.textproto", "scenario {\n" + two_nodes("") +
                                         "}\naxis { path: \"workload.parallel.tpp\" values: [\"1\"] }\n"
                                         "constraint: \"tp * dp = 8\"\nmetric: [\"iteration_time_sx\"]\n");
  const Result r = run({"sweep", file, "--out", dir.file("b.csv")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, file + ":15:10: metric[0]: unknown metric \"iteration_time_sx\"")) << r.err;
  EXPECT_TRUE(has(r.err, file + ":13:8: axis[0].path: unknown field \"tpp\"")) << r.err;
  EXPECT_TRUE(has(r.err, file + ":14:1: constraint[0]: at column 9 of \"tp * dp = 8\": unexpected \"=\"")) << r.err;
}

// Before: `chakra --help` listed --action, --scenario and --inputs; a mismatch ended "(FILE: byte
// B: node N (NAME): )".
TEST(FreshUser39Buyer, ChakraHelpAndMismatchMessage) {
  const Result help = run({"chakra", "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  EXPECT_FALSE(has(help.out, "--action")) << help.out;
  EXPECT_FALSE(has(help.out, "--scenario")) << help.out;
  EXPECT_FALSE(has(help.out, "--inputs")) << help.out;
  EXPECT_TRUE(has(help.out, "--replicate")) << help.out;

  const traincast::test_support::TempDir tmp("fresh_user39_chakra");
  const std::string scenario = kSrc + "/scenarios/chakra/gpt_small_export.textproto";
  const fs::path a = tmp.path() / "a", b = tmp.path() / "b";
  ASSERT_EQ(run({"chakra", "export", scenario, "--out", a.string(), "--name", "t"}).status, 0);
  ASSERT_EQ(run({"chakra", "export", scenario, "--out", b.string(), "--name", "t", "--set",
                 "workload.training.micro_batch_size=2"})
                .status,
            0);
  fs::copy_file(b / "t.1.et", a / "t.1.et", fs::copy_options::overwrite_existing);
  const Result r = run({"chakra", "run", kSrc + "/scenarios/chakra/dgx_h100_64_nodes.textproto", (a / "t").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "but on rank 0 it is ALL_REDUCE of 8388608 bytes (" + (a / "t.0.et").string() +
                             ": byte 235: node 1 (tp_emb)); ranks must issue"))
      << r.err;
}

// Before: "traincast: output file name is empty", the option unnamed.
TEST(FreshUser39Buyer, AnEmptyOutputFileNameNamesItsOption) {
  const traincast::test_support::TempDir tmp("fresh_user39_empty");
  const std::string file = tmp.write("s.textproto", two_nodes(""));
  for (const std::string flag : {"--json", "--trace"}) {
    const Result r = run({"run", file, flag, ""});
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_TRUE(has(r.err, flag + ": got an empty file name (expected a path to write)")) << r.err;
  }
  const Result c = run({"compare", file, file, "--csv", ""});
  EXPECT_EQ(c.status, 2);
  EXPECT_TRUE(has(c.err, "--csv: got an empty file name")) << c.err;
  const Result s = run({"sweep", kSrc + "/scenarios/sweeps/gpt_13b_layout_8x_dgx_h100.sweep.textproto", "--out", ""});
  EXPECT_EQ(s.status, 2);
  EXPECT_TRUE(has(s.err, "--out: got an empty file name")) << s.err;
}

}  // namespace
}  // namespace traincast::cli
