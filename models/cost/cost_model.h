#pragma once
// Cost (DESIGN §4.5): capex per node/switch/cable amortised straight-line, upkeep, energy at the
// facility power the power model reports, against a cloud price per GPU-hour: cost to train and
// the utilisation-dependent payback of buying instead of renting. All prices are scenario inputs
// (models/spec/scenario.h, CostSpec) with dated, sourced defaults (models/cost/prices.h). A GPU
// with only a rent prices the rent side (rent-only); with only a purchase price, the own side.

#include <optional>
#include <string>

#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

inline constexpr double kHoursPerYear = 8766.0;  ///< 365.25 days

/// Default purchase price of one physical server or rack of `physical_gpus` GPUs of this model
/// [USD] (NodeTemplate::physical_gpus: a "base/N" partition's whole base), or nullopt when no
/// public one is recorded for a product of that size (models/cost/prices.cc gives each price's
/// page, date, region, kind and GPU count; `node_price_missing` says why none applies).
std::optional<double> default_node_price_usd(const std::string& gpu, int physical_gpus);

/// Default rent per GPU-hour [USD], or nullopt when no public one is recorded (prices.cc).
std::optional<double> default_cloud_price_per_gpu_hour_usd(const std::string& gpu);

struct CostInputs {
  CostSpec spec;
  std::string gpu;
  int nodes = 1, gpus_per_node = 8, switches = 0, cables = 0;
  /// Ports of each switch bought (SwitchCount::switch_ports); 0 = 64. Prices the default switch.
  int switch_ports = 0;
  /// The priced unit: GPUs of one physical server or rack (NodeTemplate::physical_gpus; 0 =
  /// gpus_per_node) and how many nodes one holds (NodeTemplate::nodes_per_physical; 2 for
  /// "gb200_nvl72/36"). Whole units are bought: ceil(nodes / nodes_per_physical) of them.
  int physical_gpus = 0, nodes_per_physical = 1;
  /// What one unit is, for the report ("gb200_nvl72 rack of 72 GPUs, 2 gb200_nvl72/36 nodes each");
  /// empty = "node of <gpus_per_node> GPUs".
  std::string unit;
  double train_wall_clock_s = 0;  ///< 0 = no training time asked
  double facility_power_w = 0;    ///< 0 = unknown (no power model result)
};

/// Own side (capex, own cost per GPU-hour and to train) when a node price is given or defaults;
/// rent side when a rent is given or defaults; payback and break-even when both are.
/// Throws std::invalid_argument when neither price is known (the io layer checks that first,
/// with the field's position).
CostReport evaluate_cost(const CostInputs& in);

/// The default price of one switch of `ports` ports [USD] (0 = 64): USD 36,000 for a 64-port
/// 400 Gb/s InfiniBand switch (NVIDIA QM9700 class, FS.com, Aug 2024), per port for another radix
/// (a 144-port switch USD 81,000, a 32-port one USD 18,000), so that a larger switch is not bought
/// at a smaller one's price. An assumption where no list price is public (Quantum-X800 Q3400).
double default_switch_price_usd(int ports);

}  // namespace traincast::models
