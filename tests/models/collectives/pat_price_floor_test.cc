// The tuner's PAT price floor (CollectiveEngine::set_pat_price_floor, issue 18): an engine that
// skips building PAT plans it provably cannot choose picks, for every call, exactly what an engine
// that builds them all picks (the oracle), bit for bit, over group shapes, sizes from 0 to 10 GB
// (PAT winning at small sizes with one GPU per node, ring at large ones), fabrics, NCCL versions,
// a forced protocol and a slowed NIC; and the floor is never above the built plan's tuner time.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/collectives/collective_plans.h"
#include "models/collectives/nccl_tuning.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;

struct Case {
  std::string name;
  ClusterSpec spec;
};

ClusterSpec base(const std::string& tmpl, int nodes) { return Bench::make(tmpl, nodes); }

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"dgx_a100 x 16, default fabric", base("dgx_a100", 16)});
  ClusterSpec roce = base("dgx_h100", 64);  // ECMP over a 3-tier fat tree: several up-links per leaf
  roce.nic = "RoCE-400GbE";
  roce.fabric.kind = FabricKind::fat_tree;
  roce.fabric.tiers = 3;
  roce.fabric.nodes_per_leaf = 4;
  roce.fabric.leaves_per_pod = 4;
  out.push_back({"dgx_h100 x 64, RoCE, 3 tiers", roce});
  out.push_back({"pcie_8gpu_2socket x 8", base("pcie_8gpu_2socket", 8)});
  out.push_back({"h100_1gpu_4nic_roce x 32 (one GPU, 4 NICs per node)", base("h100_1gpu_4nic_roce", 32)});
  ClusterSpec slow_nic = base("dgx_h100", 32);  // the floor's rank 0 and another rank on slowed NICs
  slow_nic.overrides.push_back({.select = "node0/nic0", .bandwidth_factor = 0.5});
  slow_nic.overrides.push_back({.select = "node5/nic3", .bandwidth_factor = 0.25});
  out.push_back({"dgx_h100 x 32, two slowed NICs", slow_nic});
  ClusterSpec old = base("dgx_a100", 16);  // before PAT (NCCL 2.23)
  old.collectives.nccl_version = "2.21.5";
  out.push_back({"dgx_a100 x 16, NCCL 2.21.5", old});
  ClusterSpec ll = base("dgx_a100", 16);  // PAT runs only Simple
  ll.collectives.protocol = CollectiveProtocol::ll;
  out.push_back({"dgx_a100 x 16, NCCL_PROTO=LL", ll});
  ClusterSpec simple = base("dgx_h100", 16);
  simple.collectives.protocol = CollectiveProtocol::simple;
  out.push_back({"dgx_h100 x 16, NCCL_PROTO=Simple", simple});
  return out;
}

// Groups over `nodes` nodes of `gpn` GPUs: one GPU per node (PAT can run) of 2, 3, 5, 8, 13 and
// every node, local GPU 0, 3 or varying; and two GPUs per node (it cannot).
std::vector<std::vector<int>> groups(int nodes, int gpn) {
  std::vector<std::vector<int>> out;
  for (int n : {2, 3, 5, 8, 13, nodes}) {
    if (n > nodes) continue;
    for (int local : {0, 3, -1}) {
      std::vector<int> g;
      for (int k = 0; k < n; ++k) g.push_back(k * gpn + (local < 0 ? k % gpn : local % gpn));
      out.push_back(g);
    }
  }
  if (gpn > 1) {
    std::vector<int> two;
    for (int k = 0; k < std::min(nodes, 4); ++k) two.insert(two.end(), {k * gpn, k * gpn + 1});
    out.push_back(two);
  }
  return out;
}

void expect_same(const CollectiveChoice& a, const CollectiveChoice& b, const std::string& what) {
  EXPECT_EQ(a.algorithm, b.algorithm) << what;
  EXPECT_EQ(a.protocol, b.protocol) << what;
  EXPECT_EQ(a.channels, b.channels) << what;
  EXPECT_EQ(a.point_to_point, b.point_to_point) << what;
  EXPECT_EQ(a.latency_s, b.latency_s) << what;  // bit for bit
  EXPECT_EQ(a.bandwidth_s, b.bandwidth_s) << what;
  EXPECT_EQ(a.tuner_bandwidth_s, b.tuner_bandwidth_s) << what;
  EXPECT_EQ(a.pipeline_fill_s, b.pipeline_fill_s) << what;
  EXPECT_EQ(a.tuner_pipeline_fill_s, b.tuner_pipeline_fill_s) << what;
  EXPECT_EQ(a.bottleneck, b.bottleneck) << what;
  EXPECT_EQ(a.link_seconds_per_byte, b.link_seconds_per_byte) << what;
}

TEST(PatPriceFloor, ChoosesExactlyAsTheEngineThatBuildsEveryPlan) {
  // Sizes 0 and 10^(e/2) B, e = 0 .. 20 (1 B to 10 GB), large to small and back, so that some
  // groups' PAT plan is first skipped, then built when PAT wins, then found in the cache.
  std::vector<double> sizes{0.0};
  for (int e = 20; e >= 0; --e) sizes.push_back(std::pow(10.0, e / 2.0));
  for (int e = 0; e <= 20; ++e) sizes.push_back(std::pow(10.0, e / 2.0));
  int pat_wins = 0, ring_wins_over_pat = 0, skipped_cases = 0;
  for (const Case& c : cases()) {
    Bench bounded(c.spec);
    Bench oracle(c.spec);
    oracle.engine.set_pat_price_floor(false);
    const int gpn = bounded.cluster.gpus_per_node();
    for (const std::vector<int>& g : groups(bounded.cluster.num_nodes(), gpn)) {
      for (double bytes : sizes) {
        for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
          const CollectiveCall k = call(op, g, bytes);
          const std::string what = c.name + ", " + std::to_string(g.size()) + " ranks from GPU " +
                                   std::to_string(g[0]) + ", " + std::to_string(bytes) + " B, op " +
                                   std::to_string(static_cast<int>(op));
          const CollectiveEngine::Prepared a = bounded.engine.prepare(k);
          const CollectiveEngine::Prepared b = oracle.engine.prepare(k);
          expect_same(a.choice, b.choice, what);
          ASSERT_NE(a.plan, nullptr) << what;
          ASSERT_NE(b.plan, nullptr) << what;
          EXPECT_EQ(a.plan->algorithm, b.plan->algorithm) << what;
          EXPECT_EQ(a.plan->flows.size(), b.plan->flows.size()) << what;
          EXPECT_EQ(bounded.engine.kernel_ctas(k), oracle.engine.kernel_ctas(k)) << what;
          if (b.choice.algorithm == CollectiveAlgorithm::pat) ++pat_wins;
          if (b.choice.algorithm != CollectiveAlgorithm::pat &&
              g.size() == static_cast<std::size_t>(g.back() / gpn + 1) && c.spec.collectives.nccl_version.empty() &&
              !c.spec.collectives.protocol.has_value())
            ++ring_wins_over_pat;
        }
      }
    }
    if (bounded.engine.plans_built() < oracle.engine.plans_built()) ++skipped_cases;
  }
  // Both outcomes occur, and the floor spared plans on the clusters where PAT can run.
  EXPECT_GT(pat_wins, 100);
  EXPECT_GT(ring_wins_over_pat, 100);
  EXPECT_GE(skipped_cases, 5);
}

TEST(PatPriceFloor, FloorIsNeverAboveTheBuiltPlansTunerTime) {
  for (const Case& c : cases()) {
    if (!c.spec.collectives.nccl_version.empty()) continue;  // no PAT to build
    Bench b(c.spec);
    PlanScratch scratch;
    const int gpn = b.cluster.gpus_per_node();
    for (const std::vector<int>& g : groups(b.cluster.num_nodes(), gpn)) {
      for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
        CollectivePlan real, bound;
        for (CollectivePlan* p : {&real, &bound}) {
          p->op = op;
          p->algorithm = CollectiveAlgorithm::pat;
          p->ranks = g;
        }
        build_plan(real, PlanInputs{b.cluster, b.net, scratch});
        build_plan(bound, PlanInputs{b.cluster, b.net, scratch, /*pat_floor_only=*/true});
        const std::string what = c.name + ", " + std::to_string(g.size()) + " ranks from GPU " + std::to_string(g[0]);
        ASSERT_EQ(real.applicable, bound.applicable) << what;
        if (!real.applicable) continue;
        ASSERT_EQ(bound.phases.size(), 1u) << what;
        EXPECT_TRUE(bound.flows.empty()) << what;
        EXPECT_EQ(bound.phases[0].latency_s, real.phases[0].latency_s) << what;
        EXPECT_EQ(bound.channels, real.channels) << what;
        EXPECT_EQ(bound.protocol_allowed, real.protocol_allowed) << what;
        const double lo = bound.phases[0].tuner_seconds_per_byte, hi = real.phases[0].tuner_seconds_per_byte;
        EXPECT_GT(lo, 0) << what;
        EXPECT_LE(lo, hi) << what;
        // Tight where every node is alike and every rank the same GPU of its node: rank 0's own
        // links carry what every rank's do.
        bool same_local = true;
        for (int r : g) same_local = same_local && b.cluster.local_rank(r) == b.cluster.local_rank(g[0]);
        if (c.spec.overrides.empty() && same_local) {
          EXPECT_NEAR(lo, hi, 1e-12 * hi) << what;
        }
      }
    }
    // The scratch is left all zeros (finish_phase's contract).
    for (double v : scratch.load) ASSERT_EQ(v, 0.0);
    for (std::uint32_t v : scratch.count) ASSERT_EQ(v, 0u);
  }
}

}  // namespace
}  // namespace traincast::models
