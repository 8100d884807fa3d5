#pragma once
// Fused (flash) attention efficiency vs shape (issue 17: "attention forward/backward vs sequence
// length, head dim, causal mask, kernel generation"), used by compute_model kernel (the default
// training_fit keeps one plateau per GPU, part of its fitted GEMM efficiency's world).
//
// A fused attention kernel reaches a plateau efficiency eta_p (fraction of the 16-bit dense peak,
// ComputeParams::attention_*_efficiency, at head dim 128, non-causal, long sequences) and loses to
// three shape effects, each with its physical cause:
//   eta(s, d, causal) = eta_p x s / (s + s0)                           per-query-tile prologue and
//                                                                      epilogue (load Q, write O,
//                                                                      rescale): work ~ s, FLOPs ~ s^2
//                             x [d / (d + d0)] / [128 / (128 + d0)]    the per-tile softmax and
//                                                                      bookkeeping beside a d-deep
//                                                                      matmul
//                             x (causal ? kappa / (1 + c / s) : 1)     diagonal blocks computed in
//                                                                      full and masked, and the
//                                                                      uneven work of causal rows
// where s is the sequence length (keys per query), d the head dim. s0, d0, kappa and c per kernel
// class (AttentionKernel) and direction, fitted on kernel measurements only:
// tests/calibrate/data/h200_20261204/h200_sdpa_attention.csv (PyTorch 2.11 SDPA on one H200,
// 16,384 tokens per call, hidden 2,048), fit on seq 512, 2,048, 8,192 and scored on 1,024, 4,096,
// 16,384 (tests/models/workload/attention_model_test.cc refits and scores them).

#include <optional>

#include "models/spec/enums.h"

namespace traincast::models {

/// The shape factors of one kernel class and direction (file comment). Default: neutral (factor 1
/// for every shape: compute_model training_fit).
struct AttentionCurve {
  double s0_tokens = 0;       ///< per-query-tile overhead, in sequence-length units, >= 0
  double d0 = 0;              ///< head-dim overhead, >= 0
  double causal_plateau = 1;  ///< kappa, (0, 1.2]
  double causal_tokens = 0;   ///< c, >= 0
};

/// eta / eta_p for a kernel of sequence length `seq_len` (keys per query), head dim `head_dim`,
/// causal or not; 1 when seq_len or head_dim is 0 (unknown: the plateau applies).
double attention_shape_factor(const AttentionCurve& curve, double seq_len, double head_dim, bool causal);

/// Plateaus and shape factors of one kernel class on one GPU.
struct AttentionKernelModel {
  double forward_efficiency = 0;   ///< eta_p forward, fraction of the 16-bit dense peak
  double backward_efficiency = 0;  ///< eta_p backward
  AttentionCurve forward, backward;
};

/// FlashAttention-2 (Dao 2023) shape factors, from the H200 measurements (file comment).
AttentionCurve flash2_forward_curve();
AttentionCurve flash2_backward_curve();
/// cuDNN 9 fused attention (PyTorch SDPA's CUDNN_ATTENTION; Transformer Engine's FusedAttention)
/// on Hopper, plateaus and shape factors from the H200 measurements; nullopt for GPUs it was not
/// measured on (compute capability other than 9.0).
std::optional<AttentionKernelModel> cudnn_attention_model(int compute_capability);

}  // namespace traincast::models
