// What session 37's fresh-user rounds left open, fixed by the lead in session 38: `sweep` and
// `plan` did not print the warnings `traincast run` prints about the file and the cluster (a
// `storage.local` block nothing uses), and a job's workload file that is itself a shared-cluster
// scenario had its job list dropped without a word; settings without effect were not positioned. (A CSV cell a double
// cannot hold: sweep_csv_test.cc; the progress line erased when a search stops early: interrupt.cc.)

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

const std::string kModel =
    "model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
    "parallel { tp: 8 }\n"
    "training { global_batch_size: 16 }\n";

const std::string kUnusedLocal =
    "storage.local: has no effect: neither storage.data_source nor storage.checkpoint_target is local, so nothing "
    "reads or writes these drives (expected storage.data_source: local or storage.checkpoint_target: local for them "
    "to be modelled; both default to shared_fs)\n";

/// Occurrences of `what` in `text`.
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Before: `traincast plan` printed only the workload's compute notes; the unused drives went unsaid.
TEST(FreshUser38Cli, PlanWarnsAboutLocalDrivesNothingUses) {
  const traincast::test_support::TempDir dir("fresh_user38_plan");
  const std::string file =
      dir.write("u.textproto", "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\nworkload {\n" + kModel +
                                   "}\nstorage { local { drives: 2 raid: raid1 } }\n");
  const Result r = run({"plan", file, "--max-simulations", "4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.err, "warning: " + file + ":7:11: " + kUnusedLocal), 1u) << r.err;
}

// Before: `traincast sweep` printed only a calibration profile's hardware warnings. Now the file's
// and the cluster's warnings too, once over all points, named at the file that wrote the field
// (the sweep file's inline scenario, or the base scenario's own file).
TEST(FreshUser38Cli, SweepWarnsOnceAboutLocalDrivesNothingUses) {
  const traincast::test_support::TempDir dir("fresh_user38_sweep");
  const std::string base = "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\nworkload {\n" + kModel +
                           "}\nstorage { local { drives: 2 raid: raid1 } }\n";
  const std::string axis = "axis { path: \"workload.training.micro_batch_size\" values: \"1\" values: \"2\" }\n";
  const std::string inline_sweep = dir.write("inline.sweep.textproto", "scenario {\n" + base + "}\n" + axis);
  const Result r = run({"sweep", inline_sweep, "--out", (dir.path() / "a.csv").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.err, "storage.local: has no effect"), 1u) << r.err;
  // At the field's line and column (session 42; "inline.sweep.textproto: scenario.storage.local" before).
  EXPECT_TRUE(has(r.err, "warning: " + inline_sweep + ":8:11: " + kUnusedLocal)) << r.err;

  const std::string base_file = dir.write("base.textproto", base);
  const std::string file_sweep = dir.write("file.sweep.textproto", "scenario_file: \"base.textproto\"\n" + axis);
  const Result f = run({"sweep", file_sweep, "--out", (dir.path() / "b.csv").string()});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(count(f.err, "storage.local: has no effect"), 1u) << f.err;
  EXPECT_TRUE(has(f.err, "warning: " + base_file + ":7:11: " + kUnusedLocal)) << f.err;

  // An axis over the node template: a template one point leaves unused is another point's, so no
  // unused-template note (a fresh user got three contradicting ones).
  const std::string tmpl =
      "node_template { name: \"spare\" gpu: \"H100-SXM5-80GB\" gpus_per_node: 8 scale_up: "
      "nvswitch nic: \"IB-NDR-400\" nics: 8 pcie_generation: 5 source: \"test\" nvswitches: 4 "
      "socket_link_bytes_per_s: 16e9 }\n";
  const std::string over_templates =
      dir.write("templates.sweep.textproto",
                "scenario {\n" + tmpl + base +
                    "}\naxis { path: \"cluster.node_template\" values: \"dgx_h100\" values: \"spare\" }\n");
  const Result t = run({"sweep", over_templates, "--out", (dir.path() / "t.csv").string()});
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_FALSE(has(t.err, "no node uses")) << t.err;
  EXPECT_EQ(count(t.err, "storage.local: has no effect"), 1u) << t.err;

  // Where the drives are used, no warning.
  const std::string used =
      dir.write("used.sweep.textproto",
                "scenario {\n" + base + "}\naxis { path: \"storage.checkpoint_target\" values: \"local\" }\n");
  const Result u = run({"sweep", used, "--out", (dir.path() / "c.csv").string()});
  ASSERT_EQ(u.status, 0) << u.err;
  EXPECT_FALSE(has(u.err, "storage.local")) << u.err;
}

// Before: a job whose workload file was itself a shared-cluster scenario ran its workload section,
// and that file's own jobs were dropped without a word.
TEST(FreshUser38Cli, ClusterNamesTheJobListOfAJobsWorkloadFile) {
  const traincast::test_support::TempDir dir("fresh_user38_cluster");
  const std::string cluster = "cluster { node_template: \"dgx_h100\" num_nodes: 2 }\n";
  const std::string inner = dir.write(
      "inner.textproto", cluster + "job { name: \"x\" gpus: 8 duration_s: 60 }\n" + "workload {\n" + kModel + "}\n");
  const std::string outer =
      dir.write("outer.textproto", cluster + "job { name: \"a\" workload: \"inner.textproto\" gpus: 8 tokens: 1e8 }\n");
  const Result r = run({"cluster", outer});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.err, "warning: job a: " + inner +
                             ":2:1: job: has no effect in traincast cluster: a job takes only the workload section of "
                             "its workload file, so this file's own job list and scheduler are not run (expected the "
                             "jobs and the scheduler in the cluster scenario " +
                             outer + ")\n"),
            1u)
      << r.err;
  // A job naming the cluster scenario itself runs its workload section: its job list is the one
  // being run, not to be warned about (a second fresh user got that circular warning).
  const std::string self = dir.write("self.textproto", cluster +
                                                           "job { name: \"s\" workload: \"self.textproto\" gpus: 8 "
                                                           "tokens: 1e8 }\nworkload {\n" +
                                                           kModel + "}\n");
  const Result s = run({"cluster", self});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_FALSE(has(s.err, "has no effect in traincast cluster")) << s.err;
}

// Before: a workload or fabric setting without effect was named without its place
// ("warning: workload.parallel.uneven_stages has no effect: ..."), where the file's own warnings
// (storage.local) gave file, line and column.
TEST(FreshUser38Cli, SettingsWithoutEffectAreNamedAtTheirPlace) {
  const traincast::test_support::TempDir dir("fresh_user38_positions");
  const std::string file =
      dir.write("w.textproto",
                "cluster { node_template: \"dgx_h100\" num_nodes: 2 fabric { kind: fat_tree oversubscription: 3 "
                "nodes_per_leaf: 1 } }\nworkload {\n"
                "model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
                "parallel { tp: 8 pp: 2 uneven_stages: true }\ntraining { global_batch_size: 16 }\n}\n");
  const std::string uneven = "workload.parallel.uneven_stages has no effect: pp 2 splits the 4 layers evenly";
  const std::string fabric = "cluster.fabric.oversubscription 3:1 acts as 2.66667:1";
  const Result r = run({"run", file});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + file + ":4:24: " + uneven)) << r.err;
  EXPECT_TRUE(has(r.err, "warning: " + file + ":1:74: " + fabric)) << r.err;
  // Set on the command line: the --set is named.
  const Result set = run({"run", file, "--set", "workload.parallel.uneven_stages=true"});
  ASSERT_EQ(set.status, 0) << set.err;
  EXPECT_TRUE(has(set.err, "warning: --set: " + uneven)) << set.err;
  // The cluster's notes in the commands that read only the cluster.
  const Result nccl = run({"nccl-tests", file, "-b", "1M", "-e", "1M"});
  ASSERT_EQ(nccl.status, 0) << nccl.err;
  EXPECT_TRUE(has(nccl.err, "warning: " + file + ":1:74: " + fabric)) << nccl.err;
  // A field name with a digit (fp8_recipe) too (a second fresh user found it unpositioned).
  const std::string fp8 = dir.write("fp8.textproto", "cluster { node_template: \"dgx_h100\" }\nworkload {\n" +
                                                         kModel.substr(0, kModel.find("training")) +
                                                         "training { global_batch_size: 16 fp8_recipe: rowwise }\n}\n");
  const Result f = run({"run", fp8});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_TRUE(has(f.err, "warning: " + fp8 + ":5:34: workload.training.fp8_recipe rowwise has no effect")) << f.err;
  // On the embedded default (no file to point at) a --set is named the same way.
  const Result d = run({"run", "--set", "workload.parallel.uneven_stages=true"});
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_TRUE(has(d.err, "warning: --set: workload.parallel.uneven_stages has no effect")) << d.err;
}

// Before: `traincast nccl-tests --op sendrecv` printed redop none where nccl-tests prints sum, so
// `calibrate fit` refused its own simulator's table; and every op's table needed --op, though its
// first line names the operation. Now each op's table is fitted as it is printed.
TEST(FreshUser38Cli, TheSimulatorsNcclTestsTablesFitWithoutOp) {
  const traincast::test_support::TempDir dir("fresh_user38_sim_tables");
  const std::string base = std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/nccl/h100_ib400_2node.textproto";
  for (const std::string op :
       {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"}) {
    const Result sim = run({"nccl-tests", base, "--op", op, "-b", "1M", "-e", "64M", "-f", "4"});
    ASSERT_EQ(sim.status, 0) << sim.err;
    const std::string table = dir.write(op + ".txt", sim.out);
    const Result fit =
        run({"calibrate", "fit", table, "--base", base, "--out", (dir.path() / (op + ".textproto")).string()});
    EXPECT_EQ(fit.status, 0) << op << ": " << fit.err;
    EXPECT_TRUE(has(fit.out, "calibrate fit: 4 collective")) << op << ": " << fit.out;
    const std::string other = op == "all_reduce" ? "all_gather" : "all_reduce";
    const Result named = run({"calibrate", "fit", table, "--base", base, "--op", other, "--out",
                              (dir.path() / (op + "_op.textproto")).string()});
    EXPECT_EQ(named.status, 2) << op << ": " << named.err;  // the log names its op: another --op is refused
    EXPECT_TRUE(has(named.err, "the log names operation " + op)) << named.err;
  }
}

// Before: a table of size-0 rows only (`traincast nccl-tests -b 0 -e 0`, or a cut-down real log)
// ended in "internal error: calibrate fit made a profile its reader refuses", exit 1.
TEST(FreshUser38Cli, AFitWithNothingToFitIsRefused) {
  const traincast::test_support::TempDir dir("fresh_user38_size0");
  const std::string base = std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/nccl/h100_ib400_2node.textproto";
  const Result sim = run({"nccl-tests", base, "--op", "all_reduce", "-b", "0", "-e", "0"});
  ASSERT_EQ(sim.status, 0) << sim.err;
  const std::string table = dir.write("s0.txt", sim.out);
  const std::string out = (dir.path() / "p.json").string();
  const Result fit = run({"calibrate", "fit", table, "--base", base, "--out", out});
  EXPECT_EQ(fit.status, 2) << fit.err;
  EXPECT_EQ(fit.err, table +  // no "traincast: ", as the other file errors (fresh user 39)
                         ": no point to fit (expected at least one collective of size > 0, GEMM, bandwidth or burn "
                         "sample; nccl-tests rows of size 0 move nothing and are not fitted)\n");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace traincast::cli
