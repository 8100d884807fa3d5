// Chakra traces on the op-graph runner: the generator's job exported as Chakra traces and run
// again must reproduce every op's timing (same runner, same collective engine, same network);
// trace-graph semantics (matching, barriers, send/recv, CPU stream, compute model) on small
// hand-made traces; input errors.
#include "models/executor/chakra_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "models/collectives/collective_engine.h"
#include "models/compute/compute_model.h"
#include "models/executor/chakra_export.h"
#include "models/executor/chakra_graph_builder.h"
#include "models/executor/training_executor.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// GPT-style model on one DGX A100 (8 GPUs), small enough to run in well under a second.
Scenario small_gpt() {
  Scenario sc;
  sc.name = "test";
  sc.cluster.node_template = "dgx_a100";
  sc.cluster.num_nodes = 1;
  sc.model.num_layers = 4;
  sc.model.hidden_size = 2048;
  sc.model.num_attention_heads = 16;
  sc.model.vocab_size = 51200;
  sc.model.seq_length = 2048;
  sc.parallel.tp = 8;
  sc.training.global_batch_size = 4;
  sc.training.micro_batch_size = 1;
  sc.training.precision = Precision::fp16;
  sc.options.fold_symmetric = false;  // export needs every GPU's ops
  return sc;
}

struct RoundTrip {
  Report generated;
  ChakraRunReport imported;
  std::size_t ops_compared = 0;
  std::size_t ops_different = 0;
  std::int64_t max_diff_ns = 0;
};

/// Generator run, export, import, run; compares every exported op's start and end.
RoundTrip round_trip(const Scenario& sc) {
  RoundTrip rt;
  rt.generated = simulate_training(sc);
  // The generator's graph, run on its own engine (what simulate_training did).
  sim::Simulator s1;
  sim::FlowNetwork n1(s1);
  const Cluster c1(sc.cluster, n1);
  CollectiveEngine e1(s1, n1, c1);
  TrainingGraph job = build_training_graph(sc, c1);
  const std::vector<ChakraRankTrace> traces = export_training_chakra(job, c1.num_gpus());
  run_op_graph(s1, e1, job.graph);
  // The traces on a fresh engine.
  sim::Simulator s2;
  sim::FlowNetwork n2(s2);
  const Cluster c2(sc.cluster, n2);
  CollectiveEngine e2(s2, n2, c2);
  ChakraGraph cg = build_chakra_graph(sc, c2, traces);
  run_op_graph(s2, e2, cg.graph);
  for (std::size_t g = 0; g < traces.size(); ++g)
    for (std::size_t i = 0; i < traces[g].nodes.size(); ++i) {
      const ChakraNode& n = traces[g].nodes[i];
      if (n.id >= job.graph.ops.size()) continue;  // receive nodes have no generator op
      const Op& a = job.graph.ops[n.id];
      const Op& b = cg.graph.ops[cg.node_op[g][i]];
      ++rt.ops_compared;
      const std::int64_t d = std::max(std::abs(a.start_ns - b.start_ns), std::abs(a.end_ns - b.end_ns));
      if (d != 0) ++rt.ops_different;
      rt.max_diff_ns = std::max(rt.max_diff_ns, d);
    }
  rt.imported = simulate_chakra(sc, traces);
  return rt;
}

TEST(ChakraRoundTrip, TensorParallelOnlyIsExact) {
  const RoundTrip rt = round_trip(small_gpt());
  EXPECT_GT(rt.ops_compared, 100u);
  EXPECT_EQ(rt.ops_different, 0u) << "max difference " << rt.max_diff_ns << " ns";
  // One iteration, the optimizer last: the step is the generator's iteration, to the nanosecond.
  EXPECT_EQ(rt.imported.iteration_time_s, rt.generated.iteration_time_s);
}

TEST(ChakraRoundTrip, PipelineAndDataParallelIsExact) {
  Scenario sc = small_gpt();
  sc.parallel.tp = 2;
  sc.parallel.pp = 2;
  sc.parallel.dp = 2;
  sc.training.global_batch_size = 8;
  const RoundTrip rt = round_trip(sc);
  EXPECT_GT(rt.imported.comm_p2p_nodes, 0);
  EXPECT_EQ(rt.ops_different, 0u) << "max difference " << rt.max_diff_ns << " ns";
  EXPECT_EQ(rt.imported.iteration_time_s, rt.generated.iteration_time_s);
}

TEST(ChakraRoundTrip, InterleavedZero1TwoNodesIsExact) {
  // ZeRO-1 with overlapped parameter gathers: two iterations are simulated and the last gathers
  // run after the last optimizer step, so only the op timings (not the step) are compared.
  Scenario sc = small_gpt();
  sc.cluster.num_nodes = 2;
  sc.model.num_layers = 8;
  sc.parallel.tp = 1;
  sc.parallel.pp = 4;
  sc.parallel.dp = 4;
  sc.parallel.schedule = PipelineSchedule::interleaved_one_f_one_b;
  sc.parallel.virtual_stages = 2;
  sc.parallel.zero_stage = 1;
  sc.parallel.overlap_param_gather = true;
  sc.training.global_batch_size = 32;
  const RoundTrip rt = round_trip(sc);
  EXPECT_EQ(rt.generated.iterations_simulated, 2);
  EXPECT_EQ(rt.ops_different, 0u) << "max difference " << rt.max_diff_ns << " ns";
  EXPECT_GT(rt.imported.iteration_time_s, rt.generated.iteration_time_s);
}

TEST(ChakraRoundTrip, ExportRefusesAFoldedJob) {
  Scenario sc = small_gpt();
  sc.cluster.num_nodes = 2;
  sc.parallel.dp = 2;
  sc.training.global_batch_size = 8;
  sc.options.fold_symmetric = true;
  sim::Simulator s;
  sim::FlowNetwork n(s);
  const Cluster c(sc.cluster, n);
  const TrainingGraph job = build_training_graph(sc, c);
  ASSERT_TRUE(job.folded);
  EXPECT_THROW(export_training_chakra(job, c.num_gpus()), std::invalid_argument);
}

// ---- hand-made traces ----

ChakraNode comp(std::uint64_t id, std::int64_t ns, std::vector<std::uint64_t> deps = {}) {
  ChakraNode n;
  n.id = id;
  n.name = "comp" + std::to_string(id);
  n.type = ChakraNodeType::comp;
  n.duration_ns = ns;
  n.data_deps = std::move(deps);
  return n;
}
ChakraNode coll(std::uint64_t id, ChakraCollective type, double bytes, std::vector<std::uint64_t> deps = {},
                std::string pg = "") {
  ChakraNode n;
  n.id = id;
  n.name = "coll" + std::to_string(id);
  n.type = ChakraNodeType::comm_coll;
  n.comm_type = static_cast<int>(type);
  n.comm_size_bytes = bytes;
  n.data_deps = std::move(deps);
  n.pg_name = std::move(pg);
  return n;
}
std::vector<ChakraRankTrace> ranks(int n) {
  std::vector<ChakraRankTrace> out(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    out[static_cast<std::size_t>(r)].rank = r;
    out[static_cast<std::size_t>(r)].path = "t." + std::to_string(r) + ".et";
  }
  return out;
}
double collective_alone_s(const Scenario& sc, CollectiveOp op, std::vector<int> gpus, double bytes) {
  sim::Simulator s;
  sim::FlowNetwork n(s);
  const Cluster c(sc.cluster, n);
  CollectiveEngine e(s, n, c);
  CollectiveCall call;
  call.op = op;
  call.ranks = std::move(gpus);
  call.bytes = bytes;
  e.start(call, nullptr, 0);
  s.run();
  return static_cast<double>(s.now().ns()) * 1e-9;
}

TEST(ChakraExecutor, ComputeThenAllReduceIsComputePlusTheCollective) {
  // Rank r computes r x 10 us, then all 4 all-reduce 64 MiB: the collective starts when the
  // slowest rank (30 us) arrives and lasts what the engine gives it alone.
  const Scenario sc = small_gpt();
  auto t = ranks(4);
  for (int r = 0; r < 4; ++r) {
    t[static_cast<std::size_t>(r)].nodes.push_back(comp(0, 10'000 * r));
    t[static_cast<std::size_t>(r)].nodes.push_back(coll(1, ChakraCollective::all_reduce, 64 << 20, {0}));
  }
  const ChakraRunReport r = simulate_chakra(sc, t);
  const double ar = collective_alone_s(sc, CollectiveOp::all_reduce, {0, 1, 2, 3}, 64 << 20);
  EXPECT_NEAR(r.iteration_time_s, 30e-6 + ar, 1e-9);
  EXPECT_EQ(r.reference_rank, 0);  // all end together; the lowest rank
  ASSERT_EQ(r.comm.size(), 1u);
  EXPECT_EQ(r.comm[0].kind, "all_reduce");
  EXPECT_EQ(r.comm[0].calls, 1);
  // Rank 0 computes 0 us, waits 30 us for rank 3 (waiting for slower GPUs), then the all-reduce
  // transfer is exposed.
  EXPECT_NEAR(r.straggler_wait_s, 30e-6, 1e-12);
  EXPECT_NEAR(r.comm[0].exposed_s, ar, 1e-9);
  ASSERT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.gpu, 3);
  EXPECT_NEAR(r.compute_s + r.memory_s + r.cpu_s + r.idle_s + r.comm[0].exposed_s + r.straggler_wait_s,
              r.iteration_time_s, 1e-12);
}

// A data-parallel step traced on a DGX A100 whose GPU 4 was thermally throttled: its SM clock
// held 1,554 of 1,980 MHz (the mean clock of the throttled GPU in
// scenarios/power/blocked_airflow_dgx_h100), so its compute-bound forward/backward, 10 ms on the
// healthy GPUs, took 10 ms x 1980 / 1554 = 12.741313 ms (rounded to the ns). Then all 8 ranks
// all-reduce 256 MiB of gradients and run a 2 ms HBM-bound optimizer step (the clock does not
// slow it). Worked by hand: the all-reduce starts when rank 4 arrives, at 12.741313 ms; every
// other rank waited 12.741313 - 10 = 2.741313 ms for it. The step is 12.741313 ms + AR + 2 ms.
// On the reference rank (all end together; least compute, lowest: rank 0): compute 10 + 2 =
// 12 ms, waiting for slower GPUs 2.741313 ms, exposed all_reduce AR (the transfer only), idle 0.
TEST(ChakraExecutor, ThrottledGpuShowsAsWaitingForSlowerGpusNotAsExposedCommunication) {
  const Scenario sc = small_gpt();
  constexpr std::int64_t healthy_ns = 10'000'000, throttled_ns = 12'741'313, optimizer_ns = 2'000'000;
  constexpr double grad_bytes = 256 << 20;
  auto traces_with_slow = [&](int slow) {
    auto t = ranks(8);
    for (int r = 0; r < 8; ++r)
      t[static_cast<std::size_t>(r)].nodes = {comp(0, r == slow ? throttled_ns : healthy_ns),
                                              coll(1, ChakraCollective::all_reduce, grad_bytes, {0}),
                                              comp(2, optimizer_ns, {1})};
    return t;
  };
  const double ar = collective_alone_s(sc, CollectiveOp::all_reduce, {0, 1, 2, 3, 4, 5, 6, 7}, grad_bytes);
  ASSERT_GT(ar, 0);
  const ChakraRunReport r = simulate_chakra(sc, traces_with_slow(4));
  EXPECT_NEAR(r.iteration_time_s, 12.741313e-3 + ar + 2e-3, 1e-9);
  EXPECT_EQ(r.reference_rank, 0);
  EXPECT_NEAR(r.compute_s, 12e-3, 1e-12);
  EXPECT_NEAR(r.straggler_wait_s, 2.741313e-3, 1e-12);
  ASSERT_EQ(r.comm.size(), 1u);
  EXPECT_NEAR(r.comm[0].exposed_s, ar, 1e-9);
  EXPECT_NEAR(r.idle_s, 0, 1e-12);
  ASSERT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.gpu, 4);
  EXPECT_EQ(r.straggler.node, 0);
  EXPECT_EQ(r.straggler.local_gpu, 4);
  EXPECT_NEAR(r.straggler.slowest_kernel_s, 14.741313e-3, 1e-12);
  EXPECT_NEAR(r.straggler.breakdown_kernel_s, 12e-3, 1e-12);

  // Rank 0 throttled: the breakdown moves to the healthy rank with the least compute (rank 1),
  // which shows the same wait.
  const ChakraRunReport r0 = simulate_chakra(sc, traces_with_slow(0));
  EXPECT_EQ(r0.reference_rank, 1);
  EXPECT_NEAR(r0.straggler_wait_s, 2.741313e-3, 1e-12);
  EXPECT_NEAR(r0.comm[0].exposed_s, ar, 1e-9);
  EXPECT_EQ(r0.straggler.gpu, 0);

  // All healthy: no wait, no straggler, the all-reduce exposed as before.
  const ChakraRunReport h = simulate_chakra(sc, traces_with_slow(-1));
  EXPECT_EQ(h.straggler_wait_s, 0);
  EXPECT_FALSE(h.straggler.found);
  EXPECT_NEAR(h.comm[0].exposed_s, ar, 1e-9);
  EXPECT_NEAR(h.iteration_time_s, 10e-3 + ar + 2e-3, 1e-9);
}

TEST(ChakraExecutor, ProcessGroupsMatchByIssueOrderAndSizesMustAgree) {
  const Scenario sc = small_gpt();
  auto t = ranks(4);
  for (int r = 0; r < 4; ++r) {
    auto& tr = t[static_cast<std::size_t>(r)];
    tr.process_groups = {{"even", {0, 2}}, {"odd", {1, 3}}};
    tr.nodes.push_back(coll(0, ChakraCollective::all_gather, 1 << 20, {}, r % 2 ? "odd" : "even"));
    tr.nodes.push_back(coll(1, ChakraCollective::all_to_all, 1 << 20, {0}));  // all ranks
  }
  const ChakraRunReport ok = simulate_chakra(sc, t);
  ASSERT_EQ(ok.comm.size(), 2u);
  EXPECT_EQ(ok.comm[0].kind, "all_gather");
  EXPECT_EQ(ok.comm[0].calls, 2);  // one per group
  EXPECT_EQ(ok.comm[1].kind, "all_to_all");
  EXPECT_EQ(ok.comm[1].calls, 1);

  t[3].nodes[1].comm_size_bytes = 2 << 20;
  try {
    simulate_chakra(sc, t);
    FAIL() << "expected a mismatch error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("t.3.et: byte 0: node 1 (coll1): collective #1 on process group (all ranks) "
                                         "is ALL_TO_ALL of 2097152 bytes, but on rank 0 it is ALL_TO_ALL of 1048576"),
              std::string::npos)
        << e.what();
  }
  t[3].nodes.pop_back();
  try {
    simulate_chakra(sc, t);
    FAIL() << "expected a missing participant error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is issued by 3 of its 4 ranks: rank 3 (t.3.et) issues only 0 collectives"),
              std::string::npos)
        << e.what();
  }
}

TEST(ChakraExecutor, ZeroSizeBarrierIsARendezvousWithoutTime) {
  const Scenario sc = small_gpt();
  auto t = ranks(2);
  t[0].nodes = {comp(0, 5'000), coll(1, ChakraCollective::barrier, -1, {0}), comp(2, 1'000, {1})};
  t[1].nodes = {comp(0, 1'000), coll(1, ChakraCollective::barrier, -1, {0}), comp(2, 1'000, {1})};
  const ChakraRunReport r = simulate_chakra(sc, t);
  EXPECT_DOUBLE_EQ(r.iteration_time_s, 6e-6);  // rank 1 waits for rank 0's 5 us, then 1 us
  ASSERT_EQ(r.comm.size(), 1u);
  EXPECT_EQ(r.comm[0].kind, "barrier");
  EXPECT_EQ(r.comm[0].calls, 1);
}

TEST(ChakraExecutor, SendRecvRendezvousAndMatchingByTag) {
  const Scenario sc = small_gpt();
  auto t = ranks(2);
  ChakraNode send;
  send.id = 1;
  send.type = ChakraNodeType::comm_send;
  send.comm_dst = 1;
  send.comm_tag = 7;
  send.comm_size_bytes = 8 << 20;
  send.data_deps = {0};
  ChakraNode recv;
  recv.id = 0;
  recv.type = ChakraNodeType::comm_recv;
  recv.comm_src = 0;
  recv.comm_tag = 7;
  t[0].nodes = {comp(0, 20'000), send};
  t[1].nodes = {recv, comp(1, 1'000, {0})};
  const ChakraRunReport r = simulate_chakra(sc, t);
  const double p2p = collective_alone_s(sc, CollectiveOp::send_recv, {0, 1}, 8 << 20);
  EXPECT_NEAR(r.iteration_time_s, 20e-6 + p2p + 1e-6, 1e-9);
  t[1].nodes[0].comm_tag = 8;
  try {
    simulate_chakra(sc, t);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("COMM_SEND to rank 1 (comm_tag 7) has no matching COMM_RECV in rank 1's file"),
              std::string::npos)
        << e.what();
  }
}

TEST(ChakraExecutor, CpuOpsOverlapGpuComputeAndModelledNodesUseTheComputeModel) {
  const Scenario sc = small_gpt();
  auto t = ranks(1);
  ChakraNode cpu = comp(0, 50'000);
  cpu.is_cpu_op = true;
  ChakraNode gemm = comp(1, -1);
  gemm.num_ops = 2.0 * 8192 * 8192 * 8192;  // an 8k cube GEMM
  gemm.tensor_size_bytes = 3.0 * 8192 * 8192 * 2;
  ChakraNode gpu_b = comp(2, 10'000, {1});
  ChakraNode nothing = comp(3, -1);
  t[0].nodes = {cpu, gemm, gpu_b, nothing};
  const ChakraRunReport r = simulate_chakra(sc, t);
  sim::Simulator s;
  sim::FlowNetwork n(s);
  const Cluster c(sc.cluster, n);
  const GpuSpec& gpu = c.gpu_spec(0);
  const double gemm_s = kernel_seconds(Kernel{KernelKind::gemm, gemm.num_ops, gemm.tensor_size_bytes}, gpu,
                                       default_compute_params(gpu), sc.training.precision);
  const double gpu_total = sim::Time::from_seconds(gemm_s).ns() * 1e-9 + 10e-6;
  EXPECT_NEAR(r.iteration_time_s, std::max(50e-6, gpu_total), 1e-9);
  EXPECT_EQ(r.modelled_nodes, 1);
  EXPECT_EQ(r.zero_time_nodes, 1);
  EXPECT_EQ(r.cpu_nodes, 1);
  EXPECT_NEAR(r.compute_s, gpu_total, 1e-9);
}

TEST(ChakraExecutor, CtrlDepsAreWaitedForOnlyWhenAsked) {
  const Scenario sc = small_gpt();
  auto t = ranks(1);
  ChakraNode cpu = comp(0, 50'000);
  cpu.is_cpu_op = true;
  ChakraNode gpu = comp(1, 20'000);
  gpu.ctrl_deps = {0};
  t[0].nodes = {cpu, gpu};
  EXPECT_DOUBLE_EQ(simulate_chakra(sc, t).iteration_time_s, 50e-6);  // overlapped (ASTRA-sim's feeder)
  ChakraRunOptions wait;
  wait.wait_on_ctrl_deps = true;
  EXPECT_DOUBLE_EQ(simulate_chakra(sc, t, nullptr, wait).iteration_time_s, 70e-6);
}

TEST(ChakraExecutor, CyclesMoreRanksThanGpusAndUnknownGroupsAreErrors) {
  const Scenario sc = small_gpt();
  auto t = ranks(1);
  t[0].nodes = {comp(0, 1, {1}), comp(1, 1, {0})};
  EXPECT_THROW(simulate_chakra(sc, t), std::invalid_argument);
  t[0].nodes = {coll(0, ChakraCollective::all_reduce, 1, {}, "nope")};
  try {
    simulate_chakra(sc, t);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pg_name nope is not defined"), std::string::npos) << e.what();
  }
  t[0].nodes = {coll(0, ChakraCollective::gather, 1)};
  EXPECT_THROW(simulate_chakra(sc, t), std::invalid_argument);
  auto many = ranks(9);
  try {
    simulate_chakra(sc, many);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the trace has 9 ranks but scenario test has 8 GPUs"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace traincast::models
