// `traincast calibrate fit|validate` and `--profile` as a user runs them: exit statuses, messages
// naming file and line, the profile changing what run and nccl-tests predict.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;
const fs::path kLogs = fs::path(TRAINCAST_SHARED_DATA_DIR) / "nccl-tests";
const std::string kScenario = kSrc + "/scenarios/nccl/consumer_2x2080ti_nop2p.textproto";

using test_support::Result;
using test_support::run;

class CalibrateCli : public traincast::test_support::TempDirTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kLogs)) GTEST_SKIP() << "no shared data";
    TempDirTest::SetUp();
  }
};

// A fresh user (session 38): `--out p.json` wrote text format into it, which --profile then refused
// as JSON; `--out p.prof` said "cannot read file" of the file to be written, and wrote nothing.
TEST_F(CalibrateCli, ProfileNamedJsonIsWrittenAsJsonAndAnUnknownExtensionIsRefused) {
  const std::string log = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();
  const std::string text = path("p.textproto");
  const std::string json = path("p.json");
  ASSERT_EQ(run({"calibrate", "fit", log, "--base", kScenario, "--out", text}).status, 0);
  const Result r = run({"calibrate", "fit", log, "--base", kScenario, "--out", json});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(json);
  std::stringstream body;
  body << in.rdbuf();
  EXPECT_EQ(body.str().rfind("{", 0), 0u) << body.str();
  // Both profiles predict the same.
  const Result a = run({"nccl-tests", kScenario, "-b", "1M", "-e", "1G", "--profile", text});
  const Result b = run({"nccl-tests", kScenario, "-b", "1M", "-e", "1G", "--profile", json});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out.substr(a.out.find('\n')), b.out.substr(b.out.find('\n')));  // the first line names the file
  const Result bad = run({"calibrate", "fit", log, "--base", kScenario, "--out", path("p.prof")});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "traincast: --out " + path("p.prof") +
                         ": unknown file extension \".prof\" (expected .textproto, .txtpb, .pbtxt, .txt or .json: "
                         "--profile reads the profile back by its extension)\n");
  EXPECT_FALSE(fs::exists(path("p.prof")));
}

TEST_F(CalibrateCli, FitThenValidateThenUseTheProfile) {
  const std::string log = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();
  const std::string profile = path("p.textproto");
  Result r = run({"calibrate", "fit", log, "--base", kScenario, "--out", profile, "--holdout", "odd"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("all_reduce on 2 GPUs"), std::string::npos) << r.out;
  std::ifstream in(profile);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("sha256: \""), std::string::npos);
  EXPECT_NE(text.str().find("points_used: 14"), std::string::npos) << text.str();

  r = run({"calibrate", "validate", profile, log});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" fit  "), std::string::npos);  // fit points marked
  EXPECT_NE(r.out.find(" -    "), std::string::npos);  // held-out points marked

  // The profile changes what nccl-tests predicts (PCIe efficiency fitted near 0.52, NCCL's is 0.76).
  const Result plain = run({"nccl-tests", kScenario, "-b", "1G", "-e", "1G"});
  const Result calibrated = run({"nccl-tests", kScenario, "-b", "1G", "-e", "1G", "--profile", profile});
  ASSERT_EQ(calibrated.status, 0) << calibrated.err;
  EXPECT_NE(plain.out, calibrated.out);
  EXPECT_NE(calibrated.out.find("    4.00    4.00"), std::string::npos)
      << calibrated.out;  // measured 1 GiB busbw: 4.00 GB/s (n11a)

  // --out must not clobber.
  r = run({"calibrate", "fit", log, "--base", kScenario, "--out", profile});
  EXPECT_EQ(r.status, 2);

  // No output overwrites the profile a command reads, even with --force (new-user test: the
  // JSON report replaced the profile).
  const std::string before = text.str();
  r = run({"nccl-tests", kScenario, "--profile", profile, "--csv", profile, "--force"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(profile + ": is one of the input files"), std::string::npos) << r.err;
  r = run({"run", "--profile", profile, "--json", profile, "--force"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(profile + ": is one of the input files"), std::string::npos) << r.err;
  std::ifstream again(profile);
  std::stringstream after;
  after << again.rdbuf();
  EXPECT_EQ(after.str(), before);
}

TEST_F(CalibrateCli, BadInputsExitTwoNamingFileAndLine) {
  const std::string bad_log = path("bad.log");
  std::ofstream(bad_log) << "# all_reduce_perf\n"
                            "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
                            "time   algbw   busbw #wrong\n"
                            "           8             2     float     sum      -1    10.00    0.00    0.00      0    "
                            "10.00    0.00    0.00      0\n"
                            "          16             4     float     sum      -1    1x.00    0.00    0.00      0    "
                            "10.00    0.00    0.00      0\n"
                            "          32             8     float     sum      -1    10.00    0.00    0.00      0    "
                            "10.00    0.00    0.00      0\n";
  Result r = run({"calibrate", "fit", bad_log, "--base", kScenario, "--out", path("p.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(bad_log + ":4: out-of-place time \"1x.00\" is not a number >= 0"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("p.textproto")));

  // A last row cut inside its out-of-place columns is refused (it used to be dropped silently).
  const std::string cut_log = path("cut.log");
  std::ofstream(cut_log) << "# all_reduce_perf\n"
                            "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
                            "time   algbw   busbw #wrong\n"
                            "           8             2     float     sum      -1    10.00    0.00    0.00      0    "
                            "10.00    0.00    0.00      0\n"
                            "  33554432  8388608  float  sum  -1  812.3  41.3\n";
  r = run({"calibrate", "fit", cut_log, "--base", kScenario, "--out", path("p.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(cut_log + ":4: data row cut short: 7 of 13 fields (expected 13: size count type redop root "
                                 "time algbw busbw #wrong time algbw busbw #wrong)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("delete the partial row"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("p.textproto")));

  const std::string bad_profile = path("bad.textproto");
  std::ofstream(bad_profile) << "base: \"x\"\nlink_efficiency { link: \"pcie\" efficiency: 3 }\n";
  r = run({"nccl-tests", kScenario, "--profile", bad_profile});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(bad_profile + ":2:32: link_efficiency[0].efficiency: got 3 (expected a number in (0, 1.05])"),
            std::string::npos)
      << r.err;
  r = run({"run", "--profile", bad_profile});
  EXPECT_EQ(r.status, 2);

  r = run({"calibrate", "fit", (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string(), "--base",
           "H100-SXM5-80GB", "--out", path("q.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("collective points need a system"), std::string::npos) << r.err;
  r = run({"calibrate", "fit", (kLogs / "raw" / "r15_h100_2x8_allreduce_initfail.log").string(), "--base", kScenario,
           "--out", path("q.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no nccl-tests data rows"), std::string::npos) << r.err;
}

TEST_F(CalibrateCli, ProfileOnOtherHardwareWarnsAndACutShortOneIsRefused) {
  const std::string log = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();
  const std::string profile = path("p.textproto");
  ASSERT_EQ(run({"calibrate", "fit", log, "--base", kScenario, "--out", profile}).status, 0);
  // Same system: no warning.
  Result r = run({"nccl-tests", kScenario, "--profile", profile});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  // Other system: runs, and stderr names both sides.
  r = run({"nccl-tests", kSrc + "/scenarios/nccl/dgx_a100.textproto", "--profile", profile});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: profile " + profile +
                       " was fitted on GPU RTX-2080-Ti but the scenario's GPU is A100-SXM4-80GB"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("node template consumer_2x2080ti_nop2p (1 node(s)) but the scenario's is dgx_a100"),
            std::string::npos)
      << r.err;
  // Cut short after its 5th line (fit_options, a complete field): refused at the line where it ends
  // (a cut inside a message is the text format's own error).
  std::ifstream in(profile);
  std::string line, cut;
  for (int i = 0; i < 5 && std::getline(in, line); ++i) cut += line + "\n";
  const std::string cut_profile = path("cut.textproto");
  std::ofstream(cut_profile) << cut;
  r = run({"nccl-tests", kScenario, "--profile", cut_profile});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(cut_profile + ":5:1: end_of_profile: not set where the file ends"), std::string::npos) << r.err;
}

using test_support::slurp;

TEST_F(CalibrateCli, LogOnTheWrongHardwareIsRefusedNamingBusbwAndTheBaseLink) {
  // The RTX 2080 Ti all_reduce (n11a: 4.00 GB/s busbw at 1 GiB over PCIe gen3 without P2P) fitted
  // onto two GPUs of a DGX H100 (new-user test: NVLink efficiency 0.0089 was written without a
  // word). H100 NVLink: 18 links x 25 GB/s = 450 GB/s per direction (NVIDIA H100 datasheet, 900 GB/s
  // both ways); 4.00 / 450 is about 0.01, far below 0.2.
  const std::string log = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();
  Result r = run({"calibrate", "fit", log, "--base", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--gpus", "0,1",
                  "--out", path("p.textproto")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find(log + ":39: all_reduce of 1073741824 B on 2 GPUs measured busbw 4.00 GB/s"), std::string::npos)
      << r.err;
  // The fraction is the busiest link's share of the algorithm's traffic, not busbw / line rate
  // (fresh-user finding: "2000 GB/s, 3.14 of the line rate" of a 450 GB/s link read as wrong).
  EXPECT_NE(r.err.find("the busiest of the base's NVLink links would carry its share of the ring traffic at 0.00888 "
                       "of its line rate"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(": 450.0 GB/s per direction, datasheet) (expected 0.1 to 1.05): the log did not run over"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("give a --base of the system the log ran on"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("p.textproto")));

  // Faster than the base's links can carry: 100 GB/s busbw on two RTX 2080 Ti whose PCIe gen3 x16
  // links run 15.75 GB/s (8 GT/s x 16 lanes x 128/130).
  const std::string fast = path("fast.log");
  std::ofstream(fast) << "# all_reduce_perf\n"
                         "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
                         "time   algbw   busbw #wrong\n"
                         "   536870912     134217728     float     sum      -1   5368.7  100.00  100.00      0   "
                         "5368.7  100.00  100.00      0\n"
                         "  1073741824     268435456     float     sum      -1  10737.4  100.00  100.00      0  "
                         "10737.4  100.00  100.00      0\n";
  r = run({"calibrate", "fit", fast, "--base", kScenario, "--out", path("p.textproto")});
  EXPECT_EQ(r.status, 2) << r.out;
  // Every row is held to the upper limit, so the first one too fast is named.
  EXPECT_NE(r.err.find(fast + ":3: all_reduce of 536870912 B on 2 GPUs measured busbw 100.00 GB/s"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the log ran faster than the links of --base"), std::string::npos) << r.err;

  // A small row too fast among plausible large ones (a fresh user's edit of a DGX H100 log: 1 MiB
  // all_reduce at 1 us, 1,835 GB/s busbw, 4x NVLink's 450 GB/s): refused. Before, only the largest
  // fit size was checked, and the profile then predicted 553 GB/s at 1 MiB.
  const std::string small = path("small.log");
  std::ofstream(small) << "# all_reduce_perf\n"
                          "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
                          "time   algbw   busbw #wrong\n"
                          "     1048576        262144     float     sum      -1     1.00 1048.58 1835.01      0     "
                          "1.00 1048.58 1835.01      0\n"
                          "   536870912     134217728     float     sum      -1   2010.2  267.08  467.39      0   "
                          "2010.2  267.08  467.39      0\n";
  r = run(
      {"calibrate", "fit", small, "--base", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--out", path("p.textproto")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find(small + ":3: all_reduce of 1048576 B on 8 GPUs measured busbw 1835.01 GB/s"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(path("p.textproto")));
}

TEST_F(CalibrateCli, BaseResolvesFromTheProfileDirectoryAndIsNamedWhenMissing) {
  // The scenario and the profile in sibling directories: the profile stores ../scen/s.textproto
  // and finds it from wherever validate runs (the test's working directory is elsewhere).
  fs::create_directories(dir_ / "scen");
  fs::create_directories(dir_ / "prof");
  fs::copy_file(kScenario, dir_ / "scen" / "s.textproto");
  const std::string log = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();
  const std::string profile = path("prof/p.textproto");
  Result r = run({"calibrate", "fit", log, "--base", path("scen/s.textproto"), "--out", profile});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(slurp(profile).find("\nbase: \"../scen/s.textproto\"\n"), std::string::npos) << slurp(profile);
  r = run({"calibrate", "validate", profile, log});
  EXPECT_EQ(r.status, 0) << r.err;
  // Gone: the error names the profile, the line of `base` (after the 2 header comment lines), the
  // field and the path tried.
  fs::remove(dir_ / "scen" / "s.textproto");
  r = run({"calibrate", "validate", profile, log});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(profile + ":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": base: scenario file \"../scen/s.textproto\" not found (tried " +
                       (dir_ / "scen" / "s.textproto").lexically_normal().string()),
            std::string::npos)
      << r.err;
}

TEST_F(CalibrateCli, FitSetOverridesAreRecordedAndAppliedWhereTheProfileIsUsed) {
  const std::string log = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();
  const std::string profile = path("p.textproto");
  // The fit saw the consumer pair with P2P on (the scenario says off).
  Result r = run({"calibrate", "fit", log, "--base", kScenario, "--set", "cluster.pcie_p2p=true", "--set", "name=x",
                  "--out", profile});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--set name=x: not recorded in the profile"), std::string::npos) << r.out;
  const std::string text = slurp(profile);
  EXPECT_NE(text.find("\nbase_set: \"cluster.pcie_p2p=true\"\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("name=x"), std::string::npos) << text;
  // nccl-tests with the profile simulates the system of the fit: the same as setting it by hand.
  // (sendrecv, which the fit did not measure: P2P off stages its bytes through host memory.)
  const std::vector<std::string> cmd = {"nccl-tests", kScenario, "--op", "sendrecv", "-b", "1M", "-e", "1M"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = cmd;
    a.insert(a.end(), extra.begin(), extra.end());
    return run(a);
  };
  const Result used = with({"--profile", profile});
  ASSERT_EQ(used.status, 0) << used.err;
  EXPECT_NE(used.err.find("note: profile " + profile + " applies its fit's --set cluster.pcie_p2p=true"),
            std::string::npos)
      << used.err;
  const Result by_hand = with({"--set", "cluster.pcie_p2p=true", "--profile", profile});
  EXPECT_EQ(used.out, by_hand.out);
  // A --set on the command line wins over the recorded one.
  const Result off = with({"--set", "cluster.pcie_p2p=false", "--profile", profile});
  EXPECT_NE(off.out, used.out);
  // A malformed base_set is refused with its position.
  const std::string bad = path("bad.textproto");
  std::ofstream(bad) << "base_set: \"workload.parallel.tp=2\"\nlatency_scale: 1.5\n";
  r = run({"nccl-tests", kScenario, "--profile", bad});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(bad + ":1:1: base_set[0]: got \"workload.parallel.tp=2\" (expected a cluster.FIELD=VALUE"),
            std::string::npos)
      << r.err;
}

TEST_F(CalibrateCli, ValidateMarksPointsOfFilesTheFitDidNotUse) {
  const std::string profile = path("p.textproto");
  const std::string fitted = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();
  const std::string other = (kLogs / "n11b_rtx2080ti_1x2_pcie3_nop2p_allgather.txt").string();
  ASSERT_EQ(run({"calibrate", "fit", fitted, "--base", kScenario, "--out", profile}).status, 0);
  const Result r = run({"calibrate", "validate", profile, other});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(other + ": not among the profile's sources"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  fit  " + other), std::string::npos) << r.out;  // no point of n11b marked as fitted
  EXPECT_NE(r.out.find("  -    " + other + ":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("held out = points not used by the fit"), std::string::npos) << r.out;
}
TEST_F(CalibrateCli, ValidateCasesFitsTheSelectedTableOfAMultiOpLog) {
  // r02 and r03 (SOURCES.md in the raw folder): five runs in one paste, all_reduce, all_gather,
  // reduce_scatter, alltoall, sendrecv. `run: 3` fits and checks the alltoall table alone (one
  // row); r03's sendrecv on 10 nodes is fitted through a node-crossing pair (15.2 GB/s per pair,
  // 0.30 of a 400 Gb/s NIC), not refused as 0.034 of the first pair's NVLink. A run the log does
  // not have, and a refused fit, fail; a refused fit whose case states a holdout_known_gap is
  // reported as that gap, with the refusal.
  const fs::path raw = kLogs / "raw";
  if (!fs::exists(raw)) GTEST_SKIP() << "no raw logs";
  const std::string nccl = kSrc + "/scenarios/nccl/";
  auto write_cases = [&](const std::string& gap) {
    std::ofstream(path("c.textproto")) << "case { name: \"a2a\" scenario: \"" << nccl
                                       << "dgx_h100.textproto\" nccl_tests { log: \""
                                       << (raw / "r02_h100_1x8_5ops.log").string() << "\" run: 3 } }\n"
                                       << "case { name: \"sendrecv80\" scenario: \"" << nccl
                                       << "h100_10node_400g.textproto\" nccl_tests { log: \""
                                       << (raw / "r03_h100_10x8_5ops.log").string() << "\" run: 4 } }\n"
                                       << "case { name: \"other_hw\" scenario: \"" << nccl
                                       << "dgx_h100.textproto\" nccl_tests { log: \""
                                       << (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string()
                                       << "\" gpus: \"0,1\"" << gap << " } }\n";
  };
  write_cases("");
  Result r = run({"calibrate", "validate", "--cases", path("c.textproto"), "--holdout", "odd", "--quiet"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const std::string& o = r.out;
  EXPECT_NE(o.find("\na2a "), std::string::npos) << o;
  EXPECT_EQ(o.find("\na2a ", o.find("\na2a ") + 1), std::string::npos) << o;  // one table, one row
  EXPECT_NE(o.find(" alltoall "), std::string::npos) << o;
  EXPECT_EQ(o.find(" all_reduce  "), std::string::npos) << o;
  std::istringstream lines(o);
  std::string line, sendrecv_row;
  while (std::getline(lines, line)) {
    if (line.rfind("sendrecv80 ", 0) == 0) sendrecv_row = line;
  }
  ASSERT_GE(sendrecv_row.size(), 2u) << o;
  EXPECT_EQ(sendrecv_row.substr(sendrecv_row.size() - 2), "ok") << o;
  EXPECT_NE(o.find("FAILED (cannot run: "), std::string::npos) << o;
  EXPECT_NE(o.find("the log did not run over the links of --base"), std::string::npos) << o;
  EXPECT_NE(o.find("2 cases checked, 1 failed, 0 known gaps"), std::string::npos) << o;

  write_cases(" holdout_known_gap: \"an RTX 2080 Ti log on an H100 base\"");
  r = run({"calibrate", "validate", "--cases", path("c.textproto"), "--holdout", "odd", "--quiet"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("KNOWN GAP: an RTX 2080 Ti log on an H100 base [fit refused: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 cases checked, 0 failed, 1 known gaps"), std::string::npos) << r.out;

  std::ofstream(path("c.textproto")) << "case { name: \"r7\" scenario: \"" << nccl
                                     << "dgx_h100.textproto\" nccl_tests { log: \""
                                     << (raw / "r02_h100_1x8_5ops.log").string() << "\" run: 7 } }\n";
  r = run({"calibrate", "validate", "--cases", path("c.textproto"), "--holdout", "odd", "--quiet"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("r02_h100_1x8_5ops.log: run 7 asked, the log has 5"), std::string::npos) << r.out;
}
}  // namespace
}  // namespace traincast::cli
