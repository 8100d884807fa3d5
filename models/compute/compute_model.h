#pragma once
// Time of one GPU kernel: roofline × efficiency per kernel class (DESIGN.md §4.2).
//   t = max(flops / (peak_dtype × clock_scale × η_compute), bytes / (hbm_bw × η_mem)) + fixed
// except GEMMs with a known (m, n, k), which take the tile/wave model of gemm_model.h.
// η and the fixed cost come from ComputeParams: one documented set per GPU type, the same for
// every scenario, overlaid by a calibration profile when the scenario names one: then a GEMM with
// known (m, n, k) takes η from the profile's table, interpolated in log space (DESIGN §4.2), as
// its whole time: t = flops / (peak × η(m, n, k)) (the measured GEMM times behind the table include
// launch, ramp and the GEMM's memory traffic).

#include <memory>
#include <optional>
#include <string>

#include "models/calibration/calibration_profile.h"
#include "models/compute/attention_model.h"
#include "models/compute/gemm_model.h"

#include "models/hardware/catalog.h"
#include "models/spec/scenario.h"

namespace traincast::models {

enum class KernelKind { gemm, attention_forward, attention_backward, elementwise, norm, optimizer, copy };

/// One kernel as the compute model sees it.
struct Kernel {
  KernelKind kind = KernelKind::gemm;
  double flops = 0;  ///< floating-point operations (multiply-add = 2), >= 0
  double bytes = 0;  ///< HBM bytes read + written, >= 0
  /// GEMM shape (kind gemm): rows of the output x batch, columns, inner dimension; 0 = unknown
  /// (the scalar gemm_efficiency applies).
  double m = 0, n = 0, k = 0;
  /// Fused attention shape (kinds attention_forward/backward): keys per query, head dim, causal
  /// mask; 0 = unknown (the plateau efficiency applies). models/compute/attention_model.h.
  double attention_seq_len = 0, attention_head_dim = 0;
  bool attention_causal = false;
};

/// Efficiencies of one GPU type. Every value carries its source in compute_params.cc.
struct ComputeParams {
  std::string gpu;
  /// compute_model training_fit (the default): fraction of dense peak reached by GEMMs, a scalar
  /// fitted on training runs (models/calibration/framework_constants.md, rows 1-2).
  double gemm_efficiency = 0.65;
  double gemm_fixed_s = 6.2e-6;  ///< per-GEMM ramp/tail/launch cost [s]
  /// compute_model kernel: the GEMM tile model (gemm_model.h) with kernel-measured constants, and
  /// the fitted framework-level constants (framework_constants.h) on every compute segment.
  bool use_kernel_model = false;
  double kernel_gemm_efficiency = 0.854;      ///< main-loop fraction of the 16-bit dense peak
  double kernel_gemm_fp8_efficiency = 0.778;  ///< main-loop fraction of the fp8 dense peak
  double kernel_gemm_k_overhead = 140;        ///< per-unit prologue/epilogue [K elements]
  double kernel_gemm_fixed_s = 4.57e-6;       ///< per-GEMM fixed cost of the tile model [s]
  /// Fused (flash) attention efficiency, fraction of the 16-bit peak, and its shape factors
  /// (attention_model.h). compute_model training_fit: one fitted-era value per GPU, no shape
  /// (neutral curves); compute_model kernel: with_compute_model puts kernel_attention or
  /// cudnn_attention here.
  double attention_fwd_efficiency = 0.5;
  double attention_bwd_efficiency = 0.4;
  AttentionCurve attention_fwd_curve;  ///< neutral (factor 1) unless with_compute_model sets one
  AttentionCurve attention_bwd_curve;
  /// compute_model kernel, training.attention_kernel flash2: FA2 plateaus (default_compute_params:
  /// the training_fit values, or Hopper's measured ones) and shape factors.
  AttentionKernelModel kernel_attention;
  /// compute_model kernel, training.attention_kernel cudnn on this GPU (nullopt: not measured
  /// here; kernel_attention stays).
  std::optional<AttentionKernelModel> cudnn_attention;
  double memory_efficiency = 0.9;  ///< fraction of HBM bandwidth streaming kernels reach
  double kernel_fixed_s = 2.0e-6;  ///< per non-GEMM kernel launch/gap cost [s]
  std::string source;              ///< where these numbers come from
  /// Profile whose GEMM efficiency table applies (null = none).
  std::shared_ptr<const CalibrationProfile> profile;
};

/// Default parameters for a GPU (by GpuSpec::name). GPUs without their own measurements get the
/// generic set and say so in `source`. Never throws.
ComputeParams default_compute_params(const GpuSpec& gpu);

/// default_compute_params(gpu) overlaid by `profile` (may be null): memory_efficiency,
/// kernel_fixed_s, gemm_fixed_s when set, its GEMM table, and "; calibrated: <profile origin>"
/// appended to source. Never throws.
ComputeParams compute_params(const GpuSpec& gpu, const std::shared_ptr<const CalibrationProfile>& profile);

/// The tile model of `params` for GEMMs in `precision` (fp8 takes kernel_gemm_fp8_efficiency).
GemmTileModel gemm_tile_model(const ComputeParams& params, Precision precision);

/// `params` with use_kernel_model set from training.compute_model; with compute_model kernel also
/// the attention model of training.attention_kernel (cudnn where it was measured for this GPU,
/// else FlashAttention-2's kernel_attention).
ComputeParams with_compute_model(const ComputeParams& params, const TrainingSpec& training);

/// Dense peak FLOP/s of `gpu` for math in `precision` (fp32 = non-tensor FP32).
/// Throws std::invalid_argument when the GPU has no such math (e.g. fp8 on A100).
double peak_flops(const GpuSpec& gpu, Precision precision);

/// Seconds for one kernel. clock_scale in (0, 1] scales compute peak (power/thermal throttling).
/// With Precision::fp8 GEMMs run at the fp8 peak and attention kernels at the bf16 peak
/// (Transformer Engine's default recipe: fp8 linear layers, bf16 dot-product attention).
double kernel_seconds(const Kernel& kernel, const GpuSpec& gpu, const ComputeParams& params, Precision precision,
                      double clock_scale = 1.0);

/// The part of kernel_seconds (at clock_scale 1) that scales with 1/clock, found by a finite
/// difference in clock_scale so it follows whatever time model applies (roofline or a calibrated
/// GEMM table): the compute term when it is the larger roofline term, else 0 (a memory-bound kernel
/// runs on the HBM clock; the fixed launch cost does not scale either). [s], in [0, kernel_seconds].
double kernel_compute_bound_seconds(const Kernel& kernel, const GpuSpec& gpu, const ComputeParams& params,
                                    Precision precision);

}  // namespace traincast::models
