#pragma once
// Power vs load and lumped thermal R and C from traincast-bench's burn (DESIGN §4.5 and §5):
// NVML samples of an idle baseline, a sustained GEMM (the step up) and a cool-down (the step down)
// per GPU (models::PowerThermalSample), fitted into a PowerThermalOverlay of the profile.
//
// Model (models/power/power_model.h): C dT/dt = P(t) - (T - T_in)/R. Between two samples the
// measured power is taken as linear in time (NVML's power is itself a 1 s average on H100/H200),
// for which the exact solution is T(t) = T_p(t) + (T(0) - T_p(0)) e^{-t/tau}, tau = R C,
// T_p(t) = T_in + R P(t) - R tau dP/dt. For a step to constant P this is
// T(t) = T_in + P R + (T0 - T_in - P R) e^{-t/(R C)}.
//
// What is fitted, per GPU:
//  - power vs load: the affine fit P = idle_w + (full_load_w - idle_w) x load, load = 0 (idle
//    samples) or 1 (burn samples), by Huber IRLS (robust.h) on the steady samples: burn samples
//    from 2 s after the burn starts and idle samples from 2 s after it ends (NVML averages over
//    1 s). The bench measures these two loads only, so the line goes through their two robust
//    means. compute_bound_fraction = (full_load_w - idle_w) / ((TDP - idle_w) g(f)), f = median
//    SM clock during the burn / the machine's maximum (1 when not recorded; g as in
//    power_model.h): the u(a) with which the model reproduces the measured power at the measured
//    clock (> 1 when a power cap held the burn below the full clock).
//  - thermal: (ln R, ln tau, T_in, T0) by Levenberg-Marquardt with Huber weights (robust.h) on the
//    temperature residuals, the measured power (Hampel-filtered within each phase: a sample more
//    than 3 robust sigmas from the median of its 7-sample window takes that median) as the input,
//    from the best start of a coarse grid in R and tau. The inlet is NOT measured by the bench
//    (NVML has no inlet sensor): T_in is assumed constant during the burn and fitted; it is the
//    effective inlet of this GPU (supply air plus the preheat of the other GPUs, which also burn:
//    on a multi-GPU machine a downstream GPU's R includes that coupling). T0 is fitted too (the
//    bench's earlier parts leave the GPU warm, so the idle baseline is a cool-down).
// Hold-out (`holdout`): only samples up to the middle of the burn are fitted (the idle baseline
// and the first half of the step response); the second half of the step and the cool-down are
// predicted. Overlay values are medians over the GPUs.
// Errors (std::invalid_argument, "file:line: what (expected ...)"): a GPU with fewer than 20
// samples, no idle or no burn samples, more than one burn block, a burn whose power does not rise
// above idle, a burn shorter than 10 s.

#include <string>
#include <vector>

#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"
#include "models/hardware/catalog.h"

namespace traincast::calibrate {

/// The fit of one GPU's burn.
struct BurnGpuFit {
  int gpu = 0;
  double idle_w = 0, full_load_w = 0;  ///< robust means of the steady idle and burn samples [W]
  double load_clock_fraction = 0;      ///< median burn SM clock / maximum; 0 when unknown
  double compute_bound_fraction = 0;   ///< u(compute_bound), see the file comment
  double r_k_per_w = 0, c_j_per_k = 0, inlet_c = 0, start_c = 0;
  double r_rel_se = 0, c_rel_se = 0;  ///< relative standard errors of R and C (linearised at the fit)
  double fit_rms_k = 0;               ///< RMS of the fit samples' temperature residuals (Huber weight 1 only)
  double burn_start_s = 0, burn_end_s = 0;
  double split_s = 0;  ///< last fitted time (the burn's middle with hold-out, else the last sample)
  int samples = 0, fit_samples = 0, outliers = 0;  ///< outliers: fit samples with Huber weight < 1
  std::string where;                               ///< "file:first-last" lines
};

struct BurnFit {
  std::vector<BurnGpuFit> gpus;
  models::PowerThermalOverlay overlay;  ///< medians over gpus, with fitted_from
};

/// Fits every GPU's burn (see the file comment). gpu: the catalog GPU (TDP, clock floor).
/// sm_clock_max_mhz / power_limit_w: the machine's (0 = not recorded). Throws std::invalid_argument.
BurnFit fit_burn(const std::vector<models::PowerThermalSample>& samples, const models::GpuSpec& gpu,
                 double sm_clock_max_mhz, bool holdout, std::vector<std::string>* notes = nullptr);

/// Temperatures [C] at times t_s (increasing) of the RC model with power linear between the
/// given points (power_w, same size), from t0_c at t_s[0].
std::vector<double> simulate_rc(const std::vector<double>& t_s, const std::vector<double>& power_w, double r_k_per_w,
                                double c_j_per_k, double inlet_c, double t0_c);

/// Measured vs predicted for a burn, per GPU: the prediction is what `traincast run` would use
/// (power from the profile's curve, or the catalog's: idle_w when idle, P(compute_bound, f) under
/// the power limit while loaded; temperature by the RC model with the profile's R and C from the
/// GPU's first measured temperature at the profile's fitted inlet, 25 C when it has none).
struct BurnValidationPoint {
  int gpu = 0;
  std::string quantity;  ///< "temperature" [C] or "power" [W]
  double t_s = 0;
  double measured = 0, predicted = 0;
  bool loaded = false;
  bool fit_point = false;
  std::string where;
};
struct BurnValidationGroup {
  int gpu = 0;
  std::string quantity;
  int fit_n = 0, held_n = 0;
  double fit_rms = 0, held_rms = 0;  ///< RMS of predicted - measured [C or W]
  double fit_max = 0, held_max = 0;  ///< largest |predicted - measured|
};
struct BurnValidation {
  std::vector<BurnValidationPoint> points;
  std::vector<BurnValidationGroup> groups;
  double inlet_c = 0;
  std::string note;  ///< what the prediction assumed
};

/// holdout: samples after the middle of each GPU's burn are the held-out ones (as fit_burn).
/// power_limit_w: the machine's enforced limit (0 = the catalog TDP).
BurnValidation validate_burn(const models::CalibrationProfile& profile, const models::GpuSpec& gpu,
                             const std::vector<models::PowerThermalSample>& samples, double power_limit_w,
                             bool holdout);

}  // namespace traincast::calibrate
