// Context parallelism (ring attention as Megatron-Core with TransformerEngine runs it): per-rank
// attention FLOPs of the load-balanced causal split, K/V bytes per ring step, memory divided by
// cp, gradients reduced over dp x cp, and the ring's overlap with attention.
#include <gtest/gtest.h>

#include <string>

#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/workload/memory_model.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

/// Llama-3-8B (Llama 3 paper Table 3: 32 layers, d 4096, FFN 14336, 32 heads, 8 KV heads, vocab
/// 128,256) at `seq` tokens on `nodes` DGX H100, TP tp x CP cp x DP dp, micro-batch 1.
Scenario llama3_8b(int seq, int nodes, int tp, int cp, int dp, int global_batch) {
  Scenario sc;
  sc.name = "llama3-8b-cp";
  sc.cluster.node_template = "dgx_h100";
  sc.cluster.num_nodes = nodes;
  ModelSpec& m = sc.model;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 14336;
  m.vocab_size = 128256;
  m.seq_length = seq;
  m.gated_mlp = true;
  m.untied_embeddings = true;
  sc.parallel.tp = tp;
  sc.parallel.cp = cp;
  sc.parallel.dp = dp;
  sc.parallel.sequence_parallel = tp > 1;
  sc.parallel.zero_stage = 1;
  sc.training.global_batch_size = global_batch;
  sc.training.micro_batch_size = 1;
  return sc;
}

double sum_flops(const Program& p, const std::string& label) {
  double f = 0;
  for (const Segment& s : p)
    if (!s.is_collective && s.label == label) f += s.flops;
  return f;
}
int count(const Program& p, const std::string& label) {
  int n = 0;
  for (const Segment& s : p) n += s.label == label ? 1 : 0;
  return n;
}

TEST(ContextParallel, CausalBalancedAttentionFlopsPerRank) {
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  for (const int cp : {2, 4, 8}) {
    const Scenario sc = llama3_8b(131072, 2, 2, cp, 8 / cp, 8 / cp);  // 16 GPUs: TP 2 x CP cp x DP 8/cp
    const double t = sc.parallel.tp, s = 131072, h = 4096, b = 1;
    const ModelPrograms prog = build_transformer_programs(sc, gpu, params);
    const Program& fwd = prog.layer_kinds[0].forward;
    // Causal attention of one sequence is 4·b·s²·h/2 FLOPs (QK^T and attention x V, half the
    // pairs under the mask); balanced over cp ranks and split over TP: 4·b·s²·h / (2·cp·t).
    const double expected = 4 * b * s * s * h / (2 * cp * t);
    EXPECT_NEAR(sum_flops(fwd, "attn"), expected, 1e-9 * expected) << "cp " << cp;
    // cp steps of equal work (the load balance): each 1/cp of it.
    EXPECT_EQ(count(fwd, "attn"), cp);
    for (const Segment& seg : fwd)
      if (seg.label == "attn") {
        EXPECT_NEAR(seg.flops, expected / cp, 1e-9 * expected);
      }
    // Backward: 2.5x the forward matmuls (FlashAttention-2 recomputes the scores), same split.
    EXPECT_NEAR(sum_flops(prog.layer_kinds[0].backward, "attn_bwd"), 2.5 * expected, 1e-9 * expected);
  }
}

TEST(ContextParallel, KvBytesPerRingStep) {
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  const Scenario sc = llama3_8b(131072, 2, 1, 2, 8, 8);
  const ModelPrograms prog = build_transformer_programs(sc, gpu, params);
  // K and V of the rank's s/cp tokens: 2 x (131072 / 2) x (8 KV heads x 128) x 2 bytes (bf16)
  // = 268,435,456 bytes per layer per micro-batch.
  const double kv = 2.0 * (131072 / 2) * (8 * 128) * 2;
  EXPECT_DOUBLE_EQ(kv, 268435456.0);
  EXPECT_DOUBLE_EQ(context_parallel_attention(sc).kv_bytes_per_step, kv);
  const Program& fwd = prog.layer_kinds[0].forward;
  ASSERT_EQ(count(fwd, "cp_kv"), 1);  // cp - 1 blocks arrive; the first is the rank's own
  for (const Segment& seg : fwd)
    if (seg.label == "cp_kv") {
      EXPECT_TRUE(seg.is_collective);
      EXPECT_EQ(seg.op, CollectiveOp::send_recv);
      EXPECT_EQ(seg.group, CommGroup::cp);
      EXPECT_EQ(seg.overlap, Overlap::with_next);
      EXPECT_DOUBLE_EQ(seg.bytes, kv);
    }
  // Backward: the last dK/dV hop home (K/V bytes) after the ring steps.
  const Program& bwd = prog.layer_kinds[0].backward;
  EXPECT_EQ(count(bwd, "cp_kv_dkv_bwd"), 1);
  EXPECT_EQ(count(bwd, "cp_dkv_bwd"), 1);
  // TP splits the heads: per TP rank 1/t of it.
  const Scenario tp4 = llama3_8b(131072, 2, 4, 2, 2, 8);
  EXPECT_DOUBLE_EQ(context_parallel_attention(tp4).kv_bytes_per_step, kv / 4);
}

TEST(ContextParallel, Cp2At128kFitsOnTwoDgxH100WhereCp1DoesNot) {
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  // 16 GPUs, TP 8 (NVLink), 128k tokens per sequence, ZeRO-1, one micro-batch in flight (PP 1).
  const Scenario cp1 = llama3_8b(131072, 2, 8, 1, 2, 2);
  const Scenario cp2 = llama3_8b(131072, 2, 8, 2, 1, 1);
  const MemoryBreakdown m1 = stage_memory(cp1, gpu, 0, 32, 32);
  const MemoryBreakdown m2 = stage_memory(cp2, gpu, 0, 32, 32);
  EXPECT_TRUE(m1.oom) << m1.peak_bytes_per_gpu / 1073741824.0;
  EXPECT_FALSE(m2.oom) << m2.peak_bytes_per_gpu / 1073741824.0;
  // Activations (layers and the last stage's fp32 logits) are divided by cp exactly.
  EXPECT_NEAR(m2.activations_bytes, m1.activations_bytes / 2, 1e-9 * m1.activations_bytes);
  // Weights are replicated over CP; ZeRO-1 shards the optimizer over dp x cp = 2 in both.
  EXPECT_DOUBLE_EQ(m2.weights_bytes, m1.weights_bytes);
  EXPECT_DOUBLE_EQ(m2.optimizer_bytes, m1.optimizer_bytes);
  // The same through the simulator's report.
  const Report r = simulate_training(cp2, nullptr);
  EXPECT_FALSE(r.memory.oom);
  EXPECT_EQ(r.cp, 2);
  EXPECT_EQ(r.dp, 1);
  EXPECT_EQ(r.tp, 8);
}

TEST(ContextParallel, RingHidesUnderLongAttentionAndGradientsReduceOverDpTimesCp) {
  // 128k tokens: one attention step (~2.2 ms of causal block at TP 8) dwarfs moving a 33.5 MB
  // K/V block over the NICs (~0.7 ms at 50 GB/s), so only the final dK/dV hop per layer shows.
  const Scenario sc = llama3_8b(131072, 2, 8, 2, 1, 1);
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  CollectiveEngine coll(sim, net, cluster);
  TrainingGraph job = build_training_graph(sc, cluster);
  EXPECT_EQ(job.cp, 2);
  EXPECT_EQ(job.dp, 1);
  EXPECT_EQ(job.dp_cp, 2);  // the graph's data-parallel replicas: dp x cp
  // Every gradient reduction runs over both CP ranks' GPUs of a TP rank.
  int grad_tasks = 0;
  for (const Task& t : job.graph.tasks) {
    if (t.participant_count == 0 || job.graph.ops[job.graph.participants[t.participant_begin]].role != Role::dp_grad)
      continue;
    ++grad_tasks;
    const std::uint32_t g = t.group_begin;
    EXPECT_EQ(job.graph.groups.offset[g + 1] - job.graph.groups.offset[g], 2u);
  }
  EXPECT_GT(grad_tasks, 0);
  run_op_graph(sim, coll, job.graph);
  const Report r = training_report(sc, cluster, net, sim.events_processed(), job);
  EXPECT_GT(r.breakdown.cp_comm_exposed_s, 0.0);
  EXPECT_LT(r.breakdown.cp_comm_exposed_s, 0.05 * r.iteration_time_s);
  // Short sequences across nodes: at 8k tokens with CP 16 over two nodes (TP 1) a step computes
  // 256 x 256 token blocks; the ring is exposed.
  Scenario short_seq = llama3_8b(8192, 2, 1, 16, 1, 1);
  const Report rs = simulate_training(short_seq, nullptr);
  EXPECT_GT(rs.breakdown.cp_comm_exposed_s, 0.1 * rs.iteration_time_s);
}

TEST(ContextParallel, BidirectionalEncoderDoesFullBlocksEveryStep) {
  // A BERT-style encoder has no causal mask, so the 2*cp-chunk balance has nothing to balance:
  // each of the cp steps computes the rank's 2c = s/cp queries against a whole 2c-token K/V
  // block, (s/cp)^2 pairs, and a rank does 1/cp of the full s^2 attention: 4·b·s²·h / (cp·t).
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  for (const int cp : {2, 4}) {
    Scenario sc = llama3_8b(8192, 1, 2, cp, 4 / cp, 4 / cp);
    sc.model.architecture = Architecture::encoder;
    sc.model.gated_mlp = false;
    sc.model.untied_embeddings = false;
    sc.model.max_position_embeddings = 8192;
    const double t = 2, s = 8192, h = 4096, b = 1;
    const ModelPrograms prog = build_transformer_programs(sc, gpu, params);
    const double expected = 4 * b * s * s * h / (cp * t);
    EXPECT_NEAR(sum_flops(prog.layer_kinds[0].forward, "attn"), expected, 1e-9 * expected) << "cp " << cp;
    EXPECT_EQ(count(prog.layer_kinds[0].forward, "attn"), cp);
    EXPECT_NEAR(sum_flops(prog.layer_kinds[0].backward, "attn_bwd"), 2.5 * expected, 1e-9 * expected);
    // The same K/V block moves as for a decoder: 2 x (s/cp) x kv x 2 bytes / t.
    EXPECT_DOUBLE_EQ(context_parallel_attention(sc).kv_bytes_per_step, 2.0 * (s / cp) * (8 * 128) * 2 / t);
  }
}

TEST(ContextParallel, LoraAdapterStatesShardOverDpTimesCp) {
  // LoRA r 16 on q,v of Llama-3-8B: per layer r x ((h + h) + (h + kv)) = 16 x (8192 + 5120) =
  // 212,992 adapter parameters (Hu et al. 2021), 32 layers = 6,815,744, TP 8: 851,968 per GPU.
  // ZeRO-1 over dp x cp = 1 x 2: fp32 master + m + v (12 B) of half of them = 5,111,808 bytes;
  // with CPU offload they move to the host with a 4 B fp32 gradient buffer each: 6,815,744 bytes.
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  Scenario sc = llama3_8b(131072, 2, 8, 2, 1, 1);
  sc.training.lora_rank = 16;
  sc.training.lora_target_modules = "q,v";
  const MemoryBreakdown m = stage_memory(sc, gpu, 0, 32, 1);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 5111808.0);
  sc.offload.optimizer = true;
  const MemoryBreakdown off = stage_memory(sc, gpu, 0, 32, 1);
  EXPECT_DOUBLE_EQ(off.optimizer_bytes, 0.0);
  EXPECT_DOUBLE_EQ(off.host_bytes, 6815744.0);
}

}  // namespace
}  // namespace traincast::models
