// The eager elementwise kernels of a Llama block (eager_elementwise.h): bytes read + written per
// kernel, op by op, in the order PyTorch launches them.
#include "models/workload/eager_elementwise.h"

namespace traincast::models {
namespace {

constexpr double kFp32Bytes = 4;  // the fp32 intermediates (x.float(), the complex64 halves)

Kernel kernel(double bytes) { return Kernel{KernelKind::elementwise, 0, bytes}; }

}  // namespace

Kernel eager_add(double elements, double e) { return kernel(3 * e * elements); }

std::vector<Kernel> eager_rms_norm_forward(double elements, double width, double e) {
  const double n = elements, rows = elements / width, f = kFp32Bytes;
  const bool cast = e < f;
  std::vector<Kernel> k;
  if (cast) k.push_back(kernel((e + f) * n));  // x.float(): read e, write fp32
  k.push_back(kernel(2 * f * n));              // pow(2)
  k.push_back(kernel(f * n + f * rows));       // mean(-1, keepdim): read all, one value per row
  k.push_back(kernel(2 * f * rows));           // + eps
  k.push_back(kernel(2 * f * rows));           // rsqrt
  k.push_back(kernel(2 * f * n + f * rows));   // x * r (r broadcast over the row)
  if (cast) k.push_back(kernel((f + e) * n));  // type_as(x)
  k.push_back(kernel(2 * e * n + e * width));  // * weight
  return k;
}

std::vector<Kernel> eager_rms_norm_backward(double elements, double width, double e) {
  const double n = elements, rows = elements / width, f = kFp32Bytes;
  const bool cast = e < f;
  std::vector<Kernel> k;
  k.push_back(kernel(2 * e * n + e * width));  // grad * weight
  k.push_back(kernel(3 * e * n));              // grad * a (the weight's gradient, unreduced)
  k.push_back(kernel(e * n + e * width));      // sum_to_size: the weight's gradient
  if (cast) k.push_back(kernel((e + f) * n));  // type_as backward: the gradient to fp32
  k.push_back(kernel(2 * f * n + f * rows));   // grad * r
  k.push_back(kernel(3 * f * n));              // grad * x (r's gradient, unreduced)
  k.push_back(kernel(f * n + f * rows));       // sum_to_size: r's gradient, one per row
  k.push_back(kernel(2 * f * rows));           // rsqrt backward: -0.5 * grad
  k.push_back(kernel(2 * f * rows));           //   result.pow(3)
  k.push_back(kernel(3 * f * rows));           //   the product
  k.push_back(kernel(f * rows + f * n));       // mean backward: the expanded gradient / width
  k.push_back(kernel(2 * f * n));              // pow backward: self.pow(1), a copy
  k.push_back(kernel(2 * f * n));              //   2 * that
  k.push_back(kernel(3 * f * n));              //   grad * that
  k.push_back(kernel(3 * f * n));              // x.float()'s two gradients summed
  if (cast) k.push_back(kernel((f + e) * n));  // x.float() backward: the gradient to e bytes
  return k;
}

std::vector<Kernel> eager_rope_forward(double elements, double freqs_bytes, double e) {
  const double n = elements, f = kFp32Bytes;
  std::vector<Kernel> k;
  if (e < f) k.push_back(kernel((e + f) * n));   // x.float() (view_as_complex: a view)
  k.push_back(kernel(2 * f * n + freqs_bytes));  // x_ * freqs_cis (view_as_real, flatten: views)
  if (e < f) k.push_back(kernel((f + e) * n));   // type_as(x)
  return k;
}

std::vector<Kernel> eager_rope_backward(double elements, double freqs_bytes, double e) {
  const double n = elements, f = kFp32Bytes;
  std::vector<Kernel> k;
  if (e < f) k.push_back(kernel((e + f) * n));   // type_as backward
  k.push_back(kernel(2 * f * n + freqs_bytes));  // grad * freqs_cis.conj()
  if (e < f) k.push_back(kernel((f + e) * n));   // x.float() backward
  return k;
}

std::vector<Kernel> eager_repeat_kv_forward(double kv_elements, double repeated_elements, double e) {
  if (repeated_elements <= kv_elements) return {};
  return {kernel(e * (kv_elements + repeated_elements))};  // reshape of the expanded view: a copy
}

std::vector<Kernel> eager_repeat_kv_backward(double kv_elements, double repeated_elements, double e) {
  if (repeated_elements <= kv_elements) return {};
  return {kernel(e * (repeated_elements + kv_elements))};  // the gradient summed over the repeats
}

std::vector<Kernel> eager_mlp_activation_forward(double width_elements, bool gated, double e) {
  const double n = width_elements;
  if (!gated) return {kernel(2 * e * n)};         // the activation: read, write
  return {kernel(2 * e * n), kernel(3 * e * n)};  // F.silu(w1 x); * w3 x
}

std::vector<Kernel> eager_mlp_activation_backward(double width_elements, bool gated, double e) {
  const double n = width_elements;
  if (!gated) return {kernel(3 * e * n)};  // the activation's backward: grad and input in, gradient out
  // mul: grad * (w3 x), grad * silu(w1 x); silu_backward(grad, w1 x).
  return {kernel(3 * e * n), kernel(3 * e * n), kernel(3 * e * n)};
}

}  // namespace traincast::models
