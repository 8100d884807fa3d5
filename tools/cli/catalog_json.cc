// `traincast catalog --json F`: the catalog (GPUs, NICs, node templates) and the default prices as
// one JSON document, for programs (the Python API's traincast.catalog(), docs/python.md). The same
// figures as the text listings (summary.cc format_catalog, format_prices), in SI units.
#include <array>
#include <charconv>
#include <optional>
#include <sstream>
#include <string>

#include "models/cost/prices.h"
#include "models/hardware/catalog.h"
#include "models/hardware/node_template_text.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/summary.h"

namespace traincast::cli {
namespace {

/// Shortest text that reads back as the same double (std::to_chars).
std::string number(double v) {
  std::array<char, 32> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return {buf.data(), res.ptr};
}

std::string price_json(const std::optional<models::PriceRecord>& p, const std::string& missing) {
  if (!p) return "{\"usd\": null, \"missing\": " + json_string(missing) + "}";
  return "{\"usd\": " + number(p->usd) + ", \"kind\": " + json_string(p->kind) +
         ", \"vendor\": " + json_string(p->vendor) + ", \"what\": " + json_string(p->what) +
         ", \"date\": " + json_string(p->date) + ", \"region\": " + json_string(p->region) +
         ", \"url\": " + json_string(p->url) +
         (p->gpus > 0 ? ", \"gpus_per_node\": " + std::to_string(p->gpus) : std::string()) + "}";
}

}  // namespace

std::string catalog_to_json() {
  std::ostringstream o;
  o << "{\n \"gpus\": [";
  const char* sep = "\n";
  for (const std::string& n : models::gpu_names()) {
    const models::GpuSpec& g = models::find_gpu(n);
    o << sep << "  {\"name\": " << json_string(n) << ", \"vendor\": \""
      << (g.vendor == models::GpuVendor::amd ? "amd" : "nvidia") << "\""
      << ", \"compute_capability\": " << g.compute_capability << ", \"peak_fp64_flops\": " << number(g.peak_fp64_flops)
      << ", \"peak_fp32_flops\": " << number(g.peak_fp32_flops)
      << ", \"peak_tf32_flops\": " << number(g.peak_tf32_flops)
      << ", \"peak_fp16_flops\": " << number(g.peak_fp16_flops)
      << ", \"peak_bf16_flops\": " << number(g.peak_bf16_flops) << ", \"peak_fp8_flops\": " << number(g.peak_fp8_flops)
      << ", \"peak_fp4_flops\": " << number(g.peak_fp4_flops)
      << ", \"hbm_capacity_bytes\": " << number(g.hbm_capacity_bytes)
      << ", \"hbm_bandwidth_bytes_per_s\": " << number(g.hbm_bandwidth_bytes_per_s) << ", \"sm_count\": " << g.sm_count
      << ", \"boost_clock_mhz\": " << number(g.boost_clock_mhz) << ", \"tdp_w\": " << number(g.tdp_w)
      << ", \"idle_w\": " << number(g.idle_w) << ", \"nvlink_generation\": " << g.nvlink_generation
      << ", \"nvlink_links\": " << g.nvlink_links
      << ", \"nvlink_bytes_per_s_per_link\": " << number(g.nvlink_bytes_per_s_per_link)
      << ", \"pcie_generation\": " << g.pcie_generation << ", \"pcie_lanes\": " << g.pcie_lanes
      << ", \"slowdown_temp_c\": " << number(g.slowdown_temp_c)
      << ", \"shutdown_temp_c\": " << number(g.shutdown_temp_c) << ", \"source\": " << json_string(g.source) << "}";
    sep = ",\n";
  }
  o << "\n ],\n \"nics\": [";
  sep = "\n";
  for (const std::string& n : models::nic_names()) {
    const models::NicSpec& nic = models::find_nic(n);
    o << sep << "  {\"name\": " << json_string(n) << ", \"bytes_per_s\": " << number(nic.bytes_per_s)
      << ", \"source\": " << json_string(nic.source) << "}";
    sep = ",\n";
  }
  o << "\n ],\n \"node_templates\": [";
  sep = "\n";
  for (const std::string& n : models::node_template_names()) {
    const models::NodeTemplate& t = models::find_builtin_node_template(n);
    o << sep << "  {\"name\": " << json_string(n) << ", \"gpu\": " << json_string(t.gpu)
      << ", \"gpus_per_node\": " << t.gpus_per_node << ", \"scale_up\": \"" << models::scale_up_name(t.scale_up)
      << "\", \"nvswitches\": " << t.nvswitches << ", \"nic\": " << json_string(t.nic) << ", \"nics\": " << t.nics
      << ", \"sockets\": " << t.sockets << ", \"pcie_switches\": " << t.pcie_switches
      << ", \"pcie_generation\": " << t.pcie_generation << ", \"pcie_bytes_per_s\": " << number(t.pcie_bytes_per_s)
      << ", \"cpu\": " << json_string(t.cpu) << ", \"pcie_p2p\": " << (t.pcie_p2p ? "true" : "false")
      << ", \"liquid_cooled\": " << (t.liquid_cooled ? "true" : "false") << ", \"gpus_per_rack\": " << t.gpus_per_rack
      << ", \"source\": " << json_string(t.source) << "}";
    sep = ",\n";
  }
  o << "\n ],\n \"prices\": [";
  sep = "\n";
  for (const std::string& gpu : models::gpu_names()) {
    const models::GpuPrices* p = models::find_prices(gpu);
    o << sep << "  {\"gpu\": " << json_string(gpu) << ", \"node_price\": "
      << (p ? price_json(p->node, p->node_missing) : price_json(std::nullopt, "no price row (give both cost fields)"))
      << ", \"rent_per_gpu_hour\": "
      << (p ? price_json(p->rent, p->rent_missing) : price_json(std::nullopt, "no price row (give both cost fields)"))
      << "}";
    sep = ",\n";
  }
  o << "\n ]\n}\n";
  return o.str();
}

}  // namespace traincast::cli
