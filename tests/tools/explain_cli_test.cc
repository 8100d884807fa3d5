// `traincast explain`: topology in words, a path with its bottleneck, DOT export, errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::Result;

Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "explain");
  return test_support::run(args);
}

TEST(ExplainCli, DescribesNodesAndPath) {
  const Result r = run({kSrc + "/scenarios/nccl/h100_ib400_2node.textproto", "--path", "gpu2", "node1.gpu5"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"2 x dgx_h100", "NVLink4 18 links x 25 GB/s = 450 GB/s per direction",
                        "GPU traffic between sockets 22 GB/s", "gpu5: pcie_sw5, socket 1, NIC nic5",
                        "8 x IB-NDR-400 at 50 GB/s", "Path gpu2 (node0.gpu2) -> gpu13 (node1.gpu5), 8 links:",
                        "Bottleneck: node0.nic5.tx at 50.00 GB/s per direction; achievable 48.00 GB/s; wire latency "
                        "730 ns"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

// A NIC at a tenth of its rate: the default route still crosses it (routes avoid failed NICs
// only), but NCCL's send/recv takes other NICs (its NIC choice: the largest path bandwidth
// first: here nic5-7 over PXN, a third each), so the output names both, NCCL's route bounded at
// 48 GB/s by its per-channel caps. Before session 41 only the default route was shown, its slowed
// NIC at 5 GB/s as the bottleneck, where nccl-tests' sendrecv on the same cluster moves 47.95 GB/s.
TEST(ExplainCli, PathShowsNcclsRouteAroundASlowedNic) {
  const fs::path dir = fs::temp_directory_path() / ("traincast_explain_nic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string sc = (dir / "slow_nic.textproto").string();
  std::ofstream(sc) << "cluster { node_template: \"dgx_h100\" num_nodes: 2\n"
                       "  overrides { select: \"node0/nic4\" bandwidth_factor: 0.1 } }\n";
  const Result r = run({sc, "--path", "gpu4", "node1.gpu4"});
  fs::remove_all(dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Bottleneck: node0.nic4.tx at 5.00 GB/s per direction"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NCCL's send/recv between them takes"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("via node0.nic4.tx"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Bottleneck of NCCL's route: 48.00 GB/s per direction"), std::string::npos) << r.out;
}

// Healthy: NCCL's route is the default one, and nothing more is printed.
TEST(ExplainCli, PathAddsNothingWhereNcclTakesTheDefaultRoute) {
  const Result r = run({kSrc + "/scenarios/nccl/h100_ib400_2node.textproto", "--path", "gpu2", "node1.gpu5"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("NCCL's send/recv"), std::string::npos) << r.out;
}

TEST(ExplainCli, PcieServerPathCrossesSockets) {
  const Result r = run({kSrc + "/scenarios/topology/pcie_server_nic_wrong_socket.textproto", "--path", "0", "5"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("node0.cpu0->cpu1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nic0: pcie_sw2, socket 1, next to gpu4 (other socket! cabled for gpu0)"), std::string::npos)
      << r.out;
}

TEST(ExplainCli, DotFile) {
  const fs::path dot = fs::temp_directory_path() / ("traincast_explain_" + std::to_string(::getpid()) + ".dot");
  fs::remove(dot);
  const Result r = run({kSrc + "/scenarios/nccl/dgx_h100.textproto", "--dot", dot.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream f(dot);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("digraph cluster {", 0), 0u);
  EXPECT_NE(text.find("\"node0.gpu0\" -> \"node0.nvswitch\""), std::string::npos);
  fs::remove(dot);
}

TEST(ExplainCli, Errors) {
  const std::string sc = kSrc + "/scenarios/nccl/dgx_h100.textproto";
  Result r = run({sc, "--path", "gpu1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: --path: needs exactly two GPUs (got 1)\n");
  r = run({sc, "--path", "gpu1", "gpu9"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: --path: GPU gpu9 outside the cluster's 8 GPUs (expected gpu0 to gpu7, or nodeM.gpuK)\n");
  EXPECT_EQ(r.out, "") << "a bad --path is refused before the topology is printed";
  r = run({sc, "--path", "gpu1", "x"});
  EXPECT_EQ(r.err, "traincast: --path: bad GPU 'x' (expected gpuN, N, nodeM.gpuK or nodeM/gpuK, e.g. gpu3)\n");
  r = run({});
  EXPECT_EQ(r.err, "traincast: explain: no scenario given (usage: traincast explain SCENARIO)\n");
}

}  // namespace
}  // namespace traincast::cli
