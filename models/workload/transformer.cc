// The transformer's accounting: shapes, parameter counts, LoRA adapters, context-parallel
// attention and model/hardware FLOPs (the programs themselves: transformer_programs.cc).
#include "models/workload/transformer.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "models/workload/memory_model.h"
#include "models/workload/transformer_shape.h"

namespace traincast::models {

TransformerShape transformer_shape(const Scenario& sc) {
  const ModelSpec& m = sc.model;
  TransformerShape x{};
  x.b = sc.training.micro_batch_size;
  x.s = m.seq_length;
  x.h = m.hidden_size;
  x.a = m.num_attention_heads;
  x.att = attention_dims(m);
  x.proj = attention_input_projections(m);
  x.qkv_one_matmul = !m.separate_projections &&
                     std::count_if(x.proj.begin(), x.proj.end(), [&](const auto& pr) { return pr.in == x.h; }) == 1;
  x.fc1_one_matmul = !(m.separate_projections && m.gated_mlp);
  x.kv = x.att.kv;
  x.f = m.ffn_hidden_size > 0 ? m.ffn_hidden_size : 4.0 * m.hidden_size;
  x.v = padded_vocab_size(m, sc.parallel.tp);
  x.l = m.num_layers;
  x.t = sc.parallel.tp;
  x.e = activation_bytes_per_element(sc.training.precision);
  x.gate = m.gated_mlp ? 2.0 : 1.0;
  x.sp = sc.parallel.sequence_parallel && sc.parallel.tp > 1;
  x.flash = sc.training.flash_attention;
  x.causal = m.architecture == Architecture::decoder;
  x.attn_mask = m.attention_dropout > 0 ? 1.0 : 0.0;
  x.hidden_mask = m.hidden_dropout > 0 ? 1.0 : 0.0;
  x.experts = m.num_experts;
  x.top_k = m.moe_top_k;
  x.fe = m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : x.f;
  x.shared = m.num_shared_experts;
  x.slots = expert_slots_per_token(m);
  x.ep = sc.parallel.ep;
  x.cp = std::max(1, sc.parallel.cp);
  x.imbalance = std::max(1.0, m.moe_expert_imbalance);
  return x;
}

namespace {

/// Forward FLOPs of one layer per token with attention at full s² (the accounting convention).
/// A MoE layer counts the router and the experts a token uses (top-k routed + shared).
/// `keys`: keys per query (seq_length, or the window of a sliding-window layer).
double layer_forward_flops_per_token(const TransformerShape& x, bool moe, double keys) {
  double projections = 0;  // QKV (plain/GQA: one fused GEMM; MLA: down- and up-projections)
  for (const AttentionProjection& p : x.proj) projections += 2 * p.in * p.out;
  const double attention = projections              //
                           + 4 * keys * x.att.core  // QK^T and attention×V
                           + 2 * x.att.o * x.h;     // output projection
  const double mlp = [&] {
    if (!moe) return 2 * x.h * x.f * x.gate + 2 * x.f * x.h;  // FC1 (gate and up for SwiGLU), FC2
    const double expert = 2 * x.h * x.fe * x.gate + 2 * x.fe * x.h;
    return 2 * x.h * x.experts + (x.top_k + x.shared) * expert;  // router, active experts
  }();
  return attention + mlp;
}

/// Sum over layers of forward FLOPs per token.
double forward_flops_per_token(const Scenario& sc, const TransformerShape& x) {
  double sum = 0;
  const int moe_layers = sc.model.num_experts > 0 ? sc.model.num_layers - sc.model.first_dense_layers : 0;
  // Windowed layers by kind (dense, MoE); the full-attention layers keep the form without windows.
  double windowed[2] = {0, 0};
  for (int layer = 0; layer < sc.model.num_layers; ++layer)
    if (is_windowed_layer(sc.model, layer)) windowed[is_moe_layer(sc.model, layer) ? 1 : 0] += 1;
  sum += (x.l - moe_layers - windowed[0]) * layer_forward_flops_per_token(x, false, x.s);
  sum += (moe_layers - windowed[1]) * layer_forward_flops_per_token(x, true, x.s);
  const double window = std::min<double>(sc.model.sliding_window, x.s);
  for (int moe = 0; moe < 2; ++moe)
    if (windowed[moe] > 0) sum += windowed[moe] * layer_forward_flops_per_token(x, moe == 1, window);
  return sum;
}

}  // namespace

ContextParallelAttention context_parallel_attention(const Scenario& sc) {
  const TransformerShape x = transformer_shape(sc);
  ContextParallelAttention out;
  out.steps = static_cast<int>(x.cp);
  // Query-key pairs per step and sequence: the local queries (2 chunks of c = s / (2 cp)) against
  // one K/V block (2 chunks). Causal with the load-balanced split: the diagonal step is two causal
  // c x c triangles plus one full c x c block = 2c^2 pairs; a step with an earlier rank's block
  // computes both query chunks against its first chunk (2c x c), one with a later rank's block the
  // second query chunk against both (c x 2c): 2c^2 as well. Bidirectional: (2c)^2 = 4c^2.
  const double c = x.s / (2 * x.cp);
  const double pairs = (x.causal ? 2.0 : 4.0) * c * c;
  // QK^T and attention x V: 2 x 2 x d FLOPs per pair and head = 4h per pair over all heads.
  out.forward_flops_per_step = 4 * x.b * pairs * x.att.core / x.t;
  // K and V of the local 2c = s / cp tokens: 2 x (s / cp) x kv (= groups x head dim) elements
  // per sequence, split over TP like the heads.
  out.kv_bytes_per_step = x.b * (x.s / x.cp) * x.att.k_v / x.t * x.e;
  return out;
}

bool is_moe_layer(const ModelSpec& m, int layer) { return m.num_experts > 0 && layer >= m.first_dense_layers; }

bool is_windowed_layer(const ModelSpec& m, int layer) {
  if (m.sliding_window <= 0) return false;
  return m.sliding_window_pattern < 2 || layer % m.sliding_window_pattern != m.sliding_window_pattern - 1;
}

double attention_keys(const ModelSpec& m, int layer) {
  const double s = m.seq_length;
  return is_windowed_layer(m, layer) ? std::min<double>(m.sliding_window, s) : s;
}

AttentionDims attention_dims(const ModelSpec& m) {
  AttentionDims d;
  const double h = m.hidden_size, a = m.num_attention_heads;
  if (m.multi_latent_attention) {
    d.mla = true;
    d.q_lora = m.q_lora_rank;
    d.kv_lora = m.kv_lora_rank;
    d.rope = m.qk_rope_head_dim;
    d.nope = m.qk_nope_head_dim;
    d.d_qk = d.nope + d.rope;
    d.d_v = m.v_head_dim;
    d.q = a * d.d_qk;
    d.o = a * d.d_v;
    d.k_v = a * (d.d_qk + d.d_v);
    d.core = a * (d.d_qk + d.d_v) / 2;
    return d;
  }
  // Default head dim h / a: every width below is then exactly h or groups x (h / a), as before.
  const double head = m.head_dim > 0 ? m.head_dim : h / a;
  const double groups = m.num_query_groups > 0 ? m.num_query_groups : a;
  d.d_qk = d.d_v = head;
  d.q = d.o = d.core = m.head_dim > 0 ? a * head : h;
  d.kv = groups * head;
  d.k_v = 2 * d.kv;
  return d;
}

std::vector<AttentionProjection> attention_input_projections(const ModelSpec& m) {
  const AttentionDims d = attention_dims(m);
  const double h = m.hidden_size, a = m.num_attention_heads;
  if (!d.mla) return {{h, d.q + 2 * d.kv, true}};
  std::vector<AttentionProjection> out;
  if (d.q_lora > 0) {
    out.push_back({h, d.q_lora, false});   // W^DQ (duplicated over TP)
    out.push_back({d.q_lora, d.q, true});  // W^UQ and W^QR
  } else {
    out.push_back({h, d.q, true});  // W^Q (DeepSeek-V2-Lite: q_lora_rank null)
  }
  out.push_back({h, d.kv_lora + d.rope, false});           // W^DKV and W^KR (duplicated)
  out.push_back({d.kv_lora, a * (d.nope + d.d_v), true});  // W^UK and W^UV
  return out;
}

double kv_cache_bytes(const ModelSpec& m, double tokens, double bytes_per_element) {
  const AttentionDims d = attention_dims(m);
  const double per_token_layer = d.mla ? d.kv_lora + d.rope : 2 * d.kv;
  double elements = 0;
  for (int layer = 0; layer < m.num_layers; ++layer)
    elements += per_token_layer * (is_windowed_layer(m, layer) ? std::min<double>(tokens, m.sliding_window) : tokens);
  return elements * bytes_per_element;
}

bool parse_lora_targets(std::string_view text, bool gated_mlp, LoraTargets& out, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  out = LoraTargets{};
  if (text == "all-linear") {
    out = LoraTargets{true, true, true, true, gated_mlp, true, true};
    return true;
  }
  std::size_t begin = 0;
  int count = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    std::string_view name = text.substr(begin, comma - begin);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    bool* flag = name == "q"      ? &out.q
                 : name == "k"    ? &out.k
                 : name == "v"    ? &out.v
                 : name == "o"    ? &out.o
                 : name == "gate" ? &out.gate
                 : name == "up"   ? &out.up
                 : name == "down" ? &out.down
                                  : nullptr;
    if (name.empty()) return fail(count == 0 && comma == text.size() ? "empty list" : "empty module name");
    if (flag == nullptr) return fail("unknown module \"" + std::string(name) + "\"");
    if (*flag) return fail("module \"" + std::string(name) + "\" named twice");
    if (flag == &out.gate && !gated_mlp) return fail("module \"gate\" needs a gated MLP (model.gated_mlp: true)");
    *flag = true;
    ++count;
    begin = comma + 1;
  }
  return true;
}

namespace {
/// Sum of d_in + d_out over the adapted matrices of one layer.
double lora_fan_sum(const TransformerShape& x, const LoraTargets& a) {
  return (a.q ? x.h + x.att.q : 0) + (a.k ? x.h + x.kv : 0) + (a.v ? x.h + x.kv : 0) + (a.o ? x.att.o + x.h : 0) +
         (a.gate ? x.h + x.f : 0) + (a.up ? x.h + x.f : 0) + (a.down ? x.f + x.h : 0);
}
}  // namespace

LoraTargets lora_targets_of(const Scenario& sc) {
  LoraTargets a;
  std::string why;
  if (!parse_lora_targets(sc.training.lora_target_modules, sc.model.gated_mlp, a, &why))
    throw std::invalid_argument("workload.training.lora_target_modules: " + why);
  return a;
}

double lora_layer_parameters(const Scenario& sc) {
  if (sc.training.lora_rank <= 0) return 0.0;
  return sc.training.lora_rank * lora_fan_sum(transformer_shape(sc), lora_targets_of(sc));
}

double expert_slots_per_token(const ModelSpec& m) {
  return m.moe_top_k * (m.moe_capacity_factor > 0 ? m.moe_capacity_factor : 1.0);
}

LayerParameters layer_parameters(const ModelSpec& m, int layer) {
  const double h = m.hidden_size;
  const AttentionDims d = attention_dims(m);
  const double f = m.ffn_hidden_size > 0 ? m.ffn_hidden_size : 4 * h;
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  LayerParameters out;
  double attention = 0;
  if (!d.mla) {
    // Weights + biases (GPT has biases; counting them for Llama too changes < 0.01%).
    attention = h * (d.q + 2 * d.kv) + (d.q + 2 * d.kv) + d.o * h + h + 4 * h /*two norms*/;
  } else {
    // MLA without biases (DeepSeek-V2/V3 config.json "attention_bias": false): the projections,
    // the latents' RMSNorms (q_lora and kv_lora weights), the output projection, two norms (4h as
    // for the other attention kinds).
    for (const AttentionProjection& p : attention_input_projections(m)) {
      attention += p.in * p.out;
      if (!p.tp_split) out.tp_duplicated += p.in * p.out;
    }
    attention += d.q_lora + d.kv_lora + d.o * h + 4 * h;
    out.tp_duplicated += d.q_lora + d.kv_lora;
  }
  if (!is_moe_layer(m, layer)) {
    out.replicated = attention + h * f * gate + f * gate + f * h + h;
    return out;
  }
  // Experts without biases (Mixtral, DeepSeek); router h x E (Mixtral "gate", DeepSeek "gate").
  const double fe = m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : f;
  const double expert = h * fe * gate + fe * h;
  out.replicated = attention + m.num_shared_experts * expert + h * m.num_experts;
  out.experts = m.num_experts * expert;
  return out;
}

namespace {
double parameters(const ModelSpec& m, bool active_only) {
  double layers = 0;
  for (int l = 0; l < m.num_layers; ++l) {
    const LayerParameters p = layer_parameters(m, l);
    layers += p.replicated + (active_only && m.num_experts > 0 ? p.experts * m.moe_top_k / m.num_experts : p.experts);
  }
  const double h = m.hidden_size;
  const double embedding = static_cast<double>(m.vocab_size) * h;
  if (m.architecture == Architecture::encoder)  // tied MLM projection; no final norm (post-LN)
    return layers + embedding + encoder_embedding_extra_parameters(m) + encoder_head_parameters(m);
  const double output = m.untied_embeddings ? embedding : 0.0;
  return layers + embedding + output + 2 * h /*final norm*/;
}
}  // namespace

double head_positions_per_sequence(const ModelSpec& m) {
  return m.architecture == Architecture::encoder ? m.mlm_prediction_fraction * m.seq_length : m.seq_length;
}

double encoder_embedding_extra_parameters(const ModelSpec& m) {
  if (m.architecture != Architecture::encoder) return 0.0;
  const double h = m.hidden_size;
  const double positions = m.max_position_embeddings > 0 ? m.max_position_embeddings : m.seq_length;
  return positions * h + 2 * h /*token types*/ + 2 * h /*LayerNorm*/;
}

double encoder_head_parameters(const ModelSpec& m) {
  if (m.architecture != Architecture::encoder) return 0.0;
  const double h = m.hidden_size;
  return (h * h + h) + 2 * h + m.vocab_size /*MLM transform, LN, bias*/ + (h * h + h) /*pooler*/ + (2 * h + 2);
}

double total_parameters(const ModelSpec& m) { return parameters(m, false); }

double padded_vocab_size(const ModelSpec& m, int tp) {
  const std::int64_t multiple =
      static_cast<std::int64_t>(std::max(1, m.make_vocab_size_divisible_by)) * std::max(1, tp);
  const std::int64_t padded = (static_cast<std::int64_t>(m.vocab_size) + multiple - 1) / multiple * multiple;
  return static_cast<double>(padded);
}
double active_parameters(const ModelSpec& m) { return parameters(m, true); }

double transformer_model_flops_per_iteration(const Scenario& sc) {
  const TransformerShape x = transformer_shape(sc);
  const double sequences = static_cast<double>(sc.training.global_batch_size);
  const double tokens = sequences * x.s;
  if (x.causal && sc.training.lora_rank > 0) {
    // LoRA: the frozen linear layers and the logits run forward and input-gradient GEMMs only
    // (2x forward), the attention core its full backward (3x), the adapters forward, input and
    // weight gradients (3x their 2 * r * (d_in + d_out) per token). The first layer's input
    // gradient (not needed with a frozen embedding) is counted: 1/num_layers of the dgrads.
    const double attention_core = 4 * x.s * x.h;
    const double linear = layer_forward_flops_per_token(x, false, x.s) - attention_core;
    const double adapters = 2 * lora_layer_parameters(sc);
    return tokens * (x.l * (2 * linear + 3 * attention_core + 3 * adapters) + 2 * 2 * x.h * x.v);
  }
  if (x.causal) return 3.0 * tokens * (forward_flops_per_token(sc, x) + 2 * x.h * x.v);
  const double predicted = sequences * head_positions_per_sequence(sc.model);
  return 3.0 * (tokens * forward_flops_per_token(sc, x) + predicted * (2 * x.h * x.h + 2 * x.h * x.v) +
                sequences * (2 * x.h * x.h + 4 * x.h));
}

double transformer_hardware_flops_per_iteration(const Scenario& sc) {
  const TransformerShape x = transformer_shape(sc);
  const double tokens = static_cast<double>(sc.training.global_batch_size) * x.s;
  double recomputed = 0;
  if (sc.training.recompute == Recompute::full)
    recomputed = tokens * (forward_flops_per_token(sc, x) + x.l * 2 * lora_layer_parameters(sc));
  // Selective recomputation re-runs the unfused attention core; with flash attention nothing is
  // re-run outside the attention kernel itself (build_transformer_programs agrees).
  if (sc.training.recompute == Recompute::selective && !x.flash) recomputed = tokens * x.l * 4 * x.s * x.h;
  // torchtitan's op-level selective checkpointing re-runs wk, wo and (gated MLP) w3 per layer
  // (build_transformer_programs' torchtitan_op_recompute, with the source).
  if (torchtitan_op_applies(sc)) recomputed = tokens * x.l * 2 * x.h * (x.kv + x.att.o + (x.gate > 1 ? x.f : 0.0));
  return transformer_model_flops_per_iteration(sc) + recomputed;
}

}  // namespace traincast::models
