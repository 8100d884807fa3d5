// CollNet (in-network reduction by the fabric's SHARP switches, cluster.fabric.sharp): bytes per
// link and time worked by hand, where NCCL's tuner picks it, and SHARP never slowing a collective.

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/collectives/collective_engine.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;
using test_support::iota;
using test_support::kGiB;

ClusterSpec spec(const std::string& tmpl, int nodes, bool sharp) {
  ClusterSpec s = Bench::make(tmpl, nodes);
  s.fabric.sharp = sharp;
  return s;
}

TEST(CollNet, LatencyTermsAreNcclTuningTables) {
  // NCCL tuning.cc 2.20.3: Direct 2 (min(1, ppn-1) x 3.7 + (ppn-1) x 0.4) + 31 us; Chain
  // 2 (ppn-1) x 2.8 + 30 us; one GPU per node: the network round trip only.
  EXPECT_NEAR(collnet_direct_latency_s(8)[2], (2 * (3.7 + 7 * 0.4) + 31) * 1e-6, 1e-15);  // 44 us
  EXPECT_NEAR(collnet_chain_latency_s(8)[2], (2 * 7 * 2.8 + 30) * 1e-6, 1e-15);           // 69.2 us
  EXPECT_NEAR(collnet_direct_latency_s(1)[2], 31e-6, 1e-15);
  EXPECT_NEAR(collnet_chain_latency_s(1)[2], 30e-6, 1e-15);
}

TEST(CollNet, DirectOnTwoDgxH100ByHand) {
  Bench b(spec("dgx_h100", 2, true));
  const double S = kGiB;
  const auto c = call(CollectiveOp::all_reduce, iota(0, 16), S, CollectiveAlgorithm::collnet_direct);
  // One head per NIC rail (GPU i next to NIC i). Each GPU sends 1/8 of its buffer to each of the
  // 7 other heads and, as a head, returns its reduced 1/8 to the 7 others: 7/8 + 7/8 = 1.75 S up
  // and down its NVLink port. Each head sends S/8 up its NIC once and receives S/8 once (the
  // switches reduce across nodes; nothing goes GPU to GPU between nodes).
  const double t = b.run(c);
  for (int g = 0; g < 8; ++g) {
    EXPECT_NEAR(b.carried("node0.gpu" + std::to_string(g) + ".nvl_up"), 1.75 * S, 1.0) << g;
    EXPECT_NEAR(b.carried("node1.gpu" + std::to_string(g) + ".nvl_down"), 1.75 * S, 1.0) << g;
    EXPECT_NEAR(b.carried("node0.nic" + std::to_string(g) + ".tx"), S / 8, 1.0) << g;
    EXPECT_NEAR(b.carried("node1.nic" + std::to_string(g) + ".rx"), S / 8, 1.0) << g;
  }
  EXPECT_EQ(b.carried_prefix("leaf"), 0.0);  // no switch-to-switch bytes in the model
  // Bound: the NVLink port, 1.75 S at 450 GB/s x 20.6/25 = 370.8 GB/s, times NCCL's Hopper
  // CollNet Direct factor 0.85 (the NICs need S/8 at 50 x 0.96 = 48 GB/s: 2.24 ms < 5.96 ms);
  // latency 44 us (Simple only).
  const double expected = 1.75 * S / (370.8e9 * 0.85) + 44e-6;
  const CollectiveChoice ch = b.engine.choose(c);
  EXPECT_EQ(ch.protocol, CollectiveProtocol::simple);
  EXPECT_NEAR(ch.seconds(), expected, 1e-9);
  EXPECT_NEAR(ch.tuner_seconds(), expected, 1e-9);
  EXPECT_NEAR(t, expected, 2e-6);  // + adapter and switch latencies along the paths
}

TEST(CollNet, ChainCarriesTheTreeChainInsideNodesAndOneShareOverEachNic) {
  Bench b(spec("dgx_h100", 2, true));
  const double S = kGiB;
  b.run(call(CollectiveOp::all_reduce, iota(0, 16), S, CollectiveAlgorithm::collnet_chain));
  // Per channel (8, one per NIC, S/8 each): 7 chain edges up (reduce) and 7 down (broadcast) on
  // every node: 14 S/8 per channel, 14 S over the node's NVLink up ports; S/8 per NIC each way.
  double up = 0;
  for (int g = 0; g < 8; ++g) up += b.carried("node0.gpu" + std::to_string(g) + ".nvl_up");
  EXPECT_NEAR(up, 14 * S, 8.0);
  for (int n = 0; n < 8; ++n) EXPECT_NEAR(b.carried("node1.nic" + std::to_string(n) + ".tx"), S / 8, 1.0) << n;
}

TEST(CollNet, NeverWithoutSharpAndRefusedWhenForced) {
  Bench b(spec("dgx_h100", 4, false));
  for (double bytes = 1024; bytes <= 4 * kGiB; bytes *= 16) {
    const CollectiveChoice c = b.engine.choose(call(CollectiveOp::all_reduce, iota(0, 32), bytes));
    EXPECT_NE(c.algorithm, CollectiveAlgorithm::collnet_direct) << bytes;
    EXPECT_NE(c.algorithm, CollectiveAlgorithm::collnet_chain) << bytes;
  }
  try {
    b.engine.choose(call(CollectiveOp::all_reduce, iota(0, 32), 1e6, CollectiveAlgorithm::collnet_chain));
    ADD_FAILURE() << "collnet_chain without SHARP ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cluster.fabric.sharp: true"), std::string::npos) << e.what();
  }
}

TEST(CollNet, ChosenWhereNcclsTunerWouldChooseIt) {
  Bench b(spec("dgx_h100", 16, true));
  const auto all = iota(0, 128);
  // 64 KiB: CollNet Direct's 44 us against ring's thousands of NET steps, tree's 2 log2(16)
  // network hops (LL 55.2 us) and Chain's 69.2 us.
  EXPECT_EQ(b.engine.choose(call(CollectiveOp::all_reduce, all, 65536)).algorithm, CollectiveAlgorithm::collnet_direct);
  // 4 GiB: Chain moves the same NVLink bytes as Direct (1.75 S per port) without Direct's 0.85:
  // 370.8 / 1.75 = 211.9 GB/s algbw, above NVLS tree's 8 x 45.5 GB/s busbw (183 GB/s algbw)
  // and ring's NICs (8 x 48 GB/s busbw).
  EXPECT_EQ(b.engine.choose(call(CollectiveOp::all_reduce, all, 4 * kGiB)).algorithm,
            CollectiveAlgorithm::collnet_chain);
  // all_gather, reduce_scatter: not CollNet (the model runs CollNet for all_reduce only).
  EXPECT_NE(b.engine.choose(call(CollectiveOp::all_gather, all, 65536)).algorithm, CollectiveAlgorithm::collnet_direct);
  // One node: NCCL_COLLNET_NODE_THRESHOLD (2) leaves CollNet off.
  Bench one(spec("dgx_h100", 1, true));
  for (double bytes : {65536.0, kGiB}) {
    const CollectiveAlgorithm a = one.engine.choose(call(CollectiveOp::all_reduce, iota(0, 8), bytes)).algorithm;
    EXPECT_NE(a, CollectiveAlgorithm::collnet_direct) << bytes;
    EXPECT_NE(a, CollectiveAlgorithm::collnet_chain) << bytes;
  }
  // No NVSwitch (NVLink bridge pairs, PCIe between pairs): NCCL disables CollNet Direct
  // (tuning.cc: nvsCount == 0); Chain runs. At 64 KiB the tree's LL latency (PCI hwLat: 6.8 +
  // 2 (7 x 1.0 + 2 x 5.0) = 40.8 us) is below Chain's 2 x 7 x 2.8 + 30 = 69.2 us, so the tree
  // stays; at 1 MiB Chain's one network round trip and bytes win.
  Bench bridge(spec("pcie_8gpu_2socket_h100_nvlink_bridge", 4, true));
  EXPECT_EQ(bridge.engine.choose(call(CollectiveOp::all_reduce, iota(0, 32), 65536)).algorithm,
            CollectiveAlgorithm::tree);
  EXPECT_EQ(bridge.engine.choose(call(CollectiveOp::all_reduce, iota(0, 32), 1048576)).algorithm,
            CollectiveAlgorithm::collnet_chain);
  EXPECT_THROW(
      bridge.engine.choose(call(CollectiveOp::all_reduce, iota(0, 32), 65536, CollectiveAlgorithm::collnet_direct)),
      std::invalid_argument);
  // 72 GPUs per node: beyond CollNet Direct's arity (8 GPUs).
  Bench rack(spec("gb200_nvl72", 2, true));
  EXPECT_THROW(
      rack.engine.choose(call(CollectiveOp::all_reduce, iota(0, 144), 65536, CollectiveAlgorithm::collnet_direct)),
      std::invalid_argument);
}

TEST(CollNet, SharpNeverMakesACollectiveSlower) {
  // The tuner takes CollNet only when its estimate is below the best other one; CollNet's flows
  // cross no switch-to-switch link, so its time is its estimate, and the others' times are at
  // least theirs: switching SHARP on never makes a call slower (closed form and simulated).
  for (const char* tmpl : {"dgx_a100", "dgx_h100", "pcie_8gpu_2socket_h100_nvlink_bridge"}) {
    for (int nodes : {2, 4, 16}) {
      Bench off(spec(tmpl, nodes, false));
      Bench on(spec(tmpl, nodes, true));
      const int gpus = off.cluster.num_gpus();
      for (double bytes = 1024; bytes <= 4 * kGiB; bytes *= 8) {
        const auto c = call(CollectiveOp::all_reduce, iota(0, gpus), bytes);
        EXPECT_LE(on.engine.choose(c).seconds(), off.engine.choose(c).seconds() * (1 + 1e-12))
            << tmpl << " x " << nodes << " at " << bytes;
      }
      if (nodes == 4) {
        for (double bytes : {1e6, 256e6}) {
          const auto c = call(CollectiveOp::all_reduce, iota(0, gpus), bytes);
          EXPECT_LE(on.run(c), off.run(c) * (1 + 1e-9)) << tmpl << " simulated at " << bytes;
        }
      }
    }
  }
}

}  // namespace
}  // namespace traincast::models
