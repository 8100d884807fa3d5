#include "models/compute/compute_model.h"

#include <algorithm>
#include <stdexcept>

namespace traincast::models {

ComputeParams default_compute_params(const GpuSpec& gpu) {
  ComputeParams p;
  p.gpu = gpu.name;
  // GEMM tile model (gemm_model.h), kernel constants from kernel measurements only (issue 17's
  // fitting rule). Shared by all NVIDIA entries:
  // kernel_gemm_k_overhead = 140 K elements per work unit and kernel_gemm_fixed_s = 4.57 µs per GEMM: with the
  //   H100 η below, least squares (log error) of the tile model on the even-indexed H100 bf16 rows
  //   of shared/data/gemm/xla_matmul_perf_table_measured.csv (openxla default_matmul_perf_table,
  //   188 of 375 rows, CSV order); held-out odd rows: median |error| 2.8%, mean signed +0.1%.
  //   Re-derived by tests/models/workload/gemm_model_test.cc. Applied to other GPUs as is.
  // kernel_fixed_s = 2 µs: typical back-to-back kernel gap on a busy CUDA stream (launch already
  //   queued), the order of magnitude NVIDIA's Nsight Systems timelines show; an assumption.
  // Other GPUs' η: the value at which the tile model reproduces the best shape that MAMF found
  //   (shared/data/gemm/mamf_matmul_tflops.csv, ml-engineering; gemm_efficiency_from_measurement),
  //   i.e. the measured TFLOP/s with wave quantization, the per-unit overhead and the fixed cost
  //   taken out.
  p.kernel_gemm_k_overhead = 140;
  p.kernel_gemm_fixed_s = 4.57e-6;
  // Legacy (compute_model training_fit) gemm_fixed_s = 6.2 µs: least-squares fit of
  //   t = W/(η·peak) + t0 to the even-indexed rows (sorted by FLOPs) of the same H100 table.
  if (gpu.name.rfind("A100", 0) == 0 || gpu.name.rfind("A800", 0) == 0) {
    // 0.916: MAMF A100 SXM bf16 271.2 of 312 TFLOP/s at 1024x10240x5120 (torch 2.6, cu126).
    p.kernel_gemm_efficiency = 0.915;
    p.kernel_gemm_fp8_efficiency = 0.915;  // no fp8 math on A100 (peak_flops refuses it)
    // training_fit: 0.655, least-squares fit (log error) of the training_fit model to the per-layer
    //   forward and backward times of the 22B model on Selene in Korthikanti et al. 2022, Table 4
    //   (10 measured times; shared/data/training/korthikanti2022_table4_per_layer_22B.csv). Fitted
    //   on in-framework times: breaks issue 17's fitting rule (framework_constants.md).
    p.gemm_efficiency = 0.655;
    // FlashAttention-2 (Dao 2023, arXiv:2307.08691): 50-73% of A100 peak forward, lower backward;
    //   we take mid-range values.
    p.attention_fwd_efficiency = 0.65;
    p.attention_bwd_efficiency = 0.55;
    // STREAM triad 1375 GB/s of 1555 GB/s on A100-40GB (shared/data/memory-bandwidth/
    //   gpu_stream_bandwidth.csv, te42kyfo/gpu-benches).
    p.memory_efficiency = 1375.0 / 1555.0;
    p.source =
        "GEMM fit to Korthikanti 2022 Table 4 (tile model: MAMF A100 best shape); FlashAttention-2 paper; gpu-benches "
        "STREAM A100-40GB";
  } else if (gpu.name.rfind("H100", 0) == 0 || gpu.name.rfind("H800", 0) == 0 || gpu.name.rfind("H200", 0) == 0) {
    // 0.854: the tile model's fit on the even H100 bf16 rows of the openxla table (above); MAMF's
    //   best H100 bf16 shape (794.5 TFLOP/s at 2048x2048x13312) implies 0.865 under the same model.
    p.kernel_gemm_efficiency = 0.854;
    // training_fit: 0.65, grid fit on Megatron-Core r0.8.0 H100 rows 0, 2, 4, 6, 8 (end-to-end
    //   training throughput): breaks issue 17's fitting rule (framework_constants.md).
    p.gemm_efficiency = 0.65;
    // 0.778: MAMF H100 SXM fp8 e4m3 1402.6 of 1979 TFLOP/s at 1024x9216x14336 (torch 2.7, cu126).
    //   The openxla H100 fp8 rows exceed the dense peak (shared/data/README.md: suspect): not used.
    p.kernel_gemm_fp8_efficiency = 0.778;
    // FlashAttention-2 on H100: "only 35% utilization" (Shah et al. 2024, FlashAttention-3,
    //   arXiv:2407.08608, abstract); its backward runs a little below its forward (ibid., Fig. 6-7).
    //   (compute_model training_fit, no shape factors.)
    p.attention_fwd_efficiency = 0.35;
    p.attention_bwd_efficiency = 0.30;
    // STREAM triad: H200 3534 of 4800 GB/s (HBM3e, 0.74); H100 PCIe 1832 of 2039 GB/s (HBM2e, 0.90)
    //   (gpu-benches). HBM3 H100 SXM is not in the table; we take the H200 (HBM3/3e) value. The
    //   96 GB HBM2e part (catalog.cc: the PCIe part's stacks, one more) takes the HBM2e value.
    const bool hbm2e = gpu.name.rfind("H100-PCIe", 0) == 0 || gpu.name == "H100-SXM5-96GB";
    p.memory_efficiency = hbm2e ? 1832.0 / 2039.0 : 3534.0 / 4800.0;
    p.source =
        "GEMM fit to Megatron-Core r0.8.0 H100 table (odd rows) (tile model: openxla H100 GEMM table, fp8 on MAMF); "
        "FlashAttention-3 paper (FA2 on H100); gpu-benches STREAM H200/H100-PCIe";
  } else if (gpu.name.rfind("B200", 0) == 0) {
    // MAMF B200 SXM: bf16 1745 of 2250 TFLOP/s at 1792x16128x3072, fp8 3432.5 of 4500 at
    //   15360x4096x3072 (torch 2.7.1, cu128).
    p.kernel_gemm_efficiency = 0.855;
    p.kernel_gemm_fp8_efficiency = 0.833;
    p.gemm_efficiency = 0.65;  // training_fit: the value both fitted GPUs share
    p.attention_fwd_efficiency = 0.35;
    p.attention_bwd_efficiency = 0.30;
    p.memory_efficiency = 0.85;
    p.source =
        "UNCALIBRATED: generic defaults (GEMM 0.65 as fitted on A100/H100, memory 0.85; tile model: MAMF B200 best "
        "shapes)";
  } else {
    // No measurements for this GPU: the H100 kernel fit's η, FlashAttention-2-class attention, and
    // a typical STREAM fraction.
    p.kernel_gemm_efficiency = 0.854;
    p.kernel_gemm_fp8_efficiency = 0.778;
    p.gemm_efficiency = 0.65;  // training_fit: the value both fitted GPUs share
    p.attention_fwd_efficiency = 0.35;
    p.attention_bwd_efficiency = 0.30;
    p.memory_efficiency = 0.85;
    p.source =
        "UNCALIBRATED: generic defaults (GEMM 0.65 as fitted on A100/H100, tile model with H100's kernel fit, memory "
        "0.85)";
  }
  // compute_model kernel: FA2's shape factors (measured on H200; attention_model.h) on the plateaus
  // above, where no attention of this GPU was measured (A100: no measurement at hand).
  p.kernel_attention = {p.attention_fwd_efficiency, p.attention_bwd_efficiency, flash2_forward_curve(),
                        flash2_backward_curve()};
  if (gpu.compute_capability == 90) {
    // compute_model kernel on every Hopper GPU (H100, H800, H200, H20, GH200: the same SM): FA2
    //   plateaus 0.345 forward, 0.324 backward, fitted with the shape factors (attention_model.h) on
    //   PyTorch SDPA's FA2 backend on one H200 (tests/calibrate/data/h200_20261204), which agrees
    //   with the FlashAttention-3 paper's 35 %; cuDNN 9 fused attention (training.attention_kernel
    //   cudnn) from the same measurements. As fractions of each GPU's own bf16 peak.
    p.kernel_attention.forward_efficiency = 0.345;
    p.kernel_attention.backward_efficiency = 0.324;
    p.cudnn_attention = cudnn_attention_model(gpu.compute_capability);
  }
  return p;
}

ComputeParams compute_params(const GpuSpec& gpu, const std::shared_ptr<const CalibrationProfile>& profile) {
  ComputeParams p = default_compute_params(gpu);
  if (profile == nullptr) return p;
  if (profile->memory_efficiency) p.memory_efficiency = *profile->memory_efficiency;
  if (profile->kernel_fixed_s) p.kernel_fixed_s = *profile->kernel_fixed_s;
  if (profile->gemm_fixed_s) p.gemm_fixed_s = *profile->gemm_fixed_s;
  p.profile = profile;
  p.source += "; calibrated: " + (profile->origin.empty() ? std::string("profile") : profile->origin);
  return p;
}

GemmTileModel gemm_tile_model(const ComputeParams& params, Precision precision) {
  GemmTileModel m;
  m.efficiency = precision == Precision::fp8 ? params.kernel_gemm_fp8_efficiency : params.kernel_gemm_efficiency;
  m.k_overhead = params.kernel_gemm_k_overhead;
  m.fixed_s = params.kernel_gemm_fixed_s;
  return m;
}

ComputeParams with_compute_model(const ComputeParams& params, const TrainingSpec& training) {
  ComputeParams p = params;
  p.use_kernel_model = training.compute_model == ComputeModel::kernel;
  if (p.use_kernel_model) {
    const AttentionKernelModel& a = training.attention_kernel == AttentionKernel::cudnn && p.cudnn_attention
                                        ? *p.cudnn_attention
                                        : p.kernel_attention;
    p.attention_fwd_efficiency = a.forward_efficiency;
    p.attention_bwd_efficiency = a.backward_efficiency;
    p.attention_fwd_curve = a.forward;
    p.attention_bwd_curve = a.backward;
  }
  return p;
}

double peak_flops(const GpuSpec& gpu, Precision precision) {
  double peak = 0;
  switch (precision) {
    case Precision::fp32:
      peak = gpu.peak_fp32_flops;
      break;
    case Precision::tf32:
      peak = gpu.peak_tf32_flops;
      break;
    case Precision::fp16:
      peak = gpu.peak_fp16_flops;
      break;
    case Precision::bf16:
      peak = gpu.peak_bf16_flops;
      break;
    case Precision::fp8:
      peak = gpu.peak_fp8_flops;
      break;
  }
  if (!(peak > 0)) throw std::invalid_argument("GPU " + gpu.name + " has no dense peak for the requested precision");
  return peak;
}

double kernel_compute_bound_seconds(const Kernel& kernel, const GpuSpec& gpu, const ComputeParams& params,
                                    Precision precision) {
  // The part that scales as 1/clock: t(f) = c / f + rest near f = 1, so c = (t(f) - t(1)) / (1/f - 1)
  // (exactly c for a compute-bound kernel, 0 for a memory-bound one), whatever the time model.
  constexpr double kF = 0.999;
  const double t1 = kernel_seconds(kernel, gpu, params, precision, 1.0);
  const double tf = kernel_seconds(kernel, gpu, params, precision, kF);
  return std::clamp((tf - t1) / (1.0 / kF - 1.0), 0.0, t1);
}

double kernel_seconds(const Kernel& kernel, const GpuSpec& gpu, const ComputeParams& params, Precision precision,
                      double clock_scale) {
  // fp8 training (NVIDIA Transformer Engine) runs the linear layers' GEMMs in fp8 but keeps the
  // fused attention kernel in bf16: TE's DelayedScaling recipe has fp8_dpa=False by default
  // (transformer_engine.common.recipe, "fp8_dpa: whether to enable FP8 dot product attention";
  // Transformer Engine 1.x docs). Elementwise/norm kernels are memory bound (bf16 activations).
  const bool attention = kernel.kind == KernelKind::attention_forward || kernel.kind == KernelKind::attention_backward;
  const Precision math = precision == Precision::fp8 && attention ? Precision::bf16 : precision;
  const double peak = peak_flops(gpu, math) * clock_scale;
  const double bw = gpu.hbm_bandwidth_bytes_per_s * params.memory_efficiency;
  double eta = params.gemm_efficiency;
  double fixed = params.kernel_fixed_s;
  switch (kernel.kind) {
    case KernelKind::gemm:
      fixed = params.gemm_fixed_s;
      if (params.use_kernel_model) {
        eta = gemm_tile_model(params, precision).efficiency;
        fixed = params.kernel_gemm_fixed_s;
      }
      break;
    case KernelKind::attention_forward:
      eta =
          params.attention_fwd_efficiency * attention_shape_factor(params.attention_fwd_curve, kernel.attention_seq_len,
                                                                   kernel.attention_head_dim, kernel.attention_causal);
      fixed = params.gemm_fixed_s;
      break;
    case KernelKind::attention_backward:
      eta =
          params.attention_bwd_efficiency * attention_shape_factor(params.attention_bwd_curve, kernel.attention_seq_len,
                                                                   kernel.attention_head_dim, kernel.attention_causal);
      fixed = params.gemm_fixed_s;
      break;
    default:
      break;
  }
  if (kernel.kind == KernelKind::gemm && params.profile != nullptr && kernel.m > 0 && kernel.n > 0 && kernel.k > 0 &&
      params.profile->gemm.has(precision)) {
    // The measured times behind the table include launch, ramp and the GEMM's own memory
    // traffic: the table's eta is the whole story for this shape.
    eta = params.profile->gemm.efficiency(precision, kernel.m, kernel.n, kernel.k);
    return kernel.flops / (peak * eta);
  }
  if (params.use_kernel_model && kernel.kind == KernelKind::gemm && kernel.m > 0 && kernel.n > 0 && kernel.k > 0 &&
      gpu.sm_count > 0)
    return gemm_tile_seconds(gemm_tile_model(params, precision),
                             GemmShape{1, kernel.m, kernel.n, kernel.k, kernel.bytes}, gpu.sm_count, peak, bw);
  const double compute_s = kernel.flops / (peak * eta);
  const double memory_s = kernel.bytes / bw;
  return std::max(compute_s, memory_s) + fixed;
}

}  // namespace traincast::models
