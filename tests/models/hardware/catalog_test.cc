// Catalog: datasheet figures, lookups and errors.

#include "models/hardware/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace traincast::models {
namespace {

TEST(Catalog, A100Datasheet) {
  // NVIDIA A100 datasheet (2021): 312 TF bf16/fp16, 156 tf32, 19.5 fp32, 19.5 fp64 tensor.
  const GpuSpec& a = find_gpu("A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(a.peak_bf16_flops, 312e12);
  EXPECT_DOUBLE_EQ(a.peak_fp16_flops, 312e12);
  EXPECT_DOUBLE_EQ(a.peak_tf32_flops, 156e12);
  EXPECT_DOUBLE_EQ(a.peak_fp32_flops, 19.5e12);
  EXPECT_DOUBLE_EQ(a.peak_fp64_flops, 19.5e12);
  EXPECT_DOUBLE_EQ(a.peak_fp8_flops, 0.0);
  EXPECT_DOUBLE_EQ(a.hbm_bandwidth_bytes_per_s, 2039e9);
  EXPECT_DOUBLE_EQ(a.hbm_capacity_bytes, 81920.0 * 1048576);  // nvidia-smi 81920 MiB
  EXPECT_DOUBLE_EQ(a.tdp_w, 400);
  EXPECT_EQ(a.nvlink_generation, 3);
  // NVLink3: 12 links x 25 GB/s per direction = 300 GB/s per direction (600 GB/s bidirectional).
  EXPECT_DOUBLE_EQ(a.nvlink_links * a.nvlink_bytes_per_s_per_link, 300e9);
  EXPECT_DOUBLE_EQ(find_gpu("A100-SXM4-40GB").hbm_bandwidth_bytes_per_s, 1555e9);
  EXPECT_DOUBLE_EQ(find_gpu("A100-SXM4-40GB").hbm_capacity_bytes, 40960.0 * 1048576);
}

TEST(Catalog, HopperDatasheets) {
  const GpuSpec& h = find_gpu("H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(h.peak_bf16_flops, 989.4e12);
  EXPECT_DOUBLE_EQ(h.peak_fp8_flops, 1978.9e12);
  EXPECT_DOUBLE_EQ(h.peak_tf32_flops, 494.7e12);
  EXPECT_DOUBLE_EQ(h.peak_fp32_flops, 66.9e12);
  EXPECT_DOUBLE_EQ(h.hbm_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(h.tdp_w, 700);
  // NVLink4: 18 x 25 GB/s = 450 GB/s per direction (900 GB/s bidirectional).
  EXPECT_DOUBLE_EQ(h.nvlink_links * h.nvlink_bytes_per_s_per_link, 450e9);

  const GpuSpec& h200 = find_gpu("H200-SXM-141GB");
  EXPECT_DOUBLE_EQ(h200.hbm_bandwidth_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.hbm_capacity_bytes, 143771.0 * 1048576);  // nvidia-smi 143771 MiB
  EXPECT_DOUBLE_EQ(h200.peak_bf16_flops, 989.4e12);
  EXPECT_DOUBLE_EQ(h200.tdp_w, 700);

  // H800: NVLink 400 GB/s bidirectional = 8 links.
  EXPECT_DOUBLE_EQ(find_gpu("H800-SXM5-80GB").nvlink_links * 25e9 * 2, 400e9);
  EXPECT_DOUBLE_EQ(find_gpu("A800-SXM4-80GB").nvlink_links * 25e9 * 2, 400e9);
}

// The export variants as their datasheets give them (NVIDIA H800 datasheet 2023: the H100 SXM with
// FP64 1 TFLOP/s and NVLink 400 GB/s; NVIDIA A800 datasheet 2022: the A100 80GB SXM with NVLink
// 400 GB/s): every other figure is the base GPU's, the links are 8 of the same generation and rate.
TEST(Catalog, ExportVariantsDifferFromTheirBaseOnlyWhereTheDatasheetsSay) {
  for (const auto& [variant, base] :
       {std::pair{"H800-SXM5-80GB", "H100-SXM5-80GB"}, std::pair{"A800-SXM4-80GB", "A100-SXM4-80GB"}}) {
    SCOPED_TRACE(variant);
    const GpuSpec& v = find_gpu(variant);
    const GpuSpec& b = find_gpu(base);
    EXPECT_EQ(v.nvlink_links, 8);
    EXPECT_EQ(v.nvlink_generation, b.nvlink_generation);
    EXPECT_DOUBLE_EQ(v.nvlink_bytes_per_s_per_link, b.nvlink_bytes_per_s_per_link);
    EXPECT_DOUBLE_EQ(v.peak_bf16_flops, b.peak_bf16_flops);
    EXPECT_DOUBLE_EQ(v.peak_fp16_flops, b.peak_fp16_flops);
    EXPECT_DOUBLE_EQ(v.peak_tf32_flops, b.peak_tf32_flops);
    EXPECT_DOUBLE_EQ(v.peak_fp8_flops, b.peak_fp8_flops);
    EXPECT_DOUBLE_EQ(v.hbm_capacity_bytes, b.hbm_capacity_bytes);
    EXPECT_DOUBLE_EQ(v.hbm_bandwidth_bytes_per_s, b.hbm_bandwidth_bytes_per_s);
    EXPECT_DOUBLE_EQ(v.tdp_w, b.tdp_w);
    EXPECT_EQ(v.form_factor, b.form_factor);
    EXPECT_EQ(v.pcie_generation, b.pcie_generation);
    EXPECT_EQ(v.compute_capability, b.compute_capability);
    EXPECT_NE(v.source.find("datasheet"), std::string::npos) << v.source;
    EXPECT_NE(v.source.find("NVLink 400 GB/s"), std::string::npos) << v.source;
  }
  EXPECT_DOUBLE_EQ(find_gpu("H800-SXM5-80GB").peak_fp64_flops, 1e12);  // H800 datasheet: FP64 1 TFLOP/s
  EXPECT_DOUBLE_EQ(find_gpu("A800-SXM4-80GB").peak_fp64_flops, find_gpu("A100-SXM4-80GB").peak_fp64_flops);
}

// torchtitan's Grand Teton H100 (pytorch/torchtitan docs/performance.md): 96 GB HBM2e at 2.4 TB/s,
// 700 W TDP; otherwise the H100 SXM (its peak is unpublished). Capacity: six stacks where the 80 GB
// part has five, 6/5 of its 81,559 MiB; 2.4 TB/s is six of the HBM2e H100 PCIe's 400 GB/s stacks.
TEST(Catalog, GrandTetonH100IsTheSxmWithSixHbm2eStacks) {
  const GpuSpec& g = find_gpu("H100-SXM5-96GB");
  const GpuSpec& sxm = find_gpu("H100-SXM5-80GB");
  const GpuSpec& pcie = find_gpu("H100-PCIe-80GB");
  EXPECT_DOUBLE_EQ(g.hbm_capacity_bytes, 97871.0 * 1048576);
  EXPECT_NEAR(g.hbm_capacity_bytes / sxm.hbm_capacity_bytes, 6.0 / 5.0, 1e-4);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth_bytes_per_s, 2.4e12);
  EXPECT_NEAR(g.hbm_bandwidth_bytes_per_s / 6, pcie.hbm_bandwidth_bytes_per_s / 5, 0.01e12);
  EXPECT_DOUBLE_EQ(g.tdp_w, 700);
  EXPECT_DOUBLE_EQ(g.peak_bf16_flops, sxm.peak_bf16_flops);
  EXPECT_DOUBLE_EQ(g.peak_fp8_flops, sxm.peak_fp8_flops);
  EXPECT_DOUBLE_EQ(g.peak_fp64_flops, sxm.peak_fp64_flops);
  EXPECT_EQ(g.sm_count, sxm.sm_count);
  EXPECT_EQ(g.nvlink_links, sxm.nvlink_links);
  EXPECT_DOUBLE_EQ(g.min_power_limit_w, sxm.min_power_limit_w);
  EXPECT_NE(g.source.find("torchtitan"), std::string::npos) << g.source;
}

TEST(Catalog, EveryGpuIsComplete) {
  for (const std::string& name : gpu_names()) {
    SCOPED_TRACE(name);
    const GpuSpec& g = find_gpu(name);
    EXPECT_EQ(g.name, name);
    EXPECT_GT(g.peak_fp32_flops, 0);
    EXPECT_GT(g.peak_fp16_flops, g.peak_fp32_flops);
    EXPECT_GT(g.hbm_capacity_bytes, 0);
    EXPECT_GT(g.hbm_bandwidth_bytes_per_s, 0);
    EXPECT_GT(g.sm_count, 0);
    EXPECT_GT(g.boost_clock_mhz, 0);
    EXPECT_GT(g.tdp_w, g.idle_w);
    EXPECT_GT(g.idle_w, 0);
    EXPECT_GE(g.pcie_generation, 3);
    EXPECT_GT(g.shutdown_temp_c, g.slowdown_temp_c);
    EXPECT_FALSE(g.source.empty());
  }
  const std::set<std::string> required = {
      "V100-SXM2-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIe-80GB", "A30",
      "A800-SXM4-80GB", "H100-SXM5-80GB", "H100-PCIe-80GB", "H800-SXM5-80GB", "H200-SXM-141GB",
      "B200",           "L40S",           "MI300X"};
  const auto names = gpu_names();
  for (const auto& r : required) EXPECT_NE(std::find(names.begin(), names.end(), r), names.end()) << r;
}

TEST(Catalog, PcieAfterEncoding) {
  // gen4: 16 GT/s x 128/130 / 8 bits x 16 lanes = 31.5077 GB/s per direction (not 32, not 64).
  EXPECT_NEAR(pcie_bytes_per_s(4, 16), 31.5077e9, 1e5);
  EXPECT_NEAR(pcie_bytes_per_s(5, 16), 63.0154e9, 1e5);
  EXPECT_NEAR(pcie_bytes_per_s(3, 16), 15.7538e9, 1e5);
  EXPECT_NEAR(pcie_bytes_per_s(4, 8), 15.7538e9, 1e5);
  EXPECT_THROW(pcie_bytes_per_s(7, 16), std::invalid_argument);
  try {
    pcie_bytes_per_s(4, 3);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "pcie_bytes_per_s: lanes 3 not one of 1, 2, 4, 8, 16");
  }
}

TEST(Catalog, Nics) {
  EXPECT_DOUBLE_EQ(find_nic("IB-HDR-200").bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(find_nic("IB-NDR-400").bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(find_nic("IB-XDR-800").bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(find_nic("RoCE-100GbE").bytes_per_s, 12.5e9);
  EXPECT_DOUBLE_EQ(find_nic("RoCE-200GbE").bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(find_nic("RoCE-400GbE").bytes_per_s, 50e9);
  for (const auto& n : nic_names()) {
    EXPECT_GT(find_nic(n).latency_ns, 0) << n;
    EXPECT_FALSE(find_nic(n).source.empty()) << n;
  }
}

TEST(Catalog, NodeTemplates) {
  const NodeTemplate& a = find_builtin_node_template("dgx_a100");
  EXPECT_EQ(a.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(a.gpus_per_node, 8);
  EXPECT_EQ(a.nvswitches, 6);
  EXPECT_EQ(a.nic, "IB-HDR-200");
  EXPECT_EQ(a.nics, 8);
  EXPECT_NEAR(a.pcie_bytes_per_s, 31.5e9, 0.1e9);
  EXPECT_EQ(find_builtin_node_template("dgx_a100_40gb").gpu, "A100-SXM4-40GB");
  const NodeTemplate& h = find_builtin_node_template("dgx_h100");
  EXPECT_EQ(h.gpu, "H100-SXM5-80GB");
  EXPECT_EQ(h.nic, "IB-NDR-400");
  EXPECT_NEAR(h.pcie_bytes_per_s, 63e9, 0.1e9);
  EXPECT_EQ(find_builtin_node_template("hgx_h200").gpu, "H200-SXM-141GB");
  for (const auto& n : node_template_names()) {
    SCOPED_TRACE(n);
    const NodeTemplate& t = find_builtin_node_template(n);
    EXPECT_NO_THROW(find_gpu(t.gpu));
    EXPECT_NO_THROW(find_nic(t.nic));
    EXPECT_FALSE(t.source.empty());
  }
}

TEST(Catalog, UnknownNamesListKnownOnes) {
  try {
    find_gpu("A100");
    FAIL();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("unknown GPU 'A100' (known: V100-SXM2-32GB, A100-SXM4-40GB, ", 0), 0u) << msg;
    EXPECT_NE(msg.find("H200-SXM-141GB"), std::string::npos);
  }
  try {
    find_builtin_node_template("dgx_z");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("unknown node template 'dgx_z' (known: dgx_a100, dgx_a100_40gb, dgx_h100, ", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(find_nic("IB-FDR"), std::invalid_argument);
}

}  // namespace
}  // namespace traincast::models
