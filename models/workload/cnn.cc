#include "models/workload/cnn.h"

#include <stdexcept>

#include "models/compute/framework_constants.h"
#include "models/workload/memory_model.h"

namespace traincast::models {
namespace {

int conv_out(int in, int kernel, int stride, int pad) { return (in + 2 * pad - kernel) / stride + 1; }

ConvShape conv(std::string name, int c_in, int c_out, int kernel, int stride, int h_in) {
  ConvShape c;
  c.name = std::move(name);
  c.c_in = c_in;
  c.c_out = c_out;
  c.kernel = kernel;
  c.stride = stride;
  c.h_in = h_in;
  c.h_out = conv_out(h_in, kernel, stride, kernel / 2);
  return c;
}

/// Implicit-GEMM convolution of `samples` images: M = samples·H_out·W_out, N = C_out, K = C_in·k².
/// HBM bytes: input, weights and output once each (im2col is never materialised).
Kernel conv_kernel(const ConvShape& c, double samples, double e) {
  return Kernel{KernelKind::gemm, 2 * samples * c.macs(),
                e * (samples * c.in_elements() + c.weights() + samples * c.out_elements())};
}
Kernel streaming(KernelKind kind, double bytes) { return Kernel{kind, 0, bytes}; }

}  // namespace

ResNetShape resnet_shape(const ModelSpec& m) {
  std::vector<int> counts;
  switch (m.num_layers) {
    case 50:
      counts = {3, 4, 6, 3};
      break;
    case 101:
      counts = {3, 4, 23, 3};
      break;
    case 152:
      counts = {3, 8, 36, 3};
      break;
    default:
      throw std::invalid_argument("workload.model.num_layers: ResNet depth " + std::to_string(m.num_layers) +
                                  " (expected 50, 101 or 152)");
  }
  if (m.image_size < 32)
    throw std::invalid_argument("workload.model.image_size: " + std::to_string(m.image_size) + " (expected >= 32)");
  ResNetShape r;
  r.num_classes = m.num_classes;
  r.stem = conv("stem_conv", 3, 64, 7, 2, m.image_size);
  r.pool_out = conv_out(r.stem.h_out, 3, 2, 1);
  int h = r.pool_out, c_in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int width = 64 << stage, c_out = 4 * width;
    for (int b = 0; b < counts[static_cast<std::size_t>(stage)]; ++b) {
      const int stride = (b == 0 && stage > 0) ? 2 : 1;
      BottleneckBlock blk;
      blk.convs.push_back(conv("conv1", c_in, width, 1, 1, h));
      blk.convs.push_back(conv("conv2", width, width, 3, stride, h));
      const int h_out = blk.convs.back().h_out;
      blk.convs.push_back(conv("conv3", width, c_out, 1, 1, h_out));
      if (b == 0) blk.convs.push_back(conv("downsample", c_in, c_out, 1, stride, h));
      r.blocks.push_back(std::move(blk));
      c_in = c_out;
      h = h_out;
    }
  }
  r.features = c_in;
  return r;
}

double resnet_parameters(const ModelSpec& m) {
  const ResNetShape r = resnet_shape(m);
  double p = r.stem.weights() + 2.0 * r.stem.c_out;
  for (const BottleneckBlock& b : r.blocks)
    for (const ConvShape& c : b.convs) p += c.weights() + 2.0 * c.c_out;
  return p + static_cast<double>(r.features) * r.num_classes + r.num_classes;
}

double resnet_forward_macs_per_sample(const ModelSpec& m) {
  const ResNetShape r = resnet_shape(m);
  double macs = r.stem.macs();
  for (const BottleneckBlock& b : r.blocks)
    for (const ConvShape& c : b.convs) macs += c.macs();
  return macs + static_cast<double>(r.features) * r.num_classes;
}

double resnet_model_flops_per_iteration(const Scenario& sc) {
  return 3.0 * 2.0 * resnet_forward_macs_per_sample(sc.model) * static_cast<double>(sc.training.global_batch_size);
}

ModelPrograms build_resnet_programs(const Scenario& sc, const GpuSpec& gpu, const ComputeParams& params) {
  const ResNetShape r = resnet_shape(sc.model);
  const Precision prec = sc.training.precision;
  const ComputeParams kernel_params = with_compute_model(params, sc.training);
  const double e = activation_bytes_per_element(prec);
  const double b = sc.training.micro_batch_size;
  auto segment = [&](Program& p, const std::string& label, std::initializer_list<Kernel> kernels) {
    Segment seg;
    seg.label = label;
    double kernel_s = 0;
    for (const Kernel& k : kernels) {
      kernel_s += kernel_seconds(k, gpu, kernel_params, prec);
      seg.flops += k.flops;
    }
    seg.seconds = kernel_params.use_kernel_model ? framework_segment_seconds(kernel_s) : kernel_s;
    p.push_back(std::move(seg));
  };
  // Batch norm (training mode) forward: statistics pass (read), normalise (read + write), fused
  // with the ReLU when one follows (cuDNN / PyTorch): 3 passes over the conv output.
  auto bn_forward = [&](double elements) { return streaming(KernelKind::norm, 3 * e * b * elements); };
  // Batch norm backward: reduction pass (read x, dy), then dx (read x, dy, write dx) = 5 passes;
  // a ReLU before it in forward adds a read of its output for the mask: 6.
  auto bn_backward = [&](double elements, bool relu) {
    return streaming(KernelKind::norm, (relu ? 6 : 5) * e * b * elements);
  };

  ModelPrograms out;
  for (const BottleneckBlock& blk : r.blocks) {
    LayerPrograms lp;
    const ConvShape& last = blk.convs[2];
    for (const ConvShape& c : blk.convs) {
      segment(lp.forward, c.name, {conv_kernel(c, b, e), bn_forward(c.out_elements())});
      lp.params_per_rank += c.weights() + 2.0 * c.c_out;
    }
    // Residual add and ReLU: read both branches, write the sum.
    segment(lp.forward, "add_relu", {streaming(KernelKind::elementwise, 3 * e * b * last.out_elements())});
    // Backward in reverse: ReLU mask of the sum, then per conv BN backward, data and weight grads.
    segment(lp.backward, "add_relu_bwd", {streaming(KernelKind::elementwise, 3 * e * b * last.out_elements())});
    for (auto it = blk.convs.rbegin(); it != blk.convs.rend(); ++it) {
      const ConvShape& c = *it;
      const bool relu = c.name == "conv1" || c.name == "conv2";
      const Kernel fwd = conv_kernel(c, b, e);
      segment(lp.backward, c.name + "_bwd", {bn_backward(c.out_elements(), relu), fwd /*dgrad*/, fwd /*wgrad*/});
    }
    // The shortcut gradient joins the main branch's: one add over the block input.
    segment(lp.backward, "shortcut_add_bwd",
            {streaming(KernelKind::elementwise, 3 * e * b * blk.convs[0].in_elements())});
    out.layer_kind.push_back(static_cast<int>(out.layer_kinds.size()));
    out.layer_kinds.push_back(std::move(lp));
  }
  // Stem: 7x7 conv, BN + ReLU, 3x3/2 max pool (reads the map, writes the pooled map and, for
  // backward, int64 argmax indices as PyTorch's max_pool2d_with_indices does).
  const double pooled = static_cast<double>(r.pool_out) * r.pool_out * r.stem.c_out;
  segment(out.embedding_forward, "stem_conv", {conv_kernel(r.stem, b, e), bn_forward(r.stem.out_elements())});
  segment(out.embedding_forward, "maxpool",
          {streaming(KernelKind::elementwise, b * (e * r.stem.out_elements() + (e + 8) * pooled))});
  segment(out.embedding_backward, "maxpool_bwd",
          {streaming(KernelKind::elementwise, b * ((e + 8) * pooled + e * r.stem.out_elements()))});
  segment(out.embedding_backward, "stem_conv_bwd",
          {bn_backward(r.stem.out_elements(), true), conv_kernel(r.stem, b, e) /*wgrad only*/});
  out.embedding_params_per_rank = r.stem.weights() + 2.0 * r.stem.c_out;
  // Head: global average pool, classifier GEMM (M = batch, N = classes, K = features), softmax
  // cross-entropy in fp32; backward: loss gradient, classifier dgrad + wgrad, pool backward.
  const double last_map = static_cast<double>(r.blocks.back().convs[2].out_elements());
  const double f = r.features, k = r.num_classes;
  const Kernel fc{KernelKind::gemm, 2 * b * f * k, e * (b * f + f * k + b * k)};
  segment(out.head_forward, "avgpool", {streaming(KernelKind::elementwise, e * b * (last_map + f))});
  segment(out.head_forward, "fc", {fc, streaming(KernelKind::elementwise, (e + 12) * b * k)});
  segment(out.head_backward, "fc_bwd", {streaming(KernelKind::elementwise, (e + 8) * b * k), fc, fc});
  segment(out.head_backward, "avgpool_bwd", {streaming(KernelKind::elementwise, e * b * (f + last_map))});
  out.head_params_per_rank = f * k + k;
  out.p2p_bytes = 0;  // no pipeline stages
  return out;
}

MemoryBreakdown resnet_memory(const Scenario& sc, const GpuSpec& gpu) {
  const ResNetShape r = resnet_shape(sc.model);
  const double params = resnet_parameters(sc.model);
  const double e = activation_bytes_per_element(sc.training.precision);
  // Kept per image: the image, the stem output pre- and post-BN, the pooled map and its indices,
  // and per conv its output before BN and after BN/ReLU (the next conv's input), per block the sum.
  double act = e * (3.0 * sc.model.image_size * sc.model.image_size + 2 * r.stem.out_elements()) +
               (e + 8) * static_cast<double>(r.pool_out) * r.pool_out * r.stem.c_out;
  for (const BottleneckBlock& b : r.blocks) {
    for (const ConvShape& c : b.convs) act += 2 * e * c.out_elements();
    act += e * b.convs[2].out_elements();
  }
  MemoryBreakdown mb;
  mb.weights_bytes = 4 * params;
  mb.grads_bytes = 4 * params;
  mb.optimizer_bytes = 4 * params;
  mb.activations_bytes = act * sc.training.micro_batch_size;
  mb.workspace_bytes = kWorkspaceBytes;
  mb.peak_bytes_per_gpu =
      mb.weights_bytes + mb.grads_bytes + mb.optimizer_bytes + mb.activations_bytes + mb.workspace_bytes;
  mb.capacity_bytes = gpu.hbm_capacity_bytes;
  mb.oom = mb.peak_bytes_per_gpu > mb.capacity_bytes;
  if (mb.oom)
    mb.advice = "activations of " + std::to_string(sc.training.micro_batch_size) +
                " images per micro-batch do not fit: a smaller micro_batch_size with gradient accumulation would";
  return mb;
}

}  // namespace traincast::models
