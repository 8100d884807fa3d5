// training.elementwise_fusion eager (issue 17: "per-kernel CPU launch cost with eager vs compiled
// (CUDA graphs, fused elementwise) as a field"): the kernels and HBM bytes of torchtitan's Llama
// block op by op (models/workload/eager_elementwise.h), worked by hand for one layer of the shared
// small Llama (llama_small.h), and eager never faster than fused.

#include "models/workload/eager_elementwise.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"
#include "models/workload/transformer.h"
#include "tests/models/workload/llama_small.h"

namespace traincast::models {
namespace {

const GpuSpec& h100() { return find_gpu("H100-SXM5-80GB"); }

double total_bytes(const std::vector<Kernel>& ks) {
  double b = 0;
  for (const Kernel& k : ks) b += k.bytes;
  return b;
}

double seconds(const Program& p) {
  double s = 0;
  for (const Segment& seg : p) s += seg.is_collective ? 0 : seg.seconds;
  return s;
}

// One layer of llama_small at micro-batch 1: T = 1024 tokens, h = 1024 (N = T h = 1,048,576
// elements, 1,024 rows), q 1024 and k/v 256 wide (K = 262,144), FFN 4096 (F = 4,194,304), bf16.
constexpr double kN = 1024.0 * 1024, kRows = 1024, kQ = kN, kK = 1024.0 * 256, kF = 1024.0 * 4096;
constexpr double kFreqs = 8.0 * 1024 * 64;  // complex64 per position and head_dim / 2 = 64 pairs

TEST(EagerElementwise, RmsNormBytesByHand) {
  const std::vector<Kernel> fwd = eager_rms_norm_forward(kN, 1024, 2);
  // x.float() 6N, pow 8N, mean 4N + 4 rows, + eps 8 rows, rsqrt 8 rows, x * r 8N + 4 rows,
  // type_as 6N, * weight 4N + 2 h: 36N + 24 rows + 2,048 = 37,775,360 B in 8 kernels.
  ASSERT_EQ(fwd.size(), 8u);
  EXPECT_DOUBLE_EQ(total_bytes(fwd), 36 * kN + 24 * kRows + 2048);
  EXPECT_DOUBLE_EQ(total_bytes(fwd), 37775360);
  const std::vector<Kernel> bwd = eager_rms_norm_backward(kN, 1024, 2);
  // grad * w 4N + 2h, grad * a 6N, sum 2N + 2h, to fp32 6N, grad * r 8N + 4 rows, grad * x 12N,
  // sum 4N + 4 rows, rsqrt's 8 + 8 + 12 rows, mean 4N + 4 rows, pow's 8N + 8N + 12N, the sum of
  // x32's two gradients 12N, to bf16 6N: 92N + 40 rows + 4,096 = 96,514,048 B in 16 kernels.
  ASSERT_EQ(bwd.size(), 16u);
  EXPECT_DOUBLE_EQ(total_bytes(bwd), 92 * kN + 40 * kRows + 4096);
  EXPECT_DOUBLE_EQ(total_bytes(bwd), 96514048);
  // fp32 activations: the casts are no-ops (no kernel).
  EXPECT_EQ(eager_rms_norm_forward(kN, 1024, 4).size(), 6u);
  EXPECT_EQ(eager_rms_norm_backward(kN, 1024, 4).size(), 14u);
}

TEST(EagerElementwise, RopeRepeatKvAndSwigluBytesByHand) {
  // q: float 6Q, complex product 8Q + the frequencies, type_as 6Q.
  EXPECT_DOUBLE_EQ(total_bytes(eager_rope_forward(kQ, kFreqs, 2)), 20 * kQ + kFreqs);
  EXPECT_DOUBLE_EQ(total_bytes(eager_rope_backward(kK, kFreqs, 2)), 20 * kK + kFreqs);
  EXPECT_EQ(eager_rope_forward(kQ, kFreqs, 2).size(), 3u);
  // repeat_kv: read K, write the 4x repeated copy (GQA 8 heads / 2 groups).
  EXPECT_DOUBLE_EQ(total_bytes(eager_repeat_kv_forward(kK, kQ, 2)), 2 * (kK + kQ));
  EXPECT_TRUE(eager_repeat_kv_forward(kQ, kQ, 2).empty());  // n_rep 1: no copy
  // SwiGLU: silu 4F, product 6F; backward 3 x 6F.
  EXPECT_DOUBLE_EQ(total_bytes(eager_mlp_activation_forward(kF, true, 2)), 10 * kF);
  EXPECT_DOUBLE_EQ(total_bytes(eager_mlp_activation_backward(kF, true, 2)), 18 * kF);
}

// The whole layer through the program builder (training_fit: each elementwise kernel is bytes /
// (HBM x memory_efficiency) + kernel_fixed_s; the GEMMs and attention are the same in both).
TEST(EagerElementwise, OneLayerAddsTheHandCountedKernelsAndBytes) {
  Scenario fused = test_support::llama_small();
  Scenario eager = fused;
  eager.training.elementwise_fusion = ElementwiseFusion::eager;
  const ComputeParams params = default_compute_params(h100());
  const ModelPrograms f = build_transformer_programs(fused, h100(), params);
  const ModelPrograms g = build_transformer_programs(eager, h100(), params);
  ASSERT_EQ(f.layer_kinds.size(), 1u);
  ASSERT_EQ(g.layer_kinds.size(), 1u);
  const double bw = h100().hbm_bandwidth_bytes_per_s * params.memory_efficiency;
  const double fixed = params.kernel_fixed_s;
  // Forward. Fused: ln1 4N, bda 6N + ln2 4N, SwiGLU 6F, bda 6N = 46,137,344 B in 5 kernels.
  // Eager: ln1 37,775,360 (8); RoPE on q 21,495,808 (3) and k 5,767,168 (3); repeat_kv of k and
  // v 2,621,440 each (1 + 1); add 6N (1) + ln2 37,775,360 (8); silu 4F and product 6F (2); add 6N
  // (1): 162,582,528 B in 28 kernels.
  EXPECT_DOUBLE_EQ(20 * kN + 6 * kF, 46137344);
  const double fwd_delta = (162582528.0 - 46137344.0) / bw + (28 - 5) * fixed;
  EXPECT_NEAR(seconds(g.layer_kinds[0].forward) - seconds(f.layer_kinds[0].forward), fwd_delta, 1e-9 * fwd_delta);
  // Backward. Fused: bda 6N, SwiGLU 10F, ln2 6N + 6N, ln1 6N + 6N = 73,400,320 B in 6 kernels.
  // Eager: SwiGLU 18F (3) + w1/w3 gradient sum 6N (1); ln2 96,514,048 (16) + residual sum 6N (1);
  // repeat_kv 2 x 2,621,440 (2), RoPE 21,495,808 (3) + 5,767,168 (3), wq/wk/wv gradient sums 12N
  // (2); ln1 96,514,048 (16) + residual sum 6N (1): 332,488,704 B in 48 kernels.
  EXPECT_DOUBLE_EQ(30 * kN + 10 * kF, 73400320);
  const double bwd_delta = (332488704.0 - 73400320.0) / bw + (48 - 6) * fixed;
  EXPECT_NEAR(seconds(g.layer_kinds[0].backward) - seconds(f.layer_kinds[0].backward), bwd_delta, 1e-9 * bwd_delta);
  // The final norm: forward 8 kernels for 1, backward 16 for 1.
  const double head_delta = (37775360.0 - 4 * kN + 96514048.0 - 6 * kN) / bw + (8 - 1 + 16 - 1) * fixed;
  EXPECT_NEAR(seconds(g.head_forward) + seconds(g.head_backward) - seconds(f.head_forward) - seconds(f.head_backward),
              head_delta, 1e-9 * head_delta);
}

// Eager adds kernels and bytes and removes none: never faster, whatever the layout, recompute,
// precision, dropout or compute model.
TEST(EagerElementwise, NeverFasterThanFused) {
  std::vector<Scenario> cases;
  const Scenario base = test_support::llama_small();
  cases.push_back(base);
  Scenario sp = base;
  sp.parallel.tp = 2;
  sp.parallel.dp = 4;
  sp.parallel.sequence_parallel = true;
  sp.training.recompute = Recompute::selective;
  sp.training.selective_policy = SelectivePolicy::torchtitan_op;
  sp.training.global_batch_size = 8;
  cases.push_back(sp);
  Scenario async = sp;
  async.parallel.tp_comm_overlap = true;
  async.parallel.tp_overlap_implementation = TpOverlapImplementation::async_tp;
  cases.push_back(async);
  Scenario plain = base;
  plain.model.gated_mlp = false;
  plain.model.num_query_groups = 8;
  plain.model.hidden_dropout = 0.1;
  plain.training.recompute = Recompute::full;
  cases.push_back(plain);
  Scenario fp32 = base;
  fp32.training.precision = Precision::fp32;
  cases.push_back(fp32);
  Scenario kernel_model = sp;
  kernel_model.training.compute_model = ComputeModel::kernel;
  cases.push_back(kernel_model);
  const ComputeParams params = default_compute_params(h100());
  for (const Scenario& fused : cases) {
    Scenario eager = fused;
    eager.training.elementwise_fusion = ElementwiseFusion::eager;
    const ModelPrograms f = build_transformer_programs(fused, h100(), params);
    const ModelPrograms g = build_transformer_programs(eager, h100(), params);
    ASSERT_EQ(f.layer_kinds.size(), g.layer_kinds.size());
    for (std::size_t i = 0; i < f.layer_kinds.size(); ++i) {
      EXPECT_GT(seconds(g.layer_kinds[i].forward), seconds(f.layer_kinds[i].forward));
      EXPECT_GE(seconds(g.layer_kinds[i].recompute), seconds(f.layer_kinds[i].recompute));
      EXPECT_GT(seconds(g.layer_kinds[i].backward), seconds(f.layer_kinds[i].backward));
      // The same GEMMs and attention: the FLOPs do not move.
      double ff = 0, gf = 0;
      for (const Segment& s : f.layer_kinds[i].forward) ff += s.flops;
      for (const Segment& s : g.layer_kinds[i].forward) gf += s.flops;
      EXPECT_DOUBLE_EQ(gf, ff);
    }
    EXPECT_GT(seconds(g.head_forward), seconds(f.head_forward));
    EXPECT_GT(seconds(g.head_backward), seconds(f.head_backward));
  }
}

}  // namespace
}  // namespace traincast::models
