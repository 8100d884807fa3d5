// NCCL's (algorithm, protocol) choice on one NVSwitch domain of 8, 36 and 72 Blackwell GPUs
// (gb200_nvl72/8, gb200_nvl72/36, gb200_nvl72), 1 KiB to 8 GiB (issue 19 acceptance), against
// NCCL's tuner model transcribed by hand.
//
// Source: NVIDIA/nccl release 2.25 (the stored copy of src/graph/tuning.cc with PAT, the
// Blackwell compCap rows and NCCL_PARAM(Ll128C2c), before nvlsEfficiency; the index does not
// record its tag, so the release is named by those contents), functions ncclTopoTuneModel and
// ncclTopoGetAlgoTime; src/graph/search.cc (ncclTopoCompute, ncclTopoSearchTryNvls,
// ncclTopoDupChannels); src/enqueue.cc updateCollCostTable (no NVLS arity test before 2.27).
// The simulator runs with cluster.collectives.nccl_version "2.25.1".
//
// Graphs NCCL's search finds (GPU <-> NVSwitch: 18 links x SM100_NVLINK_BW 40.1 = 721.8 GB/s):
//  ring: sm100 intra speeds {90, 80, 70, ...}: 8 channels x 90 GB/s, duplicated to 16 x 45
//        (bwIntra >= 25): busBw 720 GB/s.
//  NVLS: min(NCCL_MAX_NVLS_ARITY 32, n) heads, each GPU carrying one share per head and its own
//        head twice: bw <= 721.8 / (heads + 1): n = 8: 80 GB/s (8 heads); 36, 72: 20 GB/s (32).
// Tuner (time = latency + nBytes / (1000 x algBw), nBytes the nccl-tests size):
//  ring LL: busBw min(llMaxBw Blackwell-N1 282, busBw x .5); LL128: min(busBw x .92, nChannels x
//   perChMaxRingLL128Bw 73.4) (enabled from Hopper on: "ncclParamLl128C2c() && minCompCap >=
//   90"); Simple: busBw; algBw = busBw x n / nsteps (all_reduce 2 (n-1), others n-1); latency
//   baseLat {6.6, 14.0, 8.4} + nsteps x hwLat NVLink ring {.6, 1.9, 3.4} us.
//  tree (all_reduce): min(busBw x .92, nChannels x 77.4), LL / 3.8, LL128 x 7/9, algBw x .5,
//   tree correction factors; latency {6.8, 14.0, 8.4} + 2 (n-1) {.6, 1.25, 4.0}: never the least
//   on one node (the model leaves the one-node tree out of the automatic candidates).
//  NVLS (Simple only): latency hwLat NVLink NVLS 25 us; all_reduce algBw = heads x bw x 5/6;
//   all_gather / reduce_scatter busBw = heads x min(bw (n-1)/n, bw x .9), not converted.
// The simulator's own bandwidths come from its links (NVLS x nvlsEfficiency 0.74), not from
// these graphs; the table checks that its choice lands where NCCL's does.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "models/collectives/nccl_tuning.h"
#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {
using test_support::Bench;
using test_support::call;
using test_support::iota;

constexpr int kSizes = 13;  // 1 KiB x 4^k for k = 0 .. 11 (1 KiB .. 4 GiB), then 8 GiB
double size_bytes(int i) { return i < 12 ? 1024.0 * static_cast<double>(1LL << (2 * i)) : 8.0 * (1LL << 30); }

struct Row {
  const char* tmpl;
  CollectiveOp op;
  std::array<const char*, kSizes> choice;  // "algorithm/protocol" per size
};

// Transcribed: what NCCL 2.25's tuner picks (worked by hand from the formulas above).
// R = ring, N = nvls; protocols LL, LL128, Simple.
constexpr const char* RL = "ring/LL";
constexpr const char* R128 = "ring/LL128";
constexpr const char* RS = "ring/Simple";
constexpr const char* NS = "nvls/Simple";
// clang-format off
constexpr std::array<Row, 9> kNccl225{{
    // 8 GPUs: ring LL (15.0 us, 161 GB/s) until NVLS (25 us, 533 GB/s) passes it at 1-4 MiB.
    {"gb200_nvl72/8", CollectiveOp::all_reduce, {RL, RL, RL, RL, RL, RL, NS, NS, NS, NS, NS, NS, NS}},
    // NVLS all_gather (560 GB/s, 25 us) never beats the ring (LL 10.8 us; Simple 823 GB/s).
    {"gb200_nvl72/8", CollectiveOp::all_gather, {RL, RL, RL, RL, RL, RL, RL, R128, RS, RS, RS, RS, RS}},
    {"gb200_nvl72/8", CollectiveOp::reduce_scatter, {RL, RL, RL, RL, RL, RL, RL, R128, RS, RS, RS, RS, RS}},
    // 36 and 72 GPUs: NVLS all_reduce (25 us) under ring LL (48.6 / 91.8 us) at every size.
    {"gb200_nvl72/36", CollectiveOp::all_reduce, {NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, NS}},
    // NVLS all_gather 576 GB/s against ring LL128 681 (80.5 us) and Simple 741 (127.4 us).
    {"gb200_nvl72/36", CollectiveOp::all_gather, {NS, NS, NS, NS, NS, NS, NS, NS, NS, R128, RS, RS, RS}},
    {"gb200_nvl72/36", CollectiveOp::reduce_scatter, {NS, NS, NS, NS, NS, NS, NS, NS, NS, R128, RS, RS, RS}},
    {"gb200_nvl72", CollectiveOp::all_reduce, {NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, NS}},
    // 72: ring LL128 148.9 us, Simple 249.8 us: NVLS up to 256 MiB, then Simple.
    {"gb200_nvl72", CollectiveOp::all_gather, {NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, RS, RS, RS}},
    {"gb200_nvl72", CollectiveOp::reduce_scatter, {NS, NS, NS, NS, NS, NS, NS, NS, NS, NS, RS, RS, RS}},
}};
// clang-format on

std::string chosen(Bench& b, CollectiveOp op, double bytes) {
  const CollectiveChoice c = b.engine.choose(call(op, iota(0, b.cluster.gpus_per_node()), bytes));
  return std::string(algorithm_name(c.algorithm)) + "/" + protocol_name(c.protocol);
}

Bench domain(const char* tmpl, const char* version) {
  ClusterSpec s = Bench::make(tmpl, 1);
  s.fabric.kind = FabricKind::none;
  s.collectives.nccl_version = version;
  return Bench(s);
}

// Where the model departs from NCCL's choice on purpose (session 34, docs/hardware.md "Choosing at
// the channels the call runs on"): it weighs each candidate at the channels NCCL's cut keeps at the
// size, NCCL's tuner at all of them. 8 GPUs, all_reduce 64 KiB: ring LL keeps 2 of 16 channels
// (64 KiB / (512 threads x 8 B x 8 ranks)), each at 1/16 of the comm's rate, and NVLS (never cut)
// is the faster call.
struct Departure {
  const char* tmpl;
  CollectiveOp op;
  int size_index;
  const char* choice;
};
constexpr std::array<Departure, 1> kDepartures{{{"gb200_nvl72/8", CollectiveOp::all_reduce, 3, NS}}};

const char* expected_choice(const Row& row, int i) {
  for (const Departure& d : kDepartures)
    if (std::string(d.tmpl) == row.tmpl && d.op == row.op && d.size_index == i) return d.choice;
  return row.choice[static_cast<std::size_t>(i)];
}

TEST(NcclNvlDomainChoice, MatchesNccl225TunerOn8And36And72Gpus) {
  for (const Row& row : kNccl225) {
    Bench b = domain(row.tmpl, "2.25.1");
    for (int i = 0; i < kSizes; ++i) {
      EXPECT_EQ(chosen(b, row.op, size_bytes(i)), expected_choice(row, i))
          << row.tmpl << " op " << static_cast<int>(row.op) << " at " << size_bytes(i) << " B";
    }
  }
}

// From 2.27 NCCL skips NVLS for every function but all_reduce on more than NCCL_MAX_NVLS_ARITY
// (32) GPUs of a node (src/enqueue.cc: "info->func != ncclFuncAllReduce && comm->localRanks >
// NCCL_MAX_NVLS_ARITY"): the newest modelled release (2.28.3) runs all_gather and
// reduce_scatter as rings on 36 and 72 GPUs, and keeps NVLS for all_reduce and on 8 GPUs.
TEST(NcclNvlDomainChoice, NvlsAllGatherNeedsAtMost32GpusFrom227) {
  for (const char* tmpl : {"gb200_nvl72/36", "gb200_nvl72"}) {
    Bench b = domain(tmpl, "2.28.3");
    for (int i = 0; i < kSizes; ++i) {
      EXPECT_EQ(chosen(b, CollectiveOp::all_gather, size_bytes(i)).rfind("ring/", 0), 0U) << tmpl << " " << i;
      EXPECT_EQ(chosen(b, CollectiveOp::reduce_scatter, size_bytes(i)).rfind("ring/", 0), 0U) << tmpl << " " << i;
      EXPECT_EQ(chosen(b, CollectiveOp::all_reduce, size_bytes(i)), NS) << tmpl << " " << i;
    }
  }
  Bench b8 = domain("gb200_nvl72/8", "2.28.3");
  EXPECT_EQ(chosen(b8, CollectiveOp::all_reduce, 64.0 * (1 << 20)), NS);
  // A forced NVLS all_gather over 72 GPUs is refused as NCCL finds no algorithm for it.
  Bench b72 = domain("gb200_nvl72", "2.28.3");
  EXPECT_THROW(b72.engine.choose(call(CollectiveOp::all_gather, iota(0, 72), 1 << 20, CollectiveAlgorithm::nvls)),
               std::invalid_argument);
}

}  // namespace
}  // namespace traincast::models
