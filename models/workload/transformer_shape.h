#pragma once
// The dimensions every transformer formula needs, as doubles, and the scenario's LoRA targets:
// shared by the transformer's accounting (transformer.cc) and its program builder
// (transformer_programs.cc). Internal to the transformer generator.

#include <vector>

#include "models/spec/scenario.h"
#include "models/workload/transformer.h"

namespace traincast::models {

/// The shapes every transformer formula below needs, as doubles.
struct TransformerShape {
  /// micro_batch_size, seq_length, hidden_size, attention heads, K/V width (query groups x head
  /// dim), FFN width, vocabulary, layers, tp, bytes per element, 2 for a gated MLP (else 1).
  double b, s, h, a, kv, f, v, l, t, e, gate;
  /// MoE: routed experts, top-k, expert FFN width, shared experts, expert slots per token, ep.
  double experts, top_k, fe, shared, slots, ep;
  bool sp, flash, causal;  ///< sequence parallelism (with tp > 1), flash attention, decoder
  /// 1 when attention / hidden dropout runs (its 1-byte mask is written and read), else 0.
  double attn_mask, hidden_mask;
  double cp = 1;                          ///< context-parallel ranks
  AttentionDims att;                      ///< attention widths (head_dim, MLA)
  std::vector<AttentionProjection> proj;  ///< the attention block's input-side GEMMs
  double imbalance = 1;                   ///< moe_expert_imbalance
  /// One matmul produces the attention block's (the MLP's) input gradient. Async TP fuses a
  /// reduce-scatter with its GEMM only then (torch/_inductor/fx_passes/micro_pipeline_tp.py
  /// fuse_matmul_reduce_scatter, _find_producer_matmul: mm, _scaled_mm, or reshape -> mm ->
  /// reshape); an input read by several linears gets the sum of their input gradients (an add):
  /// separate wq, wk, wv (model.separate_projections; MLA's query and key/value down-projections
  /// both read h), a gated MLP's separate w1 and w3. Such a reduce-scatter stays a plain NCCL one.
  bool qkv_one_matmul = true, fc1_one_matmul = true;
  double tokens() const { return b * s / cp; }                           ///< T: this CP rank's tokens
  double tokens_sp() const { return sp ? b * s / cp / t : b * s / cp; }  ///< T_sp: LN/dropout region
};

/// The shape of `scenario`'s model under its parallel layout and precision.
TransformerShape transformer_shape(const Scenario& scenario);

/// The LoRA targets of `scenario` (training.lora_target_modules). Throws std::invalid_argument
/// "workload.training.lora_target_modules: <why>" for a list parse_lora_targets rejects.
LoraTargets lora_targets_of(const Scenario& scenario);

}  // namespace traincast::models
