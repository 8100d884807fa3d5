// SC21 §5.9 (Narayanan et al., arXiv:2104.04473): the 1T model on 3,072 A100 (TP 8 x PP 64 x DP 6,
// Selene) used 12.9 TB/s of effective bisection bandwidth for the data-parallel all-reduce
// (shared/data/training/megatron_sc21_system_facts.json). Effective bisection bandwidth here: the
// bytes per second that cross a cut through the middle of every communicator, one direction, while
// the communication runs: a ring all-reduce's cut is crossed by one ring edge per direction, which
// carries busbw, so the figure is (communicators) x busbw.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/collectives/nccl_tests.h"
#include "models/io/scenario_io.h"

namespace traincast::io {
namespace {

TEST(Sc21Bisection, DataParallelAllReduceWithin15PercentOf12_9TBps) {
  const std::string base = std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/validation/selene_gpt.textproto";
  const models::Scenario sc = load_cluster_scenario_file(base, {"cluster.num_nodes=384"});
  // The 1T row of SC21 Table 1: l = 128, h = 25600, V = 51200, s = 2048; parameters by eq. 2,
  // P = 12 l h^2 (1 + 13 / (12 h) + (V + s) / (12 l h)); each GPU holds P / (TP x PP) of them and
  // all-reduces their fp16 gradients (2 bytes) over its DP group.
  const double l = 128, h = 25600, V = 51200, s = 2048;
  const double params = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  const int tp = 8, pp = 64, dp = 6;
  const double grad_bytes = 2 * params / (tp * pp);
  // Megatron's rank order (TP fastest, then DP, then PP): the DP group of TP rank 0 at stage 0 is
  // GPU 0 of nodes 0..5. Each of the TP x PP = 512 groups is alike and uses its own HCA (its GPU's
  // rail) with non-blocking adaptive spines, so they do not share a link: one group's busbw holds
  // for all of them running at once.
  models::NcclTestsOptions o;
  o.op = models::NcclTestsOp::all_reduce;
  o.word_bytes = 2;
  for (int d = 0; d < dp; ++d) o.gpus.push_back(d * tp);
  const std::vector<models::NcclTestsResult> r = models::simulate_nccl_tests(sc.cluster, o, {grad_bytes});
  ASSERT_EQ(r.size(), 1u);
  const double effective_tb_per_s = tp * pp * r[0].busbw_gbps / 1e3;
  EXPECT_NEAR(effective_tb_per_s, 12.9, 0.15 * 12.9) << "busbw " << r[0].busbw_gbps << " GB/s";
}

}  // namespace
}  // namespace traincast::io
