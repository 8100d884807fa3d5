// Catalog fit and kernel capability: which GPU fits which node template (gpu_fit_problem) and what
// each GPU can run (runs_flash_attention, runs_fp8, runs_fp4, kernel_arch).

#include <gtest/gtest.h>

#include <string>

#include "models/hardware/catalog.h"

namespace traincast::models {
namespace {

std::string problem(const std::string& node, const std::string& gpu) {
  return gpu_fit_problem(find_builtin_node_template(node), find_gpu(gpu));
}

TEST(CatalogFit, EveryTemplatesOwnGpuFitsAndEveryGpuFitsSomeTemplate) {
  for (const std::string& t : node_template_names()) {
    SCOPED_TRACE(t);
    EXPECT_EQ(gpu_fit_problem(find_builtin_node_template(t), find_gpu(find_builtin_node_template(t).gpu)), "");
  }
  for (const std::string& g : gpu_names()) {
    bool fits = false;
    for (const std::string& t : node_template_names()) fits = fits || problem(t, g).empty();
    EXPECT_TRUE(fits) << g << " fits no node template";
  }
}

TEST(CatalogFit, VariantsOfTheBaseboardsGpuFit) {
  // The same SXM5 baseboard: H200 (HGX H200), H800 (8 of the 18 NVLink4 lanes), H20.
  for (const char* g : {"H200-SXM-141GB", "H800-SXM5-80GB", "H20"}) EXPECT_EQ(problem("dgx_h100", g), "") << g;
  for (const char* g : {"A100-SXM4-40GB", "A800-SXM4-80GB"}) EXPECT_EQ(problem("dgx_a100", g), "") << g;
  EXPECT_EQ(problem("hgx_h200", "H100-SXM5-80GB"), "");
  EXPECT_EQ(problem("kestrel_h100_4gpu", "H200-SXM-141GB"), "");
  // PCIe cards in PCIe slots; a gen5 card in a gen4 server trains at gen4, which the template says.
  EXPECT_EQ(problem("pcie_1gpu_ib_hdr", "A100-PCIe-80GB"), "");
  EXPECT_EQ(problem("pcie_8gpu_2socket", "H100-PCIe-80GB"), "");
  EXPECT_EQ(problem("workstation_4gpu_pcie", "RTX-4090"), "");
  EXPECT_EQ(problem("a30_4gpu_bridged", "A100-PCIe-80GB"), "");  // NVLink3 bridges both
}

TEST(CatalogFit, ImpossibleHardwareIsNamed) {
  EXPECT_EQ(problem("dgx_h100", "MI300X"),
            "MI300X is an OAM module and dgx_h100 (built for H100-SXM5-80GB) has an SXM baseboard (expected an SXM "
            "module)");
  EXPECT_EQ(problem("consumer_2x2080ti_nop2p", "B200"),
            "B200 is an SXM module and consumer_2x2080ti_nop2p (built for RTX-2080-Ti) has PCIe slots (expected a "
            "PCIe card)");
  EXPECT_EQ(problem("dgx_h100", "V100-SXM2-32GB"),
            "V100-SXM2-32GB has NVLink2 links and dgx_h100 (built for H100-SXM5-80GB) is wired for NVLink4 "
            "(expected a GPU with NVLink4)");
  EXPECT_EQ(problem("dgx_b200", "H100-SXM5-80GB"),
            "H100-SXM5-80GB has NVLink4 links and dgx_b200 (built for B200) is wired for NVLink5 (expected a GPU "
            "with NVLink5)");
  EXPECT_EQ(problem("mi300x_platform", "H100-SXM5-80GB"),
            "H100-SXM5-80GB is an SXM module and mi300x_platform (built for MI300X) has an OAM universal baseboard "
            "(expected an OAM module)");
  EXPECT_EQ(problem("pcie_8gpu_2socket_h100_nvlink_bridge", "L40S"),
            "L40S has no NVLink links and pcie_8gpu_2socket_h100_nvlink_bridge (built for H100-PCIe-80GB) is wired "
            "for NVLink4 bridges (expected a GPU with NVLink4)");
  EXPECT_EQ(problem("pcie_8gpu_2socket", "RTX-2080-Ti"),
            "RTX-2080-Ti's PCIe is gen3 and pcie_8gpu_2socket (built for L40S)'s PCIe links are modelled at gen4, "
            "which the card would train below (expected a GPU of PCIe gen 4 or newer, or a template of gen 3 or "
            "older)");
}

TEST(CatalogFit, RackScaleAndSuperchipTemplates) {
  // Grace superchip GPUs go on superchip boards of their NVLink generation; SXM modules do not.
  EXPECT_EQ(problem("gb200_nvl72", "GB300"), "");  // GB300 boards fit the GB200 NVL72 (Oberon) rack
  EXPECT_EQ(problem("gb200_nvl72", "B200"),
            "B200 is an SXM module and gb200_nvl72 (built for GB200) has Grace superchip boards (expected a Grace "
            "superchip GPU)");
  EXPECT_EQ(problem("hgx_b300", "GB300"),
            "GB300 is a Grace superchip GPU and hgx_b300 (built for B300) has an SXM baseboard (expected an SXM "
            "module)");
  EXPECT_EQ(problem("gb200_nvl72", "GH200-96GB"),
            "GH200-96GB has NVLink4 links and gb200_nvl72 (built for GB200) is wired for NVLink5 (expected a GPU "
            "with NVLink5)");
  EXPECT_EQ(problem("gb300_nvl72", "GB200"),
            "GB200's PCIe is gen5 and gb300_nvl72 (built for GB300)'s PCIe links are modelled at gen6, which the "
            "card would train below (expected a GPU of PCIe gen 6 or newer, or a template of gen 5 or older)");
  EXPECT_EQ(problem("hgx_b300", "B200"),
            "B200's PCIe is gen5 and hgx_b300 (built for B300)'s PCIe links are modelled at gen6, which the card "
            "would train below (expected a GPU of PCIe gen 6 or newer, or a template of gen 5 or older)");
  EXPECT_EQ(problem("dgx_b200", "B300"), "");
  EXPECT_EQ(problem("pcie_8gpu_2socket_h100_nvlink_bridge", "H200-NVL"), "");
  EXPECT_EQ(problem("pcie_8gpu_2socket_h200_nvl", "A100-PCIe-80GB"),
            "A100-PCIe-80GB has NVLink3 links and pcie_8gpu_2socket_h200_nvl (built for H200-NVL) is wired for "
            "NVLink4 bridges (expected a GPU with NVLink4)");
  // The racks: 72 GPUs in one NVLink domain, one NIC per GPU, one Grace per 2 GPUs.
  for (const char* rack : {"gb200_nvl72", "gb300_nvl72"}) {
    const NodeTemplate& t = find_builtin_node_template(rack);
    EXPECT_EQ(t.gpus_per_node, 72) << rack;
    EXPECT_EQ(t.scale_up, ScaleUp::nvswitch) << rack;
    EXPECT_EQ(t.nics, 72) << rack;
    EXPECT_EQ(t.sockets, 36) << rack;
    const GpuSpec& g = find_gpu(t.gpu);
    EXPECT_DOUBLE_EQ(g.nvlink_links * g.nvlink_bytes_per_s_per_link, 900e9) << rack;  // each way per GPU
  }
  EXPECT_DOUBLE_EQ(find_nic(find_builtin_node_template("gb300_nvl72").nic).bytes_per_s, 100e9);  // ConnectX-8 800 Gb/s
}

TEST(CatalogFit, LinkCountsOfBaseboardsAndMeshes) {
  // A baseboard wired for H800's 8 NVLink4 links per GPU has no lanes for H100's 18.
  NodeTemplate h800 = find_builtin_node_template("dgx_h100");
  h800.name = "hgx_h800";
  h800.gpu = "H800-SXM5-80GB";
  EXPECT_EQ(gpu_fit_problem(h800, find_gpu("H100-SXM5-80GB")),
            "H100-SXM5-80GB has 18 NVLink4 links and hgx_h800 (built for H800-SXM5-80GB) wires 8 per GPU (expected "
            "at most 8)");
  EXPECT_EQ(gpu_fit_problem(h800, find_gpu("H800-SXM5-80GB")), "");
  // A full mesh of 16 MI300X would need 15 links each; the GPU has 7.
  NodeTemplate mesh16 = find_builtin_node_template("mi300x_platform");
  mesh16.gpus_per_node = 16;
  EXPECT_EQ(gpu_fit_problem(mesh16, find_gpu("MI300X")),
            "MI300X has 7 xGMI links and mi300x_platform (built for MI300X) is a full mesh of 16 GPUs (expected at "
            "least one link to each of the 15 peers)");
}

TEST(CatalogCapability, KernelsFollowTheArchitecture) {
  EXPECT_EQ(kernel_arch(find_gpu("V100-SXM2-32GB")), "sm70");
  EXPECT_EQ(kernel_arch(find_gpu("RTX-2080-Ti")), "sm75");
  EXPECT_EQ(kernel_arch(find_gpu("A100-SXM4-80GB")), "sm80");
  EXPECT_EQ(kernel_arch(find_gpu("L40S")), "sm89");
  EXPECT_EQ(kernel_arch(find_gpu("H800-SXM5-80GB")), "sm90");
  EXPECT_EQ(kernel_arch(find_gpu("B200")), "sm100");
  EXPECT_EQ(kernel_arch(find_gpu("MI300X")), "gfx942");
  // Flash attention from Ampere (and CDNA3); not on Volta or Turing.
  EXPECT_FALSE(runs_flash_attention(find_gpu("V100-SXM2-32GB")));
  EXPECT_FALSE(runs_flash_attention(find_gpu("RTX-2080-Ti")));
  for (const char* g : {"A30", "A100-SXM4-40GB", "RTX-4090", "H100-SXM5-80GB", "B200", "MI300X"})
    EXPECT_TRUE(runs_flash_attention(find_gpu(g))) << g;
  // fp4 only on Blackwell (B200, B300, GB200, GB300), each with its datasheet fp4 peak.
  EXPECT_EQ(kernel_arch(find_gpu("B300")), "sm103");
  for (const std::string& g : gpu_names()) {
    const bool blackwell = g == "B200" || g == "B300" || g == "GB200" || g == "GB300";
    EXPECT_EQ(runs_fp4(find_gpu(g)), blackwell) << g;
    EXPECT_EQ(find_gpu(g).peak_fp4_flops > 0, blackwell) << g;
  }
}

TEST(CatalogCapability, Fp8PeakExactlyWhereTheArchitectureHasFp8) {
  for (const std::string& name : gpu_names()) {
    SCOPED_TRACE(name);
    const GpuSpec& g = find_gpu(name);
    EXPECT_EQ(runs_fp8(g), g.peak_fp8_flops > 0);
    EXPECT_TRUE(g.vendor == GpuVendor::amd ? !g.gfx_arch.empty() && g.compute_capability == 0
                                           : g.gfx_arch.empty() && g.compute_capability >= 70);
  }
}

}  // namespace
}  // namespace traincast::models
