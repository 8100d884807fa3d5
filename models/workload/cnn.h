#pragma once
// ResNet v1.5 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016, Table 1;
// v1.5 = stride 2 on the 3x3 conv of each stage's first bottleneck, as torchvision, NVIDIA
// DeepLearningExamples and MLPerf train it) as per-layer kernel programs for the training
// executor's layer-kind mechanism: one layer kind per bottleneck block, the stem (7x7 conv,
// batch norm, ReLU, max pool) as the "embedding" and global average pool + fully connected
// classifier + cross-entropy as the "head". Convolutions are implicit GEMMs
// (M = N·H_out·W_out, N = C_out, K = C_in·k·k) through the compute model; batch norm, ReLU,
// residual add and pooling are memory-bound kernels. Backward = data gradient + weight gradient
// (each the forward's FLOPs: 2x forward), except the stem conv, whose input (the image) needs no
// gradient (PyTorch skips it). Data parallel only (DDP): tp = pp = 1.

#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"
#include "models/workload/layer_program.h"

namespace traincast::models {

/// One convolution (no bias: each is followed by batch norm), per sample.
struct ConvShape {
  std::string name;  ///< e.g. "conv2", "downsample"
  int c_in = 0, c_out = 0, kernel = 1, stride = 1;
  int h_in = 0, h_out = 0;  ///< square feature maps [pixels]
  double weights() const { return static_cast<double>(c_in) * c_out * kernel * kernel; }
  /// Multiply-accumulates per sample: H_out·W_out·C_out·C_in·k².
  double macs() const { return static_cast<double>(h_out) * h_out * weights(); }
  double out_elements() const { return static_cast<double>(h_out) * h_out * c_out; }
  double in_elements() const { return static_cast<double>(h_in) * h_in * c_in; }
};

/// One bottleneck block: 1x1 reduce, 3x3 (stride here in v1.5), 1x1 expand, and on the first
/// block of a stage a strided 1x1 projection ("downsample") on the shortcut.
struct BottleneckBlock {
  std::vector<ConvShape> convs;  ///< conv1, conv2, conv3[, downsample]
};

struct ResNetShape {
  ConvShape stem;    ///< 7x7, stride 2, 3 -> 64 channels
  int pool_out = 0;  ///< side after the 3x3 stride-2 max pool
  std::vector<BottleneckBlock> blocks;
  int features = 2048;  ///< channels into the classifier
  int num_classes = 1000;
};

/// Shapes of ResNet-`model.num_layers` (50: blocks 3,4,6,3; 101: 3,4,23,3; 152: 3,8,36,3) at
/// model.image_size. Throws std::invalid_argument for another depth or an image_size < 32.
ResNetShape resnet_shape(const ModelSpec& model);

/// Parameters: conv weights + batch-norm scale and shift (2 per channel) + classifier weights
/// and bias. ResNet-50 at 1000 classes: 25,557,032 (torchvision resnet50, "num_params").
double resnet_parameters(const ModelSpec& model);
/// Forward multiply-accumulates per image (convolutions and classifier, as torchvision's and
/// fvcore's "GFLOPS" count them): ResNet-50 v1.5 at 224 px: 4.09e9.
double resnet_forward_macs_per_sample(const ModelSpec& model);

/// Model FLOPs of one iteration: 3 x forward (forward + data and weight gradients) x 2 FLOPs per
/// multiply-accumulate x global_batch_size images.
double resnet_model_flops_per_iteration(const Scenario& scenario);

/// The block programs (as ModelPrograms: layer_kinds one per block; embedding = stem;
/// head = pool + classifier + loss). Parameters per rank are the block's conv and batch-norm
/// parameters, so DDP buckets fill in backward order. Throws std::invalid_argument when the
/// GPU lacks the precision's math, or for the shapes resnet_shape refuses.
ModelPrograms build_resnet_programs(const Scenario& scenario, const GpuSpec& gpu, const ComputeParams& params);

/// Per-GPU memory: weights, gradients and SGD momentum in fp32 (PyTorch AMP keeps fp32 weights;
/// torchvision's reference recipe is SGD with momentum): 12 B/param; activations kept for
/// backward per image (conv output before batch norm and the ReLU output of every conv, the
/// residual sum, the stem's max-pool indices in int64) x micro_batch_size; workspace
/// kWorkspaceBytes. An estimate: no measured ResNet memory in /work/shared/data.
MemoryBreakdown resnet_memory(const Scenario& scenario, const GpuSpec& gpu);

}  // namespace traincast::models
