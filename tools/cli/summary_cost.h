#pragma once
// The summary's "Cost (USD)" section (format_job_effects in summary.h prints it).

#include <string>

#include "models/spec/report.h"

namespace traincast::cli {

/// "\nCost (USD):\n  capex ..." with what one node price buys and the prices' sources; "" when
/// the run has no cost section (!c.modelled).
std::string format_cost(const models::CostReport& c);

}  // namespace traincast::cli
