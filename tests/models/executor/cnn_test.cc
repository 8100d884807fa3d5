// ResNet-50 with DDP: parameters and FLOPs against the published counts, per-layer weights against
// ASTRA-sim's ResNet-50 workload (real layer list), DDP buckets and their overlap with backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "models/executor/training_executor.h"
#include "models/workload/cnn.h"
#include "models/workload/layer_program.h"

namespace traincast::models {
namespace {

Scenario resnet50(const std::string& node, int nodes, int dp, int images_per_gpu) {
  Scenario sc;
  sc.name = "resnet50";
  sc.cluster.node_template = node;
  sc.cluster.num_nodes = nodes;
  sc.model.family = ModelFamily::resnet;
  sc.model.num_layers = 50;
  sc.parallel.dp = dp;
  sc.parallel.dp_bucket_bytes = 25.0 * 1048576.0;  // PyTorch DDP bucket_cap_mb = 25
  sc.training.global_batch_size = dp * images_per_gpu;
  sc.training.micro_batch_size = images_per_gpu;
  sc.training.precision = Precision::fp16;
  return sc;
}

TEST(ResNet, ParametersAndFlopsMatchPublishedCounts) {
  ModelSpec m;
  m.family = ModelFamily::resnet;
  m.num_layers = 50;
  // torchvision resnet50 (IMAGENET1K_V1 metadata): num_params 25,557,032; "25.6M" (He et al.).
  EXPECT_EQ(resnet_parameters(m), 25557032.0);
  // torchvision: 4.09 GFLOPS per 224x224 image, counted as multiply-accumulates (fvcore). He et
  // al. Table 1 gives 3.8e9 for v1 (stride on the 1x1 conv); v1.5 moves it to the 3x3 conv.
  EXPECT_NEAR(resnet_forward_macs_per_sample(m) / 1e9, 4.09, 0.01);
  m.num_layers = 101;  // torchvision resnet101: 44,549,160 parameters, 7.80 GMACs
  EXPECT_EQ(resnet_parameters(m), 44549160.0);
  EXPECT_NEAR(resnet_forward_macs_per_sample(m) / 1e9, 7.80, 0.01);
  m.num_layers = 34;
  EXPECT_THROW(resnet_shape(m), std::invalid_argument);
}

TEST(ResNet, ConvWeightsMatchAstraSimResNet50Workload) {
  // ASTRA-sim's Resnet50_DataParallel workload lists every conv and the classifier with the
  // bytes of its weight-gradient all-reduce (fp32): the same multiset of layer sizes as ours.
  const std::string path =
      std::string(TRAINCAST_SHARED_DATA_DIR) + "/chakra/astra-sim-workloads/Resnet50_DataParallel.txt";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "no " << path;
  std::string line;
  std::getline(in, line);  // DATA
  std::getline(in, line);  // layer count
  std::map<double, int> theirs, ours;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string col[12];
    for (auto& c : col) f >> c;
    if (col[0].empty()) continue;
    ++theirs[std::stod(col[10]) / 4];
  }
  ModelSpec m;
  m.family = ModelFamily::resnet;
  m.num_layers = 50;
  const ResNetShape r = resnet_shape(m);
  ++ours[r.stem.weights()];
  for (const BottleneckBlock& b : r.blocks)
    for (const ConvShape& c : b.convs) ++ours[c.weights()];
  ++ours[static_cast<double>(r.features) * r.num_classes];
  EXPECT_EQ(ours, theirs);
}

TEST(ResNet, ProgramsFlopsAddUpToThreeTimesForward) {
  const Scenario sc = resnet50("dgx_a100", 1, 8, 256);
  const GpuSpec& gpu = find_gpu("A100-SXM4-80GB");
  const ModelPrograms p = build_resnet_programs(sc, gpu, default_compute_params(gpu));
  ASSERT_EQ(p.layer_kinds.size(), 16u);  // bottleneck blocks 3 + 4 + 6 + 3
  double flops = 0, params = p.embedding_params_per_rank + p.head_params_per_rank;
  auto add = [&](const Program& prog) {
    for (const Segment& s : prog) flops += s.flops;
  };
  for (const LayerPrograms& lp : p.layer_kinds) {
    add(lp.forward), add(lp.backward);
    params += lp.params_per_rank;
  }
  for (const Program* prog : {&p.embedding_forward, &p.embedding_backward, &p.head_forward, &p.head_backward})
    add(*prog);
  EXPECT_EQ(params, resnet_parameters(sc.model));
  // 3 x forward, less the stem's data gradient (not computed: the image needs no gradient).
  const ResNetShape r = resnet_shape(sc.model);
  const double expected = 3 * 2 * 256 * resnet_forward_macs_per_sample(sc.model) - 2 * 256 * r.stem.macs();
  EXPECT_NEAR(flops / expected, 1.0, 1e-12);
}

TEST(ResNet, LayerProgramsDispatchOnTheModelFamily) {
  // build_layer_programs (layer_program.h) picks the generator by model.family; so do the FLOP
  // counts: a ResNet recomputes nothing, so hardware FLOPs equal model FLOPs.
  Scenario sc = resnet50("dgx_a100", 1, 8, 256);
  const GpuSpec& gpu = find_gpu("A100-SXM4-80GB");
  const ComputeParams params = default_compute_params(gpu);
  const ModelPrograms resnet = build_layer_programs(sc, gpu, params);
  EXPECT_EQ(resnet.layer_kinds.size(), build_resnet_programs(sc, gpu, params).layer_kinds.size());
  EXPECT_EQ(model_flops_per_iteration(sc), resnet_model_flops_per_iteration(sc));
  EXPECT_EQ(hardware_flops_per_iteration(sc), model_flops_per_iteration(sc));
  EXPECT_EQ(tokens_per_sample(sc.model), 1.0);
}

TEST(ResNet, DdpBucketsFillInBackwardOrder) {
  Scenario sc = resnet50("dgx_a100", 1, 8, 256);
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  auto buckets = [&](double bucket_bytes) {
    sc.parallel.dp_bucket_bytes = bucket_bytes;
    const TrainingGraph job = build_training_graph(sc, cluster);
    const auto ops = std::count_if(job.graph.ops.begin(), job.graph.ops.end(),
                                   [](const Op& op) { return op.role == Role::dp_grad; });
    return ops / job.replicas;  // one all-reduce op per bucket per simulated replica
  };
  // 25 MiB: fc (8.2 MB, over the 1 MiB first bucket) | blocks 16-15 (35.7 MB) | 14-13 (28.6 MB) |
  // 12-7 (33.0 MB) | 6-1 and the stem (6.8 MB, the rest): 5 buckets, as blocks are the unit here.
  EXPECT_EQ(buckets(25.0 * 1048576.0), 5);
  EXPECT_EQ(buckets(1e12), 2);  // the 1 MiB-capped first bucket (fc), then everything
}

TEST(ResNet, DdpOverlapAndBandwidth) {
  // 2 DGX A100 with one HDR NIC each: the all-reduce of 102 MB of fp32 gradients matters.
  Scenario sc = resnet50("dgx_a100", 2, 16, 64);
  sc.cluster.nics_per_node = 1;
  const Report overlapped = simulate_training(sc);
  sc.parallel.overlap_grad_reduce = false;
  const Report serial = simulate_training(sc);
  EXPECT_LT(overlapped.iteration_time_s, serial.iteration_time_s);
  EXPECT_LT(overlapped.breakdown.dp_comm_exposed_s, serial.breakdown.dp_comm_exposed_s);
  sc.parallel.overlap_grad_reduce = true;
  // More bandwidth is never slower: 1, 2, 4 NICs per node.
  double last = overlapped.iteration_time_s;
  for (int nics : {2, 4}) {
    sc.cluster.nics_per_node = nics;
    const Report r = simulate_training(sc);
    EXPECT_LE(r.iteration_time_s, last * (1 + 1e-9)) << nics << " NICs";
    last = r.iteration_time_s;
  }
  EXPECT_NEAR(overlapped.samples_per_s, 16 * 64 / overlapped.iteration_time_s, 1e-6);
  EXPECT_EQ(overlapped.tokens_per_s, overlapped.samples_per_s);  // an image counts as one token
  EXPECT_FALSE(overlapped.memory.oom);
}

}  // namespace
}  // namespace traincast::models
