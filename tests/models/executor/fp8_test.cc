// fp8 training as Transformer Engine runs it: fp8 GEMMs, bf16 attention.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/compute/compute_model.h"
#include "models/compute/framework_constants.h"
#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

TEST(Fp8, GemmsRunAtTheFp8PeakAttentionAtBf16) {
  const GpuSpec& h100 = find_gpu("H100-SXM5-80GB");
  const ComputeParams p = default_compute_params(h100);
  const Kernel gemm{KernelKind::gemm, 1e12, 1e6};  // compute bound
  const double bf16 = kernel_seconds(gemm, h100, p, Precision::bf16) - p.gemm_fixed_s;
  const double fp8 = kernel_seconds(gemm, h100, p, Precision::fp8) - p.gemm_fixed_s;
  EXPECT_NEAR(bf16 / fp8, h100.peak_fp8_flops / h100.peak_bf16_flops, 1e-9);
  // compute_model kernel: each at its own kernel-measured efficiency (compute_model.cc: MAMF fp8,
  // openxla bf16).
  ComputeParams k = p;
  k.use_kernel_model = true;
  const double kbf16 = kernel_seconds(gemm, h100, k, Precision::bf16) - k.kernel_gemm_fixed_s;
  const double kfp8 = kernel_seconds(gemm, h100, k, Precision::fp8) - k.kernel_gemm_fixed_s;
  EXPECT_NEAR(kbf16 / kfp8,
              h100.peak_fp8_flops * k.kernel_gemm_fp8_efficiency / (h100.peak_bf16_flops * k.kernel_gemm_efficiency),
              1e-9);
  for (KernelKind kind : {KernelKind::attention_forward, KernelKind::attention_backward}) {
    const Kernel attn{kind, 1e12, 1e6};
    EXPECT_EQ(kernel_seconds(attn, h100, p, Precision::fp8), kernel_seconds(attn, h100, p, Precision::bf16));
  }
  const GpuSpec& a100 = find_gpu("A100-SXM4-80GB");
  EXPECT_THROW(kernel_seconds(gemm, a100, default_compute_params(a100), Precision::fp8), std::invalid_argument);
}

/// Llama-2-7B-shaped model on one DGX node, DP 8.
Scenario llama7b(const char* node) {
  Scenario sc;
  // Not a one-character literal: GCC 12 at -O2 reports a bogus -Wrestrict when one is assigned
  // to a std::string (GCC bug 105329), an error under CI's -Werror.
  sc.name = "llama7b";
  sc.cluster.node_template = node;
  sc.model.num_layers = 4;
  sc.model.hidden_size = 4096;
  sc.model.num_attention_heads = 32;
  sc.model.ffn_hidden_size = 11008;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 4096;
  sc.model.gated_mlp = true;
  sc.model.untied_embeddings = true;
  sc.parallel.dp = 8;
  sc.parallel.zero_stage = 1;
  sc.training.global_batch_size = 16;
  sc.training.micro_batch_size = 1;
  return sc;
}

TEST(Fp8, StepIsFasterButLessThanTwice) {
  Scenario sc = llama7b("dgx_h100");
  const double bf16 = simulate_training(sc).iteration_time_s;
  sc.training.precision = Precision::fp8;
  const Report r = simulate_training(sc);
  // GEMMs twice as fast; attention (bf16), memory-bound kernels and communication are not.
  EXPECT_LT(r.iteration_time_s, 0.8 * bf16);
  EXPECT_GT(r.iteration_time_s, 0.5 * bf16);
}

// The recipes' extra kernels and GEMM speeds order them: delayed (TE, fused cast-transpose) <
// current tensorwise (one more amax pass) < rowwise (a copy per GEMM, a slower forward main loop,
// a rescale kernel per backward GEMM).
TEST(Fp8, RecipesCostTheirCastsAndRowwiseIsSlowest) {
  Scenario sc = llama7b("dgx_h100");
  sc.training.precision = Precision::fp8;
  auto time = [&](Fp8Recipe r) {
    sc.training.fp8_recipe = r;
    return simulate_training(sc).iteration_time_s;
  };
  const double delayed = time(Fp8Recipe::delayed_tensorwise), current = time(Fp8Recipe::current_tensorwise),
               rowwise = time(Fp8Recipe::rowwise);
  EXPECT_LT(delayed, current);
  EXPECT_LT(current, rowwise);
  // MXFP8 needs sm100: the model runs it on B200.
  Scenario b = llama7b("dgx_b200");
  b.training.precision = Precision::fp8;
  b.training.fp8_recipe = Fp8Recipe::mx_blockwise;
  EXPECT_GT(simulate_training(b).iteration_time_s, 0);
}

// The logit layer stays in bf16 under every recipe: its GEMMs take the bf16 time.
TEST(Fp8, LogitLayerStaysBf16) {
  const GpuSpec& h100 = find_gpu("H100-SXM5-80GB");
  const ComputeParams p = default_compute_params(h100);
  Scenario sc = llama7b("dgx_h100");
  const ModelPrograms bf16 = build_transformer_programs(sc, h100, p);
  sc.training.precision = Precision::fp8;
  const ModelPrograms fp8 = build_transformer_programs(sc, h100, p);
  auto seconds = [](const Program& prog, const std::string& label) {
    for (const Segment& s : prog)
      if (s.label == label) return s.seconds;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(seconds(fp8.head_forward, "logits"), seconds(bf16.head_forward, "logits"));
  EXPECT_LT(seconds(fp8.layer_kinds[0].forward, "fc2"), 0.8 * seconds(bf16.layer_kinds[0].forward, "fc2"));
}

/// The Segment of `prog` with `label` (the first), or nullptr.
const Segment* segment(const Program& prog, const std::string& label) {
  for (const Segment& s : prog)
    if (s.label == label) return &s;
  return nullptr;
}

// torchtitan gathers TP activations in fp8 under tensorwise scaling (torchao's Float8ColwiseParallel,
// PrepareFloat8ModuleInput) and in bf16 under rowwise ("regular TP", torchtitan parallelize.py):
// fp8_recipe.h. Worked by hand: TP 8 with sequence parallelism, micro-batch 1 x 4096 tokens,
// hidden 4096: the gathered activation is 4096 x 4096 = 16,777,216 elements, 16,777,216 B in fp8
// and 33,554,432 B in bf16. The reduce-scatters and the head's gather (bf16 logit layer) stay bf16.
TEST(Fp8, TpAllGatherIsFp8UnderTensorwiseOnly) {
  const GpuSpec& h100 = find_gpu("H100-SXM5-80GB");
  const ComputeParams p = default_compute_params(h100);
  Scenario sc = llama7b("dgx_h100");
  sc.parallel.dp = 1;
  sc.parallel.tp = 8;
  sc.parallel.sequence_parallel = true;
  sc.training.global_batch_size = 1;
  sc.training.precision = Precision::fp8;
  auto bytes = [&](Fp8Recipe r, bool head, const std::string& label) {
    sc.training.fp8_recipe = r;
    const ModelPrograms pr = build_transformer_programs(sc, h100, p);
    const Program& prog = head ? pr.head_forward : pr.layer_kinds[0].forward;
    const Segment* s = segment(prog, label);
    return s != nullptr ? s->bytes : -1.0;
  };
  const double bf16_bytes = 33554432, fp8_bytes = 16777216;
  EXPECT_EQ(bytes(Fp8Recipe::current_tensorwise, false, "tp_ag"), fp8_bytes);
  EXPECT_EQ(bytes(Fp8Recipe::rowwise, false, "tp_ag"), bf16_bytes);
  EXPECT_EQ(bytes(Fp8Recipe::delayed_tensorwise, false, "tp_ag"), bf16_bytes);
  EXPECT_EQ(bytes(Fp8Recipe::current_tensorwise, false, "tp_rs"), bf16_bytes);
  EXPECT_EQ(bytes(Fp8Recipe::current_tensorwise, true, "tp_ag"), bf16_bytes);
  // The backward gathers of the output gradient (e5m2 under tensorwise) too.
  sc.training.fp8_recipe = Fp8Recipe::current_tensorwise;
  const ModelPrograms pr = build_transformer_programs(sc, h100, p);
  const Segment* bwd = segment(pr.layer_kinds[0].backward, "tp_ag_bwd");
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->bytes, fp8_bytes);
}

// Rowwise backward GEMMs run torchao's tensorwise cuBLAS kernel plus a rescale kernel that reads
// and writes the bf16 output (fp8_recipe.h); the forward GEMM runs the CUTLASS rowwise kernel at
// 0.9 of the tensorwise main loop, without a rescale. Worked by hand for the MLP's fc1 weight
// gradient on one GPU (M = hidden 4096, N = 2 x 11008 = 22016 gated columns, K = 4096 tokens):
// rescale 4 B x 4096 x 22016 = 360,710,144 B; the rowwise casts 5 B x (4096 x 4096 + 4096 x 22016)
// = 534,773,760 B.
TEST(Fp8, RowwiseBackwardGemmsPayARescale) {
  const GpuSpec& h100 = find_gpu("H100-SXM5-80GB");
  const ComputeParams p = default_compute_params(h100);
  Scenario sc = llama7b("dgx_h100");
  sc.training.precision = Precision::fp8;
  sc.training.fp8_recipe = Fp8Recipe::rowwise;
  const ModelPrograms pr = build_transformer_programs(sc, h100, p);
  const double M = 4096, N = 22016, K = 4096, e = 2;
  const Kernel wgrad{KernelKind::gemm, 2 * M * N * K, e * (M * K + K * N + M * N), M, N, K};
  const Kernel cast{KernelKind::elementwise, 0, 534773760};
  const Kernel rescale{KernelKind::elementwise, 0, 360710144};
  const Segment* s = segment(pr.layer_kinds[0].backward, "fc1_wgrad");
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(s->seconds,
              kernel_seconds(wgrad, h100, p, Precision::fp8) + kernel_seconds(cast, h100, p, Precision::fp8) +
                  kernel_seconds(rescale, h100, p, Precision::fp8),
              1e-12);
  // Forward fc2 (M = 4096 tokens, N = 4096, K = 11008): the rowwise kernel at 0.9, casts, no rescale.
  const double Kf = 11008;
  const Kernel fc2{KernelKind::gemm, 2 * K * M * Kf, e * (K * Kf + Kf * M + K * M), K, M, Kf};
  const Kernel fc2_cast{KernelKind::elementwise, 0, 5 * (K * Kf + Kf * M)};
  ComputeParams rowwise = p;
  rowwise.gemm_efficiency *= 0.9;
  const Segment* f = segment(pr.layer_kinds[0].forward, "fc2");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->seconds,
              kernel_seconds(fc2, h100, rowwise, Precision::fp8) + kernel_seconds(fc2_cast, h100, p, Precision::fp8),
              1e-12);
}

// compute_model kernel: the tile model and the fitted in-framework efficiency; a GEMM-bound
// step takes longer than with the stand-alone kernels alone (efficiency < 1).
TEST(ComputeModel, KernelModelAppliesTheFrameworkConstant) {
  Scenario sc = llama7b("dgx_h100");
  sc.training.compute_model = ComputeModel::kernel;
  const GpuSpec& h100 = find_gpu("H100-SXM5-80GB");
  const ModelPrograms pr = build_transformer_programs(sc, h100, default_compute_params(h100));
  ComputeParams k = default_compute_params(h100);
  k.use_kernel_model = true;
  const Program& fwd = pr.layer_kinds[0].forward;
  const auto it = std::find_if(fwd.begin(), fwd.end(), [](const Segment& s) { return s.label == "fc2"; });
  ASSERT_NE(it, fwd.end());
  const Segment& fc2 = *it;
  const double T = 4096, h = 4096, f = 11008;
  const Kernel gemm{KernelKind::gemm, 2 * T * h * f, 2 * (T * f + f * h + T * h), T, h, f};
  EXPECT_NEAR(fc2.seconds,
              kernel_seconds(gemm, h100, k, Precision::bf16) / framework_constants().in_framework_efficiency, 1e-12);
  EXPECT_GT(simulate_training(sc).iteration_time_s, 0);
}

}  // namespace
}  // namespace traincast::models
