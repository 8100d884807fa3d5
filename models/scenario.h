#pragma once
// Plain structs describing one simulation: what the io layer produces from a scenario file
// (models/io/) and what the models consume. No protobuf here. Units are in every name.
// Defaults below are the documented defaults of the scenario schema (models/io/traincast.proto).

#include <cstdint>
#include <optional>
#include <string>

namespace traincast::models {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };
enum class Recompute { none, selective, full };
enum class PipelineSchedule { one_f_one_b, interleaved_one_f_one_b };
enum class FabricKind { none, rail_optimized, fat_tree };

/// Inter-node network. Bandwidths come from the node template's NICs.
struct FabricSpec {
  FabricKind kind = FabricKind::rail_optimized;
  /// Leaf down:up bandwidth ratio, >= 1 (1 = non-blocking).
  double oversubscription = 1.0;
  /// Per switch hop [ns]. Default 130 ns is typical of an HDR/NDR IB switch port-to-port latency
  /// (NVIDIA QM8700/QM9700 datasheets: ~130 ns).
  std::int64_t switch_latency_ns = 130;
  /// Nodes under one leaf switch (per rail for rail-optimized); default 32 (a 64-port leaf with
  /// half its ports down, as in DGX SuperPOD scalable units of 32 nodes).
  int nodes_per_leaf = 32;
};

struct ClusterSpec {
  std::string node_template = "dgx_h100";  ///< catalog node template name
  int num_nodes = 1;                       ///< > 0
  std::string gpu;                         ///< optional GPU override (catalog name), empty = template's
  FabricSpec fabric;
};

/// A GPT/Llama-style dense decoder-only transformer.
struct ModelSpec {
  std::string name = "custom";
  int num_layers = 0;              ///< l, > 0
  int hidden_size = 0;             ///< h, > 0
  int num_attention_heads = 0;     ///< a, > 0, divides hidden_size
  int num_query_groups = 0;        ///< GQA groups (0 = same as heads, plain MHA)
  int ffn_hidden_size = 0;         ///< 0 = 4h
  int vocab_size = 0;              ///< V, > 0
  int seq_length = 0;              ///< s, > 0
  bool gated_mlp = false;          ///< SwiGLU (Llama): three h×ffn matrices instead of two
  bool untied_embeddings = false;  ///< separate output layer weights (Llama) vs tied (GPT)
};

struct ParallelSpec {
  int tp = 1;  ///< tensor parallel size (Megatron), divides heads
  int pp = 1;  ///< pipeline stages, divides layers unless uneven_stages
  int dp = 1;  ///< data parallel size; tp*pp*dp == GPUs
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;  ///< model chunks per GPU for interleaved 1F1B (>= 1)
  bool uneven_stages = false;
  int zero_stage = 0;  ///< 0 or 1 in this version (ZeRO-1 = distributed optimizer)
  /// Gradient bucket size [bytes], default 160 MB: Megatron-LM's --ddp-bucket-size default of 40M
  /// fp32 elements. As in Megatron-Core, a bucket holds at least 1M parameters per DP rank
  /// (bucket_size = max(40M, 1M × dp)), so large DP groups are not latency-bound.
  double dp_bucket_bytes = 160e6;
  bool overlap_grad_reduce = true;  ///< DP all-reduce overlapped with backward
  /// ZeRO-1 parameter all-gather overlapped with the next iteration's forward (Megatron-Core
  /// --overlap-param-gather); off: it runs after the optimizer step on the compute stream.
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;  ///< Megatron-Core --tp-comm-overlap (TP comm hidden under GEMMs)
};

struct TrainingSpec {
  int global_batch_size = 0;  ///< sequences per iteration, > 0
  int micro_batch_size = 1;   ///< sequences per micro-batch, > 0
  Precision precision = Precision::bf16;
  Recompute recompute = Recompute::none;
  bool fp32_grad_accumulation = true;  ///< Megatron default: fp32 main grads (4 B/param)
  bool flash_attention = true;         ///< fused attention kernel (no s×s score tensor in HBM)
  double train_tokens = 0.0;           ///< token budget for time-to-train, 0 = not asked
};

struct OptionsSpec {
  /// Iterations simulated (>= 1); the report is of the last one. With overlap_param_gather and
  /// ZeRO-1 at least 2 are simulated, so the gather's overlap with the next forward is real.
  int iterations = 1;
  bool fold_symmetric = true;  ///< simulate one DP replica when the job is symmetric (DESIGN §3)
  int threads = 1;             ///< worker threads for op-graph generation (result independent of it)
};

struct Scenario {
  std::string name;
  std::string description;
  ClusterSpec cluster;
  ModelSpec model;
  ParallelSpec parallel;
  TrainingSpec training;
  OptionsSpec options;
};

}  // namespace traincast::models
