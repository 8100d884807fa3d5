#pragma once
// The summary's "Cost (USD)" section (format_job_effects in summary.h prints it).

#include <string>

#include "models/spec/report.h"

namespace traincast::cli {

/// "\nCost (USD):\n  capex ..." with what one node price buys and the prices' sources; "" when
/// the run has no cost section (!c.modelled).
std::string format_cost(const models::CostReport& c);

/// A price's source as run's cost section and compare's Prices section print it: for a price the
/// user gave (source "scenario", "--set" or "--vary"), its value and that source, "USD 250,000 (--set)"
/// (per node_price_unit), "USD 2.500/GPU-hour (scenario)"; else the default's provenance
/// (models/cost/prices.h). `rent`: the rent (cloud_price_*), else the node price.
std::string price_source_text(const models::CostReport& c, bool rent);

}  // namespace traincast::cli
