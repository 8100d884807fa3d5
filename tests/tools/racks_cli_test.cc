// Rack-scale NVLink domains through the CLI (issue 19): the new racks and GPUs in `traincast
// catalog`, a partitioned rack refused at its position, and the GB200 NVL72 vs HGX B200 scenarios.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
using test_support::Result;
using test_support::run;

class RacksCli : public traincast::test_support::TempDirTest {};

TEST_F(RacksCli, CatalogListsTheNewHardwareWithSources) {
  const Result r = run({"catalog"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"B300", "GB200", "GB300", "H200-NVL", "GH200-96GB", "hgx_b300", "gb200_nvl72", "gb300_nvl72",
                           "pcie_8gpu_2socket_h200_nvl", "gh200_1gpu"})
    EXPECT_NE(r.out.find(std::string("  ") + name + " "), std::string::npos) << name;
  EXPECT_NE(r.out.find("72 x GB200, 72 x IB-NDR-400, NVSwitch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVIDIA GB200 NVL72 (2024): 72 GPUs in one NVLink domain"), std::string::npos);
  const Result p = run({"catalog", "--prices"});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("GB200"), std::string::npos);
}

TEST_F(RacksCli, APartitionThatDoesNotSplitTheRackIsRefusedAtItsPosition) {
  const Result set = run({"run", "--set", "cluster.node_template=gb200_nvl72/7"});
  EXPECT_EQ(set.status, 2);
  EXPECT_NE(set.err.find("--set: cluster.node_template: node template 'gb200_nvl72/7': 7 GPUs per NVLink domain "
                         "does not split gb200_nvl72's 72 GPUs (expected a divisor of 72 below it)"),
            std::string::npos)
      << set.err;
  {
    std::ofstream f(path("bad.textproto"));
    f << "cluster {\n  node_template: \"gb200_nvl72/x\"\n}\n";
  }
  const Result file = run({"nccl-tests", path("bad.textproto")});  // a cluster-only file
  EXPECT_EQ(file.status, 2);
  EXPECT_NE(file.err.find(path("bad.textproto") + ":2:3: cluster.node_template: node template 'gb200_nvl72/x': 'x' "
                                                  "is not a GPU count"),
            std::string::npos)
      << file.err;
}

// TP 8 on NVLink domains of 12 GPUs: the groups do not nest in the domains (GPUs 8-15 span two),
// so their all-reduces cross the NICs; the run warns before simulating instead of leaving the cost
// to read as slow GPUs. TP 4 nests and gets no warning.
TEST_F(RacksCli, TpGroupsStraddlingNvlinkDomainsAreWarned) {
  const std::vector<std::string> common = {"--set", "cluster.node_template=gb200_nvl72/12",
                                           "--set", "cluster.num_nodes=2",
                                           "--set", "workload.training.global_batch_size=96"};
  std::vector<std::string> straddle = {"run", "--set", "workload.parallel.tp=8", "--set", "workload.parallel.dp=3"};
  straddle.insert(straddle.end(), common.begin(), common.end());
  const Result r = run(straddle);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: TP groups of 8 GPUs straddle the 12-GPU nodes (NVLink domains) of gb200_nvl72/12"),
            std::string::npos)
      << r.err;
  std::vector<std::string> nested = {"run", "--set", "workload.parallel.tp=4", "--set", "workload.parallel.dp=6"};
  nested.insert(nested.end(), common.begin(), common.end());
  const Result n = run(nested);
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_EQ(n.err.find("straddle"), std::string::npos) << n.err;
}

}  // namespace
}  // namespace traincast::cli
