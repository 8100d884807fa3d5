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
// The logit layer stays in bf16 in every recipe (TE's fp8_autocast wraps the transformer layers
// only; torchao's float8 conversion skips the output layer by default), as does attention.
//
// Rowwise GEMMs (torchao Float8LinearRecipeName.ROWWISE, torchao/float8/config.py
// from_recipe_name: axiswise scales for input, weight and grad_output, default GEMM configs, i.e.
// gemm_config_output use_fast_accum=True, gemm_config_grad_input and gemm_config_grad_weight
// use_fast_accum=False):
//   forward (output, fast accumulation): PyTorch's CUTLASS rowwise kernel (torch._scaled_mm with
//     per-row scales, aten/src/ATen/native/cuda/RowwiseScaledMM.cu), scales applied in its
//     epilogue. pytorch/pytorch#147971 (H100, after the tile heuristics of pytorch/pytorch#134781):
//     "most shapes are within 90-100% of tensor-wise efficiency, but there's a long tail going
//     down to 50%". Main loop at 0.9 of the tensorwise kernel: the lower edge of that bulk, the tail
//     pulling the mean below the bulk's midpoint (a reading of the plot, not a fit).
//   backward (grad_input, grad_weight, slow accumulation): torchao computes them with the
//     tensorwise cuBLAS kernel at unit scales and multiplies the output by the outer product of
//     the two scale vectors afterwards (torchao/float8/float8_ops.py addmm_float8_unwrapped:
//     "The rowwise CUTLASS-based kernel is so slow without fast-accum that we'd rather use the
//     tensorwise cuBLAS-based kernel and do the scaling manually afterwards"; pytorch/ao#1325,
//     #1377). Main loop as tensorwise (the same cuBLAS kernel the tensorwise recipe's backward
//     GEMMs run), plus one memory-bound rescale kernel per GEMM (pytorch/ao#2184: with
//     torch.compile "at least one extra triton kernel *per GEMM* ... just for the rescaling"):
//     it reads and writes the bf16 output, 2 + 2 = 4 B per output element.
//
// Tensor-parallel all-gathers (sequence parallelism: the layer inputs before the column-parallel
// GEMMs, forward and recompute; the output gradients before the row-parallel GEMMs' backward):
//   current_tensorwise: torchtitan applies torchao's Float8ColwiseParallel,
//     Float8RowwiseParallel and PrepareFloat8ModuleInput (torchtitan
//     torchtitan/models/llama3/infra/parallelize.py apply_tp, enable_float8_tensorwise_tp;
//     torchao/float8/float8_tensor_parallel.py): the input is cast to fp8 on its shard before the
//     all-gather, and the output gradient is cast to fp8 (e5m2) before the backward all-gather
//     (_NoopFwToFloat8BwDynamic after the output redistribute): 1 B per element. Reduce-scatters
//     stay bf16.
//   rowwise: "For now, float8 all-gather with TP is only supported for tensorwise float8 scaling
//     recipes. For rowwise recipes, we use regular TP and all-gather happens in high precision"
//     (torchtitan parallelize.py): 2 B.
//   mx_blockwise: torchao's float8 TP styles assume tensorwise scaling ("This currently assumes
//     tensorwise scaling", float8_tensor_parallel.py): 2 B.
//   delayed_tensorwise (Transformer Engine): kept at 2 B, as before this field; TE's fp8 gather
//     of the LayerNorm output is not modelled (no shared row runs TE fp8 with TP > 1).

#include "models/spec/enums.h"

namespace traincast::models {

struct Fp8RecipeCost {
  double cast_bytes_per_operand_element = 2;  ///< HBM bytes of cast/amax/transpose per GEMM input element
  double forward_main_loop_factor = 1;        ///< forward GEMM main-loop speed relative to tensorwise fp8
  double backward_main_loop_factor = 1;       ///< backward (dgrad, wgrad) GEMMs' main-loop speed, same base
  /// HBM bytes of a separate rescale kernel per backward GEMM output element (0: none).
  double backward_rescale_bytes_per_output_element = 0;
  /// Bytes per element of the layers' TP all-gathers (activations, output gradients).
  double tp_all_gather_bytes_per_element = 2;
};

inline Fp8RecipeCost fp8_recipe_cost(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::delayed_tensorwise:
      return {2.0, 1.0, 1.0, 0.0, 2.0};
    case Fp8Recipe::current_tensorwise:
      return {3.0, 1.0, 1.0, 0.0, 1.0};
    case Fp8Recipe::rowwise:
      return {5.0, 0.9, 1.0, 4.0, 2.0};
    case Fp8Recipe::mx_blockwise:
      return {3.0 + 1.0 / 32, 1.0, 1.0, 0.0, 2.0};
  }
  return {};
}

}  // namespace traincast::models
