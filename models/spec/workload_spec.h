#pragma once
// The workload part of a scenario (`workload { ... }`): model shape, parallel layout, training
// settings, CPU offload and data loader. Defaults are the scenario schema's (models/io/traincast.proto).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include "models/spec/enums.h"

namespace traincast::models {

/// A GPT/Llama-style decoder-only transformer, or (family resnet) a ResNet.
struct ModelSpec {
  std::string name = "custom";
  ModelFamily family = ModelFamily::transformer;
  // ResNet (family resnet): num_layers is the depth (50, 101 or 152); the transformer shape fields
  // are unused. Input images are image_size x image_size x 3.
  int image_size = 224;         ///< input resolution [pixels], ImageNet training crop (He et al. 2016)
  int num_classes = 1000;       ///< classifier outputs (ImageNet-1k)
  int num_layers = 0;           ///< l, > 0
  int hidden_size = 0;          ///< h, > 0
  int num_attention_heads = 0;  ///< a, > 0, divides hidden_size
  int num_query_groups = 0;     ///< GQA groups (0 = same as heads, plain MHA)
  int ffn_hidden_size = 0;      ///< 0 = 4h
  int vocab_size = 0;           ///< V, > 0
  /// Megatron-LM's --make-vocab-size-divisible-by: V is padded to a multiple of this x tp
  /// (default 128, megatron/training/arguments.py), >= 1.
  int make_vocab_size_divisible_by = 128;
  int seq_length = 0;              ///< s, > 0
  bool gated_mlp = false;          ///< SwiGLU (Llama): three h×ffn matrices instead of two
  bool untied_embeddings = false;  ///< separate output layer weights (Llama) vs tied (GPT)
  /// The attention block's queries, keys and values, and a gated MLP's gate and up projections, as
  /// separate linears (torchtitan's Llama: wq, wk, wv, w1, w3; HF Llama: q_proj, ...) instead of
  /// one fused linear each (Megatron-LM / Megatron-Core linear_qkv and linear_fc1, GPT-2's c_attn).
  /// The GEMMs are timed fused either way; read by async TP (tp_overlap_implementation async_tp),
  /// which fuses a backward input-gradient reduce-scatter with its GEMM only when one matmul
  /// produces it. Default false (fused: every model before this field).
  bool separate_projections = false;
  /// Dropout probabilities, named as Megatron-LM's --attention-dropout / --hidden-dropout (HF:
  /// attention_dropout, hidden_dropout / resid_pdrop). Default 0.1 each: Megatron-LM's default
  /// (megatron/training/arguments.py), GPT-2 (HF gpt2 config.json attn_pdrop, resid_pdrop 0.1)
  /// and BERT (Devlin et al. 2019 §A.2; config.json hidden_dropout_prob,
  /// attention_probs_dropout_prob 0.1). Llama 1/2/3, Mistral/Mixtral, DeepSeek and Qwen train
  /// without dropout (no dropout layer in Meta's reference model.py; "attention_dropout": 0.0 in
  /// their HF config.json files): set both to 0 for them. Range [0, 1).
  /// attention_dropout > 0: a 1-byte mask and the dropped copy of the attention probabilities
  /// (a·s²·b each, unfused attention only: flash attention regenerates its mask from the RNG
  /// state) and the dropout kernels' time. hidden_dropout > 0: two 1-byte s·b·h masks per layer
  /// (after the attention projection and after FC2, Korthikanti et al. 2022 §4.1) and one mask
  /// byte per element in each bias-dropout-add kernel. 0: neither mask nor kernel (PyTorch's
  /// dropout returns its input when p = 0).
  double attention_dropout = 0.1;
  double hidden_dropout = 0.1;

  // Mixture of experts (Shazeer et al. 2017; Switch/GShard capacity; Mixtral; DeepSeekMoE).
  // A MoE layer replaces the MLP by num_experts routed experts (each a gated_mlp-style MLP of
  // width moe_ffn_hidden_size), of which each token uses moe_top_k, plus num_shared_experts
  // experts every token uses. Routing is balanced unless moe_expert_imbalance > 1.
  int num_experts = 0;          ///< routed experts per MoE layer, 0 = dense model
  int moe_top_k = 2;            ///< experts per token, 1..num_experts
  int moe_ffn_hidden_size = 0;  ///< width of one expert's MLP, 0 = ffn_hidden_size
  int num_shared_experts = 0;   ///< always-active experts of width moe_ffn_hidden_size (DeepSeekMoE)
  int first_dense_layers = 0;   ///< the first k layers keep a dense MLP of ffn_hidden_size (DeepSeek)
  /// Expert capacity factor: each expert processes capacity_factor x (tokens x top_k / experts)
  /// token slots, padded (GShard / Switch Transformer). 0 = dropless (balanced: exactly its share).
  double moe_capacity_factor = 0.0;
  /// Load of the busiest routed expert relative to the mean (1 = balanced routing). The EP rank that
  /// holds it sets the MoE layer's step time: its grouped expert GEMMs process
  /// (experts_local - 1 + imbalance) / experts_local x its balanced share of the slots; the other
  /// ranks wait for it at the combine all-to-all. Range [1, num_experts]. Default 1: no published
  /// per-expert load of a balanced DeepSeek/Qwen run is in /work/shared/data to ground another.
  double moe_expert_imbalance = 1.0;

  /// Per-head dimension of queries, keys and values [elements]. 0 = hidden_size / num_attention_heads
  /// (GPT, Llama). Qwen3 sets it independently (HF config.json "head_dim": 128 with hidden 2048 and
  /// 32 heads in Qwen3-30B-A3B): Q is h x (heads x head_dim), K and V h x (groups x head_dim),
  /// the output projection (heads x head_dim) x h; attention FLOPs and activations follow.
  int head_dim = 0;

  /// Multi-head latent attention (DeepSeek-V2 arXiv:2405.04434 §2.1, DeepSeek-V3 arXiv:2412.19437
  /// §2.1.1): queries through a q_lora_rank bottleneck, keys and values through a shared
  /// kv_lora_rank latent (plus one qk_rope_head_dim decoupled RoPE key shared by all heads); each
  /// head's query/key is qk_nope_head_dim + qk_rope_head_dim wide, its value v_head_dim.
  /// Needs num_query_groups 0 and head_dim 0. The down-projections are duplicated on every TP rank
  /// (Megatron-Core MLASelfAttention, parallel_mode "duplicated").
  bool multi_latent_attention = false;
  int q_lora_rank = 0;       ///< query latent width d_c' (V3: 1536); 0 = queries projected from h directly (V2-Lite)
  int kv_lora_rank = 0;      ///< key/value latent width d_c (V3: 512), >= 1 with MLA
  int qk_nope_head_dim = 0;  ///< per-head query/key width without RoPE d_h (V3: 128), >= 1 with MLA
  int qk_rope_head_dim = 0;  ///< per-head decoupled RoPE width d_h^R (V3: 64), >= 0
  int v_head_dim = 0;        ///< per-head value width (V3: 128), >= 1 with MLA

  /// Sliding-window attention (Mistral, Gemma 2/3, GPT-OSS): a windowed layer's queries attend to
  /// the last sliding_window keys only [tokens]; 0 = every layer attends to the whole sequence.
  int sliding_window = 0;
  /// With sliding_window > 0: 0 = every layer is windowed (Mistral 7B); N >= 2 = of every N layers
  /// the first N - 1 are windowed and the N-th attends globally (HF Gemma 3 sliding_window_pattern;
  /// GPT-OSS alternates sliding and full from layer 0: N = 2).
  int sliding_window_pattern = 0;

  // Encoder (BERT, Devlin et al. 2019): bidirectional attention (no causal mask), post-LN (same
  // kernels as pre-LN, in another order), learned position and token-type embeddings with an
  // embedding LayerNorm, a masked-LM head (dense h x h + GELU + LayerNorm + vocabulary projection
  // tied to the embedding, + bias) run on the masked positions only, and a pooler (dense h x h +
  // tanh on the first token) with the next-sentence classifier (h x 2).
  Architecture architecture = Architecture::decoder;
  /// Encoder: fraction of positions the MLM head predicts. Default 0.15: BERT masks 15% of the
  /// tokens (Devlin et al. 2019 §3.1) and gathers them before the head (Google BERT and NVIDIA's
  /// BERT: max_predictions_per_seq 80 at seq 512). 1 = head on every position (HF
  /// BertForPreTraining without gathering). Range (0, 1].
  double mlm_prediction_fraction = 0.15;
  /// Encoder: rows of the learned position table. 0 = seq_length. BERT: 512.
  int max_position_embeddings = 0;
  bool operator==(const ModelSpec&) const = default;
};

struct ParallelSpec {
  int tp = 1;  ///< tensor parallel size (Megatron), divides heads
  int pp = 1;  ///< pipeline stages, divides layers unless uneven_stages
  int dp = 1;  ///< data parallel size; tp*pp*dp == GPUs
  /// Expert parallel size: each MoE layer's routed experts are split over ep data-parallel ranks
  /// (consecutive DP ranks of one stage and TP rank), which exchange tokens by all-to-all.
  /// Divides dp and num_experts. Expert weights are not split by TP (expert tensor parallel 1).
  int ep = 1;
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;  ///< model chunks per GPU for interleaved 1F1B (>= 1)
  bool uneven_stages = false;
  /// Layers of each pipeline stage (pp entries, each >= 1, summing to num_layers; 1F1B only);
  /// empty = even split. Megatron-LM's analogue: --decoder-first-pipeline-num-layers and
  /// --decoder-last-pipeline-num-layers (first and last stage; this names every stage).
  std::vector<int> pipeline_stage_layers;
  /// ZeRO stage 0-3: 1 shards optimizer state, 2 also gradients (reduce-scatter per micro-batch),
  /// 3 also parameters (per-layer all-gather in forward and backward with prefetch: FSDP).
  int zero_stage = 0;
  /// Gradient bucket size [bytes], default 160 MB: Megatron-LM's --ddp-bucket-size default of 40M
  /// fp32 elements. As in Megatron-Core, a bucket holds at least 1M parameters per DP rank
  /// (bucket_size = max(40M, 1M × dp)), so large DP groups are not latency-bound.
  double dp_bucket_bytes = 160e6;
  bool overlap_grad_reduce = true;  ///< DP all-reduce overlapped with backward
  /// ZeRO-1 parameter all-gather overlapped with the next iteration's forward (Megatron-Core
  /// --overlap-param-gather); off: it runs after the optimizer step on the compute stream.
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;  ///< Megatron-Core --tp-comm-overlap (TP comm hidden under GEMMs)
  /// Which framework's TP overlap runs with tp_comm_overlap (models/spec/enums.h
  /// TpOverlapImplementation): userbuffers (default; Megatron-Core with Transformer Engine) or
  /// async_tp (PyTorch async TP: torchtitan's enable_async_tensor_parallel).
  TpOverlapImplementation tp_overlap_implementation = TpOverlapImplementation::userbuffers;
  /// Megatron-Core --moe-shared-expert-overlap: the shared experts' fc1 runs beside the EP
  /// dispatch all-to-all and fc2 beside the combine (their backward beside the backward ones).
  bool moe_shared_expert_overlap = false;
  /// The activations' layout (models/spec/enums.h ActivationLayout): seq_first (default; Megatron)
  /// or batch_first (torchtitan: each SP all-gather followed, and each SP reduce-scatter
  /// preceded, by a copy of the whole tensor; under async TP's fused ops only the weight
  /// gradients' reshapes of the gathered inputs).
  ActivationLayout activation_layout = ActivationLayout::seq_first;
  /// The backward TP all-reduce (reduce-scatter with SP) of a column-parallel GEMM's input gradient
  /// beside its weight-gradient GEMM (Megatron's async reduction; default). false: blocking, after
  /// both GEMMs (BigScience's Megatron-DeepSpeed, BLOOM's trainer: megatron/mpu/layers.py).
  bool overlap_tp_grad_reduce = true;
  /// ZeRO-3 / FSDP: free the gathered parameters after each item's forward and gather them again
  /// before its backward. Default true: PyTorch FSDP FULL_SHARD (FSDP1 ShardingStrategy default),
  /// FSDP2 fully_shard(reshard_after_forward=True) default, DeepSpeed ZeRO-3. false: FSDP
  /// SHARD_GRAD_OP / FSDP2 reshard_after_forward=False / Llama 3's FSDP (arXiv:2407.21783 §3.3.2:
  /// "we do not reshard after forward computation"): one gather per item and micro-batch in
  /// forward, none in backward; the stage's whole 16-bit weights are held unsharded. Only with
  /// zero_stage 3.
  bool reshard_after_forward = true;
  /// ZeRO-3 / FSDP: free the gathered parameters after each micro-batch's backward. Default true
  /// (FSDP1 and FSDP2 without a pipeline schedule; DeepSpeed ZeRO-3). false: torch.distributed.
  /// pipelining's schedules with FSDP2 (PipelineStage calls set_reshard_after_backward(False) for
  /// all but the last backward, as torchtitan runs PP): the stage's parameters are gathered once,
  /// in the first micro-batch's forward, and kept until the iteration's last backward; no gather
  /// in backward (torchtitan also sets grad_sync_every_microbatch false there). Only with
  /// zero_stage 3 and reshard_after_forward false.
  bool reshard_after_backward = true;
  /// ZeRO-2/3 / FSDP: reduce-scatter the gradients after every micro-batch's backward. Default
  /// true (DeepSpeed ZeRO-2/3; FSDP without no_sync). false: accumulate the unsharded gradient
  /// locally and reduce-scatter it once, after the iteration's last backward (FSDP's no_sync /
  /// FSDP2 set_requires_gradient_sync(False), which torch.distributed.pipelining's schedules set
  /// for all but the last backward: torchtitan's PP); memory then holds the stage's whole
  /// gradient. Only with zero_stage 2 or 3.
  bool grad_sync_every_microbatch = true;
  /// ZeRO-3 / FSDP: bytes per parameter of the all-gathered (and unsharded) parameters. Default 0:
  /// the weights' own width (2 in 16-bit training: FSDP MixedPrecision(param_dtype=bf16),
  /// DeepSpeed's fp16/bf16 partitions; 4 in fp32/tf32). 4 in 16-bit training: fp32 gathers (FSDP
  /// without a param_dtype, e.g. Composer 0.1x's mixed_precision 'DEFAULT': param_dtype fp32,
  /// reduce_dtype the AMP dtype; autocast casts the weights per GEMM). Values 0, 2 or 4; a
  /// non-zero value only with zero_stage 3.
  int param_gather_bytes = 0;
  /// Context parallel size (Megatron-Core --context-parallel-size, ring attention as
  /// TransformerEngine's AttnFuncWithCPAndKVP2P): each sequence is cut into 2·cp chunks and CP rank
  /// i keeps chunks i and 2·cp-1-i (causal load balance); K/V blocks travel the CP ring by
  /// send/recv beside the attention of the block in hand. Ranks in Megatron's order tp-cp-dp-pp;
  /// gradients are reduced (and ZeRO shards) over dp x cp. tp*cp*pp*dp == GPUs; seq_length
  /// divisible by 2·cp; needs flash attention; dense models only.
  int cp = 1;
  /// Which framework's ZeRO-1/2 (models/spec/enums.h ZeroImplementation). megatron (default):
  /// Megatron-Core's distributed optimizer, one main-gradient buffer. deepspeed: DeepSpeed's
  /// ZeRO-1/2 with 16-bit training keeps the 16-bit gradients (param.grad) beside the fp32 ones
  /// (BF16_Optimizer's fp32 accumulation buffer, the ZeRO optimizer's fp32 partition gradient) and
  /// holds a reduce bucket and an all-gather bucket of reduce_bucket_elements each.
  ZeroImplementation zero_implementation = ZeroImplementation::megatron;
  /// DeepSpeed's reduce_bucket_size and allgather_bucket_size [elements], default 5e8 (DeepSpeed
  /// configuration docs, zero_optimization: both default 500,000,000). Read with
  /// zero_implementation deepspeed and zero_stage 1 or 2.
  double reduce_bucket_elements = 5e8;
  bool operator==(const ParallelSpec&) const = default;
};

struct TrainingSpec {
  int global_batch_size = 0;  ///< sequences per iteration, > 0
  int micro_batch_size = 1;   ///< sequences per micro-batch, > 0
  Precision precision = Precision::bf16;
  Recompute recompute = Recompute::none;
  bool fp32_grad_accumulation = true;  ///< Megatron default: fp32 main grads (4 B/param)
  /// Fused attention kernel (no s×s score tensor in HBM). The loader resolves an unset field from
  /// the GPU (models::runs_flash_attention: false before sm80) and refuses true there; a Scenario
  /// built in code keeps this default.
  bool flash_attention = true;
  double train_tokens = 0.0;  ///< token budget for time-to-train, 0 = not asked
  /// LoRA fine-tuning (Hu et al. 2021, arXiv:2106.09685): rank r of the low-rank adapters; the
  /// base model is frozen (no weight-gradient GEMMs, gradients or optimizer state for it).
  /// 0 = full training. Dense decoders only (the loader checks it).
  int lora_rank = 0;
  /// Comma-separated matrices of every layer that get an adapter: q, k, v, o (attention),
  /// gate, up, down (MLP; gate only with a gated MLP), or all-linear. Default "q,v": the LoRA
  /// paper's choice for GPT-3 (§4.2, Table 5: Wq, Wv best for a fixed budget) and PEFT's default
  /// target_modules for Llama (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING).
  std::string lora_target_modules = "q,v";
  /// fp8 scaling recipe (only read with precision fp8): its cast/amax/transpose kernels and the
  /// GEMM kernels it runs (models/workload/fp8_recipe.h).
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed_tensorwise;
  /// The compute model: training_fit (scalar GEMM efficiency fitted on training runs) or kernel
  /// (GEMM tile model from kernel measurements + fitted framework-level constants).
  ComputeModel compute_model = ComputeModel::training_fit;
  /// What recompute selective keeps (models/spec/enums.h SelectivePolicy): megatron (default) or
  /// torchtitan_op (torchtitan's op-level SAC).
  SelectivePolicy selective_policy = SelectivePolicy::megatron;
  /// Fused (default, Megatron's vocab-parallel cross-entropy) or unfused (fp32 copy of the 16-bit
  /// logits, torchtitan's cross_entropy_loss).
  CrossEntropy cross_entropy = CrossEntropy::fused;
  /// Which fused attention kernel runs when flash_attention (models/spec/enums.h AttentionKernel):
  /// flash2 (default) or cudnn.
  AttentionKernel attention_kernel = AttentionKernel::flash2;
  /// How the MoE layers' expert-parallel all-to-all moves tokens (models/spec/enums.h EpAllToAll,
  /// models/collectives/moe_dispatch.h): flat (default: NCCL's all-to-all under Megatron-Core's
  /// token dispatcher, every top-k slot sent on its own; the bytes before this field existed) or
  /// deepep (DeepEP's normal kernels: once per destination node over RDMA, then once per
  /// destination GPU over NVLink). deepep only with ep > 1 and dropless routing.
  EpAllToAll ep_all_to_all = EpAllToAll::flat;
  /// Node-limited routing (DeepSeek-V3, arXiv:2412.19437 §2.1.2: M = 4): each token's experts lie
  /// on at most this many of the EP group's nodes. 0 (default) = unlimited. Changes only what
  /// deepep sends (flat sends every slot anyway); accepted with flat so a what-if can switch the
  /// all-to-all alone.
  int moe_max_nodes_per_token = 0;
  /// How the layers' norms, activations, RoPE and residual adds run (models/spec/enums.h
  /// ElementwiseFusion): fused (default: the kernels before this field existed) or eager (PyTorch
  /// eager, torchtitan without torch.compile). eager only on dense Llama-style decoders (gated MLP)
  /// without MLA.
  ElementwiseFusion elementwise_fusion = ElementwiseFusion::fused;
  bool operator==(const TrainingSpec&) const = default;
};

/// CPU offload as ZeRO-Offload runs it (Ren et al. 2021, "ZeRO-Offload: Democratizing
/// Billion-Scale Model Training", arXiv:2101.06840; DeepSpeed zero_optimization.offload_optimizer
/// device "cpu"): the fp32 master weights, Adam's m and v and the Adam step live on the host.
struct OffloadSpec {
  /// Optimizer state and step on the CPU: each GPU copies its gradient shard to host memory after
  /// every reduction (device-to-host over its PCIe path), the CPU runs Adam on it, and the updated
  /// 16-bit parameters come back (host-to-device) before the next forward. false = on the GPU.
  bool optimizer = false;
  /// DRAM bandwidth of one CPU socket [bytes/s]; 0 = the node's CPU from the table in
  /// models/workload/offload.h (channels x transfer rate x 8 bytes, vendor datasheets).
  double host_memory_bytes_per_s = 0.0;
  /// Fraction of that bandwidth the CPU-Adam step streams at, in (0, 1]. 0.7 is an ASSUMPTION
  /// WITH NO SOURCE (a guess at a STREAM-like fraction of a server's peak); no measurement in
  /// /work/shared/data or in a readable publication grounds it. The published CPU-Adam step times
  /// (Ren et al. 2021, ZeRO-Offload, USENIX ATC, §6.2.4 Table 4: 1B to 10B parameters on the
  /// DGX-2 host of its Table 2) could not be read (the table is an image in every copy found; only
  /// the text's speed-ups over PyTorch's CPU Adam, >5x and 6.4x at 1B, are readable), and DeepSpeed
  /// states speed-ups only (5.1x to 6.5x, docs/_pages/features.md). What would ground it: step
  /// times of DeepSpeedCPUAdam at >= 3 sizes (e.g. DeepSpeed tests/perf/adam_test1.py, 1 Gi fp32
  /// parameters) on a host whose DRAM channels, transfer rate and socket count are stated, fitted
  /// on some sizes and checked on the others. Set it for your host when you have such a figure.
  double cpu_adam_efficiency = 0.7;
  bool operator==(const OffloadSpec&) const = default;
};

/// Which CPU socket's memory holds a GPU's input batches (the data loader's pinned buffers).
enum class NumaBinding {
  correct,       ///< each GPU's loader bound to the GPU's own socket (numactl per local rank)
  other_socket,  ///< each loader on the other socket: every copy crosses the socket link
  socket0,       ///< every loader's memory on socket 0 (an unbound launch that first-touched there)
};

/// Host-to-device copies of the input batches (ResNet family): flows from host memory over the
/// node's PCIe tree (and the socket link when the memory is on the other socket), contending with
/// everything else on those links. CPU decoding and augmentation are not modelled: the loader is
/// assumed to keep up (e.g. NVIDIA DALI with the A100's hardware JPEG decoder).
struct DataLoaderSpec {
  NumaBinding numa_binding = NumaBinding::correct;
  /// Bytes per input element as copied to the GPU [bytes]: 1 = uint8 pixels normalised on the GPU
  /// (NVIDIA DeepLearningExamples ConvNets fast_collate + data_prefetcher, and DALI); 4 = fp32 after
  /// torchvision's ToTensor + Normalize on the CPU (pytorch/examples imagenet); 2 = fp16. Default 1.
  double input_bytes_per_element = 1.0;
  /// true: the next micro-batch's copy runs on a side stream while the current one computes
  /// (DeepLearningExamples data_prefetcher); false: each copy runs on the compute stream right
  /// before its micro-batch (pytorch/examples imagenet: images.cuda(non_blocking=True) on the
  /// default stream). Default true.
  bool prefetch = true;
  bool operator==(const DataLoaderSpec&) const = default;
};

}  // namespace traincast::models
