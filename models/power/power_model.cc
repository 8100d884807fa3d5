#include "models/power/power_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace traincast::models {

GpuPowerCurve power_curve_of(const GpuSpec& gpu) {
  GpuPowerCurve c;
  c.idle_w = gpu.idle_w;
  c.tdp_w = gpu.tdp_w;
  return c;
}

double dynamic_power_scale(const GpuPowerCurve& c, double f) {
  const double v = std::max(f, c.voltage_floor_fraction);
  return f * v * v;
}

double gpu_power_w(const GpuPowerCurve& c, Activity a, double f) {
  const double u = c.activity_fraction[static_cast<int>(a)];
  return c.idle_w + (c.tdp_w - c.idle_w) * u * (f >= 1.0 ? 1.0 : dynamic_power_scale(c, f));
}

double clock_for_power_limit(const GpuPowerCurve& c, Activity a, double limit_w) {
  if (gpu_power_w(c, a, 1.0) <= limit_w) return 1.0;
  double lo = c.clock_min_fraction, hi = 1.0;
  if (gpu_power_w(c, a, lo) > limit_w) return lo;
  for (int i = 0; i < 60 && hi - lo > 1e-10; ++i) {
    const double mid = 0.5 * (lo + hi);
    (gpu_power_w(c, a, mid) <= limit_w ? lo : hi) = mid;
  }
  return lo;
}

double op_speed(double compute_fraction, double f) {
  if (f >= 1.0 || compute_fraction <= 0.0) return 1.0;
  return 1.0 / (1.0 - compute_fraction + compute_fraction / f);
}

double min_power_limit_w(const GpuSpec& gpu) {
  const GpuPowerCurve c = power_curve_of(gpu);
  const double floor_w = std::ceil(gpu_power_w(c, Activity::compute_bound, c.clock_min_fraction));
  return std::max(gpu.min_power_limit_w, floor_w);
}

double temperature_after(const ThermalRc& rc, double t0, double p, double inlet, double dt) {
  return temperature_after_decay(rc, t0, p, inlet, std::exp(-dt / rc.tau_s()));
}

double temperature_after_decay(const ThermalRc& rc, double t0, double p, double inlet, double decay) {
  const double ss = inlet + p * rc.r_k_per_w;
  return ss + (t0 - ss) * decay;
}

double seconds_to_reach(const ThermalRc& rc, double t0, double p, double inlet, double target) {
  const double ss = inlet + p * rc.r_k_per_w;
  const double a = t0 - ss, b = target - ss;
  // Reachable when target lies strictly between t0 and ss (same sign, |b| < |a|) or equals t0.
  if (a == 0.0 || (a > 0) != (b > 0) || std::abs(b) >= std::abs(a)) {
    if (target == t0) return 0.0;
    return std::numeric_limits<double>::infinity();
  }
  return rc.tau_s() * std::log(a / b);
}

double temperature_integral(const ThermalRc& rc, double t0, double p, double inlet, double dt) {
  return temperature_integral_expm1(rc, t0, p, inlet, dt, std::expm1(-dt / rc.tau_s()));
}

double temperature_integral_expm1(const ThermalRc& rc, double t0, double p, double inlet, double dt, double expm1_x) {
  const double ss = inlet + p * rc.r_k_per_w;
  const double tau = rc.tau_s();
  return ss * dt + (t0 - ss) * tau * -expm1_x;
}

NodePowerSpec node_power_spec(const NodeTemplate& node, const GpuSpec& gpu) {
  NodePowerSpec n;
  const double gpus_w = node.gpus_per_node * gpu.tdp_w;
  if (node.name == "dgx_h100" || node.name == "hgx_h200" || node.name == "gcp_a3_mega" || node.name == "gcp_a3_ultra" ||
      node.name == "hgx_h20") {
    // NVIDIA DGX H100 datasheet (2023): max system power 10.2 kW; DGX H100 User Guide: six
    // 3.3 kW supplies, 4+2 redundant. Intel Xeon Platinum 8480C: 350 W TDP (Intel ARK 8480+).
    // Other: 32 DDR5 DIMMs x 10 W, 8 ConnectX-7 x 25 W, 2 BlueField-3 x 150 W, 4 NVSwitch3 x
    // 100 W, 10 NVMe x 15 W = 1,370 W (estimate from component datasheets' maxima).
    // Fans: 1,200 W at full speed (estimate; 8U chassis, 12 fan modules).
    n.cpu_w_per_socket = 350;
    n.other_w = 1370;
    n.fan_max_w = 1200;
    n.psu_count = 6;
    n.psu_redundant = 2;
    n.psu_capacity_w = 3300;
    n.rated_power_w = node.name == "dgx_h100" ? 10200 : 0;
    n.airflow_rows = 2;
    n.source =
        "NVIDIA DGX H100 datasheet (10.2 kW max) and User Guide (6 x 3.3 kW PSUs, 4+2); Xeon 8480C 350 W (Intel "
        "ARK); DIMMs/NICs/DPUs/NVSwitch/NVMe and fans: estimates";
  } else if (node.name == "dgx_a100" || node.name == "dgx_a100_40gb" || node.name == "oci_bm_gpu4_8") {
    // NVIDIA DGX A100 datasheet (2020): 6.5 kW max; User Guide: six 3 kW supplies, 3+3.
    // AMD EPYC 7742: 225 W TDP (AMD product page). Other: 32 DIMMs x 8 W, 8+2 ConnectX-6 x 20 W,
    // 6 NVSwitch2 x 100 W, NVMe 8 x 12 W = 1,152 W (estimate). Fans 800 W (estimate).
    n.cpu_w_per_socket = 225;
    n.other_w = 1152;
    n.fan_max_w = 800;
    n.psu_count = 6;
    n.psu_redundant = 3;
    n.psu_capacity_w = 3000;
    n.rated_power_w = node.name == "oci_bm_gpu4_8" ? 0 : 6500;
    n.airflow_rows = 2;
    n.source =
        "NVIDIA DGX A100 datasheet (6.5 kW max) and User Guide (6 x 3 kW PSUs, 3+3); EPYC 7742 225 W (AMD); "
        "DIMMs/NICs/NVSwitch/NVMe and fans: estimates";
  } else if (node.name.rfind("gb200_nvl72", 0) == 0 || node.name.rfind("gb300_nvl72", 0) == 0) {
    // A liquid-cooled NVL72 rack as one node. Grace: a GB200 superchip (1 Grace + 2 GPUs) is rated
    // up to 2,700 W (NVIDIA GB200 product page), so 2,700 - 2 x 1,200 W = 300 W per Grace with its
    // LPDDR5X. Other: 72 NICs x 25 W, 18 NVLink switch chips x 100 W, 18 compute trays (4 GPUs
    // each) x 400 W of NVMe, BlueField and BMC (estimates); a rack partitioned into NVLink domains
    // ("gb200_nvl72/36", models/hardware/nvlink_domains.h) is charged per domain. Cold plates carry the GPU, CPU and
    // switch heat: fans only in power shelves and trays' residual air path, 3% of the GPUs' TDP (estimate). Power
    // shelves as N+1 supplies of 5.5 kW (estimate; NVIDIA's rack power is not in the catalog's
    // sources).
    n.cpu_w_per_socket = 300;
    n.other_w = 25.0 * node.nics + 100.0 * node.nvswitches + 400.0 * node.gpus_per_node / 4.0;
    n.fan_max_w = 0.03 * gpus_w;
    const double max_w = (gpus_w + node.sockets * n.cpu_w_per_socket + n.other_w + n.fan_max_w) / n.psu_efficiency;
    n.psu_capacity_w = 5500;
    n.psu_redundant = 1;
    n.psu_count = static_cast<int>(std::ceil(1.2 * max_w / n.psu_capacity_w)) + 1;
    n.airflow_rows = 1;
    n.source =
        "estimate: GB200 superchip 2,700 W (Grace 300 W after 2 x 1,200 W GPUs), NICs, NVLink switch chips, "
        "trays; liquid cooled (fans 3% of GPU TDP); 5.5 kW N+1 power-shelf supplies";
  } else {
    // Generic estimate: 250 W per socket, 25 W per NIC, 100 W per NVSwitch, 400 W for DIMMs,
    // storage and BMC; fans at 12% of the GPUs' TDP; N+1 supplies of 3 kW sized for 1.2x the
    // estimated maximum.
    n.cpu_w_per_socket = 250;
    n.other_w = 25.0 * node.nics + 100.0 * node.nvswitches + 400.0;
    n.fan_max_w = 0.12 * gpus_w;
    const double max_w = (gpus_w + node.sockets * n.cpu_w_per_socket + n.other_w + n.fan_max_w) / n.psu_efficiency;
    n.psu_capacity_w = 3000;
    n.psu_redundant = 1;
    n.psu_count = static_cast<int>(std::ceil(1.2 * max_w / n.psu_capacity_w)) + 1;
    n.airflow_rows = node.gpus_per_node >= 8 && node.scale_up == ScaleUp::nvswitch ? 2 : 1;
    n.source = "estimate (no published node power figures in the catalog): sockets, NICs, NVSwitches, fans, N+1";
  }
  return n;
}

double fan_power_w(const NodePowerSpec& n, double heat_w, double design_heat_w) {
  const double speed = std::clamp(design_heat_w > 0 ? heat_w / design_heat_w : 1.0, 0.2, 1.0);
  return n.fan_max_w * speed * speed * speed;
}

}  // namespace traincast::models

namespace traincast::models {

ThermalRc default_thermal_rc(const GpuSpec& gpu, bool liquid, int rows) {
  ThermalRc rc;
  rc.slowdown_c = gpu.slowdown_temp_c;
  if (liquid) {
    rc.r_k_per_w = 0.03;
    rc.c_j_per_k = 400;
    return rc;
  }
  const double preheat = kTrayRiseK * (rows - 1) / std::max(1, rows);
  rc.r_k_per_w = (gpu.slowdown_temp_c - kMaxOperatingMarginK - kDesignInletC - preheat) / gpu.tdp_w;
  rc.c_j_per_k = 1000;
  return rc;
}

double preheat_k_per_w(const GpuSpec& gpu, int rows, double airflow_fraction) {
  return kTrayRiseK / (std::max(1, rows) * gpu.tdp_w * airflow_fraction);
}

double node_airflow_m3_per_s(const NodePowerSpec& node, const GpuSpec& gpu, int gpus_per_node, int sockets) {
  const double heat = gpus_per_node * gpu.tdp_w + sockets * node.cpu_w_per_socket + node.other_w + node.fan_max_w;
  return heat / (kAirHeatCapacityJPerM3K * kTrayRiseK);
}

}  // namespace traincast::models
