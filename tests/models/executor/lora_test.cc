// LoRA fine-tuning (Hu et al. 2021, arXiv:2106.09685): adapter parameter counts, what runs
// (model FLOPs), memory and data-parallel traffic of a frozen base with trainable adapters.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/workload/memory_model.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

/// Move-assigns the target list (GCC 12 -Wrestrict false positive on assigning short literals).
void set_targets(Scenario& sc, std::string targets) { sc.training.lora_target_modules = std::move(targets); }

Scenario gpt3_175b_shape() {
  Scenario sc;
  sc.model.num_layers = 96;
  sc.model.hidden_size = 12288;
  sc.model.num_attention_heads = 96;
  sc.model.vocab_size = 50257;
  sc.model.seq_length = 2048;
  return sc;
}

TEST(Lora, AdapterParametersFollowTheLoraPaperAndPeft) {
  // LoRA paper §7.1: "a parameter budget of 18M ... on GPT-3 175B, which corresponds to r = 8 if
  // we adapt one type of attention weights or r = 4 if we adapt two types, for all 96 layers".
  // By hand: 96 layers x 2 matrices x r (12288 + 12288) = 96 x 2 x 4 x 24576 = 18,874,368.
  Scenario gpt3 = gpt3_175b_shape();
  gpt3.training.lora_rank = 4;
  set_targets(gpt3, "q,v");
  EXPECT_DOUBLE_EQ(gpt3.model.num_layers * lora_layer_parameters(gpt3), 18874368.0);
  gpt3.training.lora_rank = 8;
  set_targets(gpt3, "q");
  EXPECT_DOUBLE_EQ(gpt3.model.num_layers * lora_layer_parameters(gpt3), 18874368.0);

  // Llama-2-7B, r = 8 on q_proj, v_proj (PEFT's default targets): PEFT prints "trainable params:
  // 4,194,304". By hand: 32 layers x 2 x 8 x (4096 + 4096) = 4,194,304.
  Scenario llama;
  llama.model.num_layers = 32;
  llama.model.hidden_size = 4096;
  llama.model.num_attention_heads = 32;
  llama.model.ffn_hidden_size = 11008;
  llama.model.gated_mlp = true;
  llama.training.lora_rank = 8;
  EXPECT_EQ(llama.training.lora_target_modules, "q,v");  // the documented default
  EXPECT_DOUBLE_EQ(llama.model.num_layers * lora_layer_parameters(llama), 4194304.0);

  // Llama-2-70B (GQA, 8 KV heads of 128: kv = 1024; ffn 28672), r = 16 on all linear layers.
  // By hand, d_in + d_out: q 16384, k 9216, v 9216, o 16384, gate 36864, up 36864, down 36864
  // = 161,792 per layer; x 16 x 80 layers = 207,093,760.
  Scenario l70;
  l70.model.num_layers = 80;
  l70.model.hidden_size = 8192;
  l70.model.num_attention_heads = 64;
  l70.model.num_query_groups = 8;
  l70.model.ffn_hidden_size = 28672;
  l70.model.gated_mlp = true;
  l70.training.lora_rank = 16;
  set_targets(l70, "all-linear");
  EXPECT_DOUBLE_EQ(l70.model.num_layers * lora_layer_parameters(l70), 207093760.0);
  set_targets(l70, "q, k,v ,o,gate,up,down");  // the same, spelled out
  EXPECT_DOUBLE_EQ(l70.model.num_layers * lora_layer_parameters(l70), 207093760.0);

  l70.training.lora_rank = 0;
  EXPECT_EQ(lora_layer_parameters(l70), 0.0);
}

TEST(Lora, TargetListErrors) {
  LoraTargets t;
  std::string why;
  EXPECT_TRUE(parse_lora_targets("q,v", false, t, &why));
  EXPECT_TRUE(t.q && t.v && !t.k && !t.o && !t.gate && !t.up && !t.down);
  EXPECT_TRUE(parse_lora_targets("all-linear", false, t, &why));
  EXPECT_TRUE(t.q && t.k && t.v && t.o && !t.gate && t.up && t.down);  // no gate without a gated MLP
  EXPECT_FALSE(parse_lora_targets("q,qkv", true, t, &why));
  EXPECT_EQ(why, "unknown module \"qkv\"");
  EXPECT_FALSE(parse_lora_targets("q,q", true, t, &why));
  EXPECT_EQ(why, "module \"q\" named twice");
  EXPECT_FALSE(parse_lora_targets("gate", false, t, &why));
  EXPECT_EQ(why, "module \"gate\" needs a gated MLP (model.gated_mlp: true)");
  EXPECT_FALSE(parse_lora_targets("", true, t, &why));
  EXPECT_EQ(why, "empty list");
  EXPECT_FALSE(parse_lora_targets("q,", true, t, &why));
  EXPECT_EQ(why, "empty module name");
}

/// A Llama-shaped model small enough to simulate quickly on one DGX A100.
Scenario small_llama(int dp) {
  Scenario sc;
  sc.name = std::string("t");  // not = "t": a bogus GCC 12 -Wrestrict once inlined (GCC bug 105651)
  sc.cluster.node_template = "dgx_a100";
  sc.model.num_layers = 4;
  sc.model.hidden_size = 4096;
  sc.model.num_attention_heads = 32;
  sc.model.ffn_hidden_size = 11008;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 2048;
  sc.model.gated_mlp = true;
  sc.model.untied_embeddings = true;
  sc.parallel.dp = dp;
  sc.parallel.tp = 8 / dp;
  sc.training.global_batch_size = 8;
  sc.training.micro_batch_size = 1;
  return sc;
}

TEST(Lora, ModelFlopsCountWhatRuns) {
  Scenario sc = small_llama(8);
  const double full = model_flops_per_iteration(sc);
  sc.training.lora_rank = 16;
  const double lora = model_flops_per_iteration(sc);
  // By hand, per token (h 4096, s 2048, f 11008, V 32000, r 16, q and v adapted):
  //   linear forward per layer: QKV 2h*3h + proj 2h^2 + MLP 3 * 2 h f = 8 h^2 + 6 h f
  //   attention core 4 s h; adapters 2 r (2h + 2h) = 8 r h
  // full: 3 (l (8h^2 + 6hf + 4sh) + 2hV); LoRA: l (2 (8h^2 + 6hf) + 3 * 4sh + 3 * 8rh) + 2 * 2hV.
  const double h = 4096, s = 2048, f = 11008, V = 32000, l = 4, r = 16, tokens = 8 * 2048;
  const double linear = 8 * h * h + 6 * h * f, core = 4 * s * h, adapters = 8 * r * h;
  EXPECT_NEAR(full, tokens * 3 * (l * (linear + core) + 2 * h * V), 1e-9 * full);
  EXPECT_NEAR(lora, tokens * (l * (2 * linear + 3 * core + 3 * adapters) + 4 * h * V), 1e-9 * lora);
  EXPECT_LT(lora, full);
}

TEST(Lora, FrozenBaseSkipsWeightGradientsAndKeepsOnlyAdapterState) {
  Scenario sc = small_llama(8);
  sc.parallel.overlap_grad_reduce = false;  // DP gradient reductions on the critical path
  const Report full = simulate_training(sc);
  sc.training.lora_rank = 16;
  const Report lora = simulate_training(sc);
  // No weight-gradient GEMMs: GEMM work is 2/3 of full training's (forward + dgrad of 3 passes),
  // while attention backward and memory-bound kernels stay: the compute is between 2/3 and
  // 0.85 of full training's (adapters add < 1%), and the whole step is shorter still (no
  // full-model all-reduce or optimizer step).
  EXPECT_GT(lora.breakdown.compute_s, 0.6 * full.breakdown.compute_s);
  EXPECT_LT(lora.breakdown.compute_s, 0.85 * full.breakdown.compute_s);
  EXPECT_LT(lora.iteration_time_s, lora.breakdown.compute_s + 0.1 * (full.iteration_time_s - full.breakdown.compute_s));
  // Gradients of 4 layers x 16 x (8192 + 8192) = 1,048,576 adapter parameters instead of ~0.9B:
  // the exposed DP reduction shrinks by orders of magnitude.
  EXPECT_GT(full.breakdown.dp_comm_exposed_s, 1e-3);
  EXPECT_LT(lora.breakdown.dp_comm_exposed_s, 0.01 * full.breakdown.dp_comm_exposed_s);

  // Memory (ZeRO 0, one stage): weights of the whole base (2 B/param) plus adapters; gradients
  // (fp32 main grads, 4 B) and Adam state (12 B) of the adapters only.
  const double adapters = 4 * 16 * (8192.0 + 8192.0);
  const double base = total_parameters(sc.model);
  EXPECT_NEAR(lora.memory.grads_bytes, 4 * adapters, 1.0);
  EXPECT_NEAR(lora.memory.optimizer_bytes, 12 * adapters, 1.0);
  EXPECT_NEAR(lora.memory.weights_bytes, 2 * (base + adapters), 2 * 1e-9 * base);
}

TEST(Lora, ZeroThreeStillGathersTheFrozenBase) {
  Scenario sc = small_llama(8);
  sc.parallel.zero_stage = 3;
  sc.training.lora_rank = 16;
  const Report r = simulate_training(sc);
  const double adapters = 4 * 16 * (8192.0 + 8192.0);
  const double base = total_parameters(sc.model);
  EXPECT_NEAR(r.memory.optimizer_bytes, 12 * adapters / 8, 1.0);
  // Base and adapter weights sharded over 8, plus two gathered layers.
  EXPECT_GT(r.memory.weights_bytes, 2 * base / 8);
  EXPECT_GT(r.iteration_time_s, 0.0);
}

}  // namespace
}  // namespace traincast::models
