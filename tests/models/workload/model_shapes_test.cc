// Model shapes of issue 19: explicit head dim (Qwen3), multi-head latent attention (DeepSeek-V3),
// sliding-window layers (GPT-OSS) and the MoE expert imbalance. Every expected figure is worked by
// hand from the published config.json in the comment beside it (bf16, e = 2 bytes).
#include <gtest/gtest.h>

#include "models/hardware/catalog.h"
#include "models/workload/memory_model.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

/// DeepSeek-V3 (arXiv:2412.19437 §2.1 and §4.2; HF deepseek-ai/DeepSeek-V3 config.json): hidden
/// 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head 128, 61
/// layers of which the first 3 dense (intermediate 18432), 256 routed experts top-8 of width 2048
/// and 1 shared expert, vocab 129280, untied output layer.
ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "deepseek-v3";
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.num_attention_heads = 128;
  m.ffn_hidden_size = 18432;
  m.vocab_size = 129280;
  m.seq_length = 4096;
  m.gated_mlp = true;
  m.untied_embeddings = true;
  m.attention_dropout = 0;
  m.hidden_dropout = 0;
  m.multi_latent_attention = true;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.num_experts = 256;
  m.moe_top_k = 8;
  m.moe_ffn_hidden_size = 2048;
  m.num_shared_experts = 1;
  m.first_dense_layers = 3;
  return m;
}

/// Qwen3-30B-A3B (HF Qwen/Qwen3-30B-A3B config.json): hidden 2048, 32 heads, 4 KV heads,
/// head_dim 128 (32 x 128 = 4096 != 2048), 48 MoE layers, 128 experts top-8 of width 768,
/// vocab 151936, untied.
ModelSpec qwen3_30b_a3b() {
  ModelSpec m;
  m.name = "qwen3-30b-a3b";
  m.num_layers = 48;
  m.hidden_size = 2048;
  m.num_attention_heads = 32;
  m.num_query_groups = 4;
  m.head_dim = 128;
  m.ffn_hidden_size = 6144;
  m.vocab_size = 151936;
  m.seq_length = 4096;
  m.gated_mlp = true;
  m.untied_embeddings = true;
  m.attention_dropout = 0;
  m.hidden_dropout = 0;
  m.num_experts = 128;
  m.moe_top_k = 8;
  m.moe_ffn_hidden_size = 768;
  return m;
}

/// GPT-OSS-120B (HF openai/gpt-oss-120b config.json): 36 layers alternating a 128-token sliding
/// window (layer 0) and full attention, hidden 2880, 64 heads of 64, 8 KV heads, 128 experts
/// top-4 of width 2880 (SwiGLU), vocab 201088, untied.
ModelSpec gpt_oss_120b() {
  ModelSpec m;
  m.name = "gpt-oss-120b";
  m.num_layers = 36;
  m.hidden_size = 2880;
  m.num_attention_heads = 64;
  m.num_query_groups = 8;
  m.head_dim = 64;
  m.ffn_hidden_size = 2880;
  m.vocab_size = 201088;
  m.seq_length = 4096;
  m.gated_mlp = true;
  m.untied_embeddings = true;
  m.attention_dropout = 0;
  m.hidden_dropout = 0;
  m.num_experts = 128;
  m.moe_top_k = 4;
  m.sliding_window = 128;
  m.sliding_window_pattern = 2;
  return m;
}

Scenario one_gpu(const ModelSpec& m) {
  Scenario sc;
  sc.cluster.node_template = "dgx_h100";
  sc.model = m;
  sc.training.global_batch_size = 1;
  sc.training.micro_batch_size = 1;
  return sc;
}

/// Sum of the FLOPs of the segments labelled `label` in `p`.
double flops_of(const Program& p, const std::string& label) {
  double sum = 0;
  for (const Segment& s : p)
    if (!s.is_collective && s.label == label) sum += s.flops;
  return sum;
}

TEST(ModelShapes, ExplicitDefaultHeadDimChangesNothing) {
  // head_dim = hidden / heads written out gives the same figures, bit for bit, as head_dim 0.
  ModelSpec m = qwen3_30b_a3b();
  m.head_dim = 0;
  m.hidden_size = 4096;  // 32 heads x 128
  Scenario a = one_gpu(m);
  Scenario b = a;
  b.model.head_dim = 128;
  EXPECT_EQ(transformer_model_flops_per_iteration(a), transformer_model_flops_per_iteration(b));
  EXPECT_EQ(total_parameters(a.model), total_parameters(b.model));
  EXPECT_EQ(activation_bytes_per_layer(a), activation_bytes_per_layer(b));
}

TEST(ModelShapes, Qwen3HeadDimParametersAndFlops) {
  const ModelSpec m = qwen3_30b_a3b();
  // Per layer: attention h(q + 2kv) + (q + 2kv) + q·h + h + 4h with q = 32·128 = 4096,
  // kv = 4·128 = 512: 2048·5120 + 5120 + 4096·2048 + 2048 + 8192 = 18,889,728; router
  // 2048·128 = 262,144; experts 128 x 3·2048·768 = 603,979,776: 623,131,648, x 48 =
  // 29,910,319,104; embedding and output 2 x 151936·2048 = 622,329,856; final norm 4096:
  // 30,532,653,056. Published: 30.5B total, 3.3B activated (HF model card); activated with 8 of
  // 128 experts: 3,353,563,136 (the card's 3.3B rounds it down).
  EXPECT_DOUBLE_EQ(total_parameters(m), 30532653056.0);
  EXPECT_DOUBLE_EQ(active_parameters(m), 3353563136.0);
  EXPECT_NEAR(total_parameters(m) / 1e9, 30.5, 0.05);
  EXPECT_NEAR(active_parameters(m) / 1e9, 3.3, 0.06);
  // Forward FLOPs per token, s = 4096: QKV 2·2048·5120 = 20,971,520; attention core
  // 4·s·(32·128) = 67,108,864 (not 4·s·h = 33,554,432: the head dim sets it); output projection
  // 2·4096·2048 = 16,777,216; router 2·2048·128 = 524,288; 8 experts x (2·2048·768·2 +
  // 2·768·2048) = 75,497,472: 180,879,360 per layer, x 48 + logits 2·2048·151936 =
  // 9,304,539,136; model FLOPs = 3 x 4096 tokens x that = 114,334,176,903,168.
  EXPECT_DOUBLE_EQ(transformer_model_flops_per_iteration(one_gpu(m)), 114334176903168.0);
}

TEST(ModelShapes, Qwen3HeadDimActivationMemory) {
  // Flash attention, tp 1, no dropout, s = 4096, b = 1. Attention part of a layer: LN inputs,
  // QKV input (and FC1 input) 4·e·s·h = 67,108,864; Q, K, V e·s·(4096 + 2·512) = 41,943,040;
  // projection input e·s·4096 = 33,554,432; LSE 4·32·s = 524,288. MoE: router probabilities
  // 4·s·128 = 2,097,152, slots s·8 x e·(2h + 3·768) = 32768·2·6400 = 419,430,400.
  // Sum: 67,108,864 + 41,943,040 + 33,554,432 + 524,288 + 2,097,152 + 419,430,400 = 564,658,176.
  const Scenario sc = one_gpu(qwen3_30b_a3b());
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc, 0), 564658176.0);
}

TEST(ModelShapes, DeepSeekV3ParametersMatchThePaper) {
  const ModelSpec m = deepseek_v3();
  // MLA per layer (no biases): W^DQ 7168·1536 = 11,010,048; W^UQ+W^QR 1536·128·192 = 37,748,736;
  // W^DKV+W^KR 7168·(512 + 64) = 4,128,768; W^UK+W^UV 512·128·(128 + 128) = 16,777,216; latent
  // norms 1536 + 512; W^O 128·128·7168 = 117,440,512; two norms 4·7168: 187,136,000.
  const LayerParameters dense = layer_parameters(m, 0);
  EXPECT_DOUBLE_EQ(dense.replicated, 187136000.0 + (7168.0 * 18432 * 2 + 18432 * 2 + 18432.0 * 7168 + 7168));
  EXPECT_DOUBLE_EQ(dense.tp_duplicated, 11010048.0 + 4128768 + 1536 + 512);
  // MoE layer: + shared expert 3·7168·2048 = 44,040,192 + router 7168·256 = 1,835,008;
  // routed 256 x 44,040,192 = 11,274,289,152.
  const LayerParameters moe = layer_parameters(m, 3);
  EXPECT_DOUBLE_EQ(moe.replicated, 187136000.0 + 44040192 + 1835008);
  EXPECT_DOUBLE_EQ(moe.experts, 11274289152.0);
  // Total: 3 x (187,136,000 + 396,405,760) + 58 x (233,011,200 + 11,274,289,152) + embedding and
  // output 2 x 129280·7168 + 2·7168 = 671,027,418,112: the paper's 671B (the MTP module, 14B of
  // the 685B checkpoint, is not part of it). Activated with 8 of 256 routed experts:
  // 37,553,296,384 (paper: 37B).
  EXPECT_DOUBLE_EQ(total_parameters(m), 671027418112.0);
  EXPECT_DOUBLE_EQ(active_parameters(m), 37553296384.0);
  EXPECT_NEAR(total_parameters(m) / 1e9, 671, 0.5);
  EXPECT_NEAR(active_parameters(m) / 1e9, 37, 0.6);
}

TEST(ModelShapes, DeepSeekV3Flops) {
  // Forward FLOPs per token, s = 4096. MLA: 2 x (11,010,048 + 37,748,736 + 4,128,768 +
  // 16,777,216) = 139,329,536 projections; core 2·s·128·192 (QK^T) + 2·s·128·128 (AV) =
  // 4·s·20480 = 335,544,320; output 2·16384·7168 = 234,881,024: 709,754,880 per layer.
  // Dense MLP 3·2·7168·18432 = 792,723,456; MoE router 2·7168·256 = 3,670,016 + 9 experts x
  // 3·2·7168·2048 = 792,723,456. 3 x 1,502,478,336 + 58 x 1,506,148,352 + logits
  // 2·7168·129280 = 93,717,397,504 per token; x 3 x 4096 tokens.
  const Scenario sc = one_gpu(deepseek_v3());
  EXPECT_DOUBLE_EQ(transformer_model_flops_per_iteration(sc), 3.0 * 4096 * 93717397504.0);
  // The fused attention kernel of one layer and micro-batch: causal half of 4·s²·20480.
  const ModelPrograms p = build_transformer_programs(sc, find_gpu("H100-SXM5-80GB"), ComputeParams{});
  EXPECT_DOUBLE_EQ(flops_of(p.layer_kinds[0].forward, "attn"), 687194767360.0);
  // The MLA projections as GEMMs: 2·s x the projection weights.
  EXPECT_DOUBLE_EQ(flops_of(p.layer_kinds[0].forward, "qkv"), 4096.0 * 139329536);
  EXPECT_DOUBLE_EQ(flops_of(p.layer_kinds[0].forward, "proj"), 4096.0 * 234881024);
}

TEST(ModelShapes, DeepSeekV3ActivationAndKvCacheMemory) {
  // Flash attention, tp 1, no dropout, s = 4096, b = 1. Dense layer: LN inputs, down-projection
  // input, FC1 input 4·e·s·h = 234,881,024; per-head Q, K (192 each) and V (128): e·s·128·(320 +
  // 192) = 536,870,912 and the latents every rank keeps e·s·(2·1536 + 2·512 + 64) = 34,078,720;
  // projection input e·s·16384 = 134,217,728; SwiGLU e·s·18432·3 = 452,984,832; LSE 4·128·s =
  // 2,097,152: 1,395,130,368.
  const Scenario sc = one_gpu(deepseek_v3());
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc, 0), 1395130368.0);
  // MoE layer: the dense MLP's 452,984,832 out; shared expert e·s·2048·3 = 50,331,648; router
  // probabilities 4·s·256 = 4,194,304; 8 slots per token e·32768·(2·7168 + 3·2048) =
  // 1,342,177,280: 2,338,848,768.
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc, 3), 2338848768.0);
  // Inference KV cache: the 512-wide latent and the 64-wide RoPE key per layer and token:
  // 61 x 576 x 2 bytes = 70,272 bytes per token (a GQA layout of 128 heads x 128 would cache
  // 61 x 2 x 16384 x 2 = 3,997,696).
  EXPECT_DOUBLE_EQ(kv_cache_bytes(sc.model, 1, 2), 70272.0);
}

TEST(ModelShapes, MlaDownProjectionsAreDuplicatedOverTp) {
  // TP 8 splits the up-projections and W^O by 8; W^DQ and W^DKV (and their norms) stay whole.
  const LayerParameters p = layer_parameters(deepseek_v3(), 0);
  EXPECT_DOUBLE_EQ(p.replicated_per_rank(8), (p.replicated - p.tp_duplicated) / 8 + p.tp_duplicated);
  EXPECT_GT(p.replicated_per_rank(8), p.replicated / 8);
}

TEST(ModelShapes, GptOssSlidingWindowFlopsAndParameters) {
  const ModelSpec m = gpt_oss_120b();
  EXPECT_TRUE(is_windowed_layer(m, 0));
  EXPECT_FALSE(is_windowed_layer(m, 1));
  EXPECT_DOUBLE_EQ(attention_keys(m, 0), 128.0);
  EXPECT_DOUBLE_EQ(attention_keys(m, 35), 4096.0);
  // Published (OpenAI gpt-oss model card, Table 1): 116.83B total, 5.13B active without the
  // 0.58B input embedding. Ours: per layer attention 2880·(4096 + 1024) + 5120 + 4096·2880 +
  // 2880 + 11520 = 26,556,160; router 368,640; experts 128 x 3·2880·2880 = 3,185,049,600;
  // x 36 + 2 x 201088·2880 + 5760 = 116,789,546,880 (the experts' biases, 40M, not counted).
  EXPECT_DOUBLE_EQ(total_parameters(m), 116789546880.0);
  EXPECT_NEAR(total_parameters(m) / 1e9, 116.83, 0.05);
  EXPECT_NEAR((active_parameters(m) - 201088.0 * 2880) / 1e9, 5.13, 0.01);
  // Forward FLOPs per token, s = 4096: projections 2·2880·5120 + 2·4096·2880 = 53,084,160;
  // MoE 2·2880·128 + 4 x 6·2880·2880 = 199,802,880; core 4·s·4096 = 67,108,864 on a full layer,
  // 4·128·4096 = 2,097,152 on a windowed one: 18 x 319,995,904 + 18 x 254,984,192 + logits
  // 2·2880·201088 = 11,507,908,608; x 3 x 4096.
  const Scenario sc = one_gpu(m);
  EXPECT_DOUBLE_EQ(transformer_model_flops_per_iteration(sc), 3.0 * 4096 * 11507908608.0);
  // The windowed kernel's query-key pairs: sum_i min(i + 1, 128) ~ s·w - w²/2 = 516,096, x 4 x
  // 64·64 = 8,455,716,864 FLOPs, against 4·s²·4096 / 2 = 137,438,953,472 for a full causal layer.
  const ModelPrograms p = build_transformer_programs(sc, find_gpu("H100-SXM5-80GB"), ComputeParams{});
  ASSERT_EQ(p.layer_kinds.size(), 2U);
  EXPECT_EQ(p.layer_kind[0], 0);
  EXPECT_EQ(p.layer_kind[1], 1);
  EXPECT_DOUBLE_EQ(flops_of(p.layer_kinds[0].forward, "attn"), 8455716864.0);
  EXPECT_DOUBLE_EQ(flops_of(p.layer_kinds[1].forward, "attn"), 137438953472.0);
}

TEST(ModelShapes, SlidingWindowActivationMemoryUnfused) {
  // Unfused attention keeps the softmax output: a·s·keys·b·e/t; a windowed layer keeps a band of
  // 128 keys per query: 64·4096·128·2 = 67,108,864 instead of 64·4096·4096·2 = 2,147,483,648.
  Scenario sc = one_gpu(gpt_oss_120b());
  sc.training.flash_attention = false;
  const double full = activation_bytes_per_layer(sc, 1), windowed = activation_bytes_per_layer(sc, 0);
  EXPECT_DOUBLE_EQ(full - windowed, 2147483648.0 - 67108864.0);
  // KV cache of 4096 tokens: 18 full layers x 4096 + 18 windowed x 128 tokens, each 2·8·64 x 2 B.
  EXPECT_DOUBLE_EQ(kv_cache_bytes(sc.model, 4096, 2), 155713536.0);
}

TEST(ModelShapes, ExpertImbalanceSlowsTheBusiestRank) {
  // 16 experts over EP 4 = 4 per rank; the busiest expert at 2x the mean: its rank processes
  // (4 - 1 + 2) / 4 = 1.25x its balanced share, so its expert GEMM FLOPs rise by 25 %.
  ModelSpec m = qwen3_30b_a3b();
  m.num_experts = 16;
  m.moe_top_k = 2;
  Scenario sc = one_gpu(m);
  sc.parallel.dp = 4;
  sc.parallel.ep = 4;
  sc.training.global_batch_size = 4;
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ModelPrograms balanced = build_transformer_programs(sc, gpu, ComputeParams{});
  sc.model.moe_expert_imbalance = 2.0;
  const ModelPrograms skewed = build_transformer_programs(sc, gpu, ComputeParams{});
  EXPECT_DOUBLE_EQ(flops_of(skewed.layer_kinds[0].forward, "expert_fc2"),
                   1.25 * flops_of(balanced.layer_kinds[0].forward, "expert_fc2"));
  EXPECT_GT(activation_bytes_per_layer(sc, 0), 0.0);
  // Model FLOPs count useful work only: unchanged.
  Scenario even = sc;
  even.model.moe_expert_imbalance = 1.0;
  EXPECT_EQ(transformer_model_flops_per_iteration(sc), transformer_model_flops_per_iteration(even));
}

}  // namespace
}  // namespace traincast::models
