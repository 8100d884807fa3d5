// NCCL's tuner model through the engine: predicted busbw, per-channel and llMaxBw caps, channel
// counts (NCCL_MIN/MAX_NCHANNELS), forced algorithm and protocol, protocol by size.

#include "models/collectives/nccl_tuning.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;
using test_support::iota;
using test_support::kGiB;

// Predicted nccl-tests busbw for all-reduce of 1 GiB (reported by the hardware engineer).
TEST(Collective, PredictedBusbwAllReduce1GiB) {
  struct Case {
    const char* tmpl;
    int nodes;
    double low, high;  // sanity band [GB/s]
  };
  // dgx_h100: NVLS (one node) and NVLS + trees (two nodes); r02 in the shared raw logs measured
  // 470 GB/s at 1 GiB on one node, n04b 448 GB/s on two (below NCCL's NVLSTree maximum of
  // 8 x 57.7 = 461.6 GB/s).
  for (const Case& k : {Case{"dgx_a100", 1, 200, 240}, Case{"dgx_h100", 1, 450, 500}, Case{"dgx_h100", 2, 430, 470}}) {
    Bench b(k.tmpl, k.nodes);
    const int n = 8 * k.nodes;
    const auto c = call(CollectiveOp::all_reduce, iota(0, n), kGiB);
    const double t = b.run(c);
    const double busbw = kGiB / t * CollectiveEngine::busbw_factor(CollectiveOp::all_reduce, n) / 1e9;
    const CollectiveChoice ch = b.engine.choose(c);
    std::printf(
        "[ predicted ] all_reduce 1 GiB on %d x %s: %.3f ms simulated (estimate %.3f ms), busbw %.1f GB/s, "
        "%s, %d channel(s)\n",
        k.nodes, k.tmpl, t * 1e3, ch.seconds() * 1e3, busbw,
        ch.algorithm == CollectiveAlgorithm::ring        ? "ring"
        : ch.algorithm == CollectiveAlgorithm::nvls      ? "nvls"
        : ch.algorithm == CollectiveAlgorithm::nvls_tree ? "nvls_tree"
        : ch.algorithm == CollectiveAlgorithm::tree      ? "tree"
                                                         : "hierarchical",
        ch.channels);
    EXPECT_GT(busbw, k.low);
    EXPECT_LT(busbw, k.high);
    EXPECT_NEAR(t, ch.seconds(), 2e-6);
  }
}

TEST(Collective, RingLl128CappedAtNcclPerChannelMaximum) {
  // NCCL tuning.cc (2.20.3): ring LL128 busBw = min(busBw x 0.92, nChannels x
  // perChMaxRingLL128Bw). 2 x DGX H100, 16 ranks, ring + LL128 forced, 1 GiB: the links allow 8
  // rails x 400 Gb/s x 0.96 = 384 GB/s busbw (x 0.92 = 353.3); NCCL's ring graph has 8 channels
  // (48 GB/s each: >= 25 but < 50 with more than 4 channels on cc 9.0, so no
  // ncclTopoDupChannels), cap 8 x 36.7 = 293.6 GB/s: bandwidth term 2 x 15/16 x S / 293.6 GB/s.
  // 2 x DGX A100 (HDR 200 Gb/s, 24 GB/s per channel < 25: 8 channels): 8 x 20.0 = 160 GB/s
  // against 8 x 24 x 0.92 = 176.6.
  for (const auto& [tmpl, cap] : {std::pair<std::string, double>{"dgx_h100", 8 * 36.7e9}, {"dgx_a100", 8 * 20.0e9}}) {
    ClusterSpec spec = Bench::make(tmpl, 2);
    spec.collectives.algorithm = CollectiveAlgorithm::ring;
    spec.collectives.protocol = CollectiveProtocol::ll128;
    Bench b(spec);
    const auto c = call(CollectiveOp::all_reduce, iota(0, 16), kGiB);
    const CollectiveChoice ch = b.engine.choose(c);
    ASSERT_EQ(ch.protocol, CollectiveProtocol::ll128) << tmpl;
    EXPECT_NEAR(ch.bandwidth_s, 1.875 * kGiB / cap, 1e-9) << tmpl;
    const double t = b.run(c);  // the flows run at the capped rate (+ per-hop latencies)
    EXPECT_GT(t, ch.seconds());
    EXPECT_LT(t, ch.seconds() + 5e-6) << tmpl;
  }
  // One node: no cap (NCCL's single-node channels carry at most 30 GB/s after the dup).
  ClusterSpec one = Bench::make("dgx_a100", 1);
  one.collectives.protocol = CollectiveProtocol::ll128;
  Bench b1(one);
  const CollectiveChoice c1 = b1.engine.choose(call(CollectiveOp::all_reduce, iota(0, 8), kGiB));
  // One ring over NVSwitch, 1.75 S per NVLink port at 300 GB/s x 0.8 x 0.92.
  EXPECT_NEAR(c1.bandwidth_s, 1.75 * kGiB / (240e9 * 0.92), 1e-9);
}

TEST(Collective, MinChannelsKeepNcclsLl128CapAndMoveThePlateau) {
  // NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS = 24 on 2 x DGX H100 (16 ranks, ring, 8 NDR rails).
  // NVIDIA/nccl src/graph/connect.cc ncclTopoPostset: comm->nChannels = 8 graph channels x 2 = 16
  // (no Hopper doubling: 16 is not < 16), then copyChannels up to 24: channels 16-23 copy 0-7, so
  // every rail runs 3 of the 24 channels (3/24 = 2/16 of the data, as without the setting).
  // tuning.cc (2.20.3) keeps "min(busBw * 0.92, graphs[a]->nChannels*perChMaxRingLL128Bw)": the
  // ring graph's 8 channels, not comm->nChannels, so LL128 at 1 GiB is still capped at
  // 8 x 36.7 = 293.6 GB/s busbw: bandwidth term 2 x 15/16 x 2^30 B / 293.6e9 B/s = 6.8576 ms
  // (24 x 36.7 = 880.8 would leave the links' 384 x 0.92 = 353.3 GB/s: 5.699 ms).
  for (int min_channels : {0, 24}) {
    ClusterSpec spec = Bench::make("dgx_h100", 2);
    spec.collectives.algorithm = CollectiveAlgorithm::ring;
    spec.collectives.protocol = CollectiveProtocol::ll128;
    spec.collectives.min_channels = min_channels;
    Bench b(spec);
    const CollectiveChoice ch = b.engine.choose(call(CollectiveOp::all_reduce, iota(0, 16), kGiB));
    ASSERT_EQ(ch.protocol, CollectiveProtocol::ll128);
    EXPECT_NEAR(ch.bandwidth_s, 1.875 * kGiB / 293.6e9, 1e-9) << min_channels;
    EXPECT_NEAR(ch.bandwidth_s, 6.8576e-3, 1e-6);
  }
  // The one tuner term with comm->nChannels (tuning.cc ncclTopoGetAlgoTime): ring Simple
  // all_reduce across nodes pays latency x 1.4 once nBytes / (nChannels x nRanks) >= 64. At
  // 20,000 B: 20000 / (16 x 16) = 78 >= 64 with the default 16 channels, 20000 / (24 x 16) = 52
  // with 24: the latency term is 1.4 times smaller with min_channels 24.
  double latency[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    ClusterSpec spec = Bench::make("dgx_h100", 2);
    spec.collectives.algorithm = CollectiveAlgorithm::ring;
    spec.collectives.protocol = CollectiveProtocol::simple;
    spec.collectives.min_channels = i == 0 ? 0 : 24;
    Bench b(spec);
    latency[i] = b.engine.choose(call(CollectiveOp::all_reduce, iota(0, 16), 20000)).latency_s;
  }
  EXPECT_NEAR(latency[0], 1.4 * latency[1], 1e-12);
}

TEST(Collective, ChannelCountsSplitTheRingOverRailsAsNccl) {
  // 2 x DGX H100, ring Simple all_reduce of 1 GiB, links: 8 rails x 400 Gb/s x 0.96 = 48 GB/s
  // each; every GPU's NVLink port carries all its rings' edges (the rings leave each node through
  // the rail owner, by PXN), 2 x 15/16 S in all, at 20.6/25 x 450 = 370.8 GB/s whatever the split.
  // NCCL channel c runs graph channel (c mod kept) mod 8 (ncclTopoPostset copyChannels), and the
  // data splits evenly over the channels:
  //  - max_channels 4: channels 0-3 on rails 0-3, 1/4 each: busbw 4 x 48 = 192 GB/s;
  //  - min_channels 20: 16 kept, channels 16-19 copy 0-3: rails 0-3 run 3 of 20, rails 4-7 2:
  //    rail 0 bounds at 48 x 20 / 3 = 320 GB/s busbw;
  //  - min_channels 24 (or none): 3 (2) per rail, even: NICs 8 x 48 = 384, NVLink 370.8 binds.
  // Bandwidth term = 2 x 15/16 x 2^30 B / busbw.
  for (const auto& [min_channels, max_channels, busbw] :
       {std::tuple{0, 4, 192e9}, std::tuple{20, 0, 320e9}, std::tuple{24, 0, 370.8e9}, std::tuple{0, 0, 370.8e9}}) {
    ClusterSpec spec = Bench::make("dgx_h100", 2);
    spec.collectives.algorithm = CollectiveAlgorithm::ring;
    spec.collectives.protocol = CollectiveProtocol::simple;
    spec.collectives.min_channels = min_channels;
    spec.collectives.max_channels = max_channels;
    Bench b(spec);
    const auto c = call(CollectiveOp::all_reduce, iota(0, 16), kGiB);
    const CollectiveChoice ch = b.engine.choose(c);
    EXPECT_NEAR(ch.bandwidth_s, 1.875 * kGiB / busbw, 1e-9) << min_channels << " " << max_channels;
    b.run(c);
    // NIC rail 7 carries its share of the 2 x 15/16 S the ring moves per rank pair crossing it.
    const double rail7 = b.carried("node0.nic7.tx");
    if (max_channels == 4) {
      EXPECT_EQ(rail7, 0.0);
    }
    if (min_channels == 20) {
      EXPECT_NEAR(rail7 / b.carried("node0.nic0.tx"), 2.0 / 3.0, 1e-9);
    }
  }
}

TEST(Collective, LlBandwidthCappedAtNcclLlMaxBw) {
  // NCCL tuning.cc llMaxBws: LL busBw across more than 2 nodes is at most 20.4 GB/s with Intel
  // CPUs (DGX H100: Xeon 8480C) and 19.0 with AMD (DGX A100: EPYC 7742). 4 nodes x 8 GPUs, ring
  // forced, LL forced, all_reduce of 64 MB: uncapped LL would move 2 x 31/32 S per rank at 8 rails
  // x 48 GB/s x 1/4 = 96 GB/s; capped, the bandwidth term is 1.9375 x 64e6 / 20.4e9 = 6.078 ms.
  for (const auto& [tmpl, cap] : {std::pair<std::string, double>{"dgx_h100", 20.4e9}, {"dgx_a100", 19.0e9}}) {
    ClusterSpec spec;
    spec.node_template = tmpl;
    spec.num_nodes = 4;
    spec.collectives.algorithm = CollectiveAlgorithm::ring;
    spec.collectives.protocol = CollectiveProtocol::ll;
    Bench b(spec);
    const double S = 64e6;
    const auto c = call(CollectiveOp::all_reduce, iota(0, 32), S);
    const CollectiveChoice ch = b.engine.choose(c);
    EXPECT_EQ(ch.protocol, CollectiveProtocol::ll);
    EXPECT_NEAR(ch.bandwidth_s, 1.9375 * S / cap, 1e-9) << tmpl;
    // The simulated flows run at the capped rate too (plus per-hop latencies, < 5 us).
    const double t = b.run(c);
    EXPECT_GT(t, ch.seconds());
    EXPECT_LT(t, ch.seconds() + 5e-6) << tmpl;
  }
}

TEST(Collective, ScenarioForcesAlgorithmAndProtocol) {
  ClusterSpec spec;
  spec.node_template = "dgx_h100";
  spec.num_nodes = 2;
  spec.collectives.algorithm = CollectiveAlgorithm::ring;  // NCCL_ALGO=Ring
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(spec, net);
  CollectiveEngine engine(sim, net, cluster);
  EXPECT_EQ(engine.choose(call(CollectiveOp::all_reduce, iota(0, 16), kGiB)).algorithm, CollectiveAlgorithm::ring);
  // A per-call algorithm wins over the scenario's.
  EXPECT_EQ(engine.choose(call(CollectiveOp::all_reduce, iota(0, 16), kGiB, CollectiveAlgorithm::tree)).algorithm,
            CollectiveAlgorithm::tree);
  ClusterSpec proto = spec;
  proto.collectives.algorithm = CollectiveAlgorithm::automatic;
  proto.collectives.protocol = CollectiveProtocol::ll;  // NCCL_PROTO=LL: NVLS (Simple only) is out
  sim::Simulator sim2;
  sim::FlowNetwork net2(sim2);
  Cluster cluster2(proto, net2);
  CollectiveEngine engine2(sim2, net2, cluster2);
  const CollectiveChoice ch = engine2.choose(call(CollectiveOp::all_reduce, iota(0, 16), kGiB));
  EXPECT_EQ(ch.protocol, CollectiveProtocol::ll);
  EXPECT_NE(ch.algorithm, CollectiveAlgorithm::nvls_tree);
}

TEST(Collective, ProtocolChoiceFollowsSize) {
  // One DGX A100: LL for tiny, LL128 in the middle, Simple for large (least predicted time).
  Bench b("dgx_a100", 1);
  EXPECT_EQ(b.engine.choose(call(CollectiveOp::all_reduce, iota(0, 8), 1024)).protocol, CollectiveProtocol::ll);
  EXPECT_EQ(b.engine.choose(call(CollectiveOp::all_reduce, iota(0, 8), 4 << 20)).protocol, CollectiveProtocol::ll128);
  EXPECT_EQ(b.engine.choose(call(CollectiveOp::all_reduce, iota(0, 8), kGiB)).protocol, CollectiveProtocol::simple);
}

}  // namespace
}  // namespace traincast::models

namespace traincast::models {
namespace {

// NCCL's NVLS chunk for the size (src/enqueue.cc calcCollChunking, per channel of 16, 8 heads):
// NVLS tree and NVLS, with the sizes at which each cut starts.
TEST(NvlsChunking, ChunkFollowsNcclsCalcCollChunking) {
  const double kib = 1024, mib = 1024 * 1024;
  CollectivePlan tree;
  tree.algorithm = CollectiveAlgorithm::nvls_tree;
  tree.channels = 8;  // heads
  tree.num_nodes = 2;
  // Per channel B = S / 16: B < 4 x 8 x 128 KiB (S < 64 MiB) -> 64 KiB; B < 8 x 64 KiB (S < 8 MiB)
  // -> 32 KiB.
  EXPECT_EQ(nvls_chunk_bytes(tree, 1 * mib), 32 * kib);
  EXPECT_EQ(nvls_chunk_bytes(tree, 4 * mib), 32 * kib);
  EXPECT_EQ(nvls_chunk_bytes(tree, 8 * mib), 64 * kib);
  EXPECT_EQ(nvls_chunk_bytes(tree, 32 * mib), 64 * kib);
  EXPECT_EQ(nvls_chunk_bytes(tree, 64 * mib), 128 * kib);
  EXPECT_EQ(nvls_chunk_bytes(tree, 8192 * mib), 128 * kib);
  // From 4 nodes NCCL_NVLSTREE_MAX_CHUNKSIZE's default caps it at 64 KiB.
  tree.num_nodes = 4;
  EXPECT_EQ(nvls_chunk_bytes(tree, 8192 * mib), 64 * kib);
  EXPECT_EQ(nvls_chunk_bytes(tree, 4 * mib), 32 * kib);
  // NVLS on one node, 8 heads: B < 64 x 8 x 128 KiB (S < 1 GiB) -> 64 KiB; B < 8 x 8 x 64 KiB
  // (S < 64 MiB) -> 32 KiB; B < 2 x 8 x 32 KiB (S < 8 MiB) -> 16 KiB.
  CollectivePlan nvls;
  nvls.algorithm = CollectiveAlgorithm::nvls;
  nvls.channels = 8;
  EXPECT_EQ(nvls_chunk_bytes(nvls, 1024 * mib), 128 * kib);
  EXPECT_EQ(nvls_chunk_bytes(nvls, 512 * mib), 64 * kib);
  EXPECT_EQ(nvls_chunk_bytes(nvls, 32 * mib), 32 * kib);
  EXPECT_EQ(nvls_chunk_bytes(nvls, 4 * mib), 16 * kib);
  // Other algorithms: no NVLS chunking, no fill.
  CollectivePlan ring;
  ring.algorithm = CollectiveAlgorithm::ring;
  EXPECT_EQ(nvls_chunk_bytes(ring, 64 * mib), 0);
  CollectivePhase busy;
  busy.tuner_seconds_per_byte = busy.nvlink_tuner_seconds_per_byte = 1e-11;
  EXPECT_EQ(nvls_pipeline_fill_s(ring, busy, 64 * mib, 1.0), 0);
}

TEST(NvlsChunking, FillIsWholeChunksAboveOneLoopAndTheBytesBelow) {
  const double mib = 1024 * 1024;
  CollectivePlan tree;
  tree.algorithm = CollectiveAlgorithm::nvls_tree;
  tree.channels = 8;
  tree.num_nodes = 2;
  // NVLS tree: a lane's chunk at its slowest own stage, 16 x max(NVLink, heads x other): here the
  // NIC stage, 8 x 2e-12 = 1.6e-11 s per byte of S against NVLink's 1e-11.
  CollectivePhase ph;
  ph.nvlink_tuner_seconds_per_byte = 1e-11;
  ph.other_tuner_seconds_per_byte = 2e-12;
  ph.tuner_seconds_per_byte = 1e-11;
  EXPECT_NEAR(nvls_lane_seconds_per_byte(tree, ph), 16 * 1.6e-11, 1e-24);
  // 64 MiB: 128 KiB chunks: 3.15 x 128 KiB x 16 x 1.6e-11 s, at rate factor 0.5 twice that.
  const double chunk_s = 128 * 1024 * 16 * 1.6e-11;
  EXPECT_NEAR(nvls_pipeline_fill_s(tree, ph, 64 * mib, 1.0), 3.15 * chunk_s, 1e-15);
  EXPECT_NEAR(nvls_pipeline_fill_s(tree, ph, 64 * mib, 0.5), 2 * 3.15 * chunk_s, 1e-15);
  // 1 MiB: one loop would be 128 lanes x 32 KiB = 4 MiB, more than there is: each lane holds
  // 1 MiB / 128 = 8 KiB.
  EXPECT_NEAR(nvls_pipeline_fill_s(tree, ph, 1 * mib, 1.0), 3.15 * 8192 * 16 * 1.6e-11, 1e-15);
  // Nothing moves: no fill.
  EXPECT_EQ(nvls_pipeline_fill_s(tree, ph, 0, 1.0), 0);
  EXPECT_EQ(nvls_pipeline_fill_s(tree, CollectivePhase{}, 64 * mib, 1.0), 0);
  // The fill never shrinks when the size grows.
  double prev = 0;
  for (int k = 10; k <= 34; ++k) {  // 1 KiB .. 16 GiB
    const double s = std::ldexp(1.0, k);
    const double fill = nvls_pipeline_fill_s(tree, ph, s, 1.0);
    EXPECT_GE(fill, prev) << s;
    prev = fill;
  }
  // NVLS in one node: 2.3 chunk times of a lane at its share of the bottleneck (16 x 8 lanes).
  CollectivePlan nvls;
  nvls.algorithm = CollectiveAlgorithm::nvls;
  nvls.channels = 8;
  EXPECT_NEAR(nvls_lane_seconds_per_byte(nvls, ph), 128 * 1e-11, 1e-24);
  EXPECT_NEAR(nvls_pipeline_fill_s(nvls, ph, 1024 * mib, 1.0), 2.3 * 128 * 1024 * 128 * 1e-11, 1e-15);
}

TEST(NvlsChunking, TreeFillNeverGrowsWithHeads) {
  // NVLS tree on NVLink-bound nodes (per GPU port 1.125 S at 280 GB/s) with H heads, one per NIC
  // (each NIC S / H at 48 GB/s): the NVLink port moves the heads' slices one head after another
  // (NCCL's ScatterGatherOp), the NIC carries its own head's lanes, so the lane's slowest stage is
  // the NIC whatever H, and the fill does not grow with the heads. The chunk only grows as heads
  // go (calcCollChunking's cuts scale with H), so the fill never falls when a NIC fails.
  for (int k = 22; k <= 32; ++k) {  // 4 MiB .. 4 GiB
    const double s = std::ldexp(1.0, k);
    double prev = std::numeric_limits<double>::infinity();
    for (int heads = 1; heads <= 8; ++heads) {
      CollectivePlan tree;
      tree.algorithm = CollectiveAlgorithm::nvls_tree;
      tree.channels = heads;
      tree.num_nodes = 2;
      CollectivePhase ph;
      ph.nvlink_tuner_seconds_per_byte = 1.125 / 280e9;
      ph.other_tuner_seconds_per_byte = 1.0 / (heads * 48e9);
      ph.tuner_seconds_per_byte = std::max(ph.nvlink_tuner_seconds_per_byte, ph.other_tuner_seconds_per_byte);
      const double fill = nvls_pipeline_fill_s(tree, ph, s, 1.0);
      EXPECT_LE(fill, prev) << s << " B, " << heads << " heads";
      prev = fill;
    }
  }
}

}  // namespace
}  // namespace traincast::models
