#pragma once
// What an fp8 recipe (workload.training.fp8_recipe) adds around each fp8 GEMM of a transformer
// layer (issue 17: "no cost for amax, scaling, casts and transposes, nor for the GEMMs a recipe
// keeps in bf16"). Memory-bound traffic per operand element, counted from what the kernels read
// and write (bf16 in = 2 B, fp8 out = 1 B):
//   delayed_tensorwise: Transformer Engine's fused cast_transpose reads the bf16 tensor once and
//     writes the fp8 copy and its transpose (2 + 1 + 1 = 4 B); the scale comes from the amax
//     history (computed inside the same kernel), and each cast tensor feeds two GEMMs (forward
//     and one backward GEMM): 2 B per operand element per GEMM.
//   current_tensorwise: the scale needs this tensor's amax before the cast: one more read pass
//     (2 B) over the 4 B above, shared by two GEMMs: 3 B.
//   rowwise: scales along the reduction axis differ for the two layouts, so each GEMM use casts
//     its own copy: amax read (2) + read (2) + fp8 write (1) = 5 B.
//   mx_blockwise: 1x32 blocks along K, each GEMM use its own K-blocked copy, amax fused in the
//     cast: read (2) + write (1) + one 8-bit scale per 32 elements (1/32): 3.03 B.
// Rowwise GEMMs apply a scale per row and column in the epilogue and run their main loop at 0.9
// of the tensorwise kernel's: an ASSUMPTION (torchao documents TENSORWISE, cuBLAS, as the fastest
// recipe and ROWWISE as a CUTLASS kernel, torchao.float8.Float8LinearRecipeName, without a
// figure); torchao's benchmarks/float8/bench_matmul.py on an H100 would ground it. The logit
// layer stays in bf16 in every recipe (TE's fp8_autocast wraps the transformer layers only;
// torchao's float8 conversion skips the output layer by default), as does attention.

#include "models/spec/enums.h"

namespace traincast::models {

struct Fp8RecipeCost {
  double cast_bytes_per_operand_element = 2;  ///< HBM bytes of cast/amax/transpose per GEMM input element
  double main_loop_factor = 1;                ///< GEMM main-loop speed relative to tensorwise fp8
};

inline Fp8RecipeCost fp8_recipe_cost(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::delayed_tensorwise:
      return {2.0, 1.0};
    case Fp8Recipe::current_tensorwise:
      return {3.0, 1.0};
    case Fp8Recipe::rowwise:
      return {5.0, 0.9};
    case Fp8Recipe::mx_blockwise:
      return {3.0 + 1.0 / 32, 1.0};
  }
  return {};
}

}  // namespace traincast::models
