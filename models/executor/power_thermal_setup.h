#pragma once
// The power/thermal model's setup for a training job (which GPUs it simulates, their thermal RC,
// airflow preheat, node kinds, start temperatures), and whether a clock can ever drop.

#include <string>
#include <vector>

#include "models/executor/training_graph.h"
#include "models/hardware/cluster.h"
#include "models/power/power_thermal.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Whether power or temperature can ever lower a clock in `scenario` (a cap below TDP, a finite
/// rack cooling capacity, or a GPU position whose steady state at TDP, with every upstream GPU at
/// TDP, reaches the slowdown temperature; or a profile's fitted u(compute_bound) > 1, which the
/// TDP caps). Without it temperature feeds nothing back. The thermal R is the scenario's
/// thermal.r_k_per_w, else the calibration profile's power_thermal.r_k_per_w, else the default.
/// Throws std::invalid_argument when the profile's power_thermal was fitted on another GPU.
/// On a mixed cluster: whether it can for the nodes of any node group (each with its GPU and node).
bool clock_feedback_possible(const Scenario& scenario);

/// One note per thermal field that the scenario's cooling ignores, led by the field's path, e.g.
/// "thermal.supply_air_c has no effect: cooling is liquid, ... (expected ...)": under liquid
/// cooling the air-path fields supply_air_c (the GPUs' inlet is thermal.coolant_c) and
/// gpu_airflow_fraction (cold plates carry the GPUs' heat; power_thermal_setup reads the fraction
/// only for air); under air cooling thermal.coolant_c. A field counts when the scenario wrote it
/// (ThermalSpec::given.supply_air_c / given.coolant_c), even at its default, or differs from it.
/// (thermal.rack_cooling_capacity_w under liquid is refused by the scenario check.)
std::vector<std::string> thermal_settings_without_effect(const Scenario& scenario);

/// The power limit of a `gpu` without its own cap [W]: power.gpu_power_limit_w where set and below
/// the GPU's TDP, else the TDP (as models/power/power_thermal.cc caps it).
double gpu_power_limit_w(const Scenario& scenario, const GpuSpec& gpu);
/// gpu_power_limit_w of global GPU `gpu` of `cluster` (its node group's GPU).
double gpu_power_limit_w(const Scenario& scenario, const Cluster& cluster, int gpu);

/// The cluster.overrides power_cap_w of global GPU `gpu` that acts [W]: Cluster::power_cap_w(gpu)
/// where below gpu_power_limit_w, else 0 (none, or one at or above the limit: a cap only lowers
/// the limit, power_thermal.cc holds the lower of the two). Folding keys its classes on this, so
/// a cap without effect splits no class.
double acting_power_cap_w(const Scenario& scenario, const Cluster& cluster, int gpu);

/// The cluster.overrides supply_c of node `node` that acts [C]: Cluster::supply_c(node) where it
/// differs from the cooling's own inlet (thermal.coolant_c under liquid cooling, else
/// thermal.supply_air_c), else NaN (none, or one equal to it, which changes nothing). Folding keys
/// its classes on this (fresh user 41: `supply_c: 25` under the default 25 C air split a class).
double acting_supply_c(const Scenario& scenario, const Cluster& cluster, int node);

/// Whether an override slows a GPU of `cluster`: a clock_factor below 1, a power cap that acts
/// (acting_power_cap_w) or a node's own supply_c that acts (acting_supply_c). Cluster::slowed_gpus()
/// less the GPUs whose only override has no effect.
bool gpus_slowed(const Scenario& scenario, const Cluster& cluster);

/// One note per cluster.overrides power_cap_w at or above the power limit of every GPU it names
/// (gpu_power_limit_w), led by its field path, e.g. "cluster.overrides[0].power_cap_w has no
/// effect: 600 W is at or above the GPUs' power limit of 500 W (power.gpu_power_limit_w); a cap
/// only lowers the limit (expected below 500 W, or no override)". Nothing for an override
/// Cluster refuses (a bad selector has its own error).
std::vector<std::string> power_caps_without_effect(const Scenario& scenario);

/// Thermal starting point of one simulation pass and what the pass leaves for the next.
struct ThermalStartState {
  std::vector<double> start_c;       ///< per simulated GPU (TrainingGraph worker order) [C]; empty = idle steady state
  std::vector<double> rack_rise_c;   ///< per rack, recirculation rise [K]; empty = 0
  bool periodic_correction = false;  ///< report the periodic steady state (no clock feedback only)
  std::vector<double> periodic_c;    ///< out: periodic steady-state start per simulated GPU
  std::vector<double> rack_rise_out_c;  ///< out: rack rises at the end
  bool asymmetric = false;              ///< out: folding saw different inlets for represented GPUs
  bool ceiling_start = false;           ///< out: a GPU started at its slowdown temperature and cooled
  bool folded = false;                  ///< out: the pass was folded
  bool no_thermal_slowdown = false;     ///< in: no GPU slows down with temperature (attribution run)
};

/// The power/thermal model's setup for `job` on `cluster` (models/power/power_thermal.h):
/// simulated GPUs in worker order, their representatives, airflow lanes (preheat), node kinds,
/// racks, start temperatures. Defaults and sources: models/power/power_model.h; a calibration
/// profile's power_thermal (idle_w, compute_bound_fraction, r_k_per_w, c_j_per_k) replaces them,
/// a scenario's own thermal.r_k_per_w / c_j_per_k win over both.
PowerThermalSetup power_thermal_setup(const Scenario& scenario, const Cluster& cluster, const TrainingGraph& job,
                                      const ThermalStartState& start);

}  // namespace traincast::models
