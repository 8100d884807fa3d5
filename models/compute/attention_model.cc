#include "models/compute/attention_model.h"

namespace traincast::models {

double attention_shape_factor(const AttentionCurve& curve, double seq_len, double head_dim, bool causal) {
  if (!(seq_len > 0) || !(head_dim > 0)) return 1.0;
  const double ramp = seq_len / (seq_len + curve.s0_tokens);
  const double depth = (head_dim / (head_dim + curve.d0)) / (128.0 / (128.0 + curve.d0));
  const double mask = causal ? curve.causal_plateau / (1.0 + curve.causal_tokens / seq_len) : 1.0;
  return ramp * depth * mask;
}

// Least squares on ln(time) of t = FLOPs / (989.4 TFLOP/s x eta) + 6.2 us (the model's per-kernel
// fixed cost, ComputeParams::gemm_fixed_s) over the 12 fit rows per class and direction (seq 512,
// 2,048, 8,192 x head dim 64, 128 x causal, not) of tests/calibrate/data/h200_20261204/
// h200_sdpa_attention.csv. Held-out rows (seq 1,024, 4,096, 16,384), geometric-mean |err| (max):
// FA2 forward 1.2 % (2.6 %), backward 1.9 % (8.8 %); cuDNN forward 3.3 % (5.8 %), backward 2.1 %
// (7.1 %). Plateaus fitted with them: FA2 0.345 / 0.324, cuDNN 0.631 / 0.544.
AttentionCurve flash2_forward_curve() { return {77.3, 16.7, 0.974, 300.7}; }
AttentionCurve flash2_backward_curve() { return {385.8, 12.9, 0.925, 233.5}; }

std::optional<AttentionKernelModel> cudnn_attention_model(int compute_capability) {
  if (compute_capability != 90) return std::nullopt;  // measured on Hopper (H200) only
  return AttentionKernelModel{0.631, 0.544, {117.6, 67.2, 0.919, 153.3}, {305.6, 28.8, 0.964, 297.2}};
}

}  // namespace traincast::models
