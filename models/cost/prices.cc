#include "models/cost/prices.h"

#include <cmath>
#include <cstdio>

namespace traincast::models {
namespace {

// Hyperstack's public rate card, on-demand column (per GPU-hour, billed per minute), as transcribed
// from https://www.hyperstack.cloud/gpu-pricing on 2026-08-26 (the page states no region; USD).
PriceRecord hyperstack(double usd, const std::string& item) {
  return {usd,          item + ", on-demand, per GPU-hour (read 2026-08-26)", "cloud on-demand",
          "Hyperstack", "https://www.hyperstack.cloud/gpu-pricing",           "2026-08-26",
          "not stated"};
}

// Lambda's instance price list (per GPU-hour, billed per minute, excl. sales tax) as transcribed
// from https://lambda.ai/instances on 2026-09-20 (the page states no region; USD).
PriceRecord lambda(double usd, const std::string& item) {
  return {usd,
          item + ", on-demand, per GPU-hour (read 2026-09-20)",
          "cloud on-demand",
          "Lambda",
          "https://lambda.ai/instances",
          "2026-09-20",
          "not stated"};
}

const char* kNoNode = "no public purchase price found for a server with this GPU (give cost.node_price_usd)";
const char* kNoRent = "no public on-demand rent found for this GPU (give cost.cloud_price_per_gpu_hour_usd)";

std::vector<GpuPrices> make_table() {
  std::vector<GpuPrices> t;
  auto none = [&](const std::string& gpu) { t.push_back({gpu, std::nullopt, std::nullopt, kNoNode, kNoRent}); };
  none("V100-SXM2-32GB");
  // DGX A100 (8x A100 40 GB, 320 GB in all) launch price "from USD 200,000", as reported on the
  // day of the announcement (geektopia.es, 2020-05-14).
  t.push_back({"A100-SXM4-40GB",
               PriceRecord{200000.0, "NVIDIA DGX A100 (8x A100 40 GB), launch price \"from USD 200,000\"", "list",
                           "NVIDIA (reported by geektopia.es)",
                           "https://geektopia.es/es/technology/2020/05/14/noticias/"
                           "nvidia-anuncia-el-servidor-dgx-a100-ocho-tesla-a100-desde-200-000-dolares.html",
                           "2020-05-14", "not stated", 8},
               lambda(1.99, "8x NVIDIA A100 SXM 40 GB"), "", ""});
  t.push_back({"A100-SXM4-80GB", std::nullopt, hyperstack(1.60, "NVIDIA A100 SXM 80 GB"), kNoNode, ""});
  none("A100-PCIe-80GB");
  none("A800-SXM4-80GB");
  none("A30");
  // The HGX H100 8-GPU server quotation (Thinkmate, USD 317,000 with 8x 400 Gb/s InfiniBand), as
  // archived on 2024-08-22 and cited by a public H100 cluster cost sheet (Aug 2024).
  t.push_back({"H100-SXM5-80GB",
               PriceRecord{317000.0, "HGX H100 8-GPU server with 8x 400 Gb/s InfiniBand, vendor quotation", "street",
                           "Thinkmate",
                           "https://web.archive.org/web/20240822233446/https://www.thinkmate.com/"
                           "quotation-request?a=YToxOntzOjI6ImlkIjtpOjc0OTY2Mzt9",
                           "2024-08-22", "US", 8},
               hyperstack(3.20, "NVIDIA H100 SXM 80 GB"), "", ""});
  none("H800-SXM5-80GB");
  none("H100-SXM5-96GB");  // Meta's Grand Teton part: not sold or rented publicly
  t.push_back({"H200-SXM-141GB", std::nullopt, hyperstack(3.99, "NVIDIA H200 SXM 141 GB"), kNoNode, ""});
  t.push_back({"H100-PCIe-80GB", std::nullopt, lambda(3.29, "1x NVIDIA H100 PCIe"), kNoNode, ""});
  // B200 memory as the catalog gives it (models/hardware/catalog.cc): 180 GB per GPU, the NVIDIA HGX
  // B200 datasheet's 1.44 TB over 8 GPUs, which is what a rented HGX/DGX B200 GPU has; the item
  // read "192 GB" (the chip's 8 HBM3e stacks of 24 GB) before session 42.
  t.push_back({"B200", std::nullopt, hyperstack(6.00, "NVIDIA B200 SXM 180 GB"), kNoNode, ""});
  none("L40S");
  none("MI300X");
  none("H20");
  none("RTX-4090");
  none("RTX-2080-Ti");
  // No dated public purchase price or on-demand rate card row was transcribed for these (issue 19):
  // a GB200/GB300 NVL72 rack or HGX B300 server price must be given in the scenario.
  none("B300");
  none("GB200");
  none("GB300");
  none("H200-NVL");
  none("GH200-96GB");
  return t;
}

std::string thousands(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", std::round(v));
  std::string s = buf, out;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it, ++n) {
    if (n > 0 && n % 3 == 0 && *it != '-') out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
  }
  return out;
}

}  // namespace

const std::vector<GpuPrices>& price_table() {
  static const std::vector<GpuPrices> table = make_table();
  return table;
}

const GpuPrices* find_prices(const std::string& gpu) {
  for (const GpuPrices& p : price_table())
    if (p.gpu == gpu) return &p;
  return nullptr;
}

std::string node_price_missing(const std::string& gpu, int gpus_per_node) {
  const GpuPrices* p = find_prices(gpu);
  if (p == nullptr || !p->node) return "no public purchase price for " + gpu + " nodes (give cost.node_price_usd)";
  if (p->node->gpus == gpus_per_node) return "";
  return "the public purchase price of " + gpu + " nodes is for a server of " + std::to_string(p->node->gpus) +
         " GPUs and this node has " + std::to_string(gpus_per_node) + " (give cost.node_price_usd)";
}

std::string describe_price(const PriceRecord& p, bool per_gpu_hour) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", p.usd);
  const std::string value =
      per_gpu_hour ? "USD " + std::string(buf) + "/GPU-hour" : "USD " + thousands(p.usd) + "/node";
  return value + ", " + p.kind + ", " + p.vendor + ", " + p.date + ", region " + p.region + ": " + p.what + " <" +
         p.url + ">";
}

}  // namespace traincast::models
