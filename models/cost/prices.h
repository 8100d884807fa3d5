#pragma once
// Default prices with their provenance (issue 21): every GPU of the hardware catalog has a row here,
// with a purchase price per node and a rent per GPU-hour where a public page states one, and the
// reason where none does (the scenario must then give cost.node_price_usd or
// cost.cloud_price_per_gpu_hour_usd). Only what a page says is recorded, with the date it says or
// was read on; tests/models/io/price_catalog_test.cc checks every catalog GPU has a row.

#include <optional>
#include <string>
#include <vector>

namespace traincast::models {

/// One public price: value [USD], what it buys, its kind, and where and when it was published.
struct PriceRecord {
  double usd = 0.0;    ///< per node (purchase) or per GPU-hour (rent)
  std::string what;    ///< the priced item as the page names it ("8x NVIDIA H200 SXM, on-demand")
  std::string kind;    ///< "list", "street", "analyst estimate" or "cloud on-demand"
  std::string vendor;  ///< who publishes it
  std::string url;     ///< the page
  std::string date;    ///< YYYY-MM-DD: the page's date, or the day it was read (see `what`)
  std::string region;  ///< where the price applies, as the page says ("US"), or "not stated" (every price is in USD)
  int gpus = 0;        ///< GPUs in the priced node (purchase prices; 0 for a rent per GPU-hour)
  bool operator==(const PriceRecord&) const = default;
};

/// A catalog GPU's default prices; an absent price carries the reason in `*_missing`.
struct GpuPrices {
  std::string gpu;                  ///< catalog name (models/hardware/catalog.h)
  std::optional<PriceRecord> node;  ///< purchase of one node with this GPU [USD]
  std::optional<PriceRecord> rent;  ///< rent per GPU-hour [USD]
  std::string node_missing;         ///< why no purchase price (empty when `node` is set)
  std::string rent_missing;         ///< why no rent (empty when `rent` is set)
};

/// Every row, in catalog order. Never empty.
const std::vector<GpuPrices>& price_table();

/// The row for `gpu`, or nullptr for a GPU with no row (a profile's or a new catalog entry).
const GpuPrices* find_prices(const std::string& gpu);

/// Why `gpu` has no default purchase price for a node of `gpus_per_node` GPUs: the row's reason
/// when it records none, else that the recorded node has another GPU count (a 4-GPU node is not half
/// of an 8-GPU server's price: chassis, CPUs, NICs and switches do not scale so). Empty when the
/// default applies.
std::string node_price_missing(const std::string& gpu, int gpus_per_node);

/// "USD 3.99/GPU-hour, cloud on-demand, Hyperstack, 2026-08-26, region not stated: NVIDIA H200 SXM
/// 141 GB, ... <url>" (rent) or the node's
/// "USD 317,000/node, street, ..." — one line for reports and `traincast catalog --prices`.
std::string describe_price(const PriceRecord& p, bool per_gpu_hour);

}  // namespace traincast::models
