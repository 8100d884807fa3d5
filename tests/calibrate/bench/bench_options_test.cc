// calibrate/bench/bench_options.h: traincast-bench's command line.

#include "calibrate/bench/bench_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace traincast::bench {
namespace {

ParsedOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "traincast-bench");
  return parse_bench_options(static_cast<int>(args.size()), args.data());
}

std::string error_of(std::vector<const char*> args) {
  const ParsedOptions p = parse(std::move(args));
  return p.error ? *p.error : "(no error)";
}

TEST(BenchOptions, Defaults) {
  const ParsedOptions p = parse({});
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.options.budget_s, 600);
  EXPECT_EQ(p.options.parts, all_parts());
  EXPECT_EQ(p.options.out, "");
  EXPECT_FALSE(p.options.force);
  EXPECT_TRUE(p.options.gpus.empty());
  EXPECT_EQ(p.options.command_line, "traincast-bench");
}

TEST(BenchOptions, EveryOptionInBothSpellings) {
  const ParsedOptions p = parse({"--budget-s", "300", "--parts=nccl,gemm", "--out", "m.textproto", "--force",
                                 "--describe=rack 4, \"cold\" aisle", "--gpus", "3,1"});
  ASSERT_FALSE(p.error) << *p.error;
  EXPECT_EQ(p.options.budget_s, 300);
  EXPECT_EQ(p.options.parts, (std::vector<std::string>{"gemm", "nccl"}));  // run order, not given order
  EXPECT_EQ(p.options.out, "m.textproto");
  EXPECT_TRUE(p.options.force);
  EXPECT_EQ(p.options.describe, "rack 4, \"cold\" aisle");
  EXPECT_EQ(p.options.gpus, (std::vector<int>{3, 1}));
  EXPECT_TRUE(parse({"-h"}).options.help);
  EXPECT_TRUE(parse({"--version"}).options.version);
  EXPECT_EQ(parse({"--budget-s=0.5"}).options.budget_s, 0.5);
}

TEST(BenchOptions, BadInputNamesTheOptionAndWhatWasExpected) {
  EXPECT_EQ(error_of({"--budget-s", "abc"}), "--budget-s: expected a number of seconds > 0, got \"abc\"");
  EXPECT_EQ(error_of({"--budget-s", "0"}), "--budget-s: expected a number of seconds > 0, got \"0\"");
  EXPECT_EQ(error_of({"--budget-s=-5"}), "--budget-s: expected a number of seconds > 0, got \"-5\"");
  EXPECT_EQ(error_of({"--budget-s", "inf"}), "--budget-s: expected a number of seconds > 0, got \"inf\"");
  EXPECT_EQ(error_of({"--budget-s", "10s"}), "--budget-s: expected a number of seconds > 0, got \"10s\"");
  EXPECT_EQ(error_of({"--budget-s"}), "--budget-s: missing value");
  EXPECT_EQ(error_of({"--parts", "gemm,nvlink"}),
            "--parts: unknown part \"nvlink\" (expected a comma-separated subset of launch,hbm,pcie,gemm,nccl,burn)");
  EXPECT_EQ(error_of({"--parts", ""}),
            "--parts: unknown part \"\" (expected a comma-separated subset of launch,hbm,pcie,gemm,nccl,burn)");
  EXPECT_EQ(error_of({"--gpus", "0,x"}),
            "--gpus: expected comma-separated CUDA device indices >= 0, got \"x\" in \"0,x\"");
  EXPECT_EQ(error_of({"--gpus", "-1"}),
            "--gpus: expected comma-separated CUDA device indices >= 0, got \"-1\" in \"-1\"");
  EXPECT_EQ(error_of({"--gpus", "1,1"}), "--gpus: device 1 listed twice");
  EXPECT_EQ(error_of({"--out="}), "--out: expected a file name, got an empty string");
  EXPECT_EQ(error_of({"--force=yes"}), "--force: takes no value, got \"yes\"");
  EXPECT_EQ(error_of({"--out", "a", "--out", "b"}), "--out: given twice");
  EXPECT_EQ(error_of({"--budget"}),
            "unknown option \"--budget\" (expected one of --budget-s, --parts, --out, --force, --describe, --gpus, "
            "--version, --help)");
  EXPECT_EQ(error_of({"results.textproto"}),
            "unexpected argument \"results.textproto\" (traincast-bench takes options only; see --help)");
}

TEST(BenchOptions, UsageNamesEveryOptionAndPart) {
  const std::string usage = bench_usage();
  for (const char* opt : {"--budget-s", "--parts", "--out", "--force", "--describe", "--gpus", "--help"}) {
    EXPECT_NE(usage.find(opt), std::string::npos) << opt;
  }
  for (const std::string& part : all_parts()) EXPECT_NE(usage.find("  " + part + " "), std::string::npos) << part;
}

}  // namespace
}  // namespace traincast::bench
