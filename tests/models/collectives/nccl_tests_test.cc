// nccl-tests simulated: sizes, byte rounding, parsing, and rows consistent with the engine.

#include "models/collectives/nccl_tests.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace traincast::models {
namespace {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NcclTests, SizesAsNcclTestsParsesThem) {
  EXPECT_EQ(parse_nccl_tests_size("8"), 8.0);
  EXPECT_EQ(parse_nccl_tests_size("64K"), 65536.0);
  EXPECT_EQ(parse_nccl_tests_size("1M"), 1048576.0);
  EXPECT_EQ(parse_nccl_tests_size("8G"), 8589934592.0);
  EXPECT_EQ(parse_nccl_tests_size("16g"), 17179869184.0);
  EXPECT_EQ(parse_nccl_tests_size("1.5M"), 1572864.0);
  EXPECT_EQ(error_of([] { parse_nccl_tests_size("8X"); }),
            "bad size '8X' (expected a number with an optional K, M or G suffix, e.g. 8, 64K, 8G)");
  EXPECT_EQ(error_of([] { parse_nccl_tests_size(""); }),
            "bad size '' (expected a number with an optional K, M or G suffix, e.g. 8, 64K, 8G)");
  // nccl-tests would run 0.5 as 0 bytes (size_t); 1.5K is whole.
  EXPECT_EQ(error_of([] { parse_nccl_tests_size("0.5"); }),
            "size '0.5' is not a whole number of bytes (expected a whole size, e.g. 8, 64K, or 1.5K = 1536)");
  EXPECT_EQ(parse_nccl_tests_size("1.5K"), 1536.0);
  EXPECT_EQ(error_of([] { parse_nccl_tests_size("-1"); }),
            "bad size '-1' (expected a number with an optional K, M or G suffix, e.g. 8, 64K, 8G)");
}

TEST(NcclTests, SizeSequences) {
  EXPECT_EQ(nccl_tests_sizes(8, 64, 2, 0), (std::vector<double>{8, 16, 32, 64}));
  EXPECT_EQ(nccl_tests_sizes(8, 100, 2, 0), (std::vector<double>{8, 16, 32, 64}));  // max is a bound, not a row
  EXPECT_EQ(nccl_tests_sizes(1024, 4096, 1, 1024), (std::vector<double>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(nccl_tests_sizes(32, 32, 1, 1048576), (std::vector<double>{32}));
  EXPECT_EQ(error_of([] { nccl_tests_sizes(64, 8, 2, 0); }),
            "sizes: need 0 <= minbytes <= maxbytes (got 64.000000 and 8.000000)");
  EXPECT_EQ(error_of([] { nccl_tests_sizes(8, 64, 1, 0); }), "sizes: need a step factor > 1 or a step size > 0");
}

TEST(NcclTests, ByteRoundingFollowsNcclTests) {
  // r11 (DGX-2, 12 GPUs, all_gather float): requested 64 -> 48 B, 1 element per rank; 256 -> 240, 5.
  EXPECT_EQ(nccl_tests_size(NcclTestsOp::all_gather, 64, 12, 4).bytes, 48.0);
  EXPECT_EQ(nccl_tests_size(NcclTestsOp::all_gather, 64, 12, 4).count, 1);
  EXPECT_EQ(nccl_tests_size(NcclTestsOp::all_gather, 256, 12, 4).bytes, 240.0);
  EXPECT_EQ(nccl_tests_size(NcclTestsOp::all_gather, 32, 12, 4).bytes, 0.0);
  // n07 (16 ranks all_gather): 1024 B -> count 16 per rank.
  EXPECT_EQ(nccl_tests_size(NcclTestsOp::all_gather, 1024, 16, 4).count, 16);
  // all_reduce: count = size / 4.
  EXPECT_EQ(nccl_tests_size(NcclTestsOp::all_reduce, 8, 16, 4).count, 2);
  EXPECT_EQ(nccl_tests_size(NcclTestsOp::reduce_scatter, 1 << 20, 8, 2).count, (1 << 20) / 2 / 8);
}

TEST(NcclTests, OperationNames) {
  EXPECT_EQ(parse_nccl_tests_op("all_reduce"), NcclTestsOp::all_reduce);
  EXPECT_EQ(parse_nccl_tests_op("all_reduce_perf"), NcclTestsOp::all_reduce);
  EXPECT_EQ(parse_nccl_tests_op("alltoall"), NcclTestsOp::alltoall);
  EXPECT_EQ(parse_nccl_tests_op("sendrecv_perf"), NcclTestsOp::sendrecv);
  EXPECT_EQ(nccl_tests_op_name(NcclTestsOp::reduce_scatter), "reduce_scatter");
  EXPECT_EQ(nccl_tests_redop(NcclTestsOp::all_gather), "none");
  EXPECT_EQ(nccl_tests_redop(NcclTestsOp::sendrecv), "sum");  // as raw logs r02 and r03 print it
  EXPECT_EQ(nccl_tests_root(NcclTestsOp::broadcast), 0);
  EXPECT_EQ(error_of([] { parse_nccl_tests_op("allreduse"); }),
            "unknown nccl-tests operation 'allreduse' (expected one of: all_reduce, all_gather, reduce_scatter, "
            "alltoall, broadcast, reduce, sendrecv)");
  EXPECT_EQ(nccl_tests_type_bytes("bfloat16"), 2);
  EXPECT_EQ(nccl_tests_type_bytes("double"), 8);
  // The names nccl-tests prints in its type column (the log parser accepts them; the fit's word
  // size threw on them).
  EXPECT_EQ(nccl_tests_type_bytes("f8e4m3"), 1);
  EXPECT_EQ(nccl_tests_type_bytes("f8e5m2"), 1);
}

TEST(NcclTests, GpuLists) {
  EXPECT_EQ(parse_gpu_list("0,8"), (std::vector<int>{0, 8}));
  EXPECT_EQ(parse_gpu_list("0-3,12"), (std::vector<int>{0, 1, 2, 3, 12}));
  EXPECT_EQ(error_of([] { parse_gpu_list("0,,1"); }), "bad GPU list '0,,1' (expected ids and ranges such as 0,1,8-15)");
  EXPECT_EQ(error_of([] { parse_gpu_list("3-1"); }), "bad GPU list '3-1' (expected ids and ranges such as 0,1,8-15)");
}

TEST(NcclTests, RowsAreConsistent) {
  ClusterSpec c;
  c.node_template = "dgx_h100";
  NcclTestsOptions o;
  o.op = NcclTestsOp::all_reduce;
  const auto rows = simulate_nccl_tests(c, o, {8.0, 1 << 20, 1 << 30});
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) {
    EXPECT_GT(r.time_s, 0);
    EXPECT_NEAR(r.algbw_gbps, r.bytes / r.time_s / 1e9, 1e-9);
    EXPECT_NEAR(r.busbw_gbps, r.algbw_gbps * 2 * 7 / 8.0, 1e-9);  // all_reduce factor 2(n-1)/n, n = 8
    // The engine's closed form and the simulation agree on an idle network (to the rounded-up ns).
    EXPECT_NEAR(r.time_s, r.choice.seconds(), 2e-9);
  }
  EXPECT_LT(rows[0].busbw_gbps, rows[2].busbw_gbps);
}

TEST(NcclTests, SendRecvRunsEveryPairAtOnce) {
  // 8 GPUs on NVSwitch: each sends S to the next; one GPU's port carries S out and S in, like one
  // pair alone, so 8 concurrent pairs take as long as one.
  ClusterSpec c;
  c.node_template = "dgx_a100";
  NcclTestsOptions all;
  all.op = NcclTestsOp::sendrecv;
  NcclTestsOptions pair = all;
  pair.gpus = {0, 1};
  const double s = 1 << 30;
  const auto a = simulate_nccl_tests(c, all, {s});
  const auto p = simulate_nccl_tests(c, pair, {s});
  EXPECT_NEAR(a[0].time_s, p[0].time_s, 1e-9);
  EXPECT_EQ(a[0].busbw_gbps, a[0].algbw_gbps);  // factor 1
}

TEST(NcclTests, OneOfEightNicsFailedOnTwoNodesAsWorkedByHand) {
  // 2 x DGX H100, all_reduce of 1 GiB, ring Simple forced, n = 16 ranks. Each GPU's NVLink port
  // sends 2(n-1)/n S over all channels (one ring edge per channel, PXN included); each NIC sends
  // 2(n-1)/n S / C (one ring per NIC, C channels). Rates: NVLink4 18 x 25 GB/s x 20.6/25, NDR
  // 50 GB/s x 12/12.5 (nccl_tuning.h LinkEfficiency). Healthy: C = 8, NVLink binds (5.43 ms vs
  // 5.24 ms). node0/nic3 failed: NCCL's search sees 7 NICs, C = 7 rings, the NICs bind (5.99 ms):
  // busbw x 0.91, not 7/8, since the NVLink term stays.
  ClusterSpec c;
  c.node_template = "dgx_h100";
  c.num_nodes = 2;
  c.fabric.kind = FabricKind::fat_tree;
  c.collectives.algorithm = CollectiveAlgorithm::ring;
  c.collectives.protocol = CollectiveProtocol::simple;
  NcclTestsOptions o;
  const double s = 1 << 30, edge = 2.0 * 15 / 16 * s;
  const double nvl_bytes_per_s = 18 * 25e9 * 20.6 / 25, nic_bytes_per_s = 50e9 * 12 / 12.5;
  const NcclTestsResult healthy = simulate_nccl_tests(c, o, {s}).at(0);
  c.overrides = {{"node0/nic3", 0.0, 0.0, true}};
  const NcclTestsResult failed = simulate_nccl_tests(c, o, {s}).at(0);
  // The kernel's channels (comm->nChannels): the search's 8 (7) graph channels doubled by
  // ncclTopoPostset; with 7, fewer than 16 at > 45 GB/s each, doubled again on Hopper.
  EXPECT_EQ(healthy.choice.channels, 16);
  EXPECT_EQ(failed.choice.channels, 28);
  const double t_healthy = std::max(edge / nvl_bytes_per_s, edge / 8 / nic_bytes_per_s);
  const double t_failed = std::max(edge / nvl_bytes_per_s, edge / 7 / nic_bytes_per_s);
  EXPECT_NEAR(healthy.time_s, healthy.choice.latency_s + t_healthy, 0.002 * healthy.time_s);
  EXPECT_NEAR(failed.time_s, failed.choice.latency_s + t_failed, 0.002 * failed.time_s);
  EXPECT_NEAR(failed.busbw_gbps / healthy.busbw_gbps, 0.909, 0.003);  // 325.9 / 358.6 GB/s
}

TEST(NcclTests, BadGpuSelections) {
  ClusterSpec c;
  c.node_template = "dgx_h100";
  NcclTestsOptions o;
  o.gpus = {0, 9};
  EXPECT_EQ(error_of([&] { simulate_nccl_tests(c, o, {8}); }), "gpus: 9 outside [0, 8)");
  o.gpus = {1, 1};
  EXPECT_EQ(error_of([&] { simulate_nccl_tests(c, o, {8}); }), "gpus: 1 listed twice (expected each GPU once)");
  o.gpus = {1};
  o.op = NcclTestsOp::sendrecv;
  EXPECT_EQ(error_of([&] { simulate_nccl_tests(c, o, {8}); }), "gpus: sendrecv needs at least 2 GPUs (got 1)");
}

// A sendrecv between the same GPU of two nodes never slows with more NICs (1 .. 8 per node), for
// every GPU, on five 8-GPU templates. Before session 35 a GPU whose cabled NIC sat on the other
// socket took it across the socket link (at 3 NICs, 1 GiB, gpu4 and gpu5: DGX H100 and HGX H200
// 48.8 ms against 22.4 ms at 2, DGX A100 67.1 against 44.8, pcie_8gpu_2socket 107.4 against
// 44.8); NCCL's two-rank communicator takes its fastest NIC
// (ncclTopoGetLocalNet over ncclTopoGetLocal: bandwidth, then path type; docs/hardware.md).
TEST(NcclTests, SendRecvAcrossNodesNeverSlowerWithMoreNics) {
  for (const char* tmpl :
       {"dgx_h100", "hgx_h200", "dgx_a100", "pcie_8gpu_2socket", "pcie_8gpu_2socket_h100_nvlink_bridge"}) {
    for (int q = 0; q < 8; ++q) {
      double before = 0;
      for (int nics = 1; nics <= 8; ++nics) {
        ClusterSpec c;
        c.node_template = tmpl;
        c.num_nodes = 2;
        c.nics_per_node = nics;
        NcclTestsOptions o;
        o.op = NcclTestsOp::sendrecv;
        o.gpus = {q, q + 8};
        const double t = simulate_nccl_tests(c, o, {1 << 30}).at(0).time_s;
        if (nics > 1) {
          EXPECT_LE(t, before * 1.001) << tmpl << " gpu" << q << ": " << nics - 1 << " NICs " << before * 1e6 << " us, "
                                       << nics << " NICs " << t * 1e6 << " us";
        }
        before = t;
      }
    }
  }
}

}  // namespace
}  // namespace traincast::models

namespace traincast::models {
namespace {

ClusterSpec one_node(const std::string& node_template) {
  ClusterSpec c;
  c.node_template = node_template;
  c.num_nodes = 1;
  return c;
}

// NCCL discards a collective of count 0 before any launch (src/enqueue.cc taskAppend); its
// send/receive path has no such return, so alltoall and sendrecv keep their launch latency.
TEST(NcclTests, EmptyCollectivesCostNothingWhileEmptySendsStillLaunch) {
  for (const NcclTestsOp op : {NcclTestsOp::all_reduce, NcclTestsOp::all_gather, NcclTestsOp::reduce_scatter,
                               NcclTestsOp::broadcast, NcclTestsOp::reduce}) {
    NcclTestsOptions o;
    o.op = op;
    const std::vector<NcclTestsResult> rows = simulate_nccl_tests(one_node("dgx_h100"), o, {0.0, 8.0 * 8});
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_TRUE(rows[0].discarded) << nccl_tests_op_name(op);
    EXPECT_EQ(rows[0].time_s, 0.0) << nccl_tests_op_name(op);
    EXPECT_EQ(rows[0].choice.channels, 0) << nccl_tests_op_name(op);
    EXPECT_FALSE(rows[1].discarded) << nccl_tests_op_name(op);
    EXPECT_GT(rows[1].time_s, 0.0) << nccl_tests_op_name(op);
  }
  // all_gather of 8 B over 8 ranks of 4-byte floats: count 0 per rank, discarded too.
  NcclTestsOptions gather;
  gather.op = NcclTestsOp::all_gather;
  EXPECT_TRUE(simulate_nccl_tests(one_node("dgx_h100"), gather, {8.0}).at(0).discarded);
  for (const NcclTestsOp op : {NcclTestsOp::alltoall, NcclTestsOp::sendrecv}) {
    NcclTestsOptions o;
    o.op = op;
    const NcclTestsResult r = simulate_nccl_tests(one_node("dgx_h100"), o, {0.0}).at(0);
    EXPECT_FALSE(r.discarded) << nccl_tests_op_name(op);
    EXPECT_GT(r.time_s, 0.0) << nccl_tests_op_name(op);
  }
}

// NCCL refuses fp8 reductions below sm_90 (src/enqueue.cc taskAppend, ncclInvalidArgument), after
// its count-0 return; moving fp8 without reducing it is allowed.
TEST(NcclTests, Fp8ReductionsNeedSm90) {
  EXPECT_TRUE(nccl_tests_type_is_fp8("f8e4m3"));
  EXPECT_TRUE(nccl_tests_type_is_fp8("FP8_E5M2"));
  EXPECT_FALSE(nccl_tests_type_is_fp8("int8"));
  NcclTestsOptions o;
  o.word_bytes = 1;
  o.fp8 = true;
  for (const NcclTestsOp op : {NcclTestsOp::all_reduce, NcclTestsOp::reduce_scatter, NcclTestsOp::reduce}) {
    o.op = op;
    EXPECT_EQ(error_of([&] { simulate_nccl_tests(one_node("dgx_a100"), o, {1024.0}); }),
              "fp8 " + std::string(nccl_tests_op_name(op)) +
                  ": NCCL reduces fp8 only on sm_90 or newer, and GPU 0 is A100-SXM4-80GB, sm_80 (NCCL returns "
                  "ncclInvalidArgument, \"FP8 reduction support begins with sm90 capable devices\"; expected -d half "
                  "or bfloat16, an H100 or newer, or all_gather, broadcast, alltoall or sendrecv, which move fp8 "
                  "without reducing it)");
    EXPECT_GT(simulate_nccl_tests(one_node("dgx_h100"), o, {1024.0}).at(0).time_s, 0.0);
    EXPECT_TRUE(simulate_nccl_tests(one_node("dgx_a100"), o, {0.0}).at(0).discarded);  // before NCCL's check
  }
  for (const NcclTestsOp op :
       {NcclTestsOp::all_gather, NcclTestsOp::broadcast, NcclTestsOp::alltoall, NcclTestsOp::sendrecv}) {
    o.op = op;
    EXPECT_GT(simulate_nccl_tests(one_node("dgx_a100"), o, {1024.0}).at(0).time_s, 0.0) << nccl_tests_op_name(op);
  }
  o.fp8 = false;  // int8 reduces on any GPU
  o.op = NcclTestsOp::all_reduce;
  EXPECT_GT(simulate_nccl_tests(one_node("dgx_a100"), o, {1024.0}).at(0).time_s, 0.0);
}

}  // namespace
}  // namespace traincast::models
