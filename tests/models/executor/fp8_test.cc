// fp8 training as Transformer Engine runs it: fp8 GEMMs, bf16 attention.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/compute/compute_model.h"
#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"

namespace traincast::models {
namespace {

TEST(Fp8, GemmsRunAtTheFp8PeakAttentionAtBf16) {
  const GpuSpec& h100 = find_gpu("H100-SXM5-80GB");
  const ComputeParams p = default_compute_params(h100);
  const Kernel gemm{KernelKind::gemm, 1e12, 1e6};  // compute bound
  const double bf16 = kernel_seconds(gemm, h100, p, Precision::bf16) - p.gemm_fixed_s;
  const double fp8 = kernel_seconds(gemm, h100, p, Precision::fp8) - p.gemm_fixed_s;
  EXPECT_NEAR(bf16 / fp8, h100.peak_fp8_flops / h100.peak_bf16_flops, 1e-9);
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
  sc.name = "t";
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

}  // namespace
}  // namespace traincast::models
