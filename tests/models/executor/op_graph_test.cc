// The op-graph runner: stream order, dependencies across workers, collectives that start when
// all participants arrive, and clear errors for graphs that cannot finish.

#include "models/executor/op_graph.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

struct Rig {
  Rig() : net(sim), cluster(spec(), net), coll(sim, net, cluster) {}
  static ClusterSpec spec() {
    ClusterSpec s;
    s.node_template = "dgx_h100";
    s.num_nodes = 1;
    return s;
  }
  sim::Simulator sim;
  sim::FlowNetwork net;
  Cluster cluster;
  CollectiveEngine coll;
};

Op compute(std::uint32_t worker, std::int64_t ns, Stream stream = kCompute) {
  Op op;
  op.worker = worker;
  op.duration_ns = ns;
  op.stream = stream;
  return op;
}

TEST(OpGraph, StreamOrderAndDependencies) {
  Rig rig;
  OpGraph g;
  g.workers = 2;
  g.ops = {compute(0, 100), compute(0, 50), compute(1, 30), compute(1, 20)};
  // op 3 (worker 1) waits for op 0 (worker 0); op 2 runs at once.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 3}};
  g.set_edges(edges);
  EXPECT_TRUE(edges.empty());
  run_op_graph(rig.sim, rig.coll, g);
  EXPECT_EQ(g.ops[0].end_ns, 100);
  EXPECT_EQ(g.ops[1].start_ns, 100);  // same stream: after op 0
  EXPECT_EQ(g.ops[1].end_ns, 150);
  EXPECT_EQ(g.ops[2].end_ns, 30);
  EXPECT_EQ(g.ops[3].start_ns, 100);  // waited for op 0, not for op 2 only
  EXPECT_EQ(g.ops[3].last_dep, 0u);
  EXPECT_EQ(g.ops[3].end_ns, 120);
}

TEST(OpGraph, CollectiveStartsWhenAllParticipantsArriveAndTakesTheModelledTime) {
  Rig rig;
  OpGraph g;
  g.workers = 2;
  const std::uint32_t group = g.groups.add({0, 1});
  Task t;
  t.op = CollectiveOp::all_reduce;
  t.bytes = 256e6;
  t.group_begin = group;
  t.group_count = 1;
  t.expected = 2;
  t.participant_count = 2;
  g.tasks = {t};
  g.ops = {compute(0, 1000), compute(1, 5000)};
  for (std::uint32_t w = 0; w < 2; ++w) {
    Op c;
    c.worker = w;
    c.task = 0;
    c.stream = kDp;
    g.ops.push_back(c);
  }
  g.participants = {2, 3};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 2}, {1, 3}};
  g.set_edges(edges);
  run_op_graph(rig.sim, rig.coll, g);
  CollectiveCall call;
  call.op = CollectiveOp::all_reduce;
  call.bytes = 256e6;
  call.ranks = {0, 1};
  const double expected_s = rig.coll.estimate_seconds(call);
  // Both participants finish together, once the later one (worker 1 at 5 us) arrived.
  EXPECT_EQ(g.ops[2].end_ns, g.ops[3].end_ns);
  EXPECT_NEAR(static_cast<double>(g.ops[3].end_ns - 5000) * 1e-9, expected_s, 0.02 * expected_s);
}

TEST(OpGraph, CycleIsALogicError) {
  Rig rig;
  OpGraph g;
  g.workers = 1;
  g.ops = {compute(0, 10, kCompute), compute(0, 10, kTp)};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 1}, {1, 0}};
  g.set_edges(edges);
  EXPECT_THROW(run_op_graph(rig.sim, rig.coll, g), std::logic_error);
}

TEST(OpGraph, CollectiveMissingAParticipantIsALogicError) {
  Rig rig;
  OpGraph g;
  g.workers = 1;
  Task t;
  t.group_begin = g.groups.add({0, 1});
  t.group_count = 1;
  t.expected = 2;
  t.participant_count = 1;
  g.tasks = {t};
  Op c;
  c.task = 0;
  g.ops = {c};
  g.participants = {0};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  g.set_edges(edges);
  EXPECT_THROW(run_op_graph(rig.sim, rig.coll, g), std::logic_error);
}

TEST(OpGraph, EdgeToMissingOpIsALogicError) {
  OpGraph g;
  g.workers = 1;
  g.ops = {compute(0, 10)};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 7}};
  EXPECT_THROW(g.set_edges(edges), std::logic_error);
}

// NCCL's kernels take SMs from compute (issue 17): a compute kernel of t ns overlapped throughout
// by an NCCL kernel of k CTAs on a GPU of S SMs takes t S / (S - k); only its compute-bound part
// slows.
TEST(SmShare, HandWorkedSpeeds) {
  // H100: 132 SMs, 32 CTAs held -> 100 SMs left: t x 132 / 100.
  EXPECT_DOUBLE_EQ(1.0 / sm_share_speed(1.0, 132, 32), 1.32);
  // A100: 108 SMs, 16 CTAs: 108 / 92.
  EXPECT_DOUBLE_EQ(1.0 / sm_share_speed(1.0, 108, 16), 108.0 / 92.0);
  // Half compute-bound: 0.5 + 0.5 x 1.32 = 1.16; memory-bound only: unchanged.
  EXPECT_DOUBLE_EQ(1.0 / sm_share_speed(0.5, 132, 32), 1.16);
  EXPECT_DOUBLE_EQ(sm_share_speed(0.0, 132, 32), 1.0);
  // No kernel, or no SM count: full speed; more CTAs than SMs leave one SM to compute.
  EXPECT_DOUBLE_EQ(sm_share_speed(1.0, 132, 0), 1.0);
  EXPECT_DOUBLE_EQ(sm_share_speed(1.0, 0, 32), 1.0);
  EXPECT_DOUBLE_EQ(1.0 / sm_share_speed(1.0, 16, 40), 16.0);
  // More CTAs never speed compute up.
  for (int k = 0; k < 132; ++k) EXPECT_GE(sm_share_speed(0.8, 132, k), sm_share_speed(0.8, 132, k + 1));
}

TEST(SmShare, KernelCtasFollowNcclsChannels) {
  Rig rig;
  CollectiveCall call;
  call.bytes = 64e6;
  call.ranks = {0};
  EXPECT_EQ(rig.coll.kernel_ctas(call), 0);  // one rank: no kernel
  call.op = CollectiveOp::send_recv;
  call.ranks = {0, 1};
  // Inside one node: the channels NCCL's p2p planner uses (a 64 MB pair: 16 parts on 16 channels,
  // nccl_p2p_test's two-rank case), not the 2 per network peer of a pair across nodes.
  EXPECT_EQ(rig.coll.kernel_ctas(call), 16);
  call.op = CollectiveOp::all_reduce;
  call.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  call.algorithm = CollectiveAlgorithm::nvls;
  EXPECT_EQ(rig.coll.kernel_ctas(call), 16);  // NCCL_NVLS_NCHANNELS
  // One node's ring: the node's ring graph (12 channels on DGX H100's NVSwitch) doubled.
  call.algorithm = CollectiveAlgorithm::ring;
  call.op = CollectiveOp::all_gather;
  EXPECT_EQ(rig.coll.kernel_ctas(call), 24);
}

// The hand-worked case in the runner: a compute op of 1 ms (all compute-bound) on worker 0 and an
// all-gather over the node's 8 GPUs on its dp-param stream, both from t = 0. While the
// collective runs (T ns), compute runs at (S - k) / S; it ends at 1 ms + T k / S. The
// collective itself is not slowed. Without SM counts: 1 ms.
TEST(SmShare, OverlappedCollectiveSlowsComputeByItsCtas) {
  auto build = [](OpGraph& g) {
    g.workers = 1;
    Task t;
    t.op = CollectiveOp::all_gather;
    t.bytes = 64e6;
    t.group_begin = g.groups.add({0, 1, 2, 3, 4, 5, 6, 7});
    t.group_count = 1;
    t.expected = 1;
    t.participant_count = 1;
    g.tasks = {t};
    Op c = compute(0, 1'000'000);
    c.set_compute_fraction(1.0);
    Op ag;
    ag.task = 0;
    ag.stream = kDpParam;
    g.ops = {c, ag};
    g.participants = {1};
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    g.set_edges(edges);
  };
  Rig off;
  OpGraph g0;
  build(g0);
  run_op_graph(off.sim, off.coll, g0);
  EXPECT_EQ(g0.ops[0].end_ns, 1'000'000);

  Rig on;
  OpGraph g;
  build(g);
  const int sms = on.cluster.gpu_spec(0).sm_count;
  ASSERT_EQ(sms, 132);
  const std::vector<int> worker_sms = {sms};
  run_op_graph(on.sim, on.coll, g, nullptr, false, worker_sms);
  CollectiveCall call;
  call.op = CollectiveOp::all_gather;
  call.bytes = 64e6;
  call.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const int k = on.coll.kernel_ctas(call);
  const double coll_ns = static_cast<double>(g.ops[1].end_ns - g.ops[1].start_ns);
  EXPECT_EQ(g.ops[1].end_ns, g0.ops[1].end_ns);  // the collective is not slowed
  ASSERT_LT(coll_ns, 1e6);                       // it ends while compute runs
  EXPECT_NEAR(static_cast<double>(g.ops[0].end_ns), 1e6 + coll_ns * k / sms, 2.0);
}

// A collective on the compute stream (not overlapped) and host copies hold no SMs beside compute.
TEST(SmShare, OnlyCollectivesBesideComputeHoldSms) {
  Rig rig;
  OpGraph g;
  g.workers = 1;
  Task t;
  t.op = CollectiveOp::all_reduce;
  t.bytes = 64e6;
  t.group_begin = g.groups.add({0, 1, 2, 3, 4, 5, 6, 7});
  t.group_count = 1;
  t.expected = 1;
  t.participant_count = 1;
  g.tasks = {t};
  Op ar;
  ar.task = 0;
  ar.stream = kCompute;
  Op c = compute(0, 1'000'000);
  c.set_compute_fraction(1.0);
  g.ops = {ar, c};
  g.participants = {0};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  g.set_edges(edges);
  const std::vector<int> worker_sms = {132};
  run_op_graph(rig.sim, rig.coll, g, nullptr, false, worker_sms);
  EXPECT_EQ(g.ops[1].start_ns, g.ops[0].end_ns);
  EXPECT_EQ(g.ops[1].end_ns - g.ops[1].start_ns, 1'000'000);
}

TEST(SmShare, WorkerSmsOfAnotherSizeIsALogicError) {
  Rig rig;
  OpGraph g;
  g.workers = 2;
  g.ops = {compute(0, 10), compute(1, 10)};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  g.set_edges(edges);
  const std::vector<int> worker_sms = {132};
  EXPECT_THROW(run_op_graph(rig.sim, rig.coll, g, nullptr, false, worker_sms), std::logic_error);
}

}  // namespace
}  // namespace traincast::models
