// `traincast calibrate fit|validate` and `--profile` as a user runs them: exit statuses, messages
// naming file and line, the profile changing what run and nccl-tests predict.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

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

class CalibrateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kLogs)) GTEST_SKIP() << "no shared data";
    dir_ = fs::temp_directory_path() / ("traincast_calibrate_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

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
  EXPECT_NE(r.err.find(bad_profile + ":2:32: link_efficiency[0].efficiency: got 3 (expected a number in (0, 1.5])"),
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

}  // namespace
}  // namespace traincast::cli
