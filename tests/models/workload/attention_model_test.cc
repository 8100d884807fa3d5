// Fused attention shape factors (models/compute/attention_model.h): the properties the model
// claims for every shape, and the kernel time the simulator takes from them. The constants are
// scored against the H200 measurements they were fitted on (and the held-out half) in
// tests/validation/h200_device_test.cc (H200Device.AttentionModelAgainstPyTorchSdpa).
#include "models/compute/attention_model.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"

namespace traincast::models {
namespace {

std::vector<AttentionCurve> curves() {
  const AttentionKernelModel cudnn = cudnn_attention_model(90).value();
  return {flash2_forward_curve(), flash2_backward_curve(), cudnn.forward, cudnn.backward};
}

TEST(AttentionModel, UnknownShapeIsThePlateau) {
  for (const AttentionCurve& c : curves()) {
    EXPECT_EQ(attention_shape_factor(c, 0, 128, true), 1.0);
    EXPECT_EQ(attention_shape_factor(c, 4096, 0, false), 1.0);
    // Head dim 128, non-causal, long sequences: the plateau.
    EXPECT_NEAR(attention_shape_factor(c, 1e9, 128, false), 1.0, 1e-6);
  }
}

TEST(AttentionModel, LongerSequencesDeeperHeadsAndNoMaskNeverRunSlower) {
  for (const AttentionCurve& c : curves()) {
    for (double d : {64.0, 96.0, 128.0, 192.0, 256.0}) {
      double last = 0;
      for (double s = 128; s <= 1 << 20; s *= 2) {
        for (bool causal : {false, true}) EXPECT_GT(attention_shape_factor(c, s, d, causal), 0);
        const double f = attention_shape_factor(c, s, d, true);
        EXPECT_GE(f, last) << "seq " << s;
        EXPECT_LE(f, attention_shape_factor(c, s, d, false));
        EXPECT_LE(attention_shape_factor(c, s, d, false), attention_shape_factor(c, s, 2 * d, false));
        last = f;
      }
    }
  }
}

// cuDNN's constants exist for Hopper only; with compute_model kernel, with_compute_model picks them
// for attention_kernel cudnn and keeps FA2's elsewhere (run warns:
// WorkloadSettingsNotes.CudnnAttentionNamedWhereItHasNoEffect).
TEST(AttentionModel, CudnnKernelOnHopperOnly) {
  TrainingSpec cudnn, flash2;
  cudnn.compute_model = flash2.compute_model = ComputeModel::kernel;
  cudnn.attention_kernel = AttentionKernel::cudnn;
  const ComputeParams h100_defaults = default_compute_params(find_gpu("H100-SXM5-80GB"));
  const ComputeParams h100_cudnn = with_compute_model(h100_defaults, cudnn);
  const ComputeParams h100 = with_compute_model(h100_defaults, flash2);
  EXPECT_DOUBLE_EQ(h100_cudnn.attention_fwd_efficiency, 0.631);
  EXPECT_DOUBLE_EQ(h100_cudnn.attention_bwd_efficiency, 0.544);
  EXPECT_DOUBLE_EQ(h100.attention_fwd_efficiency, 0.345);
  // Every Hopper GPU takes them (the same SM), H20 and GH200 too.
  for (const char* hopper : {"GH200-96GB", "H20", "H200-SXM-141GB"}) {
    EXPECT_DOUBLE_EQ(with_compute_model(default_compute_params(find_gpu(hopper)), cudnn).attention_fwd_efficiency,
                     0.631)
        << hopper;
  }
  const ComputeParams a100 = default_compute_params(find_gpu("A100-SXM4-80GB"));
  EXPECT_DOUBLE_EQ(with_compute_model(a100, cudnn).attention_fwd_efficiency, 0.65);
  // compute_model training_fit: the plateau of its era, no shape factors, whatever the kernel.
  TrainingSpec fit;
  fit.attention_kernel = AttentionKernel::cudnn;
  const ComputeParams h100_fit = with_compute_model(h100_defaults, fit);
  EXPECT_DOUBLE_EQ(h100_fit.attention_fwd_efficiency, 0.35);
  EXPECT_EQ(attention_shape_factor(h100_fit.attention_fwd_curve, 512, 64, true), 1.0);
  // A 2,048-token causal forward of head dim 128 on H100: FA2 0.345 x 0.964 x 0.849 = 0.282 of the
  // peak (docs/scenarios.md), cuDNN about 0.51.
  Kernel k{KernelKind::attention_forward, 1e12, 0};
  k.attention_seq_len = 2048;
  k.attention_head_dim = 128;
  k.attention_causal = true;
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const double peak = peak_flops(gpu, Precision::bf16);
  const double fa2 = 1e12 / (kernel_seconds(k, gpu, h100, Precision::bf16, 1.0) - h100.gemm_fixed_s) / peak;
  const double cud = 1e12 / (kernel_seconds(k, gpu, h100_cudnn, Precision::bf16, 1.0) - h100.gemm_fixed_s) / peak;
  EXPECT_NEAR(fa2, 0.282, 0.002);
  EXPECT_NEAR(cud, 0.510, 0.003);
}

}  // namespace
}  // namespace traincast::models
