// `traincast chakra run|export`: a public trace end to end, export -> run reproduces `traincast
// run`'s iteration time, no clobbering without --force, bad traces exit 2 with their position.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/io/chakra_io.h"
#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;
const std::string kData = TRAINCAST_SHARED_DATA_DIR;

using test_support::Result;
using test_support::run;

/// The line of `text` starting with `prefix`, e.g. "Step time  78.14 ms" -> "78.14 ms".
std::string value_after(const std::string& text, const std::string& prefix) {
  const auto p = text.find(prefix);
  if (p == std::string::npos) return "";
  const auto e = text.find('\n', p);
  std::string v = text.substr(p + prefix.size(), e - p - prefix.size());
  return v.substr(v.find_first_not_of(' '));
}

TEST(ChakraCli, PublicMicrobenchmarkRuns) {
  const std::string trace = kData + "/chakra/astra-sim-microbenchmarks/all_to_all/16npus_1MB/all_to_all";
  if (!fs::exists(trace + ".0.et")) GTEST_SKIP();
  const Result r = run({"chakra", "run", kSrc + "/scenarios/chakra/dgx_h100_64_nodes.textproto", trace});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"(16 ranks, 16 nodes)", "Step time", "exposed all_to_all", "all_to_all             1 calls"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(ChakraCli, ExportThenRunGivesTheGeneratorsIterationTime) {
  const std::string scenario = kSrc + "/scenarios/chakra/gpt_small_export.textproto";
  const traincast::test_support::TempDir tmp("chakra_cli_export");
  const fs::path dir = tmp.path() / "traces";
  const Result e = run({"chakra", "export", scenario, "--out", dir.string()});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.out.find("Wrote 8 Chakra traces"), std::string::npos) << e.out;
  for (int g = 0; g < 8; ++g) EXPECT_TRUE(fs::exists(dir / ("gpt-small-export." + std::to_string(g) + ".et")));
  // No clobbering without --force; with it, the same bytes.
  const Result again = run({"chakra", "export", scenario, "--out", dir.string()});
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("gpt-small-export.0.et"), std::string::npos) << again.err;
  EXPECT_EQ(run({"chakra", "export", scenario, "--out", dir.string(), "--force"}).status, 0);

  const Result gen = run({"run", scenario});
  ASSERT_EQ(gen.status, 0) << gen.err;
  const Result rep = run({"chakra", "run", scenario, (dir / "gpt-small-export").string()});
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_EQ(value_after(rep.out, "Step time"), value_after(gen.out, "Iteration"));
  EXPECT_NE(value_after(rep.out, "Step time"), "");
}

TEST(ChakraCli, BadTracesExitTwoWithThePosition) {
  const traincast::test_support::TempDir tmp("chakra_cli_bad");
  const fs::path dir = tmp.path() / "traces";
  ASSERT_EQ(run({"chakra", "export", kSrc + "/scenarios/chakra/gpt_small_export.textproto", "--out", dir.string(),
                 "--name", "t"})
                .status,
            0);
  const std::string scenario = kSrc + "/scenarios/chakra/dgx_h100_64_nodes.textproto";
  // Truncate rank 3.
  const fs::path f = dir / "t.3.et";
  const auto size = fs::file_size(f);
  fs::resize_file(f, size - 5);
  Result r = run({"chakra", "run", scenario, (dir / "t").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("t.3.et: byte "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  // A missing rank.
  fs::remove(f);
  r = run({"chakra", "run", scenario, (dir / "t").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("rank 3 is missing"), std::string::npos) << r.err;
  // The PyTorch JSON trace.
  const std::string json = kData + "/chakra/pytorch-et/1.0.2-chakra.0.0.4.json";
  if (fs::exists(json)) {
    r = run({"chakra", "run", scenario, json});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("PyTorch execution trace in JSON"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run({"chakra", "frobnicate", scenario}).status, 2);
  EXPECT_EQ(run({"chakra", "run", scenario}).status, 2);
  // An empty --name is refused, not replaced by the file's stem (fresh-user finding).
  r = run(
      {"chakra", "export", kSrc + "/scenarios/chakra/gpt_small_export.textproto", "--out", dir.string(), "--name", ""});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: --name: got \"\" (expected a file name stem, e.g. --name gpt3)\n");
  EXPECT_EQ(run({"chakra", "--help"}).status, 0);
}

// 8 ranks: 10 ms of compute (rank 4: 12.741313 ms, its GPU throttled to 1,554 of 1,980 MHz:
// 10 x 1980 / 1554), a 256 MiB all-reduce, a 2 ms optimizer step. Rank 0 waits 12.741313 - 10 =
// 2.741313 ms for rank 4 ("2.74 ms"); its exposed all-reduce row is the healthy job's (the
// transfer).
TEST(ChakraCli, ThrottledRankShowsAsWaitingForSlowerGpus) {
  const traincast::test_support::TempDir tmp("chakra_cli_throttled");
  auto write_traces = [&](const std::string& name, int slow) {
    for (int r = 0; r < 8; ++r) {
      models::ChakraRankTrace t;
      t.rank = r;
      t.version = "0.0.4";
      models::ChakraNode c, ar, opt;
      c.id = 0, c.name = "fwd_bwd", c.type = models::ChakraNodeType::comp;
      c.duration_ns = r == slow ? 12'741'313 : 10'000'000;
      ar.id = 1, ar.name = "grad_all_reduce", ar.type = models::ChakraNodeType::comm_coll;
      ar.comm_type = static_cast<int>(models::ChakraCollective::all_reduce);
      ar.comm_size_bytes = 256 << 20;
      ar.data_deps = {0};
      opt.id = 2, opt.name = "optimizer", opt.type = models::ChakraNodeType::comp;
      opt.duration_ns = 2'000'000;
      opt.data_deps = {1};
      t.nodes = {c, ar, opt};
      tmp.write(name + "." + std::to_string(r) + ".et", io::write_chakra_trace(t));
    }
    return tmp.file(name);
  };
  const std::string scenario = kSrc + "/scenarios/chakra/dgx_h100_64_nodes.textproto";
  const Result slow = run({"chakra", "run", scenario, write_traces("slow", 4)});
  ASSERT_EQ(slow.status, 0) << slow.err;
  const Result healthy = run({"chakra", "run", scenario, write_traces("healthy", -1)});
  ASSERT_EQ(healthy.status, 0) << healthy.err;
  EXPECT_EQ(value_after(slow.out, "  waiting for slower GPUs").substr(0, 8), "2.74 ms ") << slow.out;
  EXPECT_NE(
      slow.out.find("    slowest: rank 4 (node0 gpu4), arrived last; its GPU compute 14.74 ms vs 12.00 ms on rank 0"),
      std::string::npos)
      << slow.out;
  EXPECT_EQ(value_after(slow.out, "  exposed all_reduce").substr(0, 12),
            value_after(healthy.out, "  exposed all_reduce").substr(0, 12));
  EXPECT_EQ(healthy.out.find("waiting for slower GPUs"), std::string::npos) << healthy.out;
}

}  // namespace
}  // namespace traincast::cli
