#pragma once
// Datasheet specifications of GPUs, NICs and node templates. Every entry names its source.
// Bandwidths are per direction, GB = 1e9 bytes. FLOP/s are dense (no 2:4 sparsity).

#include <string>
#include <string_view>
#include <vector>

#include "models/spec/node_template.h"

namespace traincast::models {

struct ClusterSpec;  // models/spec/cluster_spec.h

/// Who makes the GPU: its scale-up links (NVLink or AMD Infinity Fabric / xGMI) follow from it.
enum class GpuVendor { nvidia, amd };

/// How a GPU is mounted, which decides the servers it physically fits (models/hardware/catalog_fit.cc).
enum class FormFactor {
  sxm,   ///< NVIDIA SXM module on an HGX/DGX baseboard whose NVLink wiring is of one NVLink generation
  oam,   ///< OCP Accelerator Module on a universal baseboard (AMD Instinct MI300X: xGMI mesh)
  pcie,  ///< PCIe add-in card in a PCIe slot (NVLink, where it has any, by bridges between card pairs)
  /// GPU of a Grace superchip (GH200, GB200, GB300): soldered or socketed on a board beside a Grace
  /// CPU that it reaches over NVLink-C2C; its NVLinks go to the rack's (or tray's) NVLink wiring.
  superchip,
};

struct GpuSpec {
  std::string name;  ///< catalog key, e.g. "H100-SXM5-80GB"
  GpuVendor vendor = GpuVendor::nvidia;
  FormFactor form_factor = FormFactor::sxm;
  /// NVIDIA CUDA compute capability x 10 (sm70 = 7.0 = 70), from NVIDIA's "CUDA GPUs - Compute
  /// Capability" table (developer.nvidia.com/cuda-gpus); 0 for AMD (see gfx_arch).
  int compute_capability = 0;
  std::string gfx_arch;        ///< AMD LLVM target (ROCm "GPU hardware specifications"), e.g. "gfx942"; "" for NVIDIA
  double peak_fp64_flops = 0;  ///< dense FLOP/s (tensor core where the GPU has it)
  double peak_fp32_flops = 0;  ///< non-tensor FP32 FLOP/s
  double peak_tf32_flops = 0;
  double peak_fp16_flops = 0;  ///< fp16 tensor, fp32 accumulate
  double peak_bf16_flops = 0;
  double peak_fp8_flops = 0;      ///< 0 when the GPU has no fp8
  double peak_fp4_flops = 0;      ///< dense NVFP4 tensor FLOP/s; 0 when the GPU has no fp4 (or none published)
  double hbm_capacity_bytes = 0;  ///< usable device memory [bytes] as nvidia-smi reports it (binary: "80 GB" = 80 GiB)
  double hbm_bandwidth_bytes_per_s = 0;
  int sm_count = 0;
  double boost_clock_mhz = 0;
  double tdp_w = 0;
  double idle_w = 0;
  /// Lowest power limit the board accepts (`nvidia-smi -q` "Min Power Limit"; `nvidia-smi -pl`
  /// refuses below it) [W]; 0 = not published for this board (models/power/power_model.h,
  /// min_power_limit_w, then derives the floor the power model can hold).
  double min_power_limit_w = 0;
  int nvlink_generation = 0;               ///< 0 = none (AMD xGMI: 0, links below still describe it)
  int nvlink_links = 0;                    ///< scale-up links per GPU (NVLink, or xGMI for AMD)
  double nvlink_bytes_per_s_per_link = 0;  ///< per direction
  /// true when the scale-up links form a full mesh (one link to each peer, e.g. MI300X xGMI)
  /// instead of going through NVSwitch.
  /// PCIe cards: the most GPUs one NVLink bridge of the card joins (2: a 2-way bridge, A30,
  /// A100/H100 PCIe; 4: H200 NVL's 4-way bridge). Ignored for baseboard GPUs.
  int nvlink_bridge_max_gpus = 2;
  bool scale_up_mesh = false;  ///< informative; the node template's ScaleUp decides the topology
  int pcie_generation = 0;
  int pcie_lanes = 16;
  double slowdown_temp_c = 0;
  double shutdown_temp_c = 0;
  std::string source;  ///< datasheet / document the numbers come from
};

struct NicSpec {
  std::string name;          ///< e.g. "IB-HDR-200", "IB-NDR-400"
  double bytes_per_s = 0;    ///< line rate per direction after encoding
  long long latency_ns = 0;  ///< NIC-to-NIC through the adapter pair, excl. switches
  std::string source;
};

/// Usable bandwidth of a PCIe link per direction [bytes/s], after line encoding:
/// gen1/2 8b/10b, gen3-5 128b/130b, gen6 FLIT mode (242/256 useful bytes). gen4 x16 = 31.5e9,
/// gen5 x16 = 63.0e9. Source: PCI-SIG base specifications 1.0-6.0 (raw GT/s per lane:
/// 2.5, 5, 8, 16, 32, 64). Throws std::invalid_argument for gen outside 1..6 or lanes not in
/// {1, 2, 4, 8, 16}.
double pcie_bytes_per_s(int generation, int lanes);

/// The GPU's kernel architecture as compilers name it: "sm90" (NVIDIA), "gfx942" (AMD).
std::string kernel_arch(const GpuSpec& gpu);

/// Whether the GPU runs the fused (flash) attention kernel Megatron-LM uses: FlashAttention-2 and
/// TransformerEngine's cuDNN fused attention need sm80+ (Dao-AILab/flash-attention README:
/// "Ampere, Ada, or Hopper GPUs"; Turing and Volta are not supported); on AMD, ROCm's
/// FlashAttention-2 port runs on CDNA2/CDNA3 (gfx90a, gfx942: ROCm/flash-attention README, "MI200
/// or MI300").
bool runs_flash_attention(const GpuSpec& gpu);
/// Whether the GPU has fp8 tensor cores: NVIDIA sm89 (Ada) and sm90+ (Hopper, Blackwell)
/// (TransformerEngine's fp8 check: compute capability >= 8.9); AMD CDNA3 (gfx942: MI300X data
/// sheet, FP8 2,614.9 TFLOP/s).
bool runs_fp8(const GpuSpec& gpu);
/// Whether the GPU has fp4 tensor cores: NVIDIA sm100+ (Blackwell's fifth-generation tensor cores,
/// NVFP4: NVIDIA Blackwell architecture technical brief, 2024); none of the catalog's AMD GPUs.
bool runs_fp4(const GpuSpec& gpu);

/// Why `gpu` cannot be put in `node` in place of the template's own GPU, as "what is wrong
/// (expected ...)"; empty when it fits. The rule (docs/scenarios.md, "Which GPU fits which node
/// template"): the same form factor as the template's GPU (an SXM module needs an SXM baseboard,
/// an OAM module a UBB, a PCIe card a slot); on a baseboard (SXM/OAM) the same NVLink generation
/// (xGMI for AMD) and at most the baseboard's links per GPU (fewer fit: an H800 on the HGX H100
/// board brings up 8 of its 18, and Cluster wires the GPU's own count, so the node has the H800's
/// NVLink bandwidth), and on a mesh at least one link to
/// each of the gpus_per_node - 1 peers; with NVLink bridges (ScaleUp::bridges) a card with bridge
/// connectors of the template GPU's NVLink generation; and a PCIe generation no older than the
/// template's (the template's PCIe figures are of its generation; an older card would train
/// slower than they say). Throws std::invalid_argument when the template's own GPU is unknown.
std::string gpu_fit_problem(const NodeTemplate& node, const GpuSpec& gpu);

/// Why NVLink bridges of `bridge_gpus` GPUs cannot join `gpu` cards in `node`, as "what is wrong
/// (expected ...)"; empty when they can. Rules: the template has bridges (ScaleUp::bridges);
/// 2 or 4 GPUs per bridge (NVIDIA's 2-way and 4-way bridges: H200 datasheet, H200 NVL "2- or
/// 4-way NVLink bridge"); at most the card's nvlink_bridge_max_gpus; the bridge groups tile the
/// node's GPUs (bridge_gpus divides gpus_per_node); the card's links split evenly over the
/// bridge_gpus - 1 peers of a group (18 NVLink4 links of H200 NVL: 6 per peer).
std::string bridge_group_problem(const NodeTemplate& node, const GpuSpec& gpu, int bridge_gpus);

/// Throws std::invalid_argument naming the unknown key and listing known ones.
const GpuSpec& find_gpu(std::string_view name);
const NicSpec& find_nic(std::string_view name);
/// A built-in template or a "base/N" partition of one (nvlink_domains.h), by name alone: for the
/// catalog's own listings and for code that names a built-in. A scenario's node is looked up with
/// find_node_template below. Throws std::invalid_argument naming the key and listing the built-ins.
const NodeTemplate& find_builtin_node_template(std::string_view name);
/// `name` among the templates a scenario describes (`described`), else among the built-ins; a
/// "base/N" partition of either (a described base's is kept in `described`, a built-in's for the
/// program's life). References stay valid while `described` (a copy of it) lives. Throws
/// std::invalid_argument as find_builtin_node_template does, or as partition_node_template does.
const NodeTemplate& find_node_template(std::string_view name, const DescribedNodeTemplates& described);
/// find_node_template(name, cluster.described_node_templates): a node template a cluster names.
const NodeTemplate& find_node_template(std::string_view name, const ClusterSpec& cluster);
/// The cluster's node template (cluster.node_template: the first group's with node groups).
const NodeTemplate& cluster_node_template(const ClusterSpec& cluster);
/// Whether `name` is a built-in template (not a partition, not a scenario's).
bool is_builtin_node_template(std::string_view name);
/// Catalog keys in catalog order.
std::vector<std::string> gpu_names();
std::vector<std::string> nic_names();
std::vector<std::string> node_template_names();
/// The names a cluster may use: the scenario's own templates (block order), then the built-ins.
std::vector<std::string> node_template_names(const DescribedNodeTemplates& described);

}  // namespace traincast::models
