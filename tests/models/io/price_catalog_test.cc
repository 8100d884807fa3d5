// Issue 21: every GPU of the hardware catalog has a price row (a dated, sourced price or the reason
// there is none), and every price records its page, date, region and kind.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "models/cost/prices.h"
#include "models/hardware/catalog.h"

namespace traincast::models {
namespace {

void expect_complete(const PriceRecord& p, const std::string& gpu) {
  EXPECT_GT(p.usd, 0.0) << gpu;
  EXPECT_TRUE(std::regex_match(p.date, std::regex(R"(\d{4}-\d{2}-\d{2})"))) << gpu << ": " << p.date;
  EXPECT_EQ(p.url.rfind("https://", 0), 0u) << gpu << ": " << p.url;
  EXPECT_FALSE(p.region.empty()) << gpu;
  EXPECT_FALSE(p.vendor.empty()) << gpu;
  const std::set<std::string> kinds = {"list", "street", "analyst estimate", "cloud on-demand"};
  EXPECT_TRUE(kinds.count(p.kind)) << gpu << ": " << p.kind;
}

TEST(PriceCatalog, EveryCatalogGpuHasARowAndEveryPriceItsSource) {
  std::set<std::string> rows;
  for (const GpuPrices& p : price_table()) {
    rows.insert(p.gpu);
    EXPECT_NO_THROW(find_gpu(p.gpu)) << p.gpu << " is priced but not in the catalog";
    if (p.node)
      expect_complete(*p.node, p.gpu);
    else
      EXPECT_NE(p.node_missing.find("cost.node_price_usd"), std::string::npos) << p.gpu;
    if (p.rent)
      expect_complete(*p.rent, p.gpu);
    else
      EXPECT_NE(p.rent_missing.find("cost.cloud_price_per_gpu_hour_usd"), std::string::npos) << p.gpu;
  }
  for (const std::string& g : gpu_names()) EXPECT_TRUE(rows.count(g)) << g << " has no row in models/cost/prices.cc";
}

TEST(PriceCatalog, DescribeNamesValueKindVendorDateAndPage) {
  const GpuPrices* h200 = find_prices("H200-SXM-141GB");
  ASSERT_NE(h200, nullptr);
  ASSERT_TRUE(h200->rent.has_value());
  EXPECT_FALSE(h200->node.has_value());
  EXPECT_EQ(describe_price(*h200->rent, true),
            "USD 3.99/GPU-hour, cloud on-demand, Hyperstack, 2026-08-26, region not stated: NVIDIA H200 SXM 141 GB, "
            "on-demand, per GPU-hour (read 2026-08-26) <https://www.hyperstack.cloud/gpu-pricing>");
  EXPECT_EQ(find_prices("no-such-gpu"), nullptr);
}

}  // namespace
}  // namespace traincast::models
