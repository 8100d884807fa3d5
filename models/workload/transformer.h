#pragma once
// GPT/Llama-style decoder, dense or mixture-of-experts, or BERT-style encoder (bidirectional
// attention, masked-LM and next-sentence heads): per-layer kernel programs for one
// tensor-parallel rank and one micro-batch under Megatron TP (+ sequence parallelism) and expert
// parallelism, with the standard FLOP accounting (Narayanan et al. SC21 eq. 3; Korthikanti et al.
// 2022; MoE: active parameters only) and parameter counts. Layers need not be identical: each
// layer names one of a few distinct layer programs (e.g. DeepSeek's first dense layers, then MoE).

#include <string>
#include <string_view>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/spec/collective_op.h"
#include "models/spec/scenario.h"
#include "models/workload/layer_program.h"

namespace traincast::models {

/// Matrices of one transformer layer that carry a LoRA adapter.
struct LoraTargets {
  bool q = false, k = false, v = false, o = false;  ///< attention: query, key, value, output
  bool gate = false, up = false, down = false;      ///< MLP: gate (gated MLP only), up (FC1), down (FC2)
};
/// Parses TrainingSpec::lora_target_modules: comma-separated names from q, k, v, o, gate, up,
/// down, or "all-linear" (every linear layer of the block, PEFT's keyword; gate only when
/// gated_mlp). Returns false and sets *error (when given) for an empty list, an unknown or
/// repeated name, or gate without a gated MLP, e.g. "unknown module \"qkv\"".
bool parse_lora_targets(std::string_view text, bool gated_mlp, LoraTargets& out, std::string* error);

/// LoRA adapter parameters of one layer over all TP ranks: r * (d_in + d_out) per adapted matrix
/// (A is r x d_in, B is d_out x r; Hu et al. 2021 §4.2 count |Theta| = 2 * L_LoRA * d_model * r for
/// square matrices). d_in x d_out: q, o h x h; k, v h x kv (GQA: query groups x head dim);
/// gate, up h x ffn; down ffn x h. 0 when lora_rank is 0. Throws std::invalid_argument for
/// targets parse_lora_targets rejects.
double lora_layer_parameters(const Scenario& scenario);

/// Builds the programs (models/workload/transformer_programs.cc). Throws std::invalid_argument
/// when the GPU lacks the precision's math.
ModelPrograms build_transformer_programs(const Scenario& scenario, const GpuSpec& gpu, const ComputeParams& params);

/// Ring attention of one layer, one micro-batch and one TP rank under context parallelism
/// (scenario.parallel.cp; Megatron-Core with TransformerEngine's AttnFuncWithCPAndKVP2P). With the
/// load-balanced split (2·cp chunks of c = s / (2·cp) tokens, CP rank i holding chunks i and
/// 2·cp-1-i) every one of the cp steps computes 2c² query-key pairs under a causal mask (4c²
/// bidirectional), so each rank does 1/cp of the causal attention: per layer and rank
/// cp x forward_flops_per_step = 4·b·s²·h / (2·cp·t) (causal).
struct ContextParallelAttention {
  int steps = 1;                      ///< K/V blocks per layer = cp
  double forward_flops_per_step = 0;  ///< QK^T + attention x V of one block [FLOP]
  double kv_bytes_per_step = 0;       ///< K and V of one block: 2·b·(s/cp)·kv/t·bytes [bytes]
};
ContextParallelAttention context_parallel_attention(const Scenario& scenario);

/// Whether layer `layer` (0-based) has a mixture-of-experts MLP.
bool is_moe_layer(const ModelSpec& model, int layer);

/// Whether layer `layer` (0-based) uses sliding-window attention (model.sliding_window > 0 and, with
/// sliding_window_pattern N >= 2, layer % N != N - 1).
bool is_windowed_layer(const ModelSpec& model, int layer);
/// Keys each query of layer `layer` attends to in the accounting convention (full s^2 for causal
/// layers, as SC21): seq_length, or min(sliding_window, seq_length) for a windowed layer.
double attention_keys(const ModelSpec& model, int layer);

/// The attention widths of one layer over all heads [elements].
/// Plain/GQA (head_dim d = model.head_dim or h / a): q = a·d, o = a·d, k_v = 2·groups·d.
/// MLA: d_qk = qk_nope + qk_rope, d_v = v_head_dim; q = a·d_qk, o = a·d_v, k_v = a·(d_qk + d_v).
struct AttentionDims {
  double d_qk = 0, d_v = 0;  ///< per-head query/key and value widths
  double q = 0;              ///< all heads' queries
  double o = 0;              ///< all heads' attention output (the output projection's input)
  double kv = 0;             ///< plain/GQA: width of K (= of V), groups x head_dim; MLA: 0
  double k_v = 0;            ///< K and V together as the attention kernel reads them
  /// a·(d_qk + d_v)/2: the "h" of the attention core's 4·s·h FLOPs per token (= h by default).
  double core = 0;
  bool mla = false;
  double q_lora = 0, kv_lora = 0, rope = 0, nope = 0;  ///< MLA latent and head widths
};
AttentionDims attention_dims(const ModelSpec& model);

/// One GEMM of the attention block's input side: `in` x `out` weights; `tp_split` when its output
/// columns are split over TP (column-parallel), false when duplicated on every TP rank (MLA's
/// down-projections). Plain/GQA: one fused QKV GEMM h x (q + 2 kv). MLA (DeepSeek-V3 §2.1.1):
/// W^DQ h x q_lora, W^UQ (with W^QR) q_lora x a·d_qk, W^DKV (with W^KR) h x (kv_lora + rope),
/// W^UK and W^UV kv_lora x a·(nope + d_v); without q_lora one h x a·d_qk query GEMM.
struct AttentionProjection {
  double in = 0, out = 0;
  bool tp_split = true;
};
std::vector<AttentionProjection> attention_input_projections(const ModelSpec& model);

/// K/V bytes one token leaves in an inference KV cache over all layers: per layer 2·groups·d
/// elements (plain/GQA) or kv_lora + rope (MLA: the latent and the shared RoPE key are cached,
/// DeepSeek-V2 §2.1.3 Table 1), times bytes_per_element; a windowed layer keeps at most
/// sliding_window tokens. Returns the cache of `tokens` tokens of one sequence [bytes].
double kv_cache_bytes(const ModelSpec& model, double tokens, double bytes_per_element);

/// Parameters of one layer: `replicated` (attention, norms, biases, dense or shared-expert MLP,
/// router) and `experts` (all routed experts together).
struct LayerParameters {
  double replicated = 0;
  double experts = 0;
  /// Part of `replicated` every TP rank holds whole (MLA's down-projections and latent norms):
  /// a rank holds (replicated - tp_duplicated) / tp + tp_duplicated.
  double tp_duplicated = 0;
  /// Parameters of one TP rank.
  double replicated_per_rank(double tp) const {
    return tp_duplicated > 0 ? (replicated - tp_duplicated) / tp + tp_duplicated : replicated / tp;
  }
};
LayerParameters layer_parameters(const ModelSpec& model, int layer);

/// The vocabulary the embedding table and the logits GEMM are sized for: vocab_size rounded up to
/// a multiple of model.make_vocab_size_divisible_by (Megatron-LM's --make-vocab-size-divisible-by,
/// default 128; values below 1 read as 1) x tp, as Megatron-LM pads it
/// (megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding: "Pad vocab size so it is
/// divisible by model parallel size and still having GPU friendly size"). E.g. 32,000 at tp 8 ->
/// 32,768; 51,200 stays. The padded rows are dummies but are stored, multiplied and reduced.
double padded_vocab_size(const ModelSpec& model, int tp);

/// Total parameters of the model (all layers, embeddings, output layer unless tied).
double total_parameters(const ModelSpec& model);
/// Tokens per parameter of the default token budget (`compare`, the `run` summary and the error
/// that asks for a budget, when a scenario gives none): compute-optimal training, about 20 tokens
/// per parameter (Hoffmann et al. 2022, "Training Compute-Optimal Large Language Models",
/// arXiv:2203.15556).
inline constexpr double kDefaultTokensPerParameter = 20.0;
/// Parameters a token uses: as total_parameters but with moe_top_k of the routed experts.
double active_parameters(const ModelSpec& model);

/// Positions per sequence that go through the output head: seq_length for a decoder,
/// mlm_prediction_fraction x seq_length for an encoder (the masked positions BERT gathers).
double head_positions_per_sequence(const ModelSpec& model);
/// Encoder input-side parameters besides the V x h token embedding: position (max_position_embeddings
/// or seq_length rows) and token-type (2 rows) tables of width h, embedding LayerNorm (2h). 0 for a
/// decoder. Shapes: Devlin et al. 2019; HF BertEmbeddings.
double encoder_embedding_extra_parameters(const ModelSpec& model);
/// Encoder output-side parameters besides the V x h projection tied to the embedding: MLM
/// transform dense (h^2 + h) and LayerNorm (2h), output bias (V), pooler dense (h^2 + h), NSP
/// classifier (2h + 2). 0 for a decoder. (HF BertForPreTraining: BERT-large totals 336,226,108.)
double encoder_head_parameters(const ModelSpec& model);

/// Token slots each routed expert path processes per token: moe_top_k x capacity factor
/// (x 1 when dropless: balanced routing assumed).
double expert_slots_per_token(const ModelSpec& model);

/// Model FLOPs per iteration (fwd + bwd = 3 × forward GEMM/attention FLOPs, attention counted
/// at full s², no recomputation): for GPT shapes equal to 72·B·s·l·h²(1 + s/(6h)) + 6·B·s·h·V.
/// MoE layers count the router and the top-k routed plus shared experts a token actually uses
/// (active parameters; capacity padding is not model FLOPs).
/// Encoder: the same layer count (full s^2 is what a bidirectional encoder executes; a causal
/// decoder's flash-attention kernels execute half of it, so a decoder's MFU counts attention FLOPs
/// its kernels skip, as SC21 and Megatron do); the head counts the MLM transform and vocabulary
/// projection on the predicted positions only, 3 x B x s x q x (2h^2 + 2hV), plus the pooler and
/// NSP classifier, 3 x B x (2h^2 + 4h).
double transformer_model_flops_per_iteration(const Scenario& scenario);
/// Model FLOPs plus recomputed forward FLOPs: full recomputation gives SC21 eq. 3,
/// 96·B·s·l·h²(1 + s/(6h) + V/(16·l·h)); selective adds the attention core (4·B·s²·h·l) unless
/// flash attention (which stores nothing quadratic, so nothing is re-run).
double transformer_hardware_flops_per_iteration(const Scenario& scenario);

}  // namespace traincast::models
