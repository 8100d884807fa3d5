#include "models/cost/cost_model.h"

#include <algorithm>
#include <stdexcept>

#include "models/cost/prices.h"

namespace traincast::models {

std::optional<double> default_node_price_usd(const std::string& gpu, int physical_gpus) {
  const GpuPrices* p = find_prices(gpu);
  if (p == nullptr || !p->node || p->node->gpus != physical_gpus) return std::nullopt;
  return p->node->usd;
}

std::optional<double> default_cloud_price_per_gpu_hour_usd(const std::string& gpu) {
  const GpuPrices* p = find_prices(gpu);
  if (p == nullptr || !p->rent) return std::nullopt;
  return p->rent->usd;
}

namespace {

std::string source_of(double given, const std::string& gpu, bool rent) {
  if (given > 0) return "scenario";
  const GpuPrices* p = find_prices(gpu);
  if (p == nullptr) return "";
  if (rent) return p->rent ? describe_price(*p->rent, true) : "";
  return p->node ? describe_price(*p->node, false) : "";
}

}  // namespace

double default_switch_price_usd(int ports) {
  constexpr double kPriceUsd = 36000.0;  // 64-port 400 Gb/s InfiniBand switch, FS.com, Aug 2024
  constexpr int kPorts = 64;
  return kPriceUsd * (ports > 0 ? ports : kPorts) / kPorts;
}

CostReport evaluate_cost(const CostInputs& in) {
  const CostSpec& s = in.spec;
  const int physical_gpus = in.physical_gpus > 0 ? in.physical_gpus : in.gpus_per_node;
  const std::optional<double> node_price =
      s.node_price_usd > 0 ? std::optional<double>(s.node_price_usd) : default_node_price_usd(in.gpu, physical_gpus);
  const std::optional<double> cloud = s.cloud_price_per_gpu_hour_usd > 0
                                          ? std::optional<double>(s.cloud_price_per_gpu_hour_usd)
                                          : default_cloud_price_per_gpu_hour_usd(in.gpu);
  if (!node_price && !cloud)
    throw std::invalid_argument("cost: no default node price and no default rent for " + in.gpu);
  CostReport r;
  r.modelled = true;
  r.own_modelled = node_price.has_value();
  r.rent_modelled = cloud.has_value();
  r.node_price_source = r.own_modelled ? source_of(s.node_price_usd, in.gpu, false) : "";
  r.cloud_price_source = r.rent_modelled ? source_of(s.cloud_price_per_gpu_hour_usd, in.gpu, true) : "";
  r.nodes = in.nodes, r.switches = in.switches, r.cables = in.cables;
  // Whole servers or racks are bought: 5 "gb200_nvl72/36" nodes need 3 racks (one half idle).
  const int per_unit = std::max(1, in.nodes_per_physical);
  r.units_bought = (in.nodes + per_unit - 1) / per_unit;
  r.node_price_unit = !in.unit.empty() ? in.unit : "node of " + std::to_string(in.gpus_per_node) + " GPUs";
  const double gpus = static_cast<double>(in.nodes) * in.gpus_per_node;
  r.amortization_years = s.amortization_years;
  r.energy_modelled = in.facility_power_w > 0;
  r.facility_power_w = in.facility_power_w;
  const double busy_hours = kHoursPerYear * s.utilization;
  // Energy while training; idle hours are left out (the power model gives the busy draw only).
  r.energy_per_year_usd = in.facility_power_w / 1000.0 * busy_hours * s.energy_price_usd_per_kwh;
  r.train_gpu_hours = gpus * in.train_wall_clock_s / 3600.0;
  if (r.own_modelled) {
    r.node_price_usd = *node_price;
    const double switch_price = s.switch_price_usd > 0 ? s.switch_price_usd : default_switch_price_usd(in.switch_ports);
    r.capex_usd = r.units_bought * *node_price + in.switches * switch_price + in.cables * s.cable_price_usd;
    r.capex_per_year_usd = r.capex_usd / s.amortization_years;
    r.upkeep_per_year_usd = r.capex_usd * s.upkeep_fraction_per_year;
    const double own_per_year = r.capex_per_year_usd + r.upkeep_per_year_usd + r.energy_per_year_usd;
    r.own_cost_per_gpu_hour_usd = busy_hours > 0 ? own_per_year / (gpus * busy_hours) : 0.0;
    r.own_cost_to_train_usd = r.own_cost_per_gpu_hour_usd * r.train_gpu_hours;
  }
  if (r.rent_modelled) {
    r.cloud_price_per_gpu_hour_usd = *cloud;
    r.cloud_cost_to_train_usd = *cloud * r.train_gpu_hours;
  }
  if (r.own_modelled && r.rent_modelled) {
    // Payback: capex recovered by the rent avoided, less what owning costs to run.
    const double rent_avoided = *cloud * gpus * busy_hours;
    const double running = r.upkeep_per_year_usd + r.energy_per_year_usd;
    r.payback_never = !(rent_avoided > running);
    r.payback_years = r.payback_never ? 0.0 : r.capex_usd / (rent_avoided - running);
    // Break-even utilisation u: capex/yr + upkeep + energy(u) = rent(u), energy and rent linear in u.
    const double energy_full = in.facility_power_w / 1000.0 * kHoursPerYear * s.energy_price_usd_per_kwh;
    const double margin_full = *cloud * gpus * kHoursPerYear - energy_full;
    r.breakeven_utilization = margin_full > 0 ? (r.capex_per_year_usd + r.upkeep_per_year_usd) / margin_full : 0.0;
  }
  std::string note;
  if (!r.energy_modelled) note = "energy cost left out: no facility power from the power model";
  if (!r.own_modelled)
    note += std::string(note.empty() ? "" : "; ") + "rent only: " + node_price_missing(in.gpu, physical_gpus);
  if (!r.rent_modelled)
    note += std::string(note.empty() ? "" : "; ") + "own only: no public rent for " + in.gpu +
            " (give cost.cloud_price_per_gpu_hour_usd)";
  r.note = note;
  return r;
}

}  // namespace traincast::models
