// Datasheet specifications of GPUs, NICs and node templates.
//
// Conventions (see catalog.h): FLOP/s are dense (the "with sparsity" datasheet figures halved),
// bandwidths per direction, GB = 1e9 bytes. Where a datasheet quotes a bidirectional NVLink
// total ("600 GB/s"), the per-direction per-link figure is total / 2 / links.
//
// Fields no datasheet gives (idle power, thermal thresholds for some parts) are marked
// "estimate" in the source string; calibration profiles are expected to override them.
// Thermal thresholds: nvidia-smi -q "GPU Slowdown Temp"/"GPU Shutdown Temp" read 89/92 C on
// DGX A100 (driver 525) and NVIDIA's H100 PCIe product brief states 89 C slowdown / 92 C
// shutdown; we use those for Ampere/Hopper/Blackwell data-centre parts.

#include "models/hardware/catalog.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace traincast::models {
namespace {

constexpr double kTera = 1e12;
constexpr double kGB = 1e9;
// Memory capacities: DRAM makers' "GB" are binary (an "80 GB" A100 has 5 stacks of 16 GiB), so
// capacities are given in MiB as nvidia-smi reports FB memory total (after ECC/reserved areas).
constexpr double kMiB = 1048576.0;

template <typename T>
std::string known_list(const std::vector<T>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += item.name;
  }
  return out;
}

template <typename T>
const T& find_in(const std::vector<T>& items, std::string_view name, const char* what) {
  for (const auto& item : items) {
    if (item.name == name) return item;
  }
  throw std::invalid_argument(std::string("unknown ") + what + " '" + std::string(name) +
                              "' (known: " + known_list(items) + ")");
}

std::vector<GpuSpec> make_gpus() {
  std::vector<GpuSpec> g;
  GpuSpec s;

  // NVIDIA Tesla V100 datasheet (2020, SXM2 column). Tensor cores: fp16 only (no tf32/bf16/fp8).
  // NVLink2: 6 links, 300 GB/s total bidirectional -> 25 GB/s per link per direction.
  s = {};
  s.name = "V100-SXM2-32GB";
  s.peak_fp64_flops = 7.8 * kTera;
  s.peak_fp32_flops = 15.7 * kTera;
  s.peak_tf32_flops = 0;
  s.peak_fp16_flops = 125 * kTera;
  s.peak_bf16_flops = 0;
  s.peak_fp8_flops = 0;
  s.hbm_capacity_bytes = 32 * 1024 * kMiB;  // 32 GiB
  s.hbm_bandwidth_bytes_per_s = 900 * kGB;
  s.sm_count = 80;
  s.boost_clock_mhz = 1530;
  s.tdp_w = 300;
  s.idle_w = 40;
  s.nvlink_generation = 2;
  s.nvlink_links = 6;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  s.pcie_generation = 3;
  s.slowdown_temp_c = 87;
  s.shutdown_temp_c = 90;
  s.source = "NVIDIA Tesla V100 GPU datasheet (2020), SXM2 32GB; idle power and temperatures: estimate";
  g.push_back(s);

  // NVIDIA A100 Tensor Core GPU datasheet (2021), A100 40GB SXM column.
  // NVLink3: 12 links, 600 GB/s bidirectional -> 25 GB/s per link per direction.
  s = {};
  s.name = "A100-SXM4-40GB";
  s.peak_fp64_flops = 19.5 * kTera;  // FP64 Tensor Core (9.7 without)
  s.peak_fp32_flops = 19.5 * kTera;
  s.peak_tf32_flops = 156 * kTera;
  s.peak_fp16_flops = 312 * kTera;
  s.peak_bf16_flops = 312 * kTera;
  s.peak_fp8_flops = 0;
  s.hbm_capacity_bytes = 40960 * kMiB;  // nvidia-smi: 40960 MiB
  s.hbm_bandwidth_bytes_per_s = 1555 * kGB;
  s.sm_count = 108;
  s.boost_clock_mhz = 1410;
  s.tdp_w = 400;
  s.idle_w = 55;
  s.nvlink_generation = 3;
  s.nvlink_links = 12;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  s.pcie_generation = 4;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 40GB SXM; SM count/clock: NVIDIA A100 "
      "architecture whitepaper (2020); idle power: estimate";
  g.push_back(s);

  // Same datasheet, A100 80GB SXM column (HBM2e 2,039 GB/s).
  s.name = "A100-SXM4-80GB";
  s.hbm_capacity_bytes = 81920 * kMiB;  // nvidia-smi (A100 80GB): 81920 MiB
  s.hbm_bandwidth_bytes_per_s = 2039 * kGB;
  s.source =
      "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 80GB SXM; SM count/clock: NVIDIA A100 "
      "architecture whitepaper (2020); idle power: estimate";
  g.push_back(s);

  // Same datasheet, A100 80GB PCIe column: 1,935 GB/s, 300 W, NVLink bridge for 2 GPUs 600 GB/s.
  s.name = "A100-PCIe-80GB";
  s.hbm_bandwidth_bytes_per_s = 1935 * kGB;
  s.tdp_w = 300;
  s.idle_w = 45;
  s.source =
      "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 80GB PCIe (NVLink bridge pairs, 600 GB/s); "
      "idle power: estimate";
  g.push_back(s);

  // NVIDIA A800 40GB/80GB datasheet (2022), A800 80GB SXM: A100 compute, NVLink 400 GB/s (8 links).
  s.name = "A800-SXM4-80GB";
  s.hbm_bandwidth_bytes_per_s = 2039 * kGB;
  s.tdp_w = 400;
  s.idle_w = 55;
  s.nvlink_links = 8;
  s.source =
      "NVIDIA A800 Tensor Core GPU datasheet (2022), A800 80GB SXM (NVLink 400 GB/s bidirectional); "
      "idle power: estimate";
  g.push_back(s);

  // NVIDIA A30 Tensor Core GPU datasheet (2021): NVLink3 bridge 200 GB/s -> 4 links.
  s = {};
  s.name = "A30";
  s.peak_fp64_flops = 10.3 * kTera;  // FP64 Tensor Core
  s.peak_fp32_flops = 10.3 * kTera;
  s.peak_tf32_flops = 82 * kTera;
  s.peak_fp16_flops = 165 * kTera;
  s.peak_bf16_flops = 165 * kTera;
  s.hbm_capacity_bytes = 24 * 1024 * kMiB;  // 24 GiB
  s.hbm_bandwidth_bytes_per_s = 933 * kGB;
  s.sm_count = 56;
  s.boost_clock_mhz = 1440;
  s.tdp_w = 165;
  s.idle_w = 30;
  s.nvlink_generation = 3;
  s.nvlink_links = 4;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  s.pcie_generation = 4;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA A30 Tensor Core GPU datasheet (2021) (NVLink bridge 200 GB/s); idle power and "
      "temperatures: estimate";
  g.push_back(s);

  // NVIDIA H100 Tensor Core GPU datasheet (2023), H100 SXM column; SM count 132 and max boost
  // 1,980 MHz from the NVIDIA H100 architecture whitepaper (2022). NVLink4: 18 links, 900 GB/s.
  s = {};
  s.name = "H100-SXM5-80GB";
  s.peak_fp64_flops = 66.9 * kTera;  // FP64 Tensor Core (33.5 without)
  s.peak_fp32_flops = 66.9 * kTera;
  s.peak_tf32_flops = 494.7 * kTera;
  s.peak_fp16_flops = 989.4 * kTera;
  s.peak_bf16_flops = 989.4 * kTera;
  s.peak_fp8_flops = 1978.9 * kTera;
  s.hbm_capacity_bytes = 81559 * kMiB;  // nvidia-smi (H100 SXM5 80GB): 81559 MiB
  s.hbm_bandwidth_bytes_per_s = 3350 * kGB;
  s.sm_count = 132;
  s.boost_clock_mhz = 1980;
  s.tdp_w = 700;
  s.idle_w = 70;
  s.nvlink_generation = 4;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 SXM; NVIDIA H100 architecture whitepaper "
      "(2022) for SMs/clock; idle power: estimate";
  g.push_back(s);

  // NVIDIA H800 Tensor Core GPU datasheet (2023), H800 SXM: H100 SXM with FP64 capped at
  // 1 TFLOP/s and NVLink at 400 GB/s bidirectional (8 links).
  s.name = "H800-SXM5-80GB";
  s.peak_fp64_flops = 1 * kTera;
  s.nvlink_links = 8;
  s.source =
      "NVIDIA H800 Tensor Core GPU datasheet (2023), H800 SXM (FP64 1 TFLOP/s, NVLink 400 GB/s); "
      "idle power: estimate";
  g.push_back(s);

  // NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM: H100 SXM compute, 141 GB HBM3e at
  // 4.8 TB/s, up to 700 W, NVLink 900 GB/s.
  s.name = "H200-SXM-141GB";
  s.peak_fp64_flops = 66.9 * kTera;
  s.nvlink_links = 18;
  s.hbm_capacity_bytes = 143771 * kMiB;  // nvidia-smi (H200): 143771 MiB
  s.hbm_bandwidth_bytes_per_s = 4800 * kGB;
  s.idle_w = 75;
  s.source = "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM; idle power: estimate";
  g.push_back(s);

  // NVIDIA H100 datasheet (2023), H100 PCIe column: 114 SMs, 1,755 MHz, HBM2e 2.0 TB/s, 350 W,
  // NVLink bridge 600 GB/s (12 NVLink4 links).
  s = {};
  s.name = "H100-PCIe-80GB";
  s.peak_fp64_flops = 51.2 * kTera;
  s.peak_fp32_flops = 51.2 * kTera;
  s.peak_tf32_flops = 378 * kTera;
  s.peak_fp16_flops = 756 * kTera;
  s.peak_bf16_flops = 756 * kTera;
  s.peak_fp8_flops = 1513 * kTera;
  s.hbm_capacity_bytes = 81559 * kMiB;  // nvidia-smi (H100 PCIe 80GB): 81559 MiB
  s.hbm_bandwidth_bytes_per_s = 2000 * kGB;
  s.sm_count = 114;
  s.boost_clock_mhz = 1755;
  s.tdp_w = 350;
  s.idle_w = 50;
  s.nvlink_generation = 4;
  s.nvlink_links = 12;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 PCIe; NVIDIA H100 PCIe product brief "
      "(slowdown 89 C, shutdown 92 C); idle power: estimate";
  g.push_back(s);

  // NVIDIA HGX B200 datasheet (2024): 8-GPU totals / 8, sparse figures halved. FP64 296 TF/8 = 37,
  // FP32 600 TF/8 = 75, TF32 18 PF sparse -> 1.125 PF, FP16/BF16 36 PF -> 2.25 PF, FP8 72 PF ->
  // 4.5 PF; 1.44 TB HBM3e -> 180 GB, 64 TB/s -> 8 TB/s per GPU; NVLink5 1.8 TB/s (18 x 50 GB/s per
  // direction); 1000 W. SM count 148 and boost clock are not in the datasheet (public reports).
  s = {};
  s.name = "B200";
  s.peak_fp64_flops = 37 * kTera;
  s.peak_fp32_flops = 75 * kTera;
  s.peak_tf32_flops = 1125 * kTera;
  s.peak_fp16_flops = 2250 * kTera;
  s.peak_bf16_flops = 2250 * kTera;
  s.peak_fp8_flops = 4500 * kTera;
  s.hbm_capacity_bytes = 180 * 1024 * kMiB;  // 180 GiB
  s.hbm_bandwidth_bytes_per_s = 8000 * kGB;
  s.sm_count = 148;
  s.boost_clock_mhz = 1965;
  s.tdp_w = 1000;
  s.idle_w = 140;
  s.nvlink_generation = 5;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 50 * kGB;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA HGX B200 datasheet (2024), per GPU = platform / 8; SMs, clock, idle power and "
      "temperatures: estimate";
  g.push_back(s);

  // NVIDIA L40S datasheet (2023): FP32 91.6, TF32 183, BF16/FP16 362.05, FP8 733 dense; 48 GB
  // GDDR6 864 GB/s; 350 W; PCIe gen4 x16; no NVLink. FP64 is 1/64 of FP32 (not in datasheet).
  s = {};
  s.name = "L40S";
  s.peak_fp64_flops = 91.6 * kTera / 64;
  s.peak_fp32_flops = 91.6 * kTera;
  s.peak_tf32_flops = 183 * kTera;
  s.peak_fp16_flops = 362.05 * kTera;
  s.peak_bf16_flops = 362.05 * kTera;
  s.peak_fp8_flops = 733 * kTera;
  s.hbm_capacity_bytes = 46068 * kMiB;  // GDDR6, not HBM; nvidia-smi (L40S): 46068 MiB
  s.hbm_bandwidth_bytes_per_s = 864 * kGB;
  s.sm_count = 142;
  s.boost_clock_mhz = 2520;
  s.tdp_w = 350;
  s.idle_w = 35;
  s.nvlink_generation = 0;
  s.nvlink_links = 0;
  s.nvlink_bytes_per_s_per_link = 0;
  s.pcie_generation = 4;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source = "NVIDIA L40S datasheet (2023); FP64 (1/64 rate), idle power and temperatures: estimate";
  g.push_back(s);

  // AMD Instinct MI300X accelerator data sheet (2023): FP64 matrix 163.4, FP32 vector 163.4,
  // TF32 653.7, FP16/BF16 1307.4, FP8 2614.9 (dense); 192 GB HBM3 at 5.3 TB/s; 304 CUs at
  // 2,100 MHz peak; 750 W; Infinity Fabric (xGMI) 7 links x 128 GB/s bidirectional (896 GB/s
  // aggregate) to the 7 peers of an 8-GPU OAM platform -> 64 GB/s per link per direction; PCIe gen5.
  s = {};
  s.name = "MI300X";
  s.peak_fp64_flops = 163.4 * kTera;
  s.peak_fp32_flops = 163.4 * kTera;
  s.peak_tf32_flops = 653.7 * kTera;
  s.peak_fp16_flops = 1307.4 * kTera;
  s.peak_bf16_flops = 1307.4 * kTera;
  s.peak_fp8_flops = 2614.9 * kTera;
  s.hbm_capacity_bytes = 192 * 1024 * kMiB;  // 192 GiB
  s.hbm_bandwidth_bytes_per_s = 5300 * kGB;
  s.sm_count = 304;  // compute units
  s.boost_clock_mhz = 2100;
  s.tdp_w = 750;
  s.idle_w = 140;
  s.nvlink_generation = 0;
  s.nvlink_links = 7;
  s.nvlink_bytes_per_s_per_link = 64 * kGB;
  s.scale_up_mesh = true;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 100;
  s.shutdown_temp_c = 105;
  s.source = "AMD Instinct MI300X accelerator data sheet (2023); idle power and temperatures: estimate";
  g.push_back(s);

  return g;
}

std::vector<NicSpec> make_nics() {
  // Line rates are data rates after encoding (IB HDR/NDR/XDR and 100/200/400 GbE all use 64b/66b
  // or PAM4+FEC whose quoted Gb/s is already the data rate). Latency: NVIDIA ConnectX-6/-7
  // product briefs quote "sub-600 ns" adapter latency for InfiniBand; RoCE adapter latency is
  // higher through the Ethernet MAC/FEC path: we use 1,000 ns (estimate).
  auto ib = [](std::string name, double gbit, std::string src) {
    return NicSpec{std::move(name), gbit * 1e9 / 8, 600, std::move(src)};
  };
  auto roce = [](std::string name, double gbit, std::string src) {
    return NicSpec{std::move(name), gbit * 1e9 / 8, 1000, std::move(src)};
  };
  return {
      ib("IB-EDR-100", 100, "NVIDIA ConnectX-5 VPI product brief (EDR 100 Gb/s, sub-600 ns)"),
      ib("IB-HDR-200", 200, "NVIDIA ConnectX-6 VPI product brief (2020): HDR 200 Gb/s, sub-600 ns latency"),
      ib("IB-NDR-400", 400, "NVIDIA ConnectX-7 product brief (2022): NDR 400 Gb/s, sub-600 ns latency"),
      ib("IB-XDR-800", 800, "NVIDIA ConnectX-8 SuperNIC product brief (2024): XDR 800 Gb/s; latency estimate"),
      roce("RoCE-100GbE", 100, "IEEE 802.3 100GbE; NVIDIA ConnectX-6 Dx product brief; latency estimate"),
      roce("RoCE-200GbE", 200, "IEEE 802.3 200GbE; NVIDIA ConnectX-6 Dx product brief; latency estimate"),
      roce("RoCE-400GbE", 400, "IEEE 802.3 400GbE; NVIDIA ConnectX-7 product brief; latency estimate"),
  };
}

std::vector<NodeTemplate> make_nodes() {
  std::vector<NodeTemplate> n;
  NodeTemplate t;

  // NVIDIA DGX A100 user guide / system architecture whitepaper (2020): 8x A100 SXM4, 6 NVSwitch
  // (gen2), 8 single-port ConnectX-6 HDR 200 Gb/s compute NICs; 4 PCIe gen4 switches, each
  // serving 2 GPUs and their 2 NICs.
  t = {};
  t.name = "dgx_a100";
  t.gpu = "A100-SXM4-80GB";
  t.gpus_per_node = 8;
  t.nvswitch = true;
  t.nic = "IB-HDR-200";
  t.nics = 8;
  t.pcie_generation = 4;
  t.pcie_bytes_per_s = pcie_bytes_per_s(4, 16);
  t.nvswitches = 6;
  t.gpus_per_pcie_switch = 2;
  t.source = "NVIDIA DGX A100 System Architecture whitepaper (2020); DGX A100 User Guide";
  n.push_back(t);

  t.name = "dgx_a100_40gb";
  t.gpu = "A100-SXM4-40GB";
  t.source = "NVIDIA DGX A100 System Architecture whitepaper (2020), 320 GB (8x 40 GB) variant";
  n.push_back(t);

  // NVIDIA DGX H100 user guide (2023): 8x H100 SXM5, 4 NVSwitch gen3 chips, 8 single-port
  // ConnectX-7 NDR 400 Gb/s compute NICs (in two OSFP "Cedar" modules), PCIe gen5 switches.
  t = {};
  t.name = "dgx_h100";
  t.gpu = "H100-SXM5-80GB";
  t.gpus_per_node = 8;
  t.nvswitch = true;
  t.nic = "IB-NDR-400";
  t.nics = 8;
  t.pcie_generation = 5;
  t.pcie_bytes_per_s = pcie_bytes_per_s(5, 16);
  t.nvswitches = 4;
  t.gpus_per_pcie_switch = 2;
  t.source = "NVIDIA DGX H100 User Guide (2023), hardware overview";
  n.push_back(t);

  // NVIDIA HGX H200 (2024): 8x H200 SXM, 4 NVSwitch gen3, 900 GB/s NVLink per GPU; NVIDIA's
  // reference configuration pairs each GPU with a ConnectX-7 NDR 400 NIC (as DGX H200).
  t.name = "hgx_h200";
  t.gpu = "H200-SXM-141GB";
  t.source = "NVIDIA HGX H200 datasheet (2024); DGX H200 User Guide (2024) for the NIC pairing";
  n.push_back(t);

  // NVIDIA DGX B200 user guide (2024): 8x B200, 2 NVSwitch gen4 chips (NVLink5, 1.8 TB/s per GPU),
  // 8 ConnectX-7 NDR 400 compute NICs, PCIe gen5.
  t = {};
  t.name = "dgx_b200";
  t.gpu = "B200";
  t.gpus_per_node = 8;
  t.nvswitch = true;
  t.nic = "IB-NDR-400";
  t.nics = 8;
  t.pcie_generation = 5;
  t.pcie_bytes_per_s = pcie_bytes_per_s(5, 16);
  t.nvswitches = 2;
  t.gpus_per_pcie_switch = 2;
  t.source = "NVIDIA DGX B200 User Guide (2024), hardware overview";
  n.push_back(t);

  // AMD Instinct MI300X platform (2023): 8 OAM MI300X fully connected by xGMI (one link per peer,
  // no switch); typical OEM builds (e.g. Dell XE9680) pair each GPU with a 400 Gb/s NIC.
  t = {};
  t.name = "mi300x_platform";
  t.gpu = "MI300X";
  t.gpus_per_node = 8;
  t.nvswitch = false;
  t.nic = "RoCE-400GbE";
  t.nics = 8;
  t.pcie_generation = 5;
  t.pcie_bytes_per_s = pcie_bytes_per_s(5, 16);
  t.nvswitches = 0;
  t.gpus_per_pcie_switch = 2;
  t.source = "AMD Instinct MI300X platform data sheet (2023); NIC pairing typical of OEM servers (estimate)";
  n.push_back(t);

  return n;
}

const std::vector<GpuSpec>& gpus() {
  static const std::vector<GpuSpec> v = make_gpus();
  return v;
}
const std::vector<NicSpec>& nics() {
  static const std::vector<NicSpec> v = make_nics();
  return v;
}
const std::vector<NodeTemplate>& nodes() {
  static const std::vector<NodeTemplate> v = make_nodes();
  return v;
}

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& items) {
  std::vector<std::string> out;
  out.reserve(items.size());
  for (const auto& item : items) out.push_back(item.name);
  return out;
}

}  // namespace

double pcie_bytes_per_s(int generation, int lanes) {
  if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) {
    throw std::invalid_argument("pcie_bytes_per_s: lanes " + std::to_string(lanes) + " not one of 1, 2, 4, 8, 16");
  }
  // Raw transfer rate per lane [GT/s] and the fraction of it that is data.
  double gt_per_s = 0;
  double efficiency = 0;
  switch (generation) {
    case 1:
      gt_per_s = 2.5;
      efficiency = 8.0 / 10.0;
      break;
    case 2:
      gt_per_s = 5.0;
      efficiency = 8.0 / 10.0;
      break;
    case 3:
      gt_per_s = 8.0;
      efficiency = 128.0 / 130.0;
      break;
    case 4:
      gt_per_s = 16.0;
      efficiency = 128.0 / 130.0;
      break;
    case 5:
      gt_per_s = 32.0;
      efficiency = 128.0 / 130.0;
      break;
    case 6:
      gt_per_s = 64.0;
      efficiency = 242.0 / 256.0;
      break;  // FLIT: 236 B TLP + 6 B DLLP per 256 B
    default:
      throw std::invalid_argument("pcie_bytes_per_s: generation " + std::to_string(generation) + " outside 1..6");
  }
  return gt_per_s * 1e9 * efficiency / 8.0 * lanes;
}

const GpuSpec& find_gpu(std::string_view name) { return find_in(gpus(), name, "GPU"); }
const NicSpec& find_nic(std::string_view name) { return find_in(nics(), name, "NIC"); }
const NodeTemplate& find_node_template(std::string_view name) { return find_in(nodes(), name, "node template"); }
std::vector<std::string> gpu_names() { return names_of(gpus()); }
std::vector<std::string> nic_names() { return names_of(nics()); }
std::vector<std::string> node_template_names() { return names_of(nodes()); }

}  // namespace traincast::models
