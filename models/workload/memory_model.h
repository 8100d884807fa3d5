#pragma once
// Per-GPU memory of a Megatron-style job (DESIGN.md §4.4): weights, gradients, optimizer
// state, activations (Korthikanti et al. 2022, generalised to GQA / gated MLP / flash attention),
// workspace. Pure arithmetic: no simulation needed.

#include <vector>

#include "models/hardware/catalog.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Whether torchtitan's op-level selective checkpointing (training.selective_policy torchtitan_op)
/// sets the kept activations and the re-run set: selective recomputation of a dense, non-MLA
/// model with flash attention (torchtitan runs SDPA); otherwise Megatron's selective set holds.
bool torchtitan_op_applies(const Scenario& scenario);
/// Activation bytes one layer keeps per micro-batch on one TP rank for backward.
/// GPT shapes reproduce Korthikanti et al. eq. (1)-(6): sbh(34 + 5as/h) without parallelism,
/// sbh(10 + 24/t + 5as/(ht)) with TP, sbh(34/t + 5as/(ht)) with TP+SP; selective drops the
/// 5as/h term, full keeps only the layer input 2sbh (/t with SP). Of the 34 + 5as/h, the dropout
/// masks are 2 (two 1-byte sbh masks, kept when model.hidden_dropout > 0) and 3as/h (the 1-byte
/// mask and the 2-byte dropped copy of the attention probabilities, kept when
/// model.attention_dropout > 0): a model without dropout (Llama) keeps sbh(32 + 2as/h).
/// selective with training.selective_policy torchtitan_op (dense layers, flash attention):
/// torchtitan's op-level SAC set, the block input plus every other matmul output (wq, wv, w1, w2)
/// and the SDPA output with its fp32 log-sum-exp (and the reduce-scatter outputs with SP).
double activation_bytes_per_layer(const Scenario& scenario);
/// Same with `keys` keys per query in the unfused attention's score tensor (seq_length for full
/// attention, the window of a sliding-window layer); MLA layers keep their Q, K, V (d_qk, d_v per
/// head) and latents instead of the plain Q, K, V.
double activation_bytes_with_keys(const Scenario& scenario, double keys);
/// Same for layer `layer` (0-based): a MoE layer keeps, instead of the dense MLP's, the shared
/// experts' MLP activations (as a dense MLP of their width), the router probabilities (fp32,
/// per token and expert) and per routed slot the expert input, FC1 output, FC2 input and expert
/// output (slots = tokens x top_k x capacity factor, per sequence-parallel shard).
double activation_bytes_per_layer(const Scenario& scenario, int layer);

/// Model-state bytes per GPU (weights, gradients, optimizer state) of `params` parameters held by
/// one model-parallel rank, following the ZeRO paper (Rajbhandari et al. 2020, "ZeRO: Memory
/// Optimizations Toward Training Trillion Parameter Models", SC20, §5.1 and Figure 1), with Ψ =
/// params, K = optimizer_bytes_per_param, Nd = dp:
///   stage 0 (baseline)  weight·Ψ + grad·Ψ + K·Ψ
///   stage 1 (P_os)      weight·Ψ + grad·Ψ + K·Ψ/Nd
///   stage 2 (P_os+g)    weight·Ψ + grad·Ψ/Nd + K·Ψ/Nd
///   stage 3 (P_os+g+p)  (weight + grad + K)·Ψ/Nd
/// The paper's mixed-precision Adam has weight = grad = 2 and K = 12 (fp32 master, momentum,
/// variance). Transient buffers (gathered layers, reduction buckets) are not included here.
struct ModelStateBytes {
  double weights = 0;
  double grads = 0;
  double optimizer = 0;
  double total() const { return weights + grads + optimizer; }
};
ModelStateBytes zero_model_state_bytes(double params, double weight_bytes_per_param, double grad_bytes_per_param,
                                       double optimizer_bytes_per_param, int zero_stage, int dp);

/// Memory of the GPU of pipeline stage `stage` holding `layers` layers (which ones follows from
/// the pipeline layout: stage_layer_indices) and at most `inflight_layer_microbatches` layer
/// activation sets (from the schedule), each the stage's mean per-layer activation. MoE layers
/// hold num_experts / ep routed experts, whose optimizer state ZeRO-1 shards over dp / ep.
/// capacity from the catalog; oom and advice filled in. LoRA (training.lora_rank > 0): the base
/// weights of the stage count as weights (ZeRO-3 shards them), gradients and optimizer state are
/// those of the adapters only (lora_layer_parameters per layer); activations as full training
/// (the stored inputs are also what the adapters' backward reads). CPU offload
/// (offload.optimizer): optimizer_bytes is 0 and host_bytes holds the shard's optimizer state
/// plus a 4-byte fp32 gradient buffer per parameter. Transients of ZeRO-2/3: Megatron's one
/// reduction bucket (ZeRO-2), one unit's (layer's) full gradient (ZeRO-3, reduced per unit), or the
/// stage's whole gradient when parallel.grad_sync_every_microbatch is false; ZeRO-3's gathered
/// parameters at parallel.param_gather_bytes: two layers, or the whole stage when
/// parallel.reshard_after_forward is false. Framework behaviour (issue 17): DeepSpeed's ZeRO-1/2
/// (parallel.zero_implementation) holds 16-bit gradients beside fp32 ones and two buckets of
/// parallel.reduce_bucket_elements; training.cross_entropy unfused holds 12 B per logit instead of
/// 4; under full recomputation or training.selective_policy torchtitan_op the peak adds one layer's
/// re-run set of one micro-batch (its activations without recomputation less what it keeps).
MemoryBreakdown stage_memory(const Scenario& scenario, const GpuSpec& gpu, int stage, int layers,
                             double inflight_layer_microbatches);

/// Fixed allowance for CUDA context, cuBLAS workspace, NCCL buffers and allocator
/// fragmentation [bytes]: 3 GiB. An assumption (PyTorch's CUDA context ~0.5 GiB, cuBLAS/NCCL
/// buffers ~0.5-1 GiB, caching-allocator fragmentation of a few percent of 80 GB).
inline constexpr double kWorkspaceBytes = 3.0 * 1073741824.0;

}  // namespace traincast::models
