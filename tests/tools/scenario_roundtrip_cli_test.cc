// `traincast run S --print-scenario --json S.json` writes a scenario that loads back: for every
// shipped scenario `run` accepts, the JSON scenario prints the same scenario and simulates to a
// byte-identical JSON report. Found by a new user: a ResNet's printed scenario carried the
// transformer fields (workload.model.hidden_size, ...) that the loader refuses on a ResNet.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::Result;
using test_support::run;

using test_support::slurp;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Every scenario file under scenarios/ (not sweeps, not validation case lists), sorted.
std::vector<fs::path> shipped_scenarios() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(kSrc + "/scenarios")) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !(ends_with(name, ".textproto") || ends_with(name, ".json"))) continue;
    if (ends_with(name, ".sweep.textproto") || ends_with(name, ".cases.textproto")) continue;
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

using ScenarioRoundTrip = traincast::test_support::TempDirTest;

// The reports of a few, chosen to cover the families and optional blocks (a ResNet with its data
// loader, an encoder, MoE, LoRA with storage, a power cap, RAID checkpoints, the default); all of
// them would take ~35 s, more than this suite's budget. Every scenario's printed scenario is compared.
const std::vector<std::string> kSimulated = {
    "default.textproto",
    "models/resnet50.textproto",
    "whatif/resnet50_numa_binding.textproto",
    "models/tinybert.textproto",
    "models/deepseek_v2_lite.textproto",
    "operations/lora_slow_shared_fs.textproto",
    "operations/raid_write_through_checkpoint.textproto",
    "power/power_cap_70pct.textproto",
};

TEST_F(ScenarioRoundTrip, EveryShippedScenarioLoadsBackFromItsPrintedJson) {
  const std::vector<fs::path> files = shipped_scenarios();
  ASSERT_GT(files.size(), 40u);  // the folder is found and holds the shipped scenarios
  int round_tripped = 0, simulated = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string src = files[i].string();
    const fs::path each = dir_ / std::to_string(i);  // this file's outputs
    fs::create_directories(each);
    const fs::path printed = each / "s.json";
    const Result p = run({"run", src, "--print-scenario", "--json", printed.string()});
    if (p.status != 0) continue;  // a file `run` refuses (nccl-tests, chakra and invalid-on-purpose scenarios)
    const Result back = run({"run", printed.string(), "--print-scenario"});
    ASSERT_EQ(back.status, 0) << src << ":\n" << back.err;
    EXPECT_EQ(back.out, p.out) << src;
    ++round_tripped;
    const std::string rel = fs::relative(files[i], kSrc + "/scenarios").string();
    if (std::find(kSimulated.begin(), kSimulated.end(), rel) == kSimulated.end()) continue;
    const fs::path a = each / "a.json", b = each / "b.json";
    const Result ra = run({"run", src, "--json", a.string()});
    const Result rb = run({"run", printed.string(), "--json", b.string()});
    ASSERT_EQ(ra.status, 0) << src << ":\n" << ra.err;
    ASSERT_EQ(rb.status, 0) << src << ":\n" << rb.err;
    EXPECT_EQ(slurp(a), slurp(b)) << src;
    ++simulated;
  }
  EXPECT_GE(round_tripped, 35);  // as of this test: 35 of the 49 files are `run` scenarios
  EXPECT_EQ(simulated, static_cast<int>(kSimulated.size()));
}

}  // namespace
}  // namespace traincast::cli
