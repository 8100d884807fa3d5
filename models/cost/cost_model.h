#pragma once
// Cost (DESIGN §4.5): capex per node/switch/cable amortised straight-line, upkeep, energy at the
// facility power the power model reports, against a cloud price per GPU-hour: cost to train and
// the utilisation-dependent payback of buying instead of renting. All prices are scenario inputs
// (models/spec/scenario.h, CostSpec) with dated, sourced defaults.

#include <optional>
#include <string>

#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

inline constexpr double kHoursPerYear = 8766.0;  ///< 365.25 days

/// Default purchase price of one node with this GPU [USD], or nullopt when there is none:
/// H100-SXM5-80GB 8-GPU server USD 317,000 (Thinkmate HGX H100 quotation, Aug 2024, as archived
/// in a public H100 cluster cost sheet).
std::optional<double> default_node_price_usd(const std::string& gpu);

/// Default rent per GPU-hour [USD], or nullopt: AWS EC2 Capacity Blocks, us-east-1, effective
/// accelerator hourly rate published for 2024 (valid until 2025-01-01): p5.48xlarge H100 4.916,
/// p5e H200 5.408, p4d A100-40GB 1.844.
std::optional<double> default_cloud_price_per_gpu_hour_usd(const std::string& gpu);

struct CostInputs {
  CostSpec spec;
  std::string gpu;
  int nodes = 1, gpus_per_node = 8, switches = 0, cables = 0;
  double train_wall_clock_s = 0;  ///< 0 = no training time asked
  double facility_power_w = 0;    ///< 0 = unknown (no power model result)
};

/// Throws std::invalid_argument when a price without default is missing (the io layer checks
/// that first, with the field's position).
CostReport evaluate_cost(const CostInputs& in);

}  // namespace traincast::models
