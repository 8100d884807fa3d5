// NCCL's p2p schedule inside one node (models/collectives/nccl_p2p.h): channel counts, the
// protocol and the parts per peer below and above NCCL's thresholds, the busiest channel, and
// the all_to_all time it gives, worked by hand; slower links are never faster.

#include "models/collectives/nccl_p2p.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/collectives/nccl_tests.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;
using test_support::iota;

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

std::vector<int> all_rounds(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = i;
  return r;
}

TEST(NcclP2p, ChannelCountsAsNcclTopoComputeP2pChannels) {
  // 18 NVLinks through the NVSwitch: ncclTopoGetNchannels 2 x 18 = 36 per peer.
  EXPECT_EQ(nccl_p2p_peer_channels(18), 36);
  EXPECT_EQ(nccl_p2p_peer_channels(0), 2);  // PCIe: 2
  // GB200 (the model's 32 comm channels): 32 p2p channels, min(32, 36) = 32 per peer.
  NcclP2pChannels c = nccl_p2p_channels(32, 36);
  EXPECT_EQ(c.channels, 32);
  EXPECT_EQ(c.per_peer, 32);
  // H100 one node: NCCL prints "24 coll channels, ..., 32 p2p channels, 32 p2p channels per peer":
  // pow2Up(24) = 32 and pow2Up(min(24, 36)) = 32.
  c = nccl_p2p_channels(24, 36);
  EXPECT_EQ(c.channels, 32);
  EXPECT_EQ(c.per_peer, 32);
  // 8 links per peer: pow2Up(16) = 16 per peer.
  EXPECT_EQ(nccl_p2p_channels(32, 16).per_peer, 16);
  // PCIe peers (2 each) on 12 comm channels: 16 channels, 2 per peer.
  c = nccl_p2p_channels(12, 2);
  EXPECT_EQ(c.channels, 16);
  EXPECT_EQ(c.per_peer, 2);
  EXPECT_THROW(nccl_p2p_channels(0, 2), std::invalid_argument);
}

TEST(NcclP2pPlan, SixtyFourRanksBelowAndAboveTheLlThreshold) {
  const NcclP2pChannels ch{32, 32};
  const std::vector<int> rounds = all_rounds(64);
  // 64 ranks: nChannelsMin 32 -> 1 (32 x 64 > 32 ... 1). LL threshold 32 x 16 KiB = 512 KiB.
  // 512 KiB per peer: LL, 1 part (min(1, 512 KiB / 8 KiB)); the self round (Simple, 64 KiB
  // minimum part) 1 part. Round r starts at reverseBits(r mod 32, 5): every channel gets rounds
  // r and r + 32: 2 x 512 KiB = 1 MiB, on all 32 channels.
  NcclP2pPlan p = nccl_p2p_plan(64, rounds, 512 * kKiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_TRUE(p.ll);
  EXPECT_EQ(p.parts, 1);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 1 * kMiB);
  EXPECT_EQ(p.busy_channels, 32);
  // 1 MiB per peer: above 512 KiB, Simple; still 1 part (<= 32 x 512 KiB); 2 MiB per channel.
  p = nccl_p2p_plan(64, rounds, 1 * kMiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_FALSE(p.ll);
  EXPECT_EQ(p.parts, 1);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 2 * kMiB);
  // 64 MiB per peer: a part may hold at most 32 x 512 KiB = 16 MiB: 1 -> 2 -> 4 parts; 64 rounds
  // x 4 parts = 256 parts, 8 on every channel (base + 0..3): 8 x 16 MiB.
  p = nccl_p2p_plan(64, rounds, 64 * kMiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_EQ(p.parts, 4);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 128 * kMiB);
  EXPECT_EQ(p.busy_channels, 32);
}

TEST(NcclP2pPlan, RankCountsThatLeaveChannelsIdleOrDoubled) {
  const NcclP2pChannels ch{32, 32};
  // 72 ranks, 512 KiB: rounds 64..71 start where rounds 0..7 do: 8 channels carry 3 rounds.
  NcclP2pPlan p = nccl_p2p_plan(72, all_rounds(72), 512 * kKiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 1.5 * kMiB);
  EXPECT_EQ(p.busy_channels, 32);
  // 18 ranks: nChannelsMin 1 (2 x 18 > 32): 18 rounds on 18 channels, 14 idle.
  p = nccl_p2p_plan(18, all_rounds(18), 512 * kKiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_EQ(p.parts, 1);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 512 * kKiB);
  EXPECT_EQ(p.busy_channels, 18);
  // 16 ranks: nChannelsMin 2 (2 x 16 = 32): 2 parts of 256 KiB from every round's base (the even
  // channels reverseBits gives rounds 0..15) and the next: all 32 channels, 256 KiB each.
  p = nccl_p2p_plan(16, all_rounds(16), 512 * kKiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_EQ(p.parts, 2);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 256 * kKiB);
  EXPECT_EQ(p.busy_channels, 32);
  // 4 ranks, 16 KiB: nChannelsMin 8; LL parts min(8, 16 KiB / 8 KiB) = 2 of 8 KiB on channels
  // 16-17, 8-9, 24-25; the self round (Simple, 64 KiB minimum part) 1 part of 16 KiB on channel 0.
  p = nccl_p2p_plan(4, all_rounds(4), 16 * kKiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_TRUE(p.ll);
  EXPECT_EQ(p.parts, 2);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 16 * kKiB);
  EXPECT_EQ(p.busy_channels, 7);
  // A two-rank send/recv pair (round 1 only), 64 MiB: nChannelsMin 16, parts min(16, 1024) = 16
  // of 4 MiB on channels 16..31.
  const std::vector<int> one{1};
  p = nccl_p2p_plan(2, one, 64 * kMiB, ch, kNcclP2pNvlChunkBytes);
  EXPECT_EQ(p.parts, 16);
  EXPECT_DOUBLE_EQ(p.max_channel_bytes, 4 * kMiB);
  EXPECT_EQ(p.busy_channels, 16);
  EXPECT_THROW(nccl_p2p_plan(2, std::vector<int>{2}, 1.0, ch, kNcclP2pNvlChunkBytes), std::invalid_argument);
  EXPECT_THROW(nccl_p2p_plan(0, one, 1.0, ch, kNcclP2pNvlChunkBytes), std::invalid_argument);
  EXPECT_THROW(nccl_p2p_plan(2, one, -1.0, ch, kNcclP2pNvlChunkBytes), std::invalid_argument);
}

TEST(NcclP2pPlan, AllToAllOnGb200SixtyFourGpusByHand) {
  Bench b("gb200_nvl72", 1);
  // 64 GPUs: the ring graph holds 16 channels of 45 GB/s (8 searched at 90, duplicated), so 32
  // comm channels, 32 p2p channels, 32 per peer; one channel moves 45 / 2 = 22.5 GB/s.
  // S = 32 MiB (512 KiB per peer): LL; the busiest channel 1 MiB at 22.5 GB/s x LL's 1/3 =
  // 139.81 us; the links: 63/64 x 32 MiB at 0.802 x 900 GB/s x 1/3 = 137.28 us, less. Latency
  // LL: 6.6 + 0.6 us. 7.2 + 139.81 = 147.01 us.
  CollectiveChoice c = b.engine.choose(call(CollectiveOp::all_to_all, iota(0, 64), 32 * kMiB));
  EXPECT_EQ(c.protocol, CollectiveProtocol::ll);
  EXPECT_NEAR(c.seconds(), 7.2e-6 + 1 * kMiB / (22.5e9 / 3.0), 1e-9);
  EXPECT_NEAR(b.run(call(CollectiveOp::all_to_all, iota(0, 64), 32 * kMiB)), c.seconds(), 5e-9);
  // S = 64 MiB (1 MiB per peer): Simple; busiest channel 2 MiB / 22.5 GB/s = 93.21 us, links
  // 63/64 x 64 MiB / 721.8 GB/s = 91.50 us; latency 8.4 + 3.4 = 11.8 us: 105.01 us, faster than
  // half the bytes.
  c = b.engine.choose(call(CollectiveOp::all_to_all, iota(0, 64), 64 * kMiB));
  EXPECT_EQ(c.protocol, CollectiveProtocol::simple);
  EXPECT_NEAR(c.seconds(), 11.8e-6 + 2 * kMiB / 22.5e9, 1e-9);
  EXPECT_NEAR(b.run(call(CollectiveOp::all_to_all, iota(0, 64), 64 * kMiB)), c.seconds(), 5e-9);
}

// Slower NVLink (every GPU's port at half its capacity, cluster.overrides) never makes a one-node
// all_to_all or send_recv faster, at any size and group.
TEST(NcclP2pPlan, SlowerNvlinkIsNeverFaster) {
  for (const std::string tmpl : {"gb200_nvl72", "dgx_h100"}) {
    ClusterSpec fast = Bench::make(tmpl, 1);
    ClusterSpec slow = fast;
    Bench probe(fast);
    const int gpus = probe.cluster.num_gpus();
    for (int g = 0; g < gpus; ++g) {
      for (const char* dir : {".nvl_up", ".nvl_down"}) {
        ElementOverride o;
        o.select = "node0.gpu" + std::to_string(g) + dir;
        o.bandwidth_factor = 0.5;
        slow.overrides.push_back(o);
      }
    }
    Bench f(fast), s(slow);
    for (int n : {2, 4, 8, 18, 36, 64, 72}) {
      if (n > gpus) continue;
      for (int log2_bytes = 10; log2_bytes <= 32; ++log2_bytes) {
        const double bytes = std::ldexp(1.0, log2_bytes);  // 1 KiB .. 4 GiB
        for (CollectiveOp op : {CollectiveOp::all_to_all, CollectiveOp::send_recv}) {
          const std::vector<int> ranks = op == CollectiveOp::send_recv ? iota(0, 2) : iota(0, n);
          const double tf = f.engine.choose(call(op, ranks, bytes)).seconds();
          const double ts = s.engine.choose(call(op, ranks, bytes)).seconds();
          EXPECT_LE(tf, ts * (1 + 1e-12)) << tmpl << " n=" << n << " bytes=" << bytes;
        }
      }
    }
  }
}

// A bigger all_to_all never finishes sooner on one node, except where NCCL's planner switches the
// transfers to other ranks from LL to Simple (addP2pToPlan: LL while a peer's bytes <= nChannelsMax
// x NCCL_P2P_LL_THRESHOLD). There NCCL itself is faster at twice the size: openxla's measured GB200
// table (../shared/data/collectives/xla_collective_perf_table_measured.csv) runs 512 KiB a peer in
// 38.9 / 67.5 / 122.8 / 124.5 / 224.9 / 231.3 / 460.1 us and 1 MiB a peer in 35.4 / 54.1 / 67.3 /
// 87.6 / 125.7 / 170.0 / 223.1 us for n = 8 / 16 / 18 / 32 / 36 / 64 / 72 (GB300, sm_103, the
// same), so the model keeps that step (docs/hardware.md, "The p2p LL -> Simple step") and no other.
TEST(NcclP2p, BiggerAllToAllNeverFasterExceptAtNcclsLlToSimpleSwitch) {
  int switches_faster = 0;
  for (const char* tmpl : {"dgx_h100", "dgx_a100", "dgx_b200", "hgx_a100_4gpu"}) {
    ClusterSpec c;
    c.node_template = tmpl;
    NcclTestsOptions o;
    o.op = NcclTestsOp::alltoall;
    std::vector<double> sizes;
    for (double s = kKiB; s <= 1024 * kMiB; s *= 2) sizes.push_back(s);
    const std::vector<NcclTestsResult> rows = simulate_nccl_tests(c, o, sizes);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const NcclTestsResult& a = rows[i - 1];
      const NcclTestsResult& b = rows[i];
      ASSERT_TRUE(a.choice.point_to_point) << tmpl;
      const bool ll_to_simple =
          a.choice.protocol == CollectiveProtocol::ll && b.choice.protocol == CollectiveProtocol::simple;
      if (ll_to_simple) {
        switches_faster += b.time_s < a.time_s ? 1 : 0;
        continue;
      }
      EXPECT_GE(b.time_s, a.time_s * (1 - 1e-9)) << tmpl << ": " << a.bytes << " B " << a.time_s * 1e6 << " us, "
                                                 << b.bytes << " B " << b.time_s * 1e6 << " us";
    }
  }
  EXPECT_GT(switches_faster, 0);  // dgx_h100: 4 MiB 36.89 us (LL), 8 MiB 31.60 us (Simple)
}

TEST(NcclP2p, NetPeerChannelsAndLlLimit) {
  // paths.cc ncclTopoGetNchannels (2.19-2.28), a network peer: 2, halved while 2 x nRanks > 4 x
  // p2pnChannels; at least the NICs the GPU needs for its bandwidth.
  EXPECT_EQ(nccl_p2p_net_peer_channels(16, 16, 1), 2);   // 2 x DGX H100: 32 <= 64
  EXPECT_EQ(nccl_p2p_net_peer_channels(128, 16, 1), 1);  // 256 > 64
  EXPECT_EQ(nccl_p2p_net_peer_channels(128, 16, 2), 2);  // two NICs for the GPU's bandwidth
  EXPECT_EQ(nccl_p2p_net_peer_channels(2, 1, 1), 2);     // send_recv: 4 <= 4
  EXPECT_DOUBLE_EQ(nccl_p2p_net_ll_bytes(16, 16, 1), 32 * kKiB);
  EXPECT_DOUBLE_EQ(nccl_p2p_net_ll_bytes(16, 128, 1), 16 * kKiB);
  EXPECT_THROW(nccl_p2p_net_peer_channels(0, 16, 1), std::invalid_argument);
}

// The clusters of the cross-node sweep: 2 x DGX H100 (16 ranks), the 4 x 4 torus of DGX H100
// (scenarios/topology/torus_4x4.textproto, 128 ranks) and 16 DGX H100 on a 4:1 fat tree with 4
// nodes per leaf (fat_tree_4to1's fabric, 128 ranks).
std::vector<std::pair<std::string, ClusterSpec>> cross_node_clusters() {
  std::vector<std::pair<std::string, ClusterSpec>> out;
  ClusterSpec two;
  two.node_template = "dgx_h100";
  two.num_nodes = 2;
  out.emplace_back("2 x dgx_h100", two);
  ClusterSpec torus = two;
  torus.num_nodes = 16;
  torus.fabric.kind = FabricKind::torus;
  torus.fabric.torus_dims = {4, 4};
  out.emplace_back("torus 4 x 4", torus);
  ClusterSpec fat = two;
  fat.num_nodes = 16;
  fat.fabric.kind = FabricKind::fat_tree;
  fat.fabric.nodes_per_leaf = 4;
  fat.fabric.oversubscription = 4;
  out.emplace_back("fat tree 4:1", fat);
  return out;
}

TEST(NcclP2p, BiggerP2pAcrossNodesNeverFasterExceptAtNcclsLlToSimpleSwitch) {
  // NCCL's planner across nodes (addP2pToPlan): LL while a peer's bytes <= nChannelsMax x 16 KiB,
  // else Simple, never LL128; so the time never falls with the size except at that one switch
  // (the tuner's LL -> LL128 had made torus_4x4 all_to_all 43.32 us at 128 KiB, 37.06 at 256 KiB).
  int switches = 0;
  for (const auto& [name, spec] : cross_node_clusters()) {
    for (const NcclTestsOp op : {NcclTestsOp::alltoall, NcclTestsOp::sendrecv}) {
      NcclTestsOptions o;
      o.op = op;
      if (op == NcclTestsOp::sendrecv) o.gpus = {0, 8};  // across the first two nodes
      const double ranks = op == NcclTestsOp::sendrecv ? 2.0 : 8.0 * spec.num_nodes;
      const double limit = op == NcclTestsOp::sendrecv || spec.num_nodes == 2 ? 32 * kKiB : 16 * kKiB;
      std::vector<double> sizes;
      for (double s = kKiB; s <= 1024 * kMiB; s *= 2) sizes.push_back(s);
      const std::vector<NcclTestsResult> rows = simulate_nccl_tests(spec, o, sizes);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const NcclTestsResult& b = rows[i];
        const double peer = op == NcclTestsOp::alltoall ? b.bytes / ranks : b.bytes;
        EXPECT_EQ(b.choice.protocol, peer <= limit ? CollectiveProtocol::ll : CollectiveProtocol::simple)
            << name << " " << nccl_tests_op_name(op) << " " << b.bytes << " B";
        if (i == 0) continue;
        const NcclTestsResult& a = rows[i - 1];
        if (a.choice.protocol == CollectiveProtocol::ll && b.choice.protocol == CollectiveProtocol::simple) {
          switches += b.time_s < a.time_s ? 1 : 0;
          continue;
        }
        EXPECT_GE(b.time_s, a.time_s * (1 - 1e-9))
            << name << " " << nccl_tests_op_name(op) << ": " << a.bytes << " B " << a.time_s * 1e6 << " us, " << b.bytes
            << " B " << b.time_s * 1e6 << " us";
      }
    }
  }
  EXPECT_GT(switches, 0);  // torus 4 x 4 all_to_all: 2 MiB (LL) slower than 4 MiB (Simple)
}

}  // namespace
}  // namespace traincast::models
