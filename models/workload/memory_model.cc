#include "models/workload/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "models/hardware/catalog.h"

#include "models/workload/pipeline_schedule.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

constexpr double kGiB = 1073741824.0;

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

/// The layout part of the out-of-memory advice (issue 21). `verdict` (first in the advice, empty
/// when the cluster is large enough): the fewest GPUs of this memory that hold the whole model state
/// (weights, gradients, optimizer) fully sharded, before activations, when that is more than the
/// cluster has, with the node count to plan for. `layouts`: a larger TP only while it stays inside
/// the node and divides the heads and KV groups (Megatron's rules), a larger PP while it leaves a
/// layer per stage, and the GPU count when the cluster is large enough. bytes_per_param: weights +
/// gradients + optimizer bytes of one trainable parameter; base_bytes_per_param: of a frozen one (LoRA).
struct LayoutAdvice {
  std::string verdict, layouts;
};
LayoutAdvice layout_advice(const Scenario& sc, const GpuSpec& gpu, double bytes_per_param,
                           double base_bytes_per_param) {
  const ModelSpec& m = sc.model;
  const ParallelSpec& par = sc.parallel;
  const int per_node = cluster_node_template(sc.cluster).gpus_per_node;
  const int cluster_gpus = per_node * sc.cluster.num_nodes;
  const int groups = m.num_query_groups > 0 ? m.num_query_groups : m.num_attention_heads;
  LayoutAdvice a;
  const int tp2 = 2 * par.tp;
  if (tp2 <= per_node && m.num_attention_heads % tp2 == 0 && groups % tp2 == 0) {
    a.layouts += " TP " + std::to_string(tp2) + " (inside the node's " + std::to_string(per_node) +
                 " GPUs) halves each GPU's weights, gradients and optimizer state.";
  } else if (par.tp >= per_node) {
    a.layouts += " TP " + std::to_string(par.tp) + " already spans the node's " + std::to_string(per_node) +
                 " GPUs: more would run TP over the network.";
  }
  if (2 * par.pp <= m.num_layers) {
    a.layouts += " PP " + std::to_string(2 * par.pp) + " halves each stage's layers" +
                 (par.dp % 2 == 0 ? " (with DP " + std::to_string(par.dp / 2) + ", on the same GPUs)."
                                  : " (on twice the GPUs: " + std::to_string(2 * par.tp * par.pp * par.dp) + ").");
  }
  const double trainable = sc.training.lora_rank > 0 ? m.num_layers * lora_layer_parameters(sc) : total_parameters(m);
  const double frozen = sc.training.lora_rank > 0 ? total_parameters(m) : 0.0;
  const double state_bytes = trainable * bytes_per_param + frozen * base_bytes_per_param;
  const double usable = gpu.hbm_capacity_bytes - kWorkspaceBytes;
  if (!(usable > 0)) return a;
  const double min_gpus = std::ceil(state_bytes / usable);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", min_gpus);
  const std::string state = "the model's weights, gradients and optimizer state are " + gib(state_bytes) +
                            ": at least " + buf + " " + gpu.name +
                            " hold them, fully sharded (TP x PP, ZeRO-3) and before activations; this cluster has " +
                            std::to_string(cluster_gpus);
  if (min_gpus > cluster_gpus) {
    const double nodes = std::ceil(min_gpus / per_node);
    std::snprintf(buf, sizeof buf, "%.0f", nodes);
    a.verdict = " No layout of this cluster fits: " + state + ". Plan for at least " + buf +
                " nodes (traincast plan --set cluster.num_nodes=" + buf + ").";
  } else {
    a.layouts += " The model's" + state.substr(std::string("the model's").size()) + ".";
  }
  return a;
}

double torchtitan_op_kept_bytes(const Scenario& sc, double s) {
  // torchtitan's op-level selective activation checkpointing (pytorch/torchtitan
  // torchtitan/models/llama3/infra/parallelize.py, _apply_ac_to_transformer_block with
  // selective_ac_option "op", the toml default): inside each block's checkpoint the policy saves
  // the outputs of the ops in _save_list (aten.mm, the SDPA flash/efficient kernels with their
  // log-sum-exp, c10d reduce_scatter_tensor, aten.max) except every second mm
  // (mm_count % 2 == 0: recomputed), and recomputes everything else; the block's input is kept by
  // the checkpoint itself. Llama's mm order per block: wq, wk, wv, wo, w1, w3, w2 (w3 absent
  // without a gated MLP): the 1st, 3rd, 5th and 7th are kept.
  const ModelSpec& m = sc.model;
  const double b = sc.training.micro_batch_size, h = m.hidden_size, a = m.num_attention_heads;
  const double t = sc.parallel.tp;
  const AttentionDims d = attention_dims(m);
  const double f = m.ffn_hidden_size > 0 ? m.ffn_hidden_size : 4 * h;
  const double e = activation_bytes_per_element(sc.training.precision);
  const bool sp = sc.parallel.sequence_parallel && t > 1;
  const double sb = s * b;
  // mm outputs per token on one TP rank, in forward order: column-parallel ones split by TP;
  // the row-parallel wo and w2 produce the full-width partial sum before its reduction.
  std::vector<double> mm = {d.q / t, d.kv / t, d.kv / t, h, f / t};
  if (m.gated_mlp) mm.push_back(f / t);
  mm.push_back(h);
  double kept = e * sb * h / (sp ? t : 1.0);  // the block input (sequence-sharded with SP)
  for (std::size_t i = 0; i < mm.size(); i += 2) kept += e * sb * mm[i];
  kept += e * sb * d.o / t + 4 * a * sb / t;  // SDPA output and fp32 log-sum-exp per row
  if (sp) kept += 2 * e * sb * h / t;         // the two reduce-scatter outputs (wo's, w2's)
  return kept;
}

}  // namespace

bool torchtitan_op_applies(const Scenario& sc) {
  return sc.training.recompute == Recompute::selective &&
         sc.training.selective_policy == SelectivePolicy::torchtitan_op && sc.training.flash_attention &&
         sc.model.num_experts == 0 && !attention_dims(sc.model).mla;
}

double activation_bytes_per_layer(const Scenario& sc, int layer) {
  const ModelSpec& m = sc.model;
  if (sc.training.recompute == Recompute::full) return activation_bytes_per_layer(sc);  // the layer input only
  const double attention_layer = activation_bytes_with_keys(sc, attention_keys(m, layer));
  if (!is_moe_layer(m, layer)) return attention_layer;
  // The dense layer minus its MLP (FC1 output and FC2 input), plus the MoE block.
  const double s = m.seq_length, b = sc.training.micro_batch_size, h = m.hidden_size;
  const double t = sc.parallel.tp;
  const double f = m.ffn_hidden_size > 0 ? m.ffn_hidden_size : 4 * h;
  const double fe = m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : f;
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  const double e = activation_bytes_per_element(sc.training.precision);
  const bool sp = sc.parallel.sequence_parallel && t > 1;
  const double tokens_local = s * b / (sp ? t : 1.0);
  const double dense_mlp = e * s * b * f * gate / t + e * s * b * f / t;
  const double fs = m.num_shared_experts * fe;
  const double shared = e * s * b * fs * gate / t + e * s * b * fs / t;
  double slots = tokens_local * expert_slots_per_token(m);
  // Expert imbalance: the rank with the busiest expert keeps its larger share (transformer_programs.cc).
  const double experts_local = std::max(1.0, static_cast<double>(m.num_experts) / std::max(1, sc.parallel.ep));
  if (m.moe_expert_imbalance > 1) slots *= (experts_local - 1 + m.moe_expert_imbalance) / experts_local;
  const double routed = 4 * tokens_local * m.num_experts + e * slots * (2 * h + fe * gate + fe);
  return attention_layer - dense_mlp + shared + routed;
}

ModelStateBytes zero_model_state_bytes(double params, double weight_bytes_per_param, double grad_bytes_per_param,
                                       double optimizer_bytes_per_param, int zero_stage, int dp) {
  const double nd = dp > 1 ? dp : 1;
  ModelStateBytes b;
  b.weights = params * weight_bytes_per_param / (zero_stage >= 3 ? nd : 1);
  b.grads = params * grad_bytes_per_param / (zero_stage >= 2 ? nd : 1);
  b.optimizer = params * optimizer_bytes_per_param / (zero_stage >= 1 ? nd : 1);
  return b;
}

double activation_bytes_per_layer(const Scenario& sc) { return activation_bytes_with_keys(sc, sc.model.seq_length); }

double activation_bytes_with_keys(const Scenario& sc, double keys) {
  const ModelSpec& m = sc.model;
  // Context parallelism: each CP rank keeps its s / cp tokens (the attention terms below are
  // linear in s with flash attention, which CP requires).
  const double s = static_cast<double>(m.seq_length) / std::max(1, sc.parallel.cp), b = sc.training.micro_batch_size,
               h = m.hidden_size, a = m.num_attention_heads;
  const double t = sc.parallel.tp;
  const AttentionDims d = attention_dims(m);
  const double kv = d.kv;
  const double f = m.ffn_hidden_size > 0 ? m.ffn_hidden_size : 4 * h;
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  const double e = activation_bytes_per_element(sc.training.precision);
  const bool sp = sc.parallel.sequence_parallel && t > 1;
  const double rep = sp ? t : 1.0;  // divisor of the LayerNorm/dropout region (replicated without SP)
  const double sbh = s * b * h;

  if (sc.training.recompute == Recompute::full) return e * sbh / rep;  // the layer input only

  // Replicated region: two LayerNorm inputs, QKV and FC1 inputs, and with hidden dropout its two
  // 1-byte masks (after the attention projection and after FC2; Korthikanti et al. §4.1).
  const double hidden_masks = m.hidden_dropout > 0 ? 2.0 : 0.0;
  const double replicated = (4 * e + hidden_masks) * sbh / rep;
  // Tensor-parallel region: Q, K, V, projection input, activation input, FC2 input.
  double q_k_v = e * s * b * (d.q + 2 * kv) / t;
  const double proj_in = e * (s * b * d.o) / t;
  if (d.mla) {
    // MLA (DeepSeek-V3 §2.1.1): per head Q and K of d_qk and V of d_v (after the up-projections,
    // TP-split), and the latents every TP rank computes whole: c_Q before and after its RMSNorm
    // (2 q_lora), the down-projected [c_KV, k_R] (kv_lora + rope) and the normalised c_KV (kv_lora).
    q_k_v = e * s * b * d.k_v / t + e * s * b * d.q / t + e * s * b * (2 * d.q_lora + 2 * d.kv_lora + d.rope);
  }
  const double mlp = e * s * b * f * gate / t + e * s * b * f / t;
  if (torchtitan_op_applies(sc)) return torchtitan_op_kept_bytes(sc, s);
  double attention_core = 0;
  if (sc.training.flash_attention) {
    attention_core = 4 * a * s * b / t;  // fp32 log-sum-exp per row; O is the projection input
  } else if (sc.training.recompute != Recompute::selective) {
    // Softmax output; with attention dropout also its 1-byte mask and the dropped copy (the input
    // of attention x V). Without dropout attention x V reads the softmax output itself.
    const double per_score = m.attention_dropout > 0 ? 2 * e + 1 : e;
    // Sliding-window layers keep a banded score tensor: `keys` (the window) per query.
    attention_core = per_score * a * s * keys * b / t;
  }
  return replicated + q_k_v + proj_in + mlp + attention_core;
}

namespace {

/// Gradient bytes of DeepSpeed's ZeRO-1/2 for `trainable` parameters of the stage, sharded over
/// dp_cp. DeepSpeed keeps the 16-bit gradients in param.grad (ZeRO-2: reduced and freed per
/// bucket, the shard kept) beside fp32 ones, whatever fp32_grad_accumulation says. bf16 at ZeRO-1:
/// BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py; BLOOM's "bf16 must use z0, it implements
/// its own zero stage 1 equivalent") accumulates into an fp32 gradient buffer of the whole stage
/// (4 B per parameter). fp16, or ZeRO-2: the ZeRO optimizer (runtime/zero/stage_1_and_2.py) makes
/// the fp32 gradient of its shard only (4 B per shard parameter, single_partition_of_fp32_groups'
/// grad). Plus its contiguous reduce bucket (ipg buffer) and its all-gather bucket of 16-bit
/// elements (reduce_bucket_size, allgather_bucket_size), each capped by the stage's size.
double deepspeed_gradient_bytes(const Scenario& sc, double trainable, int dp_cp) {
  const ParallelSpec& par = sc.parallel;
  const double sharded_16bit = par.zero_stage >= 2 ? dp_cp : 1.0;
  const bool bf16_optimizer = sc.training.precision == Precision::bf16 && par.zero_stage == 1;
  const double fp32_grads = bf16_optimizer ? trainable * 4 : trainable * 4 / dp_cp;
  const double buckets = 2 * std::min(trainable, par.reduce_bucket_elements) * 2;
  return trainable * 2 / sharded_16bit + fp32_grads + buckets;
}

/// Re-run working set: with full recomputation, or torchtitan's op-level selective checkpointing,
/// a layer's backward first re-runs its forward (torch.utils.checkpoint; Megatron's
/// CheckpointFunction), so while it runs one layer's recomputed activations of one micro-batch
/// exist on top of the checkpoints: the layer's set without recomputation less what it keeps, the
/// largest over the stage's layers (`indices`; empty: identical layers).
double rerun_working_set_bytes(const Scenario& sc, const std::vector<int>& indices) {
  Scenario none = sc;
  none.training.recompute = Recompute::none;
  double rerun = 0;
  if (indices.empty()) rerun = activation_bytes_per_layer(none) - activation_bytes_per_layer(sc);
  for (int layer : indices)
    rerun = std::max(rerun, activation_bytes_per_layer(none, layer) - activation_bytes_per_layer(sc, layer));
  return std::max(0.0, rerun);
}

}  // namespace

MemoryBreakdown stage_memory(const Scenario& sc, const GpuSpec& gpu, int stage, int layers,
                             double inflight_layer_microbatches) {
  MemoryBreakdown mb;
  mb.worst_stage = stage;
  const ModelSpec& m = sc.model;
  const ParallelSpec& par = sc.parallel;
  const double t = par.tp;
  const double h = m.hidden_size, v = padded_vocab_size(m, par.tp);
  // Replicated (DP-synchronised, TP-split) and routed-expert (EP-split) parameters of the stage.
  std::vector<int> indices = stage_layer_indices(sc, stage);
  if (static_cast<int>(indices.size()) != layers) {  // a caller's own split: contiguous from 0
    indices.clear();
    for (int i = 0; i < layers; ++i) indices.push_back(i);
  }
  double params = 0, expert_params = 0, act_per_layer = 0;
  if (m.num_experts == 0 && m.sliding_window == 0) {  // identical layers (kept in this form: results unchanged)
    params = layers * layer_parameters(m, 0).replicated_per_rank(t);
    act_per_layer = activation_bytes_per_layer(sc);
    indices.clear();
  }
  for (int layer : indices) {
    const LayerParameters lp = layer_parameters(m, layer);
    params += lp.replicated_per_rank(t);
    expert_params += lp.experts / par.ep;
    act_per_layer += activation_bytes_per_layer(sc, layer);
  }
  if (!indices.empty()) act_per_layer /= static_cast<double>(indices.size());
  const bool first = stage == 0, last = stage == par.pp - 1;
  const bool encoder = m.architecture == Architecture::encoder;
  if (first) params += v * h / t + encoder_embedding_extra_parameters(m);
  // Output layer (for GPT and BERT a tied copy when pp > 1, the embedding itself when pp = 1) and
  // final norm, or BERT's MLM/pooler/NSP heads.
  const bool head_is_embedding = first && !m.untied_embeddings;
  if (last) params += (head_is_embedding ? 0.0 : v * h / t) + (encoder ? encoder_head_parameters(m) : 2 * h);
  const bool fp32 = sc.training.precision == Precision::fp32 || sc.training.precision == Precision::tf32;
  const double weight_bytes = fp32 ? 4 : 2;
  const double grad_bytes = (fp32 || sc.training.fp32_grad_accumulation) ? 4 : 2;
  // Adam: fp32 master weights + m + v (12 B) in mixed precision; m + v (8 B) in fp32 training.
  const double optim_bytes = fp32 ? 8 : 12;
  // LoRA: gradients and optimizer state for the adapters only; the frozen base keeps its weights
  // (sharded by ZeRO-3 like any weight) and has neither (Hu et al. 2021 §4.2).
  const bool lora = sc.training.lora_rank > 0;
  const double trainable = lora ? layers * lora_layer_parameters(sc) / t : params;
  // Gradients are reduced, and ZeRO shards, over the dp x cp ranks that hold the same parameters
  // (Megatron-Core's data-parallel group with context parallelism).
  const int dp_cp = par.dp * std::max(1, par.cp);
  const ModelStateBytes states =
      zero_model_state_bytes(trainable, weight_bytes, grad_bytes, optim_bytes, par.zero_stage, dp_cp);
  mb.weights_bytes = states.weights;
  if (lora) mb.weights_bytes += zero_model_state_bytes(params, weight_bytes, 0, 0, par.zero_stage, dp_cp).weights;
  mb.grads_bytes = states.grads;
  mb.optimizer_bytes = states.optimizer;
  if (expert_params > 0) {
    // Routed experts are replicated over dp / ep ranks only; ZeRO shards them over that group.
    const ModelStateBytes ex =
        zero_model_state_bytes(expert_params, weight_bytes, grad_bytes, optim_bytes, par.zero_stage, par.dp / par.ep);
    mb.weights_bytes += ex.weights;
    mb.grads_bytes += ex.grads;
    mb.optimizer_bytes += ex.optimizer;
  }
  if (sc.offload.optimizer) {
    // ZeRO-Offload (Ren et al. 2021 §4): the optimizer state (fp32 master, m, v: K bytes) and an
    // fp32 gradient buffer (4 B) per parameter of the GPU's shard live in host DRAM, not in HBM.
    const double shard_params = mb.optimizer_bytes / optim_bytes;
    mb.host_bytes = mb.optimizer_bytes + 4 * shard_params;
    mb.optimizer_bytes = 0;
  }
  // With the optimizer offloaded, ZeRO-Offload's layout (fp32 gradients on the host, above) holds
  // instead of BF16_Optimizer's whole-stage fp32 buffer: not counted twice.
  const bool deepspeed = par.zero_implementation == ZeroImplementation::deepspeed && !fp32 && !lora &&
                         (par.zero_stage == 1 || par.zero_stage == 2) && !sc.offload.optimizer;
  if (dp_cp > 1 && par.zero_stage >= 2 && !par.grad_sync_every_microbatch) {
    // Reduced once per iteration (no_sync / requires_gradient_sync false): the whole unsharded
    // gradient of the stage accumulates until the last backward, beside the shard.
    mb.grads_bytes += trainable * grad_bytes;
  } else if (dp_cp > 1 && par.zero_stage == 3) {
    // ZeRO-3 / FSDP reduce-scatter per unit (one layer): its full gradient before the reduction.
    const double unit = lora ? trainable / std::max(1, layers) : layer_parameters(m, 0).replicated_per_rank(t);
    mb.grads_bytes += std::min(trainable, unit) * grad_bytes;
  } else if (deepspeed) {
    // (The dense gradients replace the ZeRO formula's; routed experts keep theirs.)
    mb.grads_bytes += deepspeed_gradient_bytes(sc, trainable, dp_cp) - states.grads;
  } else if (dp_cp > 1 && par.zero_stage >= 2) {
    // The full gradient of one reduction bucket exists before it is reduce-scattered (Megatron-
    // Core bucket size: max(dp_bucket_bytes, 1M params per DP rank)), capped by the stage's size.
    const double bucket = std::min(trainable * grad_bytes, std::max(par.dp_bucket_bytes, 1e6 * dp_cp * grad_bytes));
    mb.grads_bytes += bucket;
  }
  if (dp_cp > 1 && par.zero_stage == 3) {
    // Gathered (unsharded) parameters, at the gather width (param_gather_bytes, 0: the weights'):
    // FULL_SHARD / ZeRO-3 hold the item being computed and the one prefetched (two layers);
    // without resharding after forward (SHARD_GRAD_OP, Llama 3's FSDP, FSDP2 under a pipeline
    // schedule) the stage's parameters stay gathered from forward to backward: all of them.
    const double gather_bytes = par.param_gather_bytes > 0 ? par.param_gather_bytes : weight_bytes;
    mb.weights_bytes += par.reshard_after_forward
                            ? std::min(layers, 2) * layer_parameters(m, 0).replicated_per_rank(t) * gather_bytes
                            : params * gather_bytes;
  }

  const double b = sc.training.micro_batch_size;
  double act = inflight_layer_microbatches * act_per_layer;
  // One layer's re-run set under full recomputation or torchtitan's op-level SAC.
  const bool reruns = sc.training.recompute == Recompute::full || torchtitan_op_applies(sc);
  if (reruns && inflight_layer_microbatches > 0) act += rerun_working_set_bytes(sc, indices);
  // Last stage: fp32 logits for the vocab-parallel cross-entropy of one micro-batch (transient peak);
  // unfused (torch.nn.functional.cross_entropy on pred.float(), torchtitan's cross_entropy_loss):
  // PyTorch's LogSoftmaxBackward0 reads its saved fp32 output and the dense fp32 gradient
  // NllLossBackward0 made, and writes the fp32 gradient of its input: three fp32 copies (12 B per
  // logit; the forward's bf16 logits, fp32 copy and log-softmax output are 10). Encoder: the MLM
  // head's predicted positions only.
  const double logit_bytes = sc.training.cross_entropy == CrossEntropy::unfused ? 12 : 4;
  if (last) act += logit_bytes * b * head_positions_per_sequence(m) / std::max(1, par.cp) * v / t;
  // First stage: embedding output dropout mask per in-flight micro-batch is small; not counted.
  mb.activations_bytes = act;
  mb.workspace_bytes = kWorkspaceBytes;
  mb.peak_bytes_per_gpu =
      mb.weights_bytes + mb.grads_bytes + mb.optimizer_bytes + mb.activations_bytes + mb.workspace_bytes;
  mb.capacity_bytes = gpu.hbm_capacity_bytes;
  mb.oom = mb.peak_bytes_per_gpu > mb.capacity_bytes;
  if (mb.oom) {
    const LayoutAdvice layout =
        layout_advice(sc, gpu, weight_bytes + grad_bytes + (sc.offload.optimizer ? 0.0 : optim_bytes), weight_bytes);
    std::string advice = "needs " + gib(mb.peak_bytes_per_gpu) + " of " + gib(mb.capacity_bytes) + " on stage " +
                         std::to_string(stage) + "." + layout.verdict;
    if (par.zero_stage == 0 && dp_cp > 1)
      advice += " ZeRO-1 would save " + gib(mb.optimizer_bytes * (1.0 - 1.0 / dp_cp)) + ".";
    if (par.zero_stage >= 1 && par.zero_stage < 3 && dp_cp > 1)
      advice += " ZeRO-" + std::to_string(par.zero_stage + 1) + " shards " +
                (par.zero_stage == 1 ? "gradients" : "weights") + " over DP too.";
    if (sc.training.recompute != Recompute::full) {
      Scenario full = sc;
      full.training.recompute = Recompute::full;
      advice += " Full recomputation would save " +
                gib(inflight_layer_microbatches * (act_per_layer - activation_bytes_per_layer(full))) + ".";
    }
    if (!sc.parallel.sequence_parallel && par.tp > 1) advice += " Sequence parallelism divides activations by TP.";
    if (m.family == ModelFamily::transformer && m.num_experts == 0 && sc.training.flash_attention)
      advice += " Context parallelism (parallel.cp) divides activations by CP.";
    if (sc.training.micro_batch_size > 1) advice += " A smaller micro-batch reduces activations proportionally.";
    advice += layout.layouts;
    mb.advice = advice;
  }
  return mb;
}

}  // namespace traincast::models
