// Tensor-parallel communication overlap as the frameworks pipeline it (parallel.tp_comm_overlap;
// models/workload/transformer_programs.cc, "TP overlap"): the GEMM beside a TP all-gather or
// reduce-scatter runs in row slices, each beside the move of one chunk, so a pipeline of slices g
// and chunk steps c takes g + (t - 1) max(g, c), not max(GEMM, collective). PyTorch async TP moves
// each chunk with a copy-engine pull over NVLink (CollectiveEngine::start_peer_copy).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/executor/training_executor.h"
#include "models/executor/training_run.h"
#include "models/hardware/catalog.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

/// Llama-3-8B (Llama 3 paper Table 3: 32 layers, d 4096, FFN 14336, 32 heads, 8 KV heads, vocab
/// 128,256), seq 8192, on one DGX H100 with TP `tp` and SP, DP 8 / tp, micro-batch 1.
Scenario llama3_8b_tp(int tp, TpOverlapImplementation impl) {
  Scenario sc;
  sc.name = "llama3-8b-tp-overlap";
  sc.cluster.node_template = "dgx_h100";
  sc.cluster.num_nodes = 1;
  ModelSpec& m = sc.model;
  m.num_layers = 4;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 14336;
  m.vocab_size = 128256;
  m.seq_length = 8192;
  m.gated_mlp = true;
  m.untied_embeddings = true;
  sc.parallel.tp = tp;
  sc.parallel.dp = 8 / tp;
  sc.parallel.sequence_parallel = true;
  sc.parallel.tp_comm_overlap = true;
  sc.parallel.tp_overlap_implementation = impl;
  sc.training.global_batch_size = 8 / tp;
  sc.training.micro_batch_size = 1;
  return sc;
}

std::vector<const Segment*> segments(const Program& p, const std::string& label) {
  std::vector<const Segment*> out;
  for (const Segment& s : p)
    if (s.label == label) out.push_back(&s);
  return out;
}

TEST(TpOverlap, AsyncTpSlicesTheGemmsAndMovesOneChunkPerStep) {
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  const Scenario sc = llama3_8b_tp(4, TpOverlapImplementation::async_tp);
  Scenario plain = sc;
  plain.parallel.tp_comm_overlap = false;
  const ModelPrograms prog = build_transformer_programs(sc, gpu, params);
  const ModelPrograms plain_prog = build_transformer_programs(plain, gpu, params);
  const Program& fwd = prog.layer_kinds[0].forward;
  const Program& ref = plain_prog.layer_kinds[0].forward;
  // Gathered activation: 8192 tokens x 4096 x 2 bytes = 67,108,864 bytes; a chunk is a quarter.
  const double chunk = 8192.0 * 4096 * 2 / 4;
  EXPECT_DOUBLE_EQ(chunk, 16777216.0);
  // qkv and fc1 each wait for t - 1 = 3 chunk steps; proj and fc2 each send 3.
  const auto ag = segments(fwd, "tp_ag");
  const auto rs = segments(fwd, "tp_rs");
  ASSERT_EQ(ag.size(), 6u);
  ASSERT_EQ(rs.size(), 6u);
  for (const Segment* s : ag) {
    EXPECT_TRUE(s->is_collective);
    EXPECT_EQ(s->op, CollectiveOp::send_recv);
    EXPECT_EQ(s->overlap, Overlap::with_next);
    EXPECT_DOUBLE_EQ(s->bytes, chunk);
    EXPECT_TRUE(s->copy_engine);  // copy engines: no SMs (op_graph.cc task_ctas)
  }
  for (const Segment* s : rs) {
    EXPECT_EQ(s->op, CollectiveOp::send_recv);
    EXPECT_DOUBLE_EQ(s->bytes, chunk);
    EXPECT_TRUE(s->copy_engine);
  }
  // qkv: 4 slices of 2,048 rows x 1,536 columns (q 4096 + k, v 1024 each, over TP 4) x 4,096:
  // 2 x 2048 x 1536 x 4096 = 25,769,803,776 FLOPs each, the whole GEMM's in all.
  const auto qkv = segments(fwd, "qkv");
  ASSERT_EQ(qkv.size(), 4u);
  for (const Segment* s : qkv) EXPECT_DOUBLE_EQ(s->flops, 25769803776.0);
  EXPECT_DOUBLE_EQ(segments(ref, "qkv")[0]->flops, 4 * 25769803776.0);
  // The staging copy of the own shard (read + write 16 MiB) and the reduction of the partials
  // (read 64 MiB, write 16 MiB), once per all-gather and per reduce-scatter.
  EXPECT_EQ(segments(fwd, "tp_ag_stage").size(), 2u);
  EXPECT_EQ(segments(fwd, "tp_rs_reduce").size(), 2u);
  // Backward: the output-gradient all-gathers of proj and fc2 and, with one fused QKV and one fc1
  // linear (model.separate_projections false: one matmul produces each), the input-gradient
  // reduce-scatters of qkv and fc1 are chunked the same way.
  const Program& bwd = prog.layer_kinds[0].backward;
  EXPECT_EQ(segments(bwd, "tp_ag_bwd").size(), 6u);
  EXPECT_EQ(segments(bwd, "tp_rs_bwd").size(), 6u);
  EXPECT_EQ(segments(bwd, "tp_rs_bwd_reduce").size(), 2u);
}

/// Segments of `p` whose label ends with `suffix`.
int count_suffix(const Program& p, const std::string& suffix) {
  int n = 0;
  for (const Segment& s : p)
    if (s.label.size() >= suffix.size() && s.label.compare(s.label.size() - suffix.size(), suffix.size(), suffix) == 0)
      ++n;
  return n;
}

TEST(TpOverlap, AsyncTpLeavesReduceScattersOfSeveralMatmulsUnfused) {
  // PyTorch's micro-pipeline pass fuses a reduce-scatter with its GEMM only when one matmul
  // produces its input (micro_pipeline_tp.py _find_producer_matmul). torchtitan's Llama has
  // separate wq, wk, wv and w1, w3 (model.separate_projections): the backward input gradients of
  // attention and of the MLP are sums of three and two dgrads, so their two reduce-scatters per
  // layer stay plain NCCL ones of the whole gradient (67,108,864 bytes at TP 4, seq 8,192), after
  // the GEMMs, beside the weight gradients (with_next). The forward (wo, w2: one matmul each) and
  // the backward's output-gradient gathers stay chunked.
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  Scenario sc = llama3_8b_tp(4, TpOverlapImplementation::async_tp);
  sc.model.separate_projections = true;
  const ModelPrograms prog = build_transformer_programs(sc, gpu, params);
  const Program& fwd = prog.layer_kinds[0].forward;
  EXPECT_EQ(segments(fwd, "tp_ag").size(), 6u);
  EXPECT_EQ(segments(fwd, "tp_rs").size(), 6u);
  EXPECT_EQ(segments(fwd, "tp_rs_reduce").size(), 2u);
  const Program& bwd = prog.layer_kinds[0].backward;
  EXPECT_EQ(segments(bwd, "tp_ag_bwd").size(), 6u);
  const auto rs = segments(bwd, "tp_rs_bwd");
  ASSERT_EQ(rs.size(), 2u);
  for (const Segment* s : rs) {
    EXPECT_EQ(s->op, CollectiveOp::reduce_scatter);
    EXPECT_EQ(s->overlap, Overlap::with_next);
    EXPECT_DOUBLE_EQ(s->bytes, 8192.0 * 4096 * 2);
    EXPECT_FALSE(s->copy_engine);
  }
  EXPECT_TRUE(segments(bwd, "tp_rs_bwd_reduce").empty());
  // The input-gradient GEMMs run whole: one qkv_dgrad and one fc1_dgrad segment.
  EXPECT_EQ(segments(bwd, "qkv_dgrad").size(), 1u);
  EXPECT_EQ(segments(bwd, "fc1_dgrad").size(), 1u);
  // Fused projections (Megatron's linear_qkv, linear_fc1: one matmul each): chunked, 4 slices each
  // (fc1's after the activation's gradient, a segment of its own).
  const ModelPrograms fused =
      build_transformer_programs(llama3_8b_tp(4, TpOverlapImplementation::async_tp), gpu, params);
  EXPECT_EQ(segments(fused.layer_kinds[0].backward, "qkv_dgrad").size(), 4u);
  EXPECT_EQ(segments(fused.layer_kinds[0].backward, "fc1_dgrad").size(), 5u);
  // Without a gated MLP fc1 is one linear whatever the field: its reduce-scatter stays fused.
  Scenario gelu = sc;
  gelu.model.gated_mlp = false;
  const ModelPrograms gelu_prog = build_transformer_programs(gelu, gpu, params);
  EXPECT_EQ(segments(gelu_prog.layer_kinds[0].backward, "fc1_dgrad").size(), 5u);
  EXPECT_EQ(segments(gelu_prog.layer_kinds[0].backward, "qkv_dgrad").size(), 1u);
}

TEST(TpOverlap, AsyncTpWithSeparateProjectionsPaysSixOfTheTenBatchFirstCopies) {
  // torchtitan's batch-first SP (activation_layout batch_first) under op-level recompute: the
  // unfused path copies around each of its collectives, 4 forward, 2 in the recompute, 4 backward.
  // Async TP fuses the collective and its copy, keeping the 4 weight-gradient copies (the
  // recompute's two gathers, the backward's two output-gradient gathers); with separate
  // projections the two backward input-gradient reduce-scatters are not fused and keep theirs: 6.
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  const auto copies = [&](TpOverlapImplementation impl, bool overlap, bool separate) {
    Scenario sc = llama3_8b_tp(4, impl);
    sc.parallel.tp_comm_overlap = overlap;
    sc.parallel.activation_layout = ActivationLayout::batch_first;
    sc.model.separate_projections = separate;
    sc.model.attention_dropout = 0;
    sc.model.hidden_dropout = 0;
    sc.training.flash_attention = true;
    sc.training.recompute = Recompute::selective;
    sc.training.selective_policy = SelectivePolicy::torchtitan_op;
    const ModelPrograms prog = build_transformer_programs(sc, gpu, params);
    const LayerPrograms& lp = prog.layer_kinds[0];
    return std::vector<int>{count_suffix(lp.forward, "_cat"), count_suffix(lp.recompute, "_cat"),
                            count_suffix(lp.backward, "_cat")};
  };
  EXPECT_EQ(copies(TpOverlapImplementation::userbuffers, false, true), (std::vector<int>{4, 2, 4}));
  EXPECT_EQ(copies(TpOverlapImplementation::async_tp, true, false), (std::vector<int>{0, 2, 2}));
  EXPECT_EQ(copies(TpOverlapImplementation::async_tp, true, true), (std::vector<int>{0, 2, 4}));
}

TEST(TpOverlap, ChunkCopiesRunAtTheCopyEnginesShareOfNvlink) {
  // PyTorch async TP pulls each chunk with Tensor.copy_ from the peer's symmetric-memory buffer:
  // a cudaMemcpyAsync over NVLink on copy engines, not an NCCL send/recv. By hand on a DGX H100
  // (NVSwitch; each GPU's NVLink 18 x 25 GB/s = 450 GB/s per direction, one nvl_up and one
  // nvl_down resource per GPU): the copy engines move 170.54 / 200 = 0.8527 of a direction
  // (nvbandwidth, H800, bidirectional read CE), 383.715 GB/s, so a 16,777,216-byte chunk takes
  // 16,777,216 / 383.715e9 = 43.723 us whatever the number of ring pairs (each GPU's up and down
  // link carry one pair each).
  ClusterSpec spec;
  spec.node_template = "dgx_h100";
  spec.num_nodes = 1;
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(spec, net);
  CollectiveEngine coll(sim, net, cluster);
  EXPECT_DOUBLE_EQ(CollectiveEngine::kCopyEngineNvlinkEfficiency * 450e9, 383.715e9);
  const std::vector<std::pair<int, int>> ring = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  EXPECT_NEAR(coll.peer_copy_seconds(ring, 16777216.0) * 1e9, 43723.1, 0.1);
  // Two pulls into GPU 1 share its nvl_down: each gets half, 87.446 us.
  const std::vector<std::pair<int, int>> into_one = {{0, 1}, {2, 1}};
  EXPECT_NEAR(coll.peer_copy_seconds(into_one, 16777216.0) * 1e9, 2 * 43723.1, 0.2);
  // The NCCL send/recv the chunks were timed as before is slower at this size (its p2p channels
  // and protocol, nccl_p2p.h): the copy engines are the faster path here.
  CollectiveCall sr;
  sr.op = CollectiveOp::send_recv;
  sr.ranks = {0, 1};
  sr.bytes = 16777216.0;
  EXPECT_GT(coll.estimate_seconds(sr), coll.peer_copy_seconds(ring, 16777216.0));
  // Run on the network: the four flows end together at the hand-worked time.
  struct Done : CollectiveListener {
    std::int64_t at = -1;
    sim::Simulator* s = nullptr;
    void on_collective_done(std::uint64_t) override { at = s->now().ns(); }
  } done;
  done.s = &sim;
  coll.start_peer_copy(coll.prepare_peer_copy(ring), 16777216.0, &done, 0);
  sim.run();
  EXPECT_NEAR(static_cast<double>(done.at), 43723.1, 1.0);
  EXPECT_THROW(coll.prepare_peer_copy(std::vector<std::pair<int, int>>{{2, 2}}), std::invalid_argument);
  EXPECT_THROW(coll.peer_copy_seconds(ring, -1.0), std::invalid_argument);
}

TEST(TpOverlap, UserbuffersKeepTheWholeCollectiveBesideTheWholeGemm) {
  // Transformer Engine's own pipelines (ring exchange in tp chunks, reduce-scatter in 4 splits)
  // were built and scored and moved the Megatron-Core rows the wrong way (docs/accuracy.md, "Async
  // TP as a per-chunk pipeline"): userbuffers keeps one all-gather beside the next segment and one
  // reduce-scatter beside the previous one.
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  const Scenario sc = llama3_8b_tp(2, TpOverlapImplementation::userbuffers);
  const ModelPrograms prog = build_transformer_programs(sc, gpu, params);
  const Program& fwd = prog.layer_kinds[0].forward;
  const auto ag = segments(fwd, "tp_ag");
  ASSERT_EQ(ag.size(), 2u);
  for (const Segment* s : ag) {
    EXPECT_EQ(s->op, CollectiveOp::all_gather);
    EXPECT_EQ(s->overlap, Overlap::with_next);
    EXPECT_DOUBLE_EQ(s->bytes, 8192.0 * 4096 * 2);
  }
  const auto rs = segments(fwd, "tp_rs");
  ASSERT_EQ(rs.size(), 2u);
  for (const Segment* s : rs) {
    EXPECT_EQ(s->op, CollectiveOp::reduce_scatter);
    EXPECT_EQ(s->overlap, Overlap::with_prev);
  }
  EXPECT_EQ(segments(fwd, "qkv").size(), 1u);
  EXPECT_EQ(segments(fwd, "proj").size(), 1u);
}

/// Ops of worker 0, iteration 0, with label `name`, in program order.
std::vector<const Op*> ops_named(const TrainingGraph& job, const std::string& name) {
  std::vector<const Op*> out;
  for (std::uint32_t i = job.op_base[0]; i < job.op_base[1]; ++i) {
    const Op& op = job.graph.ops[i];
    if (op.iteration == 0 && job.labels[op.label] == name) out.push_back(&op);
  }
  return out;
}

TEST(TpOverlap, PipelineTakesFirstSlicePlusStepsAtTheSlowerOfSliceAndChunk) {
  // One layer's forward under async TP at TP 4, run by the executor: the qkv and fc1 slices
  // wait for their chunks, proj's and fc2's chunks wait for their slices. With g a slice and c a
  // step (their run times), the gather pipeline ends g + 3 max(g, c) after the staging copy, and
  // the scatter's reduction starts g + 3 max(g, c) after its first slice (the later of the last
  // slice and the last step).
  const Scenario sc = llama3_8b_tp(4, TpOverlapImplementation::async_tp);
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  CollectiveEngine coll(sim, net, cluster);
  TrainingGraph job = build_training_graph(sc, cluster);
  run_op_graph(sim, coll, job.graph);
  const auto span = [](const Op* op) { return op->end_ns - op->start_ns; };
  int regimes[2] = {0, 0};  // pipelines where the chunk (0) or the slice (1) is the slower
  for (const char* gemm : {"qkv", "fc1"}) {
    const auto slices = ops_named(job, gemm);
    const auto steps = ops_named(job, "tp_ag");
    const auto stage = ops_named(job, "tp_ag_stage");
    ASSERT_GE(slices.size(), 4u);
    const std::size_t first = std::string(gemm) == "qkv" ? 0 : 3;  // fc1's steps follow qkv's
    const std::int64_t g = span(slices[0]);
    const std::int64_t c = span(steps[first]);
    // A step is one copy-engine pull of 16,777,216 bytes at 383.715 GB/s (previous test): 43.723 us.
    EXPECT_NEAR(static_cast<double>(c), 43723.1, 1.0) << gemm;
    for (int i = 1; i < 4; ++i) EXPECT_EQ(span(slices[static_cast<std::size_t>(i)]), g);
    for (int i = 1; i < 3; ++i) EXPECT_EQ(span(steps[first + static_cast<std::size_t>(i)]), c);
    const std::int64_t start = stage[first == 0 ? 0 : 1]->end_ns;
    EXPECT_EQ(slices[3]->end_ns - start, g + 3 * std::max(g, c)) << gemm << ": g " << g << " ns, c " << c << " ns";
    ++regimes[c > g ? 0 : 1];
  }
  for (const char* gemm : {"proj", "fc2"}) {
    const auto slices = ops_named(job, gemm);
    const auto steps = ops_named(job, "tp_rs");
    const auto reduce = ops_named(job, "tp_rs_reduce");
    const std::size_t first = std::string(gemm) == "proj" ? 0 : 3;
    const std::int64_t g = span(slices[0]);
    const std::int64_t c = span(steps[first]);
    const std::int64_t start = slices[0]->start_ns;
    EXPECT_EQ(reduce[first == 0 ? 0 : 1]->start_ns - start, g + 3 * std::max(g, c))
        << gemm << ": g " << g << " ns, c " << c << " ns";
    ++regimes[c > g ? 0 : 1];
  }
  // At this shape both regimes occur: proj's slice (2,048 x 4,096 x 1,024: 17.2 GFLOP) is shorter
  // than a 16 MiB copy (43.7 us at the copy engines' rate), qkv's (25.8 GFLOP) and fc1's
  // (120 GFLOP) longer. (Timed as NCCL send/recv, the copy was the longer for qkv too.)
  EXPECT_GT(regimes[0], 0);
  EXPECT_GT(regimes[1], 0);
}

// parallel.overlap_tp_grad_reduce: Megatron's backward all-reduce of a column-parallel GEMM's
// input gradient runs beside the weight-gradient GEMM; BigScience's Megatron-DeepSpeed (BLOOM)
// runs it after both GEMMs on the compute stream (megatron/mpu/layers.py), fully exposed.
TEST(TpOverlap, InputGradientReductionIsBesideTheWeightGradientUnlessTheFrameworkBlocks) {
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  Scenario megatron = llama3_8b_tp(8, TpOverlapImplementation::userbuffers);
  megatron.parallel.tp_comm_overlap = false;
  megatron.parallel.sequence_parallel = false;  // plain TP all-reduces, as BLOOM ran
  Scenario deepspeed = megatron;
  deepspeed.parallel.overlap_tp_grad_reduce = false;
  const ModelPrograms prog = build_transformer_programs(megatron, gpu, params);
  const ModelPrograms blocking_prog = build_transformer_programs(deepspeed, gpu, params);
  const Program& bwd = prog.layer_kinds[0].backward;
  const Program& blocking_bwd = blocking_prog.layer_kinds[0].backward;
  // QKV's and fc1's input gradients: two all-reduces of the full activation (8192 x 4096 x 2 bytes).
  const auto ar = segments(bwd, "tp_ar_bwd");
  const auto blocking_ar = segments(blocking_bwd, "tp_ar_bwd");
  ASSERT_EQ(ar.size(), 2U);
  ASSERT_EQ(blocking_ar.size(), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(ar[i]->op, CollectiveOp::all_reduce);
    EXPECT_DOUBLE_EQ(ar[i]->bytes, 8192.0 * 4096 * 2);
    EXPECT_EQ(ar[i]->overlap, Overlap::with_next);
    EXPECT_EQ(blocking_ar[i]->overlap, Overlap::blocking);
    EXPECT_DOUBLE_EQ(blocking_ar[i]->bytes, ar[i]->bytes);
  }
  // The same work, the reductions now exposed: the iteration is longer by at most their time.
  const Report overlapped = simulate_training(megatron);
  const Report blocking = simulate_training(deepspeed);
  EXPECT_GT(blocking.breakdown.tp_comm_exposed_s, overlapped.breakdown.tp_comm_exposed_s);
  EXPECT_GT(blocking.iteration_time_s, overlapped.iteration_time_s);
  EXPECT_LE(blocking.iteration_time_s - overlapped.iteration_time_s,
            blocking.breakdown.tp_comm_exposed_s - overlapped.breakdown.tp_comm_exposed_s + 1e-9);
}

}  // namespace
}  // namespace traincast::models
