// Rack-scale NVLink domains through the CLI (issue 19): the new racks and GPUs in `traincast
// catalog`, a partitioned rack refused at its position, and the GB200 NVL72 vs HGX B200 scenarios.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "models/executor/training_executor.h"
#include "models/io/scenario_io.h"
#include "models/spec/report.h"
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
  EXPECT_NE(set.err.find("--set: cluster.node_template: node template 'gb200_nvl72/7': gb200_nvl72's 36 CPU sockets "
                         "do not split over NVLink domains of 7 GPUs (expected a domain size whose GPUs take a whole "
                         "share of them: n x 36 / 72 an integer)"),
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

// cluster.nvlink_bridge_gpus: refused at its position (file:line:col, or --set) when out of range
// (2-way or 4-way) or when the card takes no 4-way bridge; a 4-way H200 NVL node runs.
TEST_F(RacksCli, NvlinkBridgeSizeIsCheckedAtItsPosition) {
  {
    std::ofstream f(path("bridge.textproto"));
    f << "cluster {\n  node_template: \"pcie_8gpu_2socket_h200_nvl\"\n  nvlink_bridge_gpus: 3\n}\n";
  }
  const Result three = run({"nccl-tests", path("bridge.textproto")});
  EXPECT_EQ(three.status, 2);
  EXPECT_NE(three.err.find(path("bridge.textproto") + ":3:3: cluster.nvlink_bridge_gpus: "), std::string::npos)
      << three.err;
  const Result h100 =
      run({"nccl-tests", path("bridge.textproto"), "--set",
           "cluster.node_template=pcie_8gpu_2socket_h100_nvlink_bridge", "--set", "cluster.nvlink_bridge_gpus=4"});
  EXPECT_EQ(h100.status, 2);
  EXPECT_NE(h100.err.find("--set: cluster.nvlink_bridge_gpus: H100-PCIe-80GB takes at most a 2-way NVLink bridge "
                          "(expected 2, or a card with a 4-way bridge such as H200-NVL)"),
            std::string::npos)
      << h100.err;
  const Result four =
      run({"nccl-tests", path("bridge.textproto"), "--set", "cluster.nvlink_bridge_gpus=4", "--gpus", "0-3"});
  EXPECT_EQ(four.status, 0) << four.err;
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

// TP 16 inside an NVL72 NVLink domain vs TP 8 x PP 2 (scenarios/racks/gpt3_175b_nvl72_*.textproto),
// at half the layers and half the batch (16 micro-batches per pipeline; ~10 s here, ctest
// slow.racks_tp16_vs_tp8_pp2). Which wins comes from the model's own breakdown, not a number:
// - every TP 16 group is inside a rack: nothing of it crosses a NIC (the busiest links are NVLink);
// - the same FLOPs: compute within 15 % (GEMMs half as wide per GPU under TP 16);
// - TP 16 moves about twice the NVLink bytes per GPU: a layer's TP collectives carry
//   s x b x h x (t - 1) / t per GPU (15/16 against 7/8) and each GPU runs all layers instead of
//   half: 2 x (15/16) / (7/8) = 2.14, less the DP traffic both share, so 1.8 to 2.3;
// - the pipeline bubble of 1F1B is (p - 1) / m of the busy time (Narayanan et al., SC21, sec. 2.2):
//   within 30 % of (compute + exposed TP) / 16;
// - TP 8 x PP 2 wins because the exposed TP time it saves exceeds the bubble it pays.
TEST_F(RacksCli, Tp16InsideAnNvl72DomainLosesToTp8Pp2) {
  if (std::getenv("TRAINCAST_SLOW_TESTS") == nullptr) GTEST_SKIP() << "set TRAINCAST_SLOW_TESTS=1";
  const std::vector<std::string> half = {"workload.model.num_layers=48", "workload.training.global_batch_size=128"};
  const models::Report tp16 =
      models::simulate_training(io::load_scenario_file(kSrc + "/scenarios/racks/gpt3_175b_nvl72_tp16.textproto", half));
  const models::Report tp8 = models::simulate_training(
      io::load_scenario_file(kSrc + "/scenarios/racks/gpt3_175b_nvl72_tp8_pp2.textproto", half));
  ASSERT_EQ(tp16.num_gpus, 128);
  ASSERT_EQ(tp8.num_gpus, 128);
  for (const models::Report* r : {&tp16, &tp8}) {
    ASSERT_FALSE(r->busiest_links.empty());
    EXPECT_NE(r->busiest_links[0].name.find(".nvl_"), std::string::npos) << r->busiest_links[0].name;
  }
  const models::TimeBreakdown& a = tp16.breakdown;
  const models::TimeBreakdown& b = tp8.breakdown;
  EXPECT_NEAR(a.compute_s / b.compute_s, 1.0, 0.15);
  const double bytes_ratio = tp16.busiest_links[0].bytes / tp8.busiest_links[0].bytes;
  EXPECT_GT(bytes_ratio, 1.8);
  EXPECT_LT(bytes_ratio, 2.3);
  EXPECT_DOUBLE_EQ(a.pipeline_bubble_s, 0.0);
  const double bubble_1f1b_s = (b.compute_s + b.tp_comm_exposed_s) / 16.0;
  EXPECT_NEAR(b.pipeline_bubble_s, bubble_1f1b_s, 0.3 * bubble_1f1b_s);
  EXPECT_GT(a.tp_comm_exposed_s - b.tp_comm_exposed_s, b.pipeline_bubble_s);
  EXPECT_LT(tp8.iteration_time_s, tp16.iteration_time_s);
}

}  // namespace
}  // namespace traincast::cli
