#pragma once
// Plain structs describing one simulation: what the io layer produces from a scenario file
// (models/io/) and what the models consume. No protobuf here. Units are in every name.
// Defaults below are the documented defaults of the scenario schema (models/io/traincast.proto).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace traincast::models {

struct CalibrationProfile;  // models/calibration_profile.h

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
/// Transformer family: decoder (GPT/Llama: causal attention, next-token head) or encoder (BERT:
/// bidirectional attention, masked-LM + next-sentence heads).
enum class Architecture { decoder, encoder };
enum class PipelineSchedule { one_f_one_b, interleaved_one_f_one_b };
/// Inter-node network topology. torus: nodes on a ring (1 dimension) or 2D/3D torus with links to
/// their neighbours, dimension-order routing.
enum class FabricKind { none, rail_optimized, fat_tree, torus };

/// NCCL algorithms (NCCL_ALGO). automatic: the least predicted time, as NCCL's tuner.
/// ring: pipelined rings (channels over NICs); hierarchical: intra-node reduce-scatter, inter-node
/// all-reduce per local rank, intra-node all-gather; tree: double binary tree across nodes with
/// intra-node chains (NCCL Tree, all_reduce); nvls: NVSwitch in-network reduction (NVLink SHARP,
/// NVSwitch gen3+ nodes, one node; all_reduce, all_gather, reduce_scatter); nvls_tree: NVLS inside
/// nodes and a tree across nodes; pat: NCCL 2.23+ PAT (all_gather/reduce_scatter, one GPU per node).
enum class CollectiveAlgorithm { automatic, ring, hierarchical, tree, nvls, nvls_tree, pat };
/// NCCL protocols: LL (8-byte flag+data stores), LL128 (128-byte lines), Simple (bulk + fences).
enum class CollectiveProtocol { ll, ll128, simple };

/// Collective settings of the communication library, as NCCL's environment sets them.
struct CollectiveSpec {
  /// NCCL_ALGO: forced algorithm for every collective that supports it (others fall back to
  /// their only algorithm); automatic = least predicted time.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic;
  /// NCCL_PROTO: forced protocol; empty = least predicted time.
  std::optional<CollectiveProtocol> protocol;
  /// NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS: the least number of channels (CTAs) a collective runs
  /// on, 0 to 64 (MAXCHANNELS); 0 = NCCL's default. NCCL raises comm->nChannels to it by copying
  /// its channels (src/graph/connect.cc ncclTopoPostset); see models/collectives/collective.h.
  int min_channels = 0;
  /// NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS: the most channels, 0 to 64; 0 = NCCL's default. Applied
  /// before min_channels (NCCL keeps the first channels, then copies them up to the minimum).
  int max_channels = 0;
};

/// Where the compute NICs sit (GPU-NIC affinity).
enum class NicPlacement {
  affine,        ///< each NIC under the PCIe switch (or socket) of the GPUs it serves (the template's)
  other_socket,  ///< each NIC on the other CPU socket from its GPUs (a misconfigured server)
};

/// Inter-node network. Bandwidths come from the node template's NICs.
struct FabricSpec {
  FabricKind kind = FabricKind::rail_optimized;
  /// Leaf down:up bandwidth ratio, >= 1 (1 = non-blocking). Uplinks are whole ports at the NIC
  /// line rate: ceil(down ports / ratio) of them, so the effective ratio is <= the one asked.
  double oversubscription = 1.0;
  /// Per switch hop [ns]. Default 130 ns is typical of an HDR/NDR IB switch port-to-port latency
  /// (NVIDIA QM8700/QM9700 datasheets: ~130 ns).
  std::int64_t switch_latency_ns = 130;
  /// Nodes under one leaf switch (per rail for rail-optimized); default 32 (a 64-port leaf with
  /// half its ports down, as in DGX SuperPOD scalable units of 32 nodes).
  int nodes_per_leaf = 32;
  /// Switch tiers of a fat tree (fat_tree, rail_optimized): 2 (leaf-spine) or 3 (leaf, aggregation
  /// in pods, core). Default 2.
  int tiers = 2;
  /// Leaves per pod in a 3-tier tree (they share the pod's aggregation switches). Default 16.
  int leaves_per_pod = 16;
  /// Torus extent per dimension (torus only): 1 to 3 dimensions whose product is num_nodes;
  /// empty = a ring of num_nodes. Each node has one link per direction to each neighbour, at the
  /// line rate of one NIC times nics per node / (2 x dimensions).
  std::vector<int> torus_dims;
  /// Cable length per network hop [m] (NIC-switch and switch-switch): adds 5 ns/m of propagation
  /// (signal speed ~2e8 m/s in fibre and twinax; IEEE 802.3 clause 1.4 nominal velocity of
  /// propagation). Default 0.
  double cable_length_m = 0.0;
};

struct ClusterSpec {
  std::string node_template = "dgx_h100";  ///< catalog node template name
  int num_nodes = 1;                       ///< > 0
  std::string gpu;                         ///< optional GPU override (catalog name), empty = template's
  FabricSpec fabric;
  CollectiveSpec collectives;  ///< NCCL_ALGO / NCCL_PROTO
  /// GPUDirect RDMA between GPUs and NICs; false: NIC traffic is staged through host memory
  /// (crosses the PCIe root complex, and the socket link when the NIC is on the other socket).
  bool gpu_direct_rdma = true;
  NicPlacement nic_placement = NicPlacement::affine;
  /// Compute NIC override: catalog NIC name (e.g. "RoCE-400GbE"); empty = the template's.
  std::string nic;
  /// Compute NICs per node; empty = the template's. NIC i serves the GPUs given in
  /// models/hardware/catalog.h (NodeTemplate); 0 is allowed for a single node.
  std::optional<int> nics_per_node;
  /// GPU peer-to-peer over PCIe; empty = the template's. false: GPU-to-GPU traffic without NVLink
  /// is staged through host memory (NCCL's SHM transport), crossing the root complex.
  std::optional<bool> pcie_p2p;
  /// Calibration profile overlaying the catalog's defaults (models/calibration_profile.h), from
  /// the scenario's `profile` field or `--profile`; null = datasheet defaults. Shared, read-only.
  std::shared_ptr<const CalibrationProfile> profile;
};

/// Which generator builds the model's kernels (models/workload/).
enum class ModelFamily {
  transformer,  ///< GPT/Llama-style decoder (dense or MoE): models/workload/transformer.h
  resnet,       ///< ResNet-50/101/152 v1.5 CNN trained with DDP: models/workload/cnn.h
};

/// A GPT/Llama-style decoder-only transformer, or (family resnet) a ResNet.
struct ModelSpec {
  std::string name = "custom";
  ModelFamily family = ModelFamily::transformer;
  // ResNet (family resnet): num_layers is the depth (50, 101 or 152); the transformer shape fields
  // are unused. Input images are image_size x image_size x 3.
  int image_size = 224;            ///< input resolution [pixels], ImageNet training crop (He et al. 2016)
  int num_classes = 1000;          ///< classifier outputs (ImageNet-1k)
  int num_layers = 0;              ///< l, > 0
  int hidden_size = 0;             ///< h, > 0
  int num_attention_heads = 0;     ///< a, > 0, divides hidden_size
  int num_query_groups = 0;        ///< GQA groups (0 = same as heads, plain MHA)
  int ffn_hidden_size = 0;         ///< 0 = 4h
  int vocab_size = 0;              ///< V, > 0
  int seq_length = 0;              ///< s, > 0
  bool gated_mlp = false;          ///< SwiGLU (Llama): three h×ffn matrices instead of two
  bool untied_embeddings = false;  ///< separate output layer weights (Llama) vs tied (GPT)
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
  // experts every token uses. Routing is assumed balanced (every expert gets its share).
  int num_experts = 0;          ///< routed experts per MoE layer, 0 = dense model
  int moe_top_k = 2;            ///< experts per token, 1..num_experts
  int moe_ffn_hidden_size = 0;  ///< width of one expert's MLP, 0 = ffn_hidden_size
  int num_shared_experts = 0;   ///< always-active experts of width moe_ffn_hidden_size (DeepSeekMoE)
  int first_dense_layers = 0;   ///< the first k layers keep a dense MLP of ffn_hidden_size (DeepSeek)
  /// Expert capacity factor: each expert processes capacity_factor x (tokens x top_k / experts)
  /// token slots, padded (GShard / Switch Transformer). 0 = dropless (balanced: exactly its share).
  double moe_capacity_factor = 0.0;

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
  /// Context parallel size (Megatron-Core --context-parallel-size, ring attention as
  /// TransformerEngine's AttnFuncWithCPAndKVP2P): each sequence is cut into 2·cp chunks and CP rank
  /// i keeps chunks i and 2·cp-1-i (causal load balance); K/V blocks travel the CP ring by
  /// send/recv beside the attention of the block in hand. Ranks in Megatron's order tp-cp-dp-pp;
  /// gradients are reduced (and ZeRO shards) over dp x cp. tp*cp*pp*dp == GPUs; seq_length
  /// divisible by 2·cp; needs flash attention; dense models only.
  int cp = 1;
};

struct TrainingSpec {
  int global_batch_size = 0;  ///< sequences per iteration, > 0
  int micro_batch_size = 1;   ///< sequences per micro-batch, > 0
  Precision precision = Precision::bf16;
  Recompute recompute = Recompute::none;
  bool fp32_grad_accumulation = true;  ///< Megatron default: fp32 main grads (4 B/param)
  bool flash_attention = true;         ///< fused attention kernel (no s×s score tensor in HBM)
  double train_tokens = 0.0;           ///< token budget for time-to-train, 0 = not asked
  /// LoRA fine-tuning (Hu et al. 2021, arXiv:2106.09685): rank r of the low-rank adapters; the
  /// base model is frozen (no weight-gradient GEMMs, gradients or optimizer state for it).
  /// 0 = full training. Dense decoders only (the loader checks it).
  int lora_rank = 0;
  /// Comma-separated matrices of every layer that get an adapter: q, k, v, o (attention),
  /// gate, up, down (MLP; gate only with a gated MLP), or all-linear. Default "q,v": the LoRA
  /// paper's choice for GPT-3 (§4.2, Table 5: Wq, Wv best for a fixed budget) and PEFT's default
  /// target_modules for Llama (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING).
  std::string lora_target_modules = "q,v";
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
};

struct OptionsSpec {
  /// Iterations simulated (>= 1); the report is of the last one. With overlap_param_gather and
  /// ZeRO-1 at least 2 are simulated, so the gather's overlap with the next forward is real.
  int iterations = 1;
  bool fold_symmetric = true;  ///< simulate one DP replica when the job is symmetric (DESIGN §3)
  int threads = 1;             ///< worker threads for op-graph generation (result independent of it)
};

// ---- Storage, reliability and cost (issue 4, DESIGN §4.5). Each is optional: absent = not modelled.

/// Where data is read from or checkpoints are written to.
enum class StorageTarget { local, shared_fs };
/// RAID layout of a node's local drives.
enum class RaidLevel { raid0, raid1, raid10, raid5, raid6 };
/// RAID controller cache policy. write_back: a write is acknowledged once in the controller's
/// DRAM cache, which coalesces sequential writes into full stripes; write_through: acknowledged
/// once on the drives, every write committed as it comes (parity RAID pays read-modify-write).
enum class WriteCachePolicy { write_back, write_through };
/// synchronous: training stops while the checkpoint is written; asynchronous: training stops only
/// for the device-to-host snapshot, the write runs in the background (e.g. PyTorch DCP async_save).
enum class CheckpointMode { synchronous, asynchronous };

/// A node's local drives (NVMe) and, optionally, a hardware RAID controller in front of them.
struct LocalStorageSpec {
  /// Data drives per node. Default 8: DGX H100 has 8 x 3.84 TB U.2 NVMe data-cache drives
  /// (NVIDIA DGX H100 User Guide, hardware overview).
  int drives = 8;
  /// Sequential read/write per drive [GB/s]. Defaults 7.0 / 3.8: Samsung PM1733 3.84 TB
  /// (Samsung PM1733 datasheet: up to 7,000 MB/s read, 3,800 MB/s write).
  double drive_read_gb_per_s = 7.0;
  double drive_write_gb_per_s = 3.8;
  /// Default raid0: DGX OS stripes the data drives into one RAID-0 volume (DGX H100 User Guide).
  RaidLevel raid = RaidLevel::raid0;
  /// A hardware RAID controller sits between host and drives (its cache and host link apply).
  /// Default false: Linux software RAID (mdadm), no controller cache.
  bool hardware_controller = false;
  WriteCachePolicy cache_policy = WriteCachePolicy::write_back;
  /// Controller DRAM write cache [bytes]. Default 8 GiB: Broadcom MegaRAID 9670W-16i (8 GB DDR4).
  double controller_cache_bytes = 8.0 * 1073741824.0;
  /// Controller host link [GB/s]. Default 31.5: PCIe 4.0 x16 per direction after encoding
  /// (the 9670W-16i is a PCIe 4.0 x16 card).
  double controller_gb_per_s = 31.5;
};

/// A shared (parallel/network) file system seen by every node.
struct SharedFsSpec {
  /// Aggregate read/write bandwidth of the file system [GB/s]. Defaults 90 / 65: one DDN
  /// AI400X2 appliance (DDN A3I AI400X2 datasheet, 2023: 90 GB/s read, 65 GB/s write).
  double aggregate_read_gb_per_s = 90.0;
  double aggregate_write_gb_per_s = 65.0;
  /// Per-node client bandwidth [GB/s] (storage NICs). Default 50: two 200 Gb/s storage ports
  /// per DGX H100 (NVIDIA DGX SuperPOD H100 reference architecture, storage fabric).
  double per_node_gb_per_s = 50.0;
};

struct StorageSpec {
  LocalStorageSpec local;
  SharedFsSpec shared_fs;
  /// Where the data loader reads training samples. Default shared_fs.
  StorageTarget data_source = StorageTarget::shared_fs;
  /// Bytes read per token [bytes]; 0 = token IDs as Megatron-LM's indexed datasets store them:
  /// uint16 (2 B) when vocab_size < 65,500, else int32 (4 B) (megatron/core/datasets/
  /// indexed_dataset.py, DType.optimal_dtype).
  double bytes_per_token = 0.0;
  /// Extra bytes read per sequence (images, raw documents, metadata) [bytes]. Default 0.
  double bytes_per_sample = 0.0;
  /// Where checkpoints are written (and read back on restart). Default shared_fs.
  StorageTarget checkpoint_target = StorageTarget::shared_fs;
  CheckpointMode checkpoint_mode = CheckpointMode::synchronous;
  /// Training time between checkpoints [s]; 0 = the Young/Daly optimum from the failure rates
  /// (reliability's, or its defaults when reliability is absent).
  double checkpoint_interval_s = 0.0;
  /// Device-to-host copy per GPU for the asynchronous snapshot [GB/s]; 0 = the node template's
  /// PCIe link per direction.
  double snapshot_gb_per_s = 0.0;
};

/// One failure cause: rate per GPU-hour (scales with GPUs) and/or per node-hour (with nodes).
struct FailureRate {
  std::string cause;
  double per_gpu_hour = 0.0;   ///< failures per GPU-hour, >= 0
  double per_node_hour = 0.0;  ///< failures per node-hour, >= 0
};

struct ReliabilitySpec {
  /// Failure causes; empty = the defaults derived from Llama 3 Table 5 (models/reliability/).
  std::vector<FailureRate> failures;
  /// Work between checkpoints [s]; 0 = Daly's optimum (falls back to storage.checkpoint_interval_s
  /// when that is set).
  double checkpoint_interval_s = 0.0;
  /// Time from an interruption to training again, besides reading the checkpoint back [s]:
  /// detection, rescheduling onto spares, process start, NCCL initialisation. Default 600 s:
  /// an assumption (the phases as in Kokolis et al., arXiv:2410.21680, §V ETTR model); see
  /// scenarios/README.md for its effect.
  double restart_overhead_s = 600.0;
  /// Wall-clock window [s]; 0 = until train_tokens are trained (then train_tokens must be set).
  /// When both are given a draw stops at whichever comes first.
  double horizon_s = 0.0;
  int monte_carlo_draws = 1000;  ///< >= 1
  std::uint64_t seed = 1;        ///< Monte-Carlo seed; same seed, same report
};

struct CostSpec {
  /// Purchase price per node [USD]; 0 = the default for the GPU (models/cost/cost_model.h).
  double node_price_usd = 0.0;
  /// Per fabric switch [USD]; default 36,000 (64-port 400 Gb/s InfiniBand switch, FS.com, Aug 2024).
  double switch_price_usd = 36000.0;
  /// Per node-to-leaf or switch-to-switch link incl. both transceivers [USD]; default 2,560
  /// (public H100 cluster cost sheet, Aug 2024: USD 41.9M of cables and optics for 16,384 GPUs).
  double cable_price_usd = 2560.0;
  /// Straight-line depreciation period [years]. Default 5 (Meta 2022 10-K: servers and network
  /// equipment, 5 years).
  double amortization_years = 5.0;
  /// Upkeep (support contract, spares, repair) per year as a fraction of capex. Default 0.20
  /// (NVIDIA DGX H100 1-year support quoted at ~20% of the base price, 2024).
  double upkeep_fraction_per_year = 0.20;
  /// Electricity [USD/kWh]. Default 0.0806: U.S. industrial average 2023 (EIA, March 2024).
  double energy_price_usd_per_kwh = 0.0806;
  /// Rent price per GPU-hour [USD]; 0 = the default for the GPU (models/cost/cost_model.h).
  double cloud_price_per_gpu_hour_usd = 0.0;
  /// Fraction of the year the owned cluster does useful work (buy vs rent). Default 1.
  double utilization = 1.0;
};

/// Power settings (DESIGN §4.5; models/power/). Unset fields keep the catalog's values.
struct PowerSpec {
  /// Per-GPU power limit as `nvidia-smi -pl` sets it [W]; 0 = the GPU's TDP (no cap). Range:
  /// the GPU's idle power < limit <= TDP.
  double gpu_power_limit_w = 0.0;
  /// Facility power usage effectiveness (total facility power / IT power), >= 1. Default 1.58:
  /// the global average of the Uptime Institute Global Data Center Survey 2023.
  double pue = 1.58;
  /// Average CPU load during training as a fraction of the sockets' TDP, in [0, 1]. Default 0.5
  /// (estimate: data loader, NCCL proxy and launcher threads on a minority of cores).
  double cpu_load_fraction = 0.5;
  /// Power supplies that may fail while the node must keep running; empty = the template's
  /// (N+1 = 1). Range 0 to psu_count - 1.
  std::optional<int> psu_redundant;
  /// Override u(a) of models/power/power_model.h for memory-bound kernels and for communication,
  /// in [0, 1]; empty = the defaults there (a calibration profile may set them).
  std::optional<double> memory_bound_fraction;
  std::optional<double> comm_fraction;
};

enum class Cooling { air, liquid };
/// Where a run's GPUs start thermally.
enum class ThermalStart {
  steady_state,  ///< each GPU at the periodic steady state of a first pass's last iteration (a job running for hours)
  idle,          ///< each GPU at its idle steady state (a job that has just started)
};

/// Cooling settings (DESIGN §4.5; models/power/). R and C of the lumped GPU model default to the
/// values documented in models/power/power_thermal.cc per cooling kind.
struct ThermalSpec {
  Cooling cooling = Cooling::air;
  /// Supply (cold-aisle) air temperature [C]. Default 25 (inside ASHRAE's recommended 18-27 C).
  double supply_air_c = 25.0;
  /// Liquid coolant inlet temperature [C] (cooling = liquid). Default 35 (ASHRAE W32-W40 classes).
  double coolant_c = 35.0;
  /// Per local GPU position in every node: fraction of the design airflow reaching it, (0, 1];
  /// empty = all 1. Blocked airflow raises R as 1/fraction^0.8 (forced convection) and raises
  /// the preheat the GPU passes downstream as 1/fraction.
  std::vector<double> gpu_airflow_fraction;
  /// Junction-to-inlet thermal resistance [K/W] and heat capacity [J/K]; 0 = the default.
  double r_k_per_w = 0.0;
  double c_j_per_k = 0.0;
  /// Heat one rack's cooling can remove [W]; 0 = unlimited. Excess heat recirculates into the
  /// rack's supply air: inlet rises by excess / (rho c_p x rack airflow).
  double rack_cooling_capacity_w = 0.0;
  /// Nodes per rack, >= 1. Default 4 (NVIDIA DGX SuperPOD H100 reference architecture: 4 DGX
  /// H100 per rack).
  int nodes_per_rack = 4;
  ThermalStart start = ThermalStart::steady_state;
};

struct Scenario {
  std::string name;
  std::string description;
  ClusterSpec cluster;
  ModelSpec model;
  ParallelSpec parallel;
  TrainingSpec training;
  OffloadSpec offload;
  OptionsSpec options;
  std::optional<StorageSpec> storage;          ///< absent: storage not modelled (no stalls)
  std::optional<ReliabilitySpec> reliability;  ///< absent: failures not modelled
  std::optional<CostSpec> cost;                ///< absent: cost not reported
  /// workload.data_loader: absent = input copies not modelled (free). ResNet family only.
  std::optional<DataLoaderSpec> data_loader;
  PowerSpec power;
  ThermalSpec thermal;
};

}  // namespace traincast::models
