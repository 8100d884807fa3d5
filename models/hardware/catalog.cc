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
// Compute capabilities: NVIDIA "CUDA GPUs - Compute Capability" (developer.nvidia.com/cuda-gpus):
// V100 7.0, RTX 2080 Ti 7.5, A100/A30 8.0, L40S/RTX 4090 8.9, H100 9.0, B200 10.0; the A800, H800,
// H200 and H20 are export/memory variants of A100 and H100 dies (8.0, 9.0).

#include "models/hardware/catalog.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/node_template_text.h"
#include "models/hardware/nvlink_domains.h"
#include "models/spec/cluster_spec.h"

namespace traincast::models::detail {
// models/hardware/node_templates.textproto, embedded at build time (models/embed_text.cmake).
extern const char kNodeTemplatesText[];
extern const std::size_t kNodeTemplatesTextSize;
}  // namespace traincast::models::detail

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

std::vector<GpuSpec> make_gpus() {  // NOLINT(readability-function-size): datasheet table, exempt by name (issue 15)
  std::vector<GpuSpec> g;
  GpuSpec s;

  // NVIDIA Tesla V100 datasheet (2020, SXM2 column). Tensor cores: fp16 only (no tf32/bf16/fp8).
  // NVLink2: 6 links, 300 GB/s total bidirectional -> 25 GB/s per link per direction.
  s = {};
  s.name = "V100-SXM2-32GB";
  s.form_factor = FormFactor::sxm;
  s.compute_capability = 70;
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
  // nvidia-smi -q of a Tesla V100 SXM2 (300 W, slowdown 87 C / shutdown 90 C): Min Power Limit
  // 100.00 W, Max Power Limit 300.00 W.
  s.min_power_limit_w = 100;
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
  s.form_factor = FormFactor::sxm;
  s.compute_capability = 80;
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
  // nvidia-smi -q of A100 SXM4 boards: Min Power Limit 100.00 W (the same on the 400 W and 500 W
  // variants; Max Power Limit = the board's TDP).
  s.min_power_limit_w = 100;
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
  s.form_factor = FormFactor::pcie;
  s.hbm_bandwidth_bytes_per_s = 1935 * kGB;
  s.tdp_w = 300;
  s.idle_w = 45;
  s.min_power_limit_w = 0;  // not in the catalog's sources: the power model's floor applies
  s.source =
      "NVIDIA A100 Tensor Core GPU datasheet (2021), A100 80GB PCIe (NVLink bridge pairs, 600 GB/s); "
      "idle power: estimate";
  g.push_back(s);

  // NVIDIA A800 40GB/80GB datasheet (2022), A800 80GB SXM: A100 compute, NVLink 400 GB/s (8 links).
  s.name = "A800-SXM4-80GB";
  s.form_factor = FormFactor::sxm;
  s.hbm_bandwidth_bytes_per_s = 2039 * kGB;
  s.tdp_w = 400;
  s.idle_w = 55;
  s.min_power_limit_w = 100;  // A100 SXM4 board (see A100-SXM4-40GB)
  s.nvlink_links = 8;
  s.source =
      "NVIDIA A800 Tensor Core GPU datasheet (2022), A800 80GB SXM (NVLink 400 GB/s bidirectional); "
      "idle power: estimate";
  g.push_back(s);

  // NVIDIA A30 Tensor Core GPU datasheet (2021): NVLink3 bridge 200 GB/s -> 4 links.
  s = {};
  s.name = "A30";
  s.form_factor = FormFactor::pcie;
  s.compute_capability = 80;
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
  s.form_factor = FormFactor::sxm;
  s.compute_capability = 90;
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
  // nvidia-smi -q on an H800 SXM5 (the same Hopper SXM5 board, 700 W; shared data power-thermal
  // pt01): Min Power Limit 200.00 W; NVIDIA DGX H100/H200 User Guide, "Managing Power Capping"
  // (Redfish PowerLimitWatts AllowableMin 200, AllowableMax 700).
  s.min_power_limit_w = 200;
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

  // The H100 of Meta's Grand Teton hosts (torchtitan's benchmarks ran on it): "96GB HBM2e with
  // 2.4 TB/sec peak memory bandwidth", "the default 500W power limit", "up to 700W TDP"
  // (pytorch/torchtitan docs/performance.md). NVIDIA publishes no datasheet for it; the TorchTitan
  // paper (arXiv:2410.06511) calls it non-standard, HBM2e, its peak "between SXM and NVL", exact
  // value unknown: the SXM's compute and clock are taken (the 500 W limit is a scenario's
  // power.gpu_power_limit_w, which the DVFS model turns into clocks). Capacity: six HBM2e stacks
  // where the 80 GB SXM5 has five (2.4 TB/s = 6 x the 400 GB/s per stack of the HBM2e H100 PCIe),
  // so 6/5 of the 80 GB part's 81,559 MiB usable: 97,871 MiB (derived; no nvidia-smi reading).
  s.name = "H100-SXM5-96GB";
  s.peak_fp64_flops = 66.9 * kTera;
  s.nvlink_links = 18;
  s.hbm_capacity_bytes = 97871 * kMiB;
  s.hbm_bandwidth_bytes_per_s = 2400 * kGB;
  s.source =
      "pytorch/torchtitan docs/performance.md (Grand Teton: 96 GB HBM2e, 2.4 TB/s, 500 W default limit, 700 W "
      "TDP); compute, clocks and NVLink as H100 SXM (TorchTitan paper: peak between SXM and NVL, unknown); "
      "capacity 6/5 of the 80 GB part's usable (six stacks of five); idle power: estimate";
  g.push_back(s);

  // NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM: H100 SXM compute, 141 GB HBM3e at
  // 4.8 TB/s, up to 700 W, NVLink 900 GB/s.
  s.name = "H200-SXM-141GB";
  s.peak_fp64_flops = 66.9 * kTera;
  s.nvlink_links = 18;
  s.hbm_capacity_bytes = 143771 * kMiB;  // nvidia-smi (H200): 143771 MiB
  s.hbm_bandwidth_bytes_per_s = 4800 * kGB;
  s.idle_w = 75;
  s.min_power_limit_w = 200;  // DGX H100/H200 User Guide, power capping: AllowableMin 200 W
  s.source = "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM; idle power: estimate";
  g.push_back(s);

  // NVIDIA H100 datasheet (2023), H100 PCIe column: 114 SMs, 1,755 MHz, HBM2e 2.0 TB/s, 350 W,
  // NVLink bridge 600 GB/s (12 NVLink4 links).
  s = {};
  s.name = "H100-PCIe-80GB";
  s.form_factor = FormFactor::pcie;
  s.compute_capability = 90;
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
  s.form_factor = FormFactor::sxm;
  s.compute_capability = 100;
  s.peak_fp64_flops = 37 * kTera;
  s.peak_fp32_flops = 75 * kTera;
  s.peak_tf32_flops = 1125 * kTera;
  s.peak_fp16_flops = 2250 * kTera;
  s.peak_bf16_flops = 2250 * kTera;
  s.peak_fp8_flops = 4500 * kTera;
  s.peak_fp4_flops = 9000 * kTera;  // HGX B200 datasheet: FP4 144 PF sparse / 8 / 2
  // nvidia-smi --query-gpu=name,memory.total (driver 580.95.05, as public logs print it): "NVIDIA B200,
  // 183359 MiB", what CUDA can allocate (the datasheet's "180 GB"; 184,320 MiB = 180 GiB until session 42).
  s.hbm_capacity_bytes = 183359 * kMiB;
  s.hbm_bandwidth_bytes_per_s = 8000 * kGB;
  s.sm_count = 148;
  s.boost_clock_mhz = 1965;
  s.tdp_w = 1000;
  s.idle_w = 140;
  // NVIDIA DGX B200 User Guide, "Managing Power Capping": Redfish PowerLimitWatts AllowableMin 200,
  // AllowableMax 1000. (Below the power model's floor for this entry, 206 W: the estimated idle
  // power is high; min_power_limit_w in models/power/power_model.h takes the larger.)
  s.min_power_limit_w = 200;
  s.nvlink_generation = 5;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 50 * kGB;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA HGX B200 datasheet (2024), per GPU = platform / 8; capacity as nvidia-smi reports it (183359 "
      "MiB); SMs, clock, idle power and temperatures: estimate";
  g.push_back(s);

  // NVIDIA L40S datasheet (2023): FP32 91.6, TF32 183, BF16/FP16 362.05, FP8 733 dense; 48 GB
  // GDDR6 864 GB/s; 350 W; PCIe gen4 x16; no NVLink. FP64 is 1/64 of FP32 (not in datasheet).
  s = {};
  s.name = "L40S";
  s.form_factor = FormFactor::pcie;
  s.compute_capability = 89;
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
  s.vendor = GpuVendor::amd;
  s.form_factor = FormFactor::oam;
  s.gfx_arch = "gfx942";  // ROCm docs, "GPU hardware specifications": MI300X LLVM target
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

  // NVIDIA H20 (China-market Hopper, 2024): 96 GB HBM3 at 4.0 TB/s, FP16/BF16 148 TFLOP/s dense,
  // FP8 296, TF32 74, FP32 44, FP64 1; NVLink 900 GB/s (18 NVLink4 links); 400 W; PCIe gen5.
  // NVIDIA has no public datasheet page: figures as published in the H20 product brief excerpts
  // (SemiAnalysis, 2023-11); SMs (78) and clock are public reports (estimate).
  s = {};
  s.name = "H20";
  s.form_factor = FormFactor::sxm;
  s.compute_capability = 90;
  s.peak_fp64_flops = 1 * kTera;
  s.peak_fp32_flops = 44 * kTera;
  s.peak_tf32_flops = 74 * kTera;
  s.peak_fp16_flops = 148 * kTera;
  s.peak_bf16_flops = 148 * kTera;
  s.peak_fp8_flops = 296 * kTera;
  s.hbm_capacity_bytes = 97871 * kMiB;  // 96 GB HBM3 (nvidia-smi style: 95.6 GiB usable, estimate)
  s.hbm_bandwidth_bytes_per_s = 4000 * kGB;
  s.sm_count = 78;
  s.boost_clock_mhz = 1755;
  s.tdp_w = 400;
  s.idle_w = 60;
  s.nvlink_generation = 4;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA H20 product brief figures (as published, 2023-11): 96 GB HBM3 4.0 TB/s, 148 TFLOP/s BF16, "
      "NVLink 900 GB/s, 400 W; SMs, clock, idle power: estimate";
  g.push_back(s);

  // NVIDIA Ada GPU architecture whitepaper (2022), GeForce RTX 4090: 128 SMs, 2,520 MHz boost,
  // FP32 82.6 TFLOP/s, FP16/BF16 tensor with FP32 accumulate 165.2 (dense), TF32 82.6, FP8 330.3
  // (FP32 accumulate), 24 GB GDDR6X at 1,008 GB/s, 450 W, PCIe gen4 x16, no NVLink.
  s = {};
  s.name = "RTX-4090";
  s.form_factor = FormFactor::pcie;
  s.compute_capability = 89;
  s.peak_fp64_flops = 82.6 * kTera / 64;
  s.peak_fp32_flops = 82.6 * kTera;
  s.peak_tf32_flops = 82.6 * kTera;
  s.peak_fp16_flops = 165.2 * kTera;
  s.peak_bf16_flops = 165.2 * kTera;
  s.peak_fp8_flops = 330.3 * kTera;
  s.hbm_capacity_bytes = 24564 * kMiB;  // GDDR6X; nvidia-smi (RTX 4090): 24564 MiB
  s.hbm_bandwidth_bytes_per_s = 1008 * kGB;
  s.sm_count = 128;
  s.boost_clock_mhz = 2520;
  s.tdp_w = 450;
  s.idle_w = 25;
  s.nvlink_generation = 0;
  s.nvlink_links = 0;
  s.nvlink_bytes_per_s_per_link = 0;
  s.pcie_generation = 4;
  s.slowdown_temp_c = 87;
  s.shutdown_temp_c = 92;
  s.source = "NVIDIA Ada GPU Architecture whitepaper (2022), RTX 4090; FP64 (1/64), idle power, temperatures: estimate";
  g.push_back(s);

  // NVIDIA Turing GPU architecture whitepaper (2018), GeForce RTX 2080 Ti (reference): 68 SMs,
  // 1,545 MHz boost, FP32 13.4 TFLOP/s, FP16 tensor with FP32 accumulate 53.8 (GeForce rate), no
  // BF16/TF32/FP8; 11 GB GDDR6 at 616 GB/s; 250 W; PCIe gen3 x16; NVLink2 x2 bridge (not in the
  // templates that use it: they are PCIe only).
  s = {};
  s.name = "RTX-2080-Ti";
  s.form_factor = FormFactor::pcie;
  s.compute_capability = 75;
  s.peak_fp64_flops = 13.4 * kTera / 32;
  s.peak_fp32_flops = 13.4 * kTera;
  s.peak_tf32_flops = 0;
  s.peak_fp16_flops = 53.8 * kTera;
  s.peak_bf16_flops = 0;
  s.peak_fp8_flops = 0;
  s.hbm_capacity_bytes = 11264 * kMiB;  // GDDR6; nvidia-smi (RTX 2080 Ti): 11264 MiB
  s.hbm_bandwidth_bytes_per_s = 616 * kGB;
  s.sm_count = 68;
  s.boost_clock_mhz = 1545;
  s.tdp_w = 250;
  s.idle_w = 20;
  s.nvlink_generation = 2;
  s.nvlink_links = 2;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  s.pcie_generation = 3;
  s.slowdown_temp_c = 86;
  s.shutdown_temp_c = 91;
  s.source = "NVIDIA Turing GPU Architecture whitepaper (2018), RTX 2080 Ti; idle power, temperatures: estimate";
  g.push_back(s);

  // NVIDIA Blackwell Ultra on the HGX B300 baseboard, per GPU (glennklockwood.com/garden/processors/B300,
  // "HGX variant" table from NVIDIA's HGX B300 specification, dense column): FP64 1.25, FP32 75,
  // TF32 1,125, FP16/BF16 2,250, FP8 4,500, NVFP4 13,125 TFLOP/s; 288 GB HBM3e (12-high stacks) at
  // 8 TB/s; NVLink5 18 links x 50 GB/s per direction (1.8 TB/s bidirectional); PCIe gen6. TDP 1,100 W
  // (Verda, "NVIDIA GB300 NVL72: GPU Architecture & Performance", per-GPU table, B300 column).
  // Compute capability 10.3 (sm_103, as the shared xla_collective_perf_table keys B300/GB300
  // rows). SMs (160) and clock are public reports (estimate); idle power: estimate.
  s = {};
  s.name = "B300";
  s.form_factor = FormFactor::sxm;
  s.compute_capability = 103;
  s.peak_fp64_flops = 1.25 * kTera;
  s.peak_fp32_flops = 75 * kTera;
  s.peak_tf32_flops = 1125 * kTera;
  s.peak_fp16_flops = 2250 * kTera;
  s.peak_bf16_flops = 2250 * kTera;
  s.peak_fp8_flops = 4500 * kTera;
  s.peak_fp4_flops = 13125 * kTera;
  // nvidia-smi (driver 580.x, as public logs print it): "NVIDIA B300 SXM6 AC, 275040 MiB" (268.6 GiB): the
  // datasheet's "288 GB" is decimal (288.4e9 B), not 288 GiB (the catalog's figure until session 42, 7 % more).
  s.hbm_capacity_bytes = 275040 * kMiB;
  s.hbm_bandwidth_bytes_per_s = 8000 * kGB;
  s.sm_count = 160;
  s.boost_clock_mhz = 1965;
  s.tdp_w = 1100;
  s.idle_w = 140;
  s.nvlink_generation = 5;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 50 * kGB;
  s.pcie_generation = 6;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA HGX B300 specification per GPU (glennklockwood.com/garden/processors/B300: 288 GB HBM3e, 8 TB/s, "
      "NVLink5 1.8 TB/s, dense FP8 4.5 PF, FP4 13.1 PF); TDP 1.1 kW (Verda GB300 NVL72 article); capacity as "
      "nvidia-smi reports it (275040 MiB); SMs, clock, idle power: estimate";
  g.push_back(s);

  // The Blackwell GPU of a GB200 superchip (1 Grace + 2 B200 over NVLink-C2C), at its 1,200 W
  // configuration, per GPU (glennklockwood.com/garden/processors/B200, "GB200 variant" table,
  // dense column): FP64 45, FP32 90, TF32 1,250, FP16/BF16 2,500, FP8 5,000, NVFP4 10,000
  // TFLOP/s. NVIDIA GB200 NVL72 (per rack, aiwiki.ai/wiki/nvidia_gb200_nvl72 quoting NVIDIA):
  // 720 PF FP8 sparse = 72 x 5 PF dense, 13.4 TB HBM3e = 72 x 186 GB, 576 TB/s = 72 x 8 TB/s,
  // NVLink 130 TB/s = 72 x 1.8 TB/s (NVLink5 18 x 50 GB/s per direction).
  s = {};
  s.name = "GB200";
  s.form_factor = FormFactor::superchip;
  s.compute_capability = 100;
  s.peak_fp64_flops = 45 * kTera;
  s.peak_fp32_flops = 90 * kTera;
  s.peak_tf32_flops = 1250 * kTera;
  s.peak_fp16_flops = 2500 * kTera;
  s.peak_bf16_flops = 2500 * kTera;
  s.peak_fp8_flops = 5000 * kTera;
  s.peak_fp4_flops = 10000 * kTera;
  // nvidia-smi (driver 580.95.05, as public logs print it, e.g. TACC Vista's GB200 nodes): "NVIDIA GB200,
  // 189471 MiB" (185.0 GiB; the rack's "13.4 TB" / 72 = 186 GB; 186 GiB until session 42).
  s.hbm_capacity_bytes = 189471 * kMiB;
  s.hbm_bandwidth_bytes_per_s = 8000 * kGB;
  s.sm_count = 148;
  s.boost_clock_mhz = 1965;
  s.tdp_w = 1200;
  s.idle_w = 140;
  s.nvlink_generation = 5;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 50 * kGB;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA GB200 NVL72 rack figures / 72 (13.4 TB HBM3e, 576 TB/s, 720 PF FP8 sparse, NVLink 130 TB/s); "
      "per-GPU dense peaks at 1,200 W from glennklockwood.com/garden/processors/B200 (GB200 variant); "
      "capacity as nvidia-smi reports it (189471 MiB); SMs, clock, idle power: estimate (as B200)";
  g.push_back(s);

  // The Blackwell Ultra GPU of a GB300 NVL72 (Verda, "NVIDIA GB300 NVL72: GPU Architecture &
  // Performance", per-GPU table, GB300 column, dense): NVFP4 15, FP8 5, FP16/BF16 2.5, TF32 1.25
  // PFLOP/s, FP32 80 TFLOP/s, 8 TB/s, 1.4 kW; rack: 1,080 PF dense FP4 = 72 x 15. 288 GB HBM3e
  // (glennklockwood.com/garden/processors/B300; 20.7 TB per rack). FP64: "essentially none", the
  // HGX B300 figure 1.25 TFLOP/s. ConnectX-8 per GPU, PCIe gen6. SMs, clock, idle: estimate.
  s = {};
  s.name = "GB300";
  s.form_factor = FormFactor::superchip;
  s.compute_capability = 103;
  s.peak_fp64_flops = 1.25 * kTera;
  s.peak_fp32_flops = 80 * kTera;
  s.peak_tf32_flops = 1250 * kTera;
  s.peak_fp16_flops = 2500 * kTera;
  s.peak_bf16_flops = 2500 * kTera;
  s.peak_fp8_flops = 5000 * kTera;
  s.peak_fp4_flops = 15000 * kTera;
  // nvidia-smi on a GB300 NVL72 compute tray (driver 580.95.05, as public logs print it): "NVIDIA GB300,
  // 284208 MiB" (277.5 GiB; 288 GiB until session 42). The DGX Station's GB300 reads 256703 MiB: another part.
  s.hbm_capacity_bytes = 284208 * kMiB;
  s.hbm_bandwidth_bytes_per_s = 8000 * kGB;
  s.sm_count = 160;
  s.boost_clock_mhz = 1965;
  s.tdp_w = 1400;
  s.idle_w = 140;
  s.nvlink_generation = 5;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 50 * kGB;
  s.pcie_generation = 6;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "GB300 NVL72 per GPU (Verda GB300 NVL72 article, dense: FP4 15 PF, FP8 5 PF, BF16 2.5 PF, 8 TB/s, 1.4 kW; "
      "glennklockwood.com/garden/processors/B300: 288 GB HBM3e, FP64 1.25 TF); capacity as nvidia-smi reports it "
      "(284208 MiB); SMs, clock, idle power: estimate";
  g.push_back(s);

  // NVIDIA H200 Tensor Core GPU datasheet (2024), H200 NVL column (PCIe card): FP64 30, FP32 60,
  // TF32 835, FP16/BF16 1,671, FP8 3,341 TFLOP/s with sparsity (dense = half); 141 GB HBM3e at
  // 4.8 TB/s; up to 600 W; 2- or 4-way NVLink bridge, 900 GB/s per GPU (18 NVLink4 links);
  // PCIe gen5 x16. Thermal thresholds as H100 PCIe (product brief).
  s = {};
  s.name = "H200-NVL";
  s.form_factor = FormFactor::pcie;
  s.compute_capability = 90;
  s.peak_fp64_flops = 30 * kTera;
  s.peak_fp32_flops = 60 * kTera;
  s.peak_tf32_flops = 417.5 * kTera;
  s.peak_fp16_flops = 835.5 * kTera;
  s.peak_bf16_flops = 835.5 * kTera;
  s.peak_fp8_flops = 1670.5 * kTera;
  s.hbm_capacity_bytes = 143771 * kMiB;  // as H200 SXM (nvidia-smi: 143771 MiB)
  s.hbm_bandwidth_bytes_per_s = 4800 * kGB;
  s.sm_count = 132;
  s.boost_clock_mhz = 1785;
  s.tdp_w = 600;
  s.idle_w = 60;
  s.nvlink_generation = 4;
  s.nvlink_links = 18;
  s.nvlink_bytes_per_s_per_link = 25 * kGB;
  // "2- or 4-way NVLink bridge" (datasheet above); the 4-way bridge joins the four cards all to
  // all (NVIDIA's H200 NVL launch, Nov. 2024: "connects four cards", 900 GB/s per GPU).
  s.nvlink_bridge_max_gpus = 4;
  s.pcie_generation = 5;
  s.slowdown_temp_c = 89;
  s.shutdown_temp_c = 92;
  s.source =
      "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 NVL (sparse figures halved; NVLink bridge 900 GB/s, "
      "600 W); SM count as H200 SXM; clock and idle power: estimate";
  g.push_back(s);

  // NVIDIA GH200 Grace Hopper Superchip datasheet (2023/2024), 96 GB HBM3 version: the Hopper GPU's
  // FP64 67 (tensor), FP32 67, TF32 494, FP16/BF16 990, FP8 1,979 TFLOP/s dense; 96 GB HBM3 at
  // 4 TB/s; NVLink-C2C 900 GB/s bidirectional to the Grace CPU (450 GB/s each way); 18 NVLink4
  // links for NVLink Switch systems (none in a 1-GPU node); module power 450-1,000 W (CPU + GPU +
  // memory, configurable): the GPU's share is taken as 700 W (estimate, the H100 SXM figure).
  s = {};
  s.name = "GH200-96GB";
  s.form_factor = FormFactor::superchip;
  s.compute_capability = 90;
  s.peak_fp64_flops = 67 * kTera;
  s.peak_fp32_flops = 67 * kTera;
  s.peak_tf32_flops = 494 * kTera;
  s.peak_fp16_flops = 990 * kTera;
  s.peak_bf16_flops = 990 * kTera;
  s.peak_fp8_flops = 1979 * kTera;
  // nvidia-smi (driver 570.133.20, as a public log prints it: github.com/sgawe11/rag-on-gh200
  // README.md, "NVIDIA GH200 480GB ... 97871MiB"; the same figure in other GH200 480GB logs): 97871
  // MiB = 95.6 GiB usable of the datasheet's "96GB" (96 GiB until session 44), as the H100's 80 GB
  // is 81559 MiB.
  s.hbm_capacity_bytes = 97871 * kMiB;
  s.hbm_bandwidth_bytes_per_s = 4000 * kGB;
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
      "NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3, 4 TB/s, NVLink-C2C 900 GB/s, module "
      "450-1,000 W); capacity as nvidia-smi reports it (97871 MiB); GPU share of the module power (700 W), idle "
      "power: estimate";
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
      // Google Cloud A3 Mega: 8 NICs x 200 Gb/s with GPUDirect-TCPXO (GPU memory over a TCP
      // offload path, not RDMA). Latency: a TCP stack per message, tens of us (estimate, 20 us).
      NicSpec{"TCPXO-200GbE", 200e9 / 8, 20000,
              "Google Cloud A3 Mega docs (a3-megagpu-8g: 8 x 200 Gbps GPUDirect-TCPXO NICs); latency estimate"},
      // HPE Slingshot 11 (Cassini NIC, 200 Gb/s); latency through libfabric/CXI ~2 us (estimate).
      NicSpec{"Slingshot-200", 200e9 / 8, 2000,
              "HPE Slingshot 11 NIC (Cassini) 200 Gb/s, HPE Cray EX documentation; latency estimate"},
  };
}

const std::vector<GpuSpec>& gpus() {
  static const std::vector<GpuSpec> v = make_gpus();
  return v;
}
const std::vector<NicSpec>& nics() {
  static const std::vector<NicSpec> v = make_nics();
  return v;
}
/// The built-in templates: models/hardware/node_templates.textproto, compiled in (CMake,
/// models/CMakeLists.txt) and read as a scenario's own are (node_template_text.h).
const std::vector<NodeTemplate>& nodes() {
  static const std::vector<NodeTemplate> v = read_node_templates(
      {detail::kNodeTemplatesText, detail::kNodeTemplatesTextSize}, "models/hardware/node_templates.textproto");
  return v;
}

/// The "base/N" partitions of built-in templates, built once per name and kept for the program's
/// life (references stay valid; sweeps look up from several threads). Built-ins only: a partition
/// of a scenario's own template is kept with that scenario's templates (DescribedNodeTemplates).
struct BuiltinPartitions {
  std::mutex mutex;
  std::deque<NodeTemplate> partitioned;
};
BuiltinPartitions& builtin_partitions() {
  static BuiltinPartitions m;
  return m;
}

const NodeTemplate* find_or_null(const std::vector<NodeTemplate>& items, std::string_view name) {
  for (const NodeTemplate& t : items) {
    if (t.name == name) return &t;
  }
  return nullptr;
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
const NodeTemplate& find_builtin_node_template(std::string_view name) {
  if (const NodeTemplate* t = find_or_null(nodes(), name)) return *t;
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return find_in(nodes(), name, "node template");  // throws, listing them
  // "base/N": the base template partitioned into NVLink domains of N GPUs (nvlink_domains.h).
  BuiltinPartitions& kept = builtin_partitions();
  const std::lock_guard<std::mutex> lock(kept.mutex);
  for (const NodeTemplate& t : kept.partitioned) {
    if (t.name == name) return t;
  }
  const NodeTemplate& base = find_in(nodes(), name.substr(0, slash), "node template");
  kept.partitioned.push_back(partition_node_template(base, name, name.substr(slash + 1)));
  return kept.partitioned.back();
}

const NodeTemplate& find_node_template(std::string_view name, const DescribedNodeTemplates& described) {
  const std::size_t slash = name.find('/');
  if (const NodeTemplate* own = described.find(name.substr(0, slash))) {
    if (slash == std::string_view::npos) return *own;
    return described.partition(name, [&] { return partition_node_template(*own, name, name.substr(slash + 1)); });
  }
  return find_builtin_node_template(name);
}

const NodeTemplate& find_node_template(std::string_view name, const ClusterSpec& cluster) {
  return find_node_template(name, cluster.described_node_templates);
}

const NodeTemplate& cluster_node_template(const ClusterSpec& cluster) {
  return find_node_template(cluster.node_template, cluster.described_node_templates);
}

bool is_builtin_node_template(std::string_view name) { return find_or_null(nodes(), name) != nullptr; }

std::vector<std::string> gpu_names() { return names_of(gpus()); }
std::vector<std::string> nic_names() { return names_of(nics()); }
std::vector<std::string> node_template_names() { return names_of(nodes()); }

std::vector<std::string> node_template_names(const DescribedNodeTemplates& described) {
  std::vector<std::string> out;
  for (const NodeTemplate& t : described.all()) out.push_back(t.name);
  for (std::string& n : node_template_names()) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
  }
  return out;
}

}  // namespace traincast::models
