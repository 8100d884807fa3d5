// DeepEP's deduplicated expert-parallel all-to-all (models/collectives/moe_dispatch.h): the
// expected distinct nodes and GPUs per token worked by hand, its bounds against flat, and the plan's
// bytes on the NICs and NVLink ports of real clusters.
#include "models/collectives/moe_dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/spec/run_control.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::iota;

// DeepSeek-V3 (arXiv:2412.19437 §2.1.2, §3.1): 256 routed experts, top-8, EP 64 on 8 nodes of 8
// GPUs (32 experts per node, 4 per GPU), at most M = 4 nodes per token.
TEST(DeepEpFanout, DeepSeekV3ByHand) {
  // M = 4: the token's 8 experts among the 4 x 32 = 128 experts of its nodes. A chosen node gets
  // none with C(96, 8) / C(128, 8) = (96·95·94·93·92·91·90·89) / (128·127·126·125·124·123·122·121)
  //   = 4.8668e15 / 5.2474e16 ... computed factor by factor:
  //   0.75 · 0.748031 · 0.746032 · 0.744 · 0.741935 · 0.739837 · 0.737705 · 0.735537 = 0.0927473,
  // so E[D_node] = 4 · (1 − 0.0927473) = 3.62901 nodes, 3.62901 / 8 = 0.453626 of flat's RDMA bytes.
  const DeepEpFanout limited = deepep_fanout(256, 8, 4, 8, 8);
  EXPECT_EQ(limited.routed_nodes, 4);
  EXPECT_NEAR(limited.nodes_per_token, 3.62901, 5e-6);
  EXPECT_NEAR(limited.rdma_ratio, 0.453626, 5e-7);
  EXPECT_NEAR(limited.node_probability, 3.62901 / 8, 1e-6);
  // A GPU (4 experts) of a chosen node gets none with C(124, 8) / C(128, 8) =
  // (124·123·122·121·120·119·118·117) / (128·...·121) = (120·119·118·117) / (128·127·126·125)
  // = 0.770020; p_gpu = (4 / 8) · (1 − 0.770020) = 0.114990, 64 x that = 7.35937 GPUs per token.
  EXPECT_NEAR(limited.gpu_probability, 0.114990, 5e-7);
  EXPECT_NEAR(limited.gpus_per_token, 7.35937, 5e-5);
  // Unlimited: C(224, 8) / C(256, 8) = 0.875 · 0.874510 · 0.874016 · 0.873518 · 0.873016 ·
  // 0.872510 · 0.872 · 0.871486 = 0.338168; E[D_node] = 8 · (1 − 0.338168) = 5.29465.
  const DeepEpFanout unlimited = deepep_fanout(256, 8, 0, 8, 8);
  EXPECT_EQ(unlimited.routed_nodes, 8);
  EXPECT_NEAR(unlimited.nodes_per_token, 5.29465, 5e-6);
  EXPECT_NEAR(unlimited.rdma_ratio, 0.661832, 5e-7);
  // A limit at or above the group's nodes is no limit.
  EXPECT_DOUBLE_EQ(deepep_fanout(256, 8, 8, 8, 8).nodes_per_token, unlimited.nodes_per_token);
  EXPECT_DOUBLE_EQ(deepep_fanout(256, 8, 16, 8, 8).nodes_per_token, unlimited.nodes_per_token);
}

TEST(DeepEpFanout, ExactCases) {
  // top-1: one node and one GPU per token, every node and GPU equally likely.
  const DeepEpFanout one = deepep_fanout(64, 1, 0, 4, 8);
  EXPECT_DOUBLE_EQ(one.nodes_per_token, 1.0);
  EXPECT_DOUBLE_EQ(one.gpu_probability, 1.0 / 32);
  EXPECT_DOUBLE_EQ(one.rdma_ratio, 1.0);  // nothing to deduplicate
  // M = 1: every expert on one node.
  EXPECT_DOUBLE_EQ(deepep_fanout(256, 8, 1, 8, 8).nodes_per_token, 1.0);
  // One node: every token there.
  EXPECT_DOUBLE_EQ(deepep_fanout(64, 8, 0, 1, 8).nodes_per_token, 1.0);
  // Two experts per node, top-2 over 2 nodes: both on one node with C(2, 2) / C(4, 2) = 1/6 each
  // way, so E[D] = 2 · (1 − 1/6) = 5/3.
  EXPECT_DOUBLE_EQ(deepep_fanout(4, 2, 0, 2, 1).nodes_per_token, 5.0 / 3.0);
}

TEST(DeepEpFanout, RefusesWhatCannotRoute) {
  // 32 experts on 8 nodes: 1 node holds 4 experts, fewer than top-8.
  try {
    (void)deepep_fanout(32, 8, 1, 8, 1);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "workload.training.moe_max_nodes_per_token: 1 node(s) hold 4 experts, fewer than moe_top_k 8 (expected "
              ">= 2, or 0 for no limit)");
  }
  EXPECT_THROW((void)deepep_fanout(100, 8, 0, 8, 8), std::invalid_argument);  // 100 over 64 GPUs
  EXPECT_THROW((void)deepep_fanout(64, 0, 0, 8, 8), std::invalid_argument);
  EXPECT_THROW((void)deepep_fanout(64, 8, -1, 8, 8), std::invalid_argument);
}

// deepep never sends more than flat, per NIC and per NVLink port, and a tighter node limit never
// sends more: on every (experts, top_k, nodes, gpus per node, limit) of a grid.
TEST(DeepEpFanout, NeverMoreThanFlatAndMonotoneInTheLimit) {
  for (int nodes : {1, 2, 4, 8, 16, 32})
    for (int gpn : {1, 2, 4, 8})
      for (int per_gpu : {1, 2, 4, 8})
        for (int k : {1, 2, 4, 6, 8}) {
          const int experts = nodes * gpn * per_gpu;
          if (k > experts) continue;
          double previous = 0;
          for (int m = 1; m <= nodes; ++m) {
            if (m * gpn * per_gpu < k) continue;
            const DeepEpFanout f = deepep_fanout(experts, k, m, nodes, gpn);
            const DeepEpFractions d = deepep_fractions(f, k);
            SCOPED_TRACE(std::to_string(experts) + " experts, top-" + std::to_string(k) + ", " + std::to_string(nodes) +
                         " x " + std::to_string(gpn) + ", M " + std::to_string(m));
            EXPECT_LE(f.rdma_ratio, 1.0 + 1e-12);
            EXPECT_LE(d.rdma_peer, 1.0 / nodes + 1e-12);           // flat: G x 1/(N·G) per node pair
            EXPECT_LE(d.nvlink_pair, 1.0 / gpn + 1e-12);           // flat: N x 1/(N·G) per GPU pair
            EXPECT_LE(f.nodes_per_token, std::min(k, m) + 1e-12);  // at most k and at most M nodes
            EXPECT_LE(f.gpus_per_token, k + 1e-12);                // at most k GPUs
            EXPECT_GE(f.nodes_per_token, previous - 1e-12);        // a looser limit spreads wider
            previous = f.nodes_per_token;
          }
        }
}

CollectiveCall deepep_call(std::vector<int> ranks, double bytes, int experts, int top_k, int max_nodes) {
  CollectiveCall c = test_support::call(CollectiveOp::all_to_all, std::move(ranks), bytes);
  c.moe = MoeDispatch{EpAllToAll::deepep, experts, top_k, max_nodes};
  return c;
}

/// Bytes the run left on the NICs' transmit side and on the GPUs' NVLink ports (up).
struct Carried {
  double rdma = 0, nvlink = 0;
};
Carried carried(const Bench& b) {
  Carried c;
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (sim::ResourceId r = 0; r < b.net.num_resources(); ++r) {
    const std::string name = b.net.resource_name(r);
    if (name.find(".nic") != std::string::npos && ends_with(name, ".tx")) c.rdma += b.net.stats(r).bytes_carried;
    if (ends_with(name, ".nvl_up")) c.nvlink += b.net.stats(r).bytes_carried;
  }
  return c;
}

// EP 32 over 4 DGX H100 (8 GPUs each, one NIC per GPU), 256 experts top-8, M = 2: the plan's bytes
// are the formula's, and fewer than flat's on both the NICs and NVLink.
TEST(DeepEpPlan, BytesOnNicsAndNvlinkAreTheFormulas) {
  const double bytes = 64e6;  // flat send buffer per rank
  Bench flat("dgx_h100", 4);
  const double flat_s = flat.run(test_support::call(CollectiveOp::all_to_all, iota(0, 32), bytes));
  const Carried f = carried(flat);
  // Flat: every rank sends 24/32 of its buffer off its node; 7/8 of it crosses NVLink (PXN to
  // the rail's GPU, or straight to a GPU of its node).
  const double tol = 1e-9 * 32 * bytes;
  EXPECT_NEAR(f.rdma, 32 * bytes * 24 / 32, tol);
  EXPECT_NEAR(f.nvlink, 32 * bytes * 7 / 8, tol);

  Bench deep("dgx_h100", 4);
  const double deep_s = deep.run(deepep_call(iota(0, 32), bytes, 256, 8, 2));
  const Carried d = carried(deep);
  const DeepEpFanout fan = deepep_fanout(256, 8, 2, 4, 8);
  const DeepEpFractions fr = deepep_fractions(fan, 8);
  EXPECT_NEAR(d.rdma, 32 * 3 * fr.rdma_peer * bytes, tol);  // each rank, once to each of 3 nodes
  EXPECT_NEAR(d.rdma, f.rdma * fan.rdma_ratio, tol);        // = flat x E[D_node] / k
  EXPECT_NEAR(d.nvlink, 32 * 7 * fr.nvlink_pair * bytes, tol);
  EXPECT_LT(d.rdma, f.rdma);
  EXPECT_LE(d.nvlink, f.nvlink);
  EXPECT_LT(deep_s, flat_s);
}

// DeepEP's kernels hold its default Buffer.num_sms = 20 SMs, inside a node (8 ranks) and across
// nodes (32 ranks), at every size.
TEST(DeepEpPlan, KernelHoldsDeepEpsTwentySms) {
  Bench b("dgx_h100", 4);
  for (const std::vector<int>& ranks : {iota(0, 8), iota(0, 32)})
    for (double bytes : {64e3, 64e6}) EXPECT_EQ(b.engine.kernel_ctas(deepep_call(ranks, bytes, 256, 8, 0)), 20);
}

// A faster NIC never makes deepep slower; nor does a tighter node limit (fewer nodes per token).
TEST(DeepEpPlan, FasterNicNeverSlowerAndTighterLimitNeverSlower) {
  double previous = 1e30;
  for (const char* nic : {"IB-EDR-100", "IB-HDR-200", "IB-NDR-400", "IB-XDR-800"}) {
    ClusterSpec spec = Bench::make("dgx_h100", 4);
    spec.nic = nic;
    Bench b(spec);
    const double s = b.engine.estimate_seconds(deepep_call(iota(0, 32), 64e6, 256, 8, 2));
    SCOPED_TRACE(nic);
    EXPECT_LE(s, previous);
    previous = s;
  }
  Bench b("dgx_h100", 4);
  double looser = 0;
  for (int m = 1; m <= 4; ++m) {
    const double s = b.engine.estimate_seconds(deepep_call(iota(0, 32), 64e6, 256, 8, m));
    EXPECT_GE(s, looser);
    looser = s;
  }
  // The plan cache keeps flat and each deepep shape apart.
  EXPECT_GT(b.engine.estimate_seconds(test_support::call(CollectiveOp::all_to_all, iota(0, 32), 64e6)), looser);
}

TEST(DeepEpPlan, OnlyAllToAll) {
  Bench b("dgx_h100", 1);
  CollectiveCall c = deepep_call(iota(0, 8), 1e6, 64, 8, 0);
  c.op = CollectiveOp::all_reduce;
  EXPECT_THROW((void)b.engine.estimate_seconds(c), std::invalid_argument);
  // Inside one node deepep is the per-GPU deduplicated NVLink exchange: less than flat's.
  EXPECT_LT(b.engine.estimate_seconds(deepep_call(iota(0, 8), 64e6, 64, 8, 0)),
            b.engine.estimate_seconds(test_support::call(CollectiveOp::all_to_all, iota(0, 8), 64e6)));
}

// The all-to-all plan setup (n^2 routes, minutes for a large expert-parallel group) polls Ctrl-C
// as the network build does: a requested interrupt stops it, flat and deepep alike.
TEST(AllToAllPlan, SetupStopsOnInterrupt) {
  Bench b("dgx_h100", 4);
  request_interrupt(SIGINT);
  EXPECT_THROW((void)b.engine.estimate_seconds(test_support::call(CollectiveOp::all_to_all, iota(0, 32), 64e6)),
               Interrupted);
  EXPECT_THROW((void)b.engine.estimate_seconds(deepep_call(iota(0, 32), 64e6, 256, 8, 2)), Interrupted);
  clear_interrupt();
  EXPECT_GT(b.engine.estimate_seconds(test_support::call(CollectiveOp::all_to_all, iota(0, 32), 64e6)), 0.0);
  EXPECT_GT(b.engine.estimate_seconds(deepep_call(iota(0, 32), 64e6, 256, 8, 2)), 0.0);
}

}  // namespace
}  // namespace traincast::models
