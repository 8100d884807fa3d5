#pragma once
// Datasheet specifications of GPUs, NICs and node templates. Every entry names its source.
// Bandwidths are per direction, GB = 1e9 bytes. FLOP/s are dense (no 2:4 sparsity).

#include <string>
#include <string_view>
#include <vector>

namespace traincast::models {

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

/// How the GPUs of a node reach each other besides PCIe.
enum class ScaleUp {
  none,      ///< PCIe only (GPU P2P through switches / root complex, or staged through host memory)
  nvswitch,  ///< every GPU's NVLinks go to NVSwitch chips: non-blocking all-to-all
  mesh,      ///< direct links between every GPU pair (AMD xGMI, HGX 4-GPU NVLink): links / peers each
  /// NVLink bridges join GPUs in groups of NodeTemplate::bridge_gpus (or ClusterSpec's
  /// nvlink_bridge_gpus): 2-way, GPUs 2k and 2k+1 (A30, A100/H100 PCIe); 4-way (H200 NVL), GPUs
  /// 4k..4k+3 all-to-all, each card's links split evenly over its 3 peers. Other pairs use PCIe.
  bridges,
  /// The NVLink links a node template lists one by one (NodeTemplate::nvlinks): GPUs joined by
  /// direct links in a pattern of their own, e.g. DGX-1's hybrid cube mesh. Other pairs use PCIe.
  graph,
};

/// `links` NVLink links between local GPUs gpu_a and gpu_b (ScaleUp::graph), each at the GPU's
/// per-link rate in each direction.
struct NvlinkEdge {
  int gpu_a = 0;
  int gpu_b = 0;
  int links = 1;
};

/// One PCIe switch of a node's PCIe tree (NodeTemplate::pcie_tree; text form `pcie_switch`): its
/// uplink reaches the root complex of CPU socket `socket` or, cascaded, a downstream port of
/// switch `upstream_switch`; GPUs and NICs sit on its downstream ports.
struct PcieSwitch {
  int socket = -1;                ///< socket whose root complex the uplink reaches; -1 when cascaded
  int upstream_switch = -1;       ///< switch (index into pcie_tree) the uplink reaches; -1 = a socket
  int uplink_generation = 0;      ///< as written; 0 = the node's pcie_generation
  int uplink_lanes = 0;           ///< as written; 0 = the node's pcie_lanes
  double uplink_bytes_per_s = 0;  ///< per direction; complete_node_template fills 0 (pcie_tree.h)
  std::vector<int> gpus;          ///< local GPUs on its downstream ports
  std::vector<int> nics;          ///< compute NICs on its downstream ports
  bool operator==(const PcieSwitch&) const = default;
};

/// GPUs and NICs on CPU socket `socket`'s own root ports, no switch between (NodeTemplate::root_ports).
struct PcieRootPorts {
  int socket = 0;
  std::vector<int> gpus;
  std::vector<int> nics;
  bool operator==(const PcieRootPorts&) const = default;
};

/// The local GPUs compute NIC `nic` serves (NodeTemplate::nic_gpus): a GPU's traffic to other
/// nodes leaves through the first NIC that serves it (its rail), and a NIC is placed beside the
/// first GPU it serves (the GPU NCCL's PXN relays through).
struct NicGpus {
  int nic = 0;
  std::vector<int> gpus;
  bool operator==(const NicGpus&) const = default;
};

/// A server as a graph: GPUs and NICs on PCIe switches (or CPU root ports), switches on CPU
/// sockets or on other switches, sockets joined by UPI/xGMI, NVLink per ScaleUp. The PCIe tree is
/// pcie_tree and root_ports, written out or, when neither is, the regular layout of pcie_switches
/// (complete_node_template expands it, models/hardware/pcie_tree.h): GPU g under PCIe switch
/// g / gpus_per_pcie_switch(); switch s on socket s * sockets / pcie_switches. Which GPUs a NIC
/// serves is nic_gpus, by default: with N NICs and G GPUs, NIC i serves GPUs [i*G/N, (i+1)*G/N)
/// when N <= G, GPU i*G/N otherwise (several NICs per GPU), and in the regular layout sits under
/// that GPU's switch (or root port).
struct NodeTemplate {
  std::string name;  ///< e.g. "dgx_a100", "dgx_h100"
  std::string gpu;   ///< GpuSpec name
  int gpus_per_node = 8;
  ScaleUp scale_up = ScaleUp::nvswitch;
  int bridge_gpus = 2;                 ///< ScaleUp::bridges: GPUs per NVLink bridge (2 or 4)
  int nvswitches = 0;                  ///< NVSwitch chips on the baseboard (0 = none)
  std::string nic;                     ///< NicSpec name of the compute NICs
  int nics = 8;                        ///< compute NICs (see above for which GPUs each serves)
  int sockets = 2;                     ///< CPU sockets (NUMA domains), >= 1
  int pcie_switches = 4;               ///< PCIe switches; 0 = GPUs and NICs on CPU root ports
  int pcie_generation = 0;             ///< of the GPU/NIC links
  int pcie_lanes = 16;                 ///< of each GPU/NIC link (the rate's default, node_template_text.h)
  double pcie_bytes_per_s = 0;         ///< each GPU's and NIC's PCIe link, per direction (x16)
  double pcie_uplink_bytes_per_s = 0;  ///< PCIe switch <-> root complex, per direction
  /// GPU traffic between two sockets, per direction [bytes/s]: what NCCL's topology model allows
  /// for GPU P2P over UPI/xGMI (NVIDIA/nccl src/graph/topo.h: SKL_QPI_BW 10, SRP_QPI_BW 22,
  /// ERP_QPI_BW 40, AMD_ZEN12_BW 16, AMD_ZEN34_BW 24, AMD_ZEN5_BW 32 GB/s), not the raw link rate.
  double socket_link_bytes_per_s = 0;
  std::string cpu;       ///< CPU family (names the socket-link figure)
  bool pcie_p2p = true;  ///< GPU P2P over PCIe allowed (false: staged through host memory)
  /// The product ships with cold plates only (GB200/GB300 NVL72): a scenario's thermal.cooling
  /// defaults to liquid on it and air is refused (models/io/scenario_convert.cc, scenario checks).
  bool liquid_cooled = false;
  /// GPUs in one rack when the product is a whole rack (GB200 NVL72: 72); thermal.nodes_per_rack
  /// then defaults to gpus_per_rack / gpus_per_node (1 for the rack, 2 for "gb200_nvl72/36") and
  /// other values are refused. 0 = servers racked as the scenario says (default 4 per rack).
  int gpus_per_rack = 0;
  /// ScaleUp::graph: the node's NVLink links, each GPU pair at most once.
  std::vector<NvlinkEdge> nvlinks;
  /// The PCIe switches, in switch order (pcie_switches of them once completed).
  std::vector<PcieSwitch> pcie_tree;
  /// GPUs and NICs on CPU root ports, by socket.
  std::vector<PcieRootPorts> root_ports;
  /// Which GPUs each NIC serves (empty before complete_node_template when not written).
  std::vector<NicGpus> nic_gpus;
  std::string source;
  /// GPUs under one PCIe switch (or root port when pcie_switches is 0).
  int gpus_per_pcie_switch() const {
    return pcie_switches > 0 ? (gpus_per_node + pcie_switches - 1) / pcie_switches : 1;
  }
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
/// A built-in template, a "base/N" partition of one (nvlink_domains.h), or one a scenario
/// described (register_node_template).
const NodeTemplate& find_node_template(std::string_view name);
/// Makes a scenario's own template (checked by complete_node_template) findable by its name for
/// the rest of the program. Throws std::invalid_argument "... (expected ...)" when the name is a
/// built-in's, holds a '/', or was registered before with other figures (two scenarios of one
/// process naming different nodes alike); registering the same template again does nothing.
void register_node_template(const NodeTemplate& t);
/// Whether `name` is a built-in template (not a partition, not a scenario's).
bool is_builtin_node_template(std::string_view name);
/// Catalog keys in catalog order.
std::vector<std::string> gpu_names();
std::vector<std::string> nic_names();
std::vector<std::string> node_template_names();

}  // namespace traincast::models
