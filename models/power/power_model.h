#pragma once
// Power and thermal physics of one GPU and one server (DESIGN §4.5), as pure functions and plain
// data. The executor's hook (models/power/power_thermal.h) drives them event by event.
//
// GPU power. P(a, f) = P_idle + (TDP - P_idle) x u(a) x g(f), where a is what the GPU does
// (Activity, gpu_activity.h), u(a) in [0, 1] its share of the dynamic range at the full clock,
// and f in [f_min, 1] the SM clock as a fraction of the maximum boost clock. g(f) = f x (V(f)/V_max)^2 is
// the dynamic CMOS power P ~ C V^2 f (Weste & Harris, CMOS VLSI Design, 4th ed., §5.1) with the
// voltage following the clock on the DVFS curve, V proportional to f above the voltage floor:
// V(f)/V_max = max(f, v_floor). So g(f) = f^3 above the floor and f x v_floor^2 below it.
//   v_floor = 0.725 V / 1.10 V: the idle voltage nvidia-smi reports on an H800 at 345 MHz (shared
//   data power-thermal pt01) over the Hopper maximum, 1.10 V (estimate: GPU-Z reports 1.05-1.10 V
//   for Hopper/Ampere boards at maximum boost). f_min = 345/1980 (pt01: idle SM clock / max clock).
// u(a): tensor-core-bound kernels at full clock draw TDP (u = 1): large GEMMs on H100 run at the
// power limit at every cap between 200 and 700 W (arXiv:2604.11391, DGEMM under power caps; the
// 8x H100 node peak of 8.4 kW during training, pt02, is consistent with GPUs at ~700 W).
// Memory-bound kernels u = 0.55 and NCCL communication kernels u = 0.30 are estimates (HBM and a
// few SMs busy), to be replaced by a calibration profile; idle draws P_idle (u = 0).
//
// A power limit (nvidia-smi -pl) lowers f until P(a, f) <= limit; the compute-bound part of a
// kernel then takes 1/f as long, the memory-bound part and fixed launch cost do not change (HBM
// runs on its own clock).
//
// Thermal. One lumped RC per GPU: C dT/dt = P - (T - T_inlet)/R, whose exact solution for
// constant P and T_inlet over [t0, t] is T(t) = T_ss + (T(t0) - T_ss) exp(-(t - t0)/(R C)) with
// T_ss = T_inlet + P R. Above the slowdown temperature the GPU lowers its clock so that
// P = (T_slow - T_inlet)/R, holding T at T_slow (NVIDIA's HW slowdown behaviour, nvidia-smi
// "HW Thermal Slowdown").

#include <cstdint>
#include <string>

#include "models/hardware/catalog.h"
#include "models/power/gpu_activity.h"

namespace traincast::models {

/// Power curve parameters of one GPU type (see the file comment for the formulas and sources).
struct GpuPowerCurve {
  double idle_w = 0;                                                  ///< P_idle [W], > 0
  double tdp_w = 0;                                                   ///< TDP [W], > idle_w
  double activity_fraction[kNumActivities] = {0.0, 0.30, 0.55, 1.0};  ///< u(a), in [0, 1]
  double clock_min_fraction = 345.0 / 1980.0;                         ///< f_min (pt01)
  double voltage_floor_fraction = 0.725 / 1.10;                       ///< v_floor (pt01 idle voltage / 1.10 V estimate)
};

/// The curve of a catalog GPU (idle and TDP from the catalog).
GpuPowerCurve power_curve_of(const GpuSpec& gpu);

/// g(f) = f (max(f, v_floor))^2, f in [f_min, 1]. Returns 1 at f = 1.
double dynamic_power_scale(const GpuPowerCurve& c, double clock_fraction);

/// P(a, f) [W].
double gpu_power_w(const GpuPowerCurve& c, Activity a, double clock_fraction);

/// The highest clock fraction in [f_min, 1] with P(a, f) <= limit_w (bisection on the monotone
/// g; exact to 1e-9). Returns 1 when P(a, 1) <= limit_w, f_min when even P(a, f_min) > limit_w.
double clock_for_power_limit(const GpuPowerCurve& c, Activity a, double limit_w);

/// Speed of an op relative to the full clock: 1 / (1 - c + c / f), where c in [0, 1] is the
/// fraction of its time at full clock that is compute-bound. Returns 1 at f = 1.
double op_speed(double compute_fraction, double clock_fraction);

/// Lowest power cap [W] a scenario may set for `gpu` (power.gpu_power_limit_w): the larger of the
/// board's published minimum (GpuSpec::min_power_limit_w, nvidia-smi "Min Power Limit") and the
/// floor the model can hold, ceil(P(compute_bound, f_min)) of the catalog curve: below it even the
/// lowest clock draws more than the cap under full tensor load (H100 SXM: 70 + 630 x 0.1742 x
/// 0.4344 = 117.7 -> 118 W; published 200 W). Where the catalog has no published minimum the
/// floor is the answer (e.g. H100 PCIe 73 W).
double min_power_limit_w(const GpuSpec& gpu);

/// Lumped thermal model of one GPU.
struct ThermalRc {
  double r_k_per_w = 0;   ///< R, junction to inlet air / coolant [K/W], > 0
  double c_j_per_k = 0;   ///< C [J/K], > 0
  double slowdown_c = 0;  ///< T_slow [C]
  double tau_s() const { return r_k_per_w * c_j_per_k; }
};

/// T after dt_s seconds at constant power and inlet, from t0_c (exact exponential solution).
double temperature_after(const ThermalRc& rc, double t0_c, double power_w, double inlet_c, double dt_s);
/// temperature_after with decay = exp(-dt_s / tau) given (the same bits when it is that value),
/// for callers that advance many GPUs over one interval.
double temperature_after_decay(const ThermalRc& rc, double t0_c, double power_w, double inlet_c, double decay);

/// Seconds until T reaches target_c from t0_c at constant power and inlet; +infinity when it
/// never does (target not strictly between t0 and the steady state T_inlet + P R).
double seconds_to_reach(const ThermalRc& rc, double t0_c, double power_w, double inlet_c, double target_c);

/// Energy [J] the GPU gives to the air over dt at constant P is P dt; the temperature integral
/// over [0, dt] (for time-averaged temperatures) [C s].
double temperature_integral(const ThermalRc& rc, double t0_c, double power_w, double inlet_c, double dt_s);
/// temperature_integral with expm1_x = expm1(-dt_s / tau) given (the same bits when it is that value).
double temperature_integral_expm1(const ThermalRc& rc, double t0_c, double power_w, double inlet_c, double dt_s,
                                  double expm1_x);

/// Specific heat of air per volume at 25 C, sea level: rho c_p = 1.184 kg/m^3 x 1006 J/(kg K)
/// (CRC Handbook of Chemistry and Physics, dry air at 298 K, 1 atm) [J/(m^3 K)].
constexpr double kAirHeatCapacityJPerM3K = 1.184 * 1006.0;

/// Server-level power figures of a node template (catalog values, or documented estimates).
struct NodePowerSpec {
  double cpu_w_per_socket = 0;   ///< CPU TDP per socket [W]
  double other_w = 0;            ///< DRAM, NICs, DPUs, NVSwitches, storage, BMC at load [W]
  double fan_max_w = 0;          ///< all fans at full speed [W]
  double psu_efficiency = 0.94;  ///< AC->DC (80 PLUS Titanium: >= 94% at 50% load, 230 V)
  int psu_count = 0;             ///< power supplies installed
  int psu_redundant = 1;         ///< supplies that may fail while the node keeps running (N+1 = 1)
  double psu_capacity_w = 0;     ///< output per supply [W]
  double rated_power_w = 0;      ///< vendor's maximum system power [W] (0 = not published)
  int airflow_rows = 1;          ///< GPUs one behind the other along the chassis airflow
  std::string source;
  /// Power the node may draw with psu_redundant supplies failed [W].
  double redundant_capacity_w() const { return (psu_count - psu_redundant) * psu_capacity_w; }
};

/// The node power figures of a template (known templates carry datasheet values; others get
/// estimates scaled from their GPUs, NICs and sockets, and say so in `source`).
NodePowerSpec node_power_spec(const NodeTemplate& node, const GpuSpec& gpu);

/// Fan power at a given heat load: fan affinity laws (airflow ~ speed, power ~ speed^3) with the
/// airflow proportional to the heat to remove: fan_max_w x (heat / design_heat)^3, capped at
/// fan_max_w, floored at 20% speed (0.8% power; typical BMC minimum duty).
double fan_power_w(const NodePowerSpec& n, double heat_w, double design_heat_w);

}  // namespace traincast::models

namespace traincast::models {

/// Air-cooling design point used to derive a GPU's default thermal resistance: at the highest
/// inlet temperature the server is rated for, 30 C (NVIDIA DGX H100/A100 datasheets: operating
/// temperature 5-30 C), the hottest (most downstream) GPU at TDP reaches its maximum operating
/// temperature, 2 K below slowdown (nvidia-smi on H800: max operating 87 C, slowdown 89 C; shared
/// data power-thermal pt01). The air warms by kTrayRiseK across the GPU tray at full load
/// (estimate within ASHRAE TC 9.9's typical 10-20 K server air temperature rise).
constexpr double kDesignInletC = 30.0;
constexpr double kTrayRiseK = 15.0;
constexpr double kMaxOperatingMarginK = 2.0;

/// Default lumped RC of a GPU. air: R = (T_slow - 2 - 30 - 15 (rows - 1) / rows) / TDP (see
/// above), C = 1,000 J/K (estimate: ~2 kg of copper/aluminium heat sink and package; tau = R C
/// of about a minute, the order of the warm-up seen in GPU burn traces; calibrate fit replaces
/// it). liquid: R = 0.03 K/W, C = 400 J/K (estimates typical of GPU cold plates, 0.02-0.04 K/W).
ThermalRc default_thermal_rc(const GpuSpec& gpu, bool liquid, int airflow_rows);

/// Preheat [K per W of an upstream GPU] in a lane whose design airflow carries rows x TDP with a
/// kTrayRiseK rise, scaled by the fraction of that airflow actually flowing (0, 1].
double preheat_k_per_w(const GpuSpec& gpu, int airflow_rows, double airflow_fraction);

/// Design airflow of a node [m^3/s]: its maximum heat at a kTrayRiseK air temperature rise.
double node_airflow_m3_per_s(const NodePowerSpec& node, const GpuSpec& gpu, int gpus_per_node, int sockets);

}  // namespace traincast::models
