#pragma once
// The elementwise kernels of a Llama block as PyTorch eager runs them
// (workload.training.elementwise_fusion eager; torchtitan without torch.compile): every ATen op of
// the forward and every kernel of its autograd backward launched on its own, each timed by the
// memory-bound kernel model (compute_model.cc kernel_seconds: bytes / (HBM bandwidth x
// memory_efficiency) + kernel_fixed_s). Counted from the framework's source, nothing fitted:
//   torchtitan (benchmarks/llama3_h100_202412_torchtitan.md @ 9dec370, train_configs/llama3_8b.toml
//     norm_type "rmsnorm"): torchtitan/models/norms.py RMSNorm.forward
//     `self._norm(x.float()).type_as(x) * self.weight`, _norm `x * torch.rsqrt(x.pow(2).mean(-1,
//     keepdim=True) + self.eps)`; torchtitan/models/llama/model.py apply_rotary_emb (xq.float() as
//     complex via view_as_complex, `* freqs_cis`, view_as_real, type_as; the same on xk), repeat_kv
//     (unsqueeze, expand, reshape: a copy when n_rep > 1), FeedForward.forward
//     `w2(F.silu(w1(x)) * w3(x))`, TransformerBlock.forward `h = x + attention(...)`,
//     `out = h + feed_forward(...)`.
//   PyTorch autograd (tools/autograd/derivatives.yaml, torch/csrc/autograd/FunctionsManual.cpp):
//     mul: grad * other for each input, the broadcast input's gradient reduced by sum_to_size
//     (one reduction kernel); pow (Tensor, Scalar): pow_backward `grad * (exp * self.pow(exp -
//     1))`: self.pow(1) (a copy), the scalar product, the product with grad (3 kernels); mean:
//     mean_backward, `sum_backward(...) / n` (the expanded gradient written once); rsqrt:
//     `-0.5 * grad * result.pow(3)` (3 kernels on one value per row); add: the gradient passed
//     on (no kernel); _to_copy (float(), type_as): the gradient cast back (one kernel); silu:
//     silu_backward (one kernel); a tensor used twice: its two gradients summed by the engine's
//     input buffer (one add kernel); reshape of an expanded tensor (repeat_kv): the gradient
//     summed over the repeats (one reduction).
// Bytes are HBM reads + writes per kernel: activations of e bytes per element (bf16: 2), the
// fp32 intermediates 4 B, per-row values 4 B. Not counted: the RoPE product's conjugated
// frequencies in backward (at most one small copy per layer), the caching allocator's work,
// FSDP's and the optimizer's own kernels (as in the fused model).

#include <vector>

#include "models/compute/compute_model.h"

namespace traincast::models {

/// torchtitan's RMSNorm forward on `elements` values in rows of `width`, activations of `e` bytes:
/// x.float(), pow(2), mean(-1), + eps, rsqrt, x * r, type_as(x), * weight (8 kernels; the casts
/// are no-ops, no kernel, when e is 4).
std::vector<Kernel> eager_rms_norm_forward(double elements, double width, double e);
/// Its autograd backward: weight product (grad * w, grad * a, the reduction to w's shape), the
/// cast back to fp32, x * r (grad * r, grad * x, the reduction to r's shape), rsqrt (3 per-row
/// kernels), mean (the expanded gradient / width), pow(2) (3 kernels), the two gradients of
/// x.float() summed, the cast to e bytes (16 kernels; 14 when e is 4).
std::vector<Kernel> eager_rms_norm_backward(double elements, double width, double e);
/// apply_rotary_emb on one of xq / xk (`elements` values, `freqs_bytes` of complex64 frequencies
/// read per call): x.float(), the complex product, type_as (3 kernels; 1 when e is 4).
std::vector<Kernel> eager_rope_forward(double elements, double freqs_bytes, double e);
/// Its backward: the cast to fp32, the product with the conjugated frequencies, the cast back.
std::vector<Kernel> eager_rope_backward(double elements, double freqs_bytes, double e);
/// repeat_kv on keys or values: the copy of `kv_elements` into `repeated_elements` (n_rep > 1;
/// empty when they are equal).
std::vector<Kernel> eager_repeat_kv_forward(double kv_elements, double repeated_elements, double e);
/// Its backward: the sum over the repeats.
std::vector<Kernel> eager_repeat_kv_backward(double kv_elements, double repeated_elements, double e);
/// The MLP's activation on `width_elements` (tokens x FFN width per rank): gated, F.silu(w1 x)
/// and the product with w3 x (2 kernels); otherwise the activation alone (1 kernel).
std::vector<Kernel> eager_mlp_activation_forward(double width_elements, bool gated, double e);
/// Its backward: gated, the product's two gradients and silu_backward (3 kernels); otherwise the
/// activation's backward (1 kernel).
std::vector<Kernel> eager_mlp_activation_backward(double width_elements, bool gated, double e);
/// One eager add of two tensors of `elements` (a residual add, or the sum of a tensor's two
/// gradients): read both, write the sum.
Kernel eager_add(double elements, double e);

}  // namespace traincast::models
