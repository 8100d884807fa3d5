#pragma once
// The per-layer kernel programs every model family's generator produces (transformer.h, cnn.h)
// for one rank and one micro-batch, and the one dispatch on the model family that picks the
// generator (and its FLOP accounting) for a scenario.

#include <string>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/compute/compute_model.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Which group a collective segment runs over.
enum class CommGroup {
  tp,  ///< the rank's tensor-parallel group
  ep,  ///< the rank's expert-parallel group (MoE all-to-all): ep GPUs of one TP rank and stage
  cp,  ///< the rank's context-parallel ring: a send_recv to the next CP rank, one per CP rank
};

/// How a tensor-parallel collective relates to the compute around it.
enum class Overlap {
  blocking,   ///< runs on the compute stream (Megatron default: TP comm on the critical path)
  with_next,  ///< runs on the TP stream beside the next compute segment; the one after waits for it
  with_prev,  ///< runs on the TP stream beside the previous compute segment (GEMM + chunked RS,
              ///< or the async grad all-reduce beside the weight-gradient GEMM)
};

/// One step of a per-rank program: either a compute segment (a few fused/consecutive kernels)
/// or a tensor-parallel collective over the rank's TP group.
struct Segment {
  /// A group tp send_recv is one step of a chunked TP overlap (PyTorch async TP): every TP rank
  /// sends `bytes` to the next TP rank at once (the TP ring pairs).
  bool is_collective = false;
  std::string label;                 ///< e.g. "qkv", "attn", "fc2", "tp_ar" (trace names)
  double seconds = 0;                ///< compute segment time on the scenario's GPU [s]
  double flops = 0;                  ///< compute segment FLOPs (all kernels)
  double compute_bound_seconds = 0;  ///< part of `seconds` in compute-bound kernels (scales with 1/clock)
  CollectiveOp op = CollectiveOp::all_reduce;
  double bytes = 0;  ///< collective size per rank, nccl-tests convention [bytes]
  Overlap overlap = Overlap::blocking;
  CommGroup group = CommGroup::tp;
  MoeDispatch moe{};  ///< group ep: flat, or DeepEP's deduplicated dispatch (moe_dispatch.h)
  /// A group tp send_recv moved by copy engines (PyTorch async TP's `copy_` from the peer's
  /// symmetric-memory buffer), not by NCCL: timed as CollectiveEngine::start_peer_copy, no SMs.
  bool copy_engine = false;
};

using Program = std::vector<Segment>;

/// One distinct kind of layer, for one TP rank and one micro-batch.
struct LayerPrograms {
  Program forward;    ///< the layer, forward
  Program recompute;  ///< what backward re-runs first (empty without recomputation)
  Program backward;   ///< the layer, backward
  /// Parameters one GPU holds that are replicated over the data-parallel group (attention, norms,
  /// dense or shared-expert MLP, router; split by TP).
  double params_per_rank = 0;
  /// Routed-expert parameters one GPU holds (num_experts / ep experts, not split by TP); their
  /// gradients are reduced over the expert-data-parallel group (dp / ep ranks).
  double expert_params_per_rank = 0;
};

/// Programs for one TP rank and one micro-batch, of any model family (a ResNet's blocks are its
/// layer kinds, its stem the embedding, its pool + classifier + loss the head: cnn.h).
struct ModelPrograms {
  std::vector<LayerPrograms> layer_kinds;  ///< distinct layer programs (1 for a dense model)
  std::vector<int> layer_kind;             ///< per layer (size num_layers): index into layer_kinds
  Program embedding_forward;               ///< first stage: token embedding (+ TP reduction)
  Program embedding_backward;
  Program head_forward;  ///< last stage: final norm, logits, cross-entropy
  Program head_backward;
  double embedding_params_per_rank = 0;  ///< input embedding (V·h/t)
  double head_params_per_rank = 0;       ///< output layer (V·h/t; a tied copy for GPT) + final norm
  double p2p_bytes = 0;                  ///< activation sent between stages per TP rank [bytes]
  /// Megatron's scatter/gather (SC21 §4.1; p2p_communication.py gather_split_1d_tensor): with TP > 1
  /// and no sequence parallelism each TP rank sends 1/t of the activation (p2p_bytes) and the
  /// receiving stage all-gathers the full tensor over its TP group before computing, after every
  /// pipeline receive (activations forward, gradients backward). nccl-tests all_gather size (the
  /// full activation) [bytes]; 0 when no gather follows a receive (TP 1, or SP: the shard is the layout).
  double p2p_gather_bytes = 0;
  /// LoRA (training.lora_rank > 0): the base weights (layers, embedding, output layer) are frozen;
  /// only the adapters get gradients, optimizer state and data-parallel gradient traffic, and
  /// the base weights are still held (and, with ZeRO-3, gathered). false: full training.
  bool frozen_base = false;
  double adapter_params_per_layer_per_rank = 0;  ///< LoRA adapters of one layer on one TP rank
};

/// The programs of `scenario`'s model family: build_transformer_programs (transformer.h) or
/// build_resnet_programs (cnn.h). Throws what those throw (std::invalid_argument when the GPU
/// lacks the precision's math, or for shapes the generator refuses).
ModelPrograms build_layer_programs(const Scenario& scenario, const GpuSpec& gpu, const ComputeParams& params);

/// Model FLOPs per iteration of `scenario`'s model family: transformer_model_flops_per_iteration
/// (transformer.h) or resnet_model_flops_per_iteration (cnn.h).
double model_flops_per_iteration(const Scenario& scenario);
/// Model FLOPs plus recomputed forward FLOPs: transformer_hardware_flops_per_iteration
/// (transformer.h); a ResNet recomputes nothing (its model FLOPs).
double hardware_flops_per_iteration(const Scenario& scenario);

/// Tokens one sample (sequence) counts for throughput: seq_length; a ResNet image counts as 1,
/// so tokens_per_s equals images/s for the ResNet family.
double tokens_per_sample(const ModelSpec& model);

/// Bytes per element of activations and weights for a precision (fp32/tf32: 4, else 2;
/// fp8 keeps bf16 activations and weights as Transformer Engine does).
double activation_bytes_per_element(Precision precision);

}  // namespace traincast::models
