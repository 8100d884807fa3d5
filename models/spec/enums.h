#pragma once
// The enums that several specs and models share: precision, recomputation, architecture, pipeline
// schedule, fabric kind, NCCL algorithm and protocol, NIC placement, model family.

namespace traincast::models {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };

/// The scenario spelling of a precision ("fp32", "tf32", "fp16", "bf16", "fp8").
constexpr const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
    case Precision::fp16:
      return "fp16";
    case Precision::bf16:
      return "bf16";
    case Precision::fp8:
      return "fp8";
  }
  return "?";
}

enum class Recompute { none, selective, full };

/// The scenario spelling of a recomputation ("none", "selective", "full").
constexpr const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "?";
}

/// How an fp8 recipe scales its tensors (workload.training.fp8_recipe; docs/scenarios.md):
/// Transformer Engine's DelayedScaling (amax history, the default), current per-tensor scaling
/// (Float8CurrentScaling / torchao tensorwise), per-row scales (torchao rowwise) and MXFP8 blocks
/// of 32 with an 8-bit scale (sm100+ only).
enum class Fp8Recipe { delayed_tensorwise, current_tensorwise, rowwise, mx_blockwise };

/// Which compute model times the kernels (workload.training.compute_model; issue 17):
/// training_fit, the per-GPU scalar GEMM efficiency fitted on training runs (today's default), or
/// kernel: the GEMM tile model with kernel-measured constants (models/compute/gemm_model.h) and
/// the fitted framework-level constants (models/compute/framework_constants.h).
enum class ComputeModel { training_fit, kernel };

/// The scenario spelling of a compute model ("training_fit", "kernel").
constexpr const char* compute_model_name(ComputeModel m) {
  return m == ComputeModel::kernel ? "kernel" : "training_fit";
}

/// Which framework's ZeRO-1/2 holds the gradients (workload.parallel.zero_implementation;
/// docs/scenarios.md): megatron (Megatron-Core's distributed optimizer: one main-gradient buffer)
/// or deepspeed (DeepSpeed's ZeRO-1/2 and BF16_Optimizer: the 16-bit gradients beside the fp32
/// ones, and its reduce and all-gather buckets).
enum class ZeroImplementation { megatron, deepspeed };

/// How overlapped tensor-parallel communication runs (workload.parallel.tp_overlap_implementation;
/// docs/scenarios.md): userbuffers (Transformer Engine's userbuffers under Megatron-Core
/// --tp-comm-overlap; modelled as the whole collective beside the whole GEMM) or async_tp (PyTorch's symmetric-memory
/// async TP, torchtitan: all-gathers and reduce-scatters in tp chunks moved by copy engines, the partial outputs
/// reduced by one kernel).
enum class TpOverlapImplementation { userbuffers, async_tp };

/// The activations' layout, which sets the dimension sequence parallelism shards
/// (workload.parallel.activation_layout; docs/scenarios.md): seq_first ([s, b, h]: Megatron-LM,
/// Megatron-Core, NeMo, Megatron-DeepSpeed; SP shards dim 0, which NCCL's all-gather and
/// reduce-scatter concatenate and split directly) or batch_first ([b, s, h]: PyTorch DTensor TP
/// as torchtitan applies it, SP on Shard(1): PyTorch's functional collectives copy the whole
/// tensor after each such all-gather and before each such reduce-scatter).
enum class ActivationLayout { seq_first, batch_first };

/// What selective recomputation keeps (workload.training.selective_policy): megatron (Korthikanti
/// et al. 2022: everything but the attention core) or torchtitan_op (torchtitan's op-level
/// selective activation checkpointing: every other matmul output and the attention output saved,
/// the rest recomputed in backward).
enum class SelectivePolicy { megatron, torchtitan_op };

/// The scenario spelling of a selective policy ("megatron", "torchtitan_op").
constexpr const char* selective_policy_name(SelectivePolicy p) {
  return p == SelectivePolicy::torchtitan_op ? "torchtitan_op" : "megatron";
}

/// How the loss is computed from the logits (workload.training.cross_entropy): fused (Megatron's
/// vocab-parallel cross-entropy: the fp32 logits only) or unfused (torch.nn.functional.cross_entropy
/// on logits cast to fp32: the 16-bit logits beside the fp32 copy; torchtitan).
enum class CrossEntropy { fused, unfused };

/// Which fused attention kernel runs (workload.training.attention_kernel; with flash_attention):
/// flash2 (FlashAttention-2: PyTorch SDPA's default flash backend, torchtitan, llm-foundry) or cudnn
/// (cuDNN 9 fused attention: PyTorch SDPA's CUDNN_ATTENTION, Transformer Engine's FusedAttention,
/// which TE prefers on Hopper). Constants: models/compute/attention_model.h.
enum class AttentionKernel { flash2, cudnn };

/// The scenario spelling of an attention kernel ("flash2", "cudnn").
constexpr const char* attention_kernel_name(AttentionKernel k) {
  return k == AttentionKernel::cudnn ? "cudnn" : "flash2";
}

/// How a MoE layer's expert-parallel all-to-all moves its tokens (workload.training.ep_all_to_all;
/// models/collectives/moe_dispatch.h): flat (NCCL's all-to-all as Megatron-Core's token
/// dispatcher runs it: every (token, expert) slot travels on its own) or deepep (DeepEP's normal
/// kernels: a token crosses the RDMA network once per destination node, then is forwarded over
/// NVLink once per destination GPU).
enum class EpAllToAll { flat, deepep };

/// How a transformer layer's elementwise ops run (workload.training.elementwise_fusion): fused (one
/// kernel per norm, activation and residual add, as Megatron-Core / Transformer Engine run them and
/// torch.compile's Inductor fuses them) or eager (PyTorch eager: each op of torchtitan's Llama block
/// and each kernel of its autograd backward launched on its own; models/workload/eager_elementwise.h).
enum class ElementwiseFusion { fused, eager };

/// Transformer family: decoder (GPT/Llama: causal attention, next-token head) or encoder (BERT:
/// bidirectional attention, masked-LM + next-sentence heads).
enum class Architecture { decoder, encoder };

enum class PipelineSchedule { one_f_one_b, interleaved_one_f_one_b };

/// Inter-node network topology. torus: nodes on a ring (1 dimension) or 2D/3D torus with links to
/// their neighbours, dimension-order routing.
enum class FabricKind { none, rail_optimized, fat_tree, torus };

/// How a fat tree's switches pick among equal-cost up-links (docs/fabric.md).
/// automatic: follows the NICs (InfiniBand and HPE Slingshot -> adaptive, their fabric managers'
/// default; Ethernet/RoCE -> ecmp_hash). d_mod_k: static destination-based
/// forwarding tables, the up-port at each tier chosen from the destination port's index (Zahavi,
/// "D-Mod-K Routing Providing Non-Blocking Traffic for Shift Permutations on Real Life Fat Trees",
/// 2010; OpenSM's ftree engine). adaptive: per-packet spraying over every equal-cost up-link,
/// modelled as a fluid equal split. ecmp_hash: ECMP by a seeded hash of the flow's 5-tuple, each
/// switch tier hashing anew (RoCE on Ethernet).
enum class FabricRouting { automatic, d_mod_k, adaptive, ecmp_hash };

/// NCCL algorithms (NCCL_ALGO). automatic: the least predicted time, as NCCL's tuner.
/// ring: pipelined rings (channels over NICs); hierarchical: intra-node reduce-scatter, inter-node
/// all-reduce per local rank, intra-node all-gather; tree: double binary tree across nodes with
/// intra-node chains (NCCL Tree, all_reduce); nvls: NVSwitch in-network reduction (NVLink SHARP,
/// NVSwitch gen3+ nodes, one node; all_reduce, all_gather, reduce_scatter); nvls_tree: NVLS inside
/// nodes and a tree across nodes; pat: NCCL 2.23+ PAT (all_gather/reduce_scatter, one GPU per node);
/// collnet_direct, collnet_chain: NCCL's CollNet all_reduce across nodes, the inter-node part
/// reduced by the fabric's SHARP switches (FabricSpec::sharp).
enum class CollectiveAlgorithm {
  automatic,
  ring,
  hierarchical,
  tree,
  nvls,
  nvls_tree,
  pat,
  collnet_direct,
  collnet_chain
};

/// NCCL protocols: LL (8-byte flag+data stores), LL128 (128-byte lines), Simple (bulk + fences).
enum class CollectiveProtocol { ll, ll128, simple };

/// Where the compute NICs sit (GPU-NIC affinity).
enum class NicPlacement {
  affine,        ///< each NIC under the PCIe switch (or socket) of the GPUs it serves (the template's)
  other_socket,  ///< each NIC on the other CPU socket from its GPUs (a misconfigured server)
};

/// Which generator builds the model's kernels (models/workload/).
enum class ModelFamily {
  transformer,  ///< GPT/Llama-style decoder (dense or MoE): models/workload/transformer.h
  resnet,       ///< ResNet-50/101/152 v1.5 CNN trained with DDP: models/workload/cnn.h
};

}  // namespace traincast::models
