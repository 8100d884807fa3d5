// What a GPU can run (flash attention, fp8, fp4) and which node templates it physically fits
// (catalog.h: kernel_arch, runs_*, gpu_fit_problem).

#include <string>

#include "models/hardware/catalog.h"

namespace traincast::models {
namespace {

const char* form_factor_name(FormFactor f) {
  switch (f) {
    case FormFactor::sxm:
      return "an SXM module";
    case FormFactor::oam:
      return "an OAM module";
    case FormFactor::pcie:
      return "a PCIe card";
    case FormFactor::superchip:
      return "a Grace superchip GPU";
  }
  return "?";
}

/// Where a GPU of `f` goes: "an SXM baseboard" etc.
const char* mount_name(FormFactor f) {
  switch (f) {
    case FormFactor::sxm:
      return "an SXM baseboard";
    case FormFactor::oam:
      return "an OAM universal baseboard";
    case FormFactor::pcie:
      return "PCIe slots";
    case FormFactor::superchip:
      return "Grace superchip boards";
  }
  return "?";
}

/// "NVLink4" or "xGMI" (AMD), as the scale-up links are named.
std::string link_name(const GpuSpec& g) {
  if (g.vendor == GpuVendor::amd) return "xGMI";
  return g.nvlink_generation > 0 ? "NVLink" + std::to_string(g.nvlink_generation) : "no NVLink";
}

}  // namespace

std::string kernel_arch(const GpuSpec& gpu) {
  return gpu.vendor == GpuVendor::amd ? gpu.gfx_arch : "sm" + std::to_string(gpu.compute_capability);
}

bool runs_flash_attention(const GpuSpec& gpu) {
  if (gpu.vendor == GpuVendor::amd) return gpu.gfx_arch == "gfx90a" || gpu.gfx_arch == "gfx942";
  return gpu.compute_capability >= 80;
}

bool runs_fp8(const GpuSpec& gpu) {
  if (gpu.vendor == GpuVendor::amd) return gpu.gfx_arch == "gfx942";
  return gpu.compute_capability >= 89;
}

bool runs_fp4(const GpuSpec& gpu) { return gpu.vendor == GpuVendor::nvidia && gpu.compute_capability >= 100; }

std::string gpu_fit_problem(const NodeTemplate& node, const GpuSpec& gpu) {
  using std::to_string;
  const GpuSpec& own = find_gpu(node.gpu);
  const std::string built = node.name + " (built for " + own.name + ")";
  if (gpu.form_factor != own.form_factor) {
    return gpu.name + " is " + form_factor_name(gpu.form_factor) + " and " + built + " has " +
           mount_name(own.form_factor) + " (expected " + form_factor_name(own.form_factor) + ")";
  }
  const bool baseboard = own.form_factor != FormFactor::pcie;
  if (baseboard || node.scale_up == ScaleUp::bridges) {
    // The baseboard's traces and NVSwitch chips (or the template's bridges) are of one link kind.
    if (gpu.vendor != own.vendor || gpu.nvlink_generation != own.nvlink_generation) {
      return gpu.name + " has " + link_name(gpu) + " links and " + built + " is wired for " + link_name(own) +
             (baseboard ? "" : " bridges") + " (expected a GPU with " + link_name(own) + ")";
    }
  }
  if (baseboard && gpu.nvlink_links > own.nvlink_links) {
    return gpu.name + " has " + to_string(gpu.nvlink_links) + " " + link_name(gpu) + " links and " + built + " wires " +
           to_string(own.nvlink_links) + " per GPU (expected at most " + to_string(own.nvlink_links) + ")";
  }
  if (node.scale_up == ScaleUp::mesh && gpu.nvlink_links < node.gpus_per_node - 1) {
    return gpu.name + " has " + to_string(gpu.nvlink_links) + " " + link_name(gpu) + " links and " + built +
           " is a full mesh of " + to_string(node.gpus_per_node) + " GPUs (expected at least one link to each of the " +
           to_string(node.gpus_per_node - 1) + " peers)";
  }
  if (node.scale_up == ScaleUp::bridges && gpu.nvlink_links <= 0) {
    return gpu.name + " has no NVLink bridge connector and " + built +
           " joins GPUs by NVLink bridges (expected a card with NVLink bridges)";
  }
  if (gpu.pcie_generation < node.pcie_generation) {
    return gpu.name + "'s PCIe is gen" + to_string(gpu.pcie_generation) + " and " + built +
           "'s PCIe links are modelled at gen" + to_string(node.pcie_generation) +
           ", which the card would train below " + "(expected a GPU of PCIe gen " + to_string(node.pcie_generation) +
           " or newer, or a template of gen " + to_string(gpu.pcie_generation) + " or older)";
  }
  return {};
}

std::string bridge_group_problem(const NodeTemplate& node, const GpuSpec& gpu, int bridge_gpus) {
  using std::to_string;
  const std::string g = to_string(bridge_gpus);
  if (node.scale_up != ScaleUp::bridges) {
    return node.name +
           " has no NVLink bridges (expected a template whose GPUs are joined by NVLink bridges, e.g. "
           "pcie_8gpu_2socket_h200_nvl, or no nvlink_bridge_gpus)";
  }
  if (bridge_gpus != 2 && bridge_gpus != 4) {
    return "got " + g + " GPUs per NVLink bridge (expected 2 or 4: NVIDIA's 2-way and 4-way bridges)";
  }
  if (bridge_gpus > gpu.nvlink_bridge_max_gpus) {
    return gpu.name + " takes at most a " + to_string(gpu.nvlink_bridge_max_gpus) + "-way NVLink bridge (expected " +
           to_string(gpu.nvlink_bridge_max_gpus) + ", or a card with a " + g + "-way bridge such as H200-NVL)";
  }
  if (node.gpus_per_node % bridge_gpus != 0) {
    return g + "-way bridges do not tile " + node.name + "'s " + to_string(node.gpus_per_node) +
           " GPUs (expected a bridge size that divides " + to_string(node.gpus_per_node) + ")";
  }
  if (gpu.nvlink_links % (bridge_gpus - 1) != 0) {
    return gpu.name + "'s " + to_string(gpu.nvlink_links) + " NVLink links do not split over the " +
           to_string(bridge_gpus - 1) + " peers of a " + g + "-way bridge (expected a link count divisible by " +
           to_string(bridge_gpus - 1) + ")";
  }
  return {};
}

}  // namespace traincast::models
