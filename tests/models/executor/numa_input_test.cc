// Host-to-device input copies (workload.data_loader) over the node's PCIe/CPU topology: the route
// from each socket's memory, and the exposed copy time of ResNet-50 on a DGX A100 with the
// right and the wrong NUMA binding against hand-worked flow arithmetic.
#include <gtest/gtest.h>

#include <string>

#include "models/collectives/collective_engine.h"
#include "models/executor/training_executor.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

Scenario resnet50_dgx_a100(NumaBinding binding, double bytes_per_element, bool prefetch) {
  Scenario sc;
  sc.name = "resnet50-numa";
  sc.cluster.node_template = "dgx_a100";
  sc.model.family = ModelFamily::resnet;
  sc.model.num_layers = 50;
  sc.parallel.dp = 8;
  sc.parallel.dp_bucket_bytes = 25.0 * 1048576.0;
  sc.training.global_batch_size = 2048;
  sc.training.micro_batch_size = 256;
  sc.training.precision = Precision::fp16;
  DataLoaderSpec dl;
  dl.numa_binding = binding;
  dl.input_bytes_per_element = bytes_per_element;
  dl.prefetch = prefetch;
  sc.data_loader = dl;
  return sc;
}

TEST(NumaInput, HostToGpuRouteCrossesTheSocketLinkOnlyFromTheOtherSocket) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  ClusterSpec spec;
  spec.node_template = "dgx_a100";
  Cluster cluster(spec, net);
  // DGX A100 template: 4 PCIe switches of 2 GPUs, switches 0-1 on socket 0, 2-3 on socket 1.
  ASSERT_EQ(cluster.socket_of_gpu(0), 0);
  ASSERT_EQ(cluster.socket_of_gpu(7), 1);
  const auto local = cluster.host_route(0, false, 0);
  ASSERT_EQ(local.size(), 2u);  // switch uplink (down), GPU PCIe link (down)
  EXPECT_EQ(cluster.link_kind(local[0]), LinkKind::pcie);
  EXPECT_EQ(net.resource_name(local[1]), "node0.gpu0.pcie_down");
  const auto remote = cluster.host_route(0, false, 1);
  ASSERT_EQ(remote.size(), 3u);
  EXPECT_EQ(cluster.link_kind(remote[0]), LinkKind::socket);
  EXPECT_EQ(remote[1], local[0]);
  EXPECT_EQ(remote[2], local[1]);
  EXPECT_THROW(cluster.host_route(8, false, 0), std::out_of_range);
  EXPECT_THROW(cluster.host_route(0, false, 2), std::out_of_range);
  // Device-to-host into the other socket's memory: the same links the other way, in reverse.
  const auto back = cluster.host_route(0, true, 1);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(net.resource_name(back[0]), "node0.gpu0.pcie_up");
  EXPECT_EQ(cluster.link_kind(back[1]), LinkKind::pcie);
  EXPECT_EQ(net.resource_name(back[2]), "node0.cpu0->cpu1");
  EXPECT_EQ(net.resource_name(remote[0]), "node0.cpu1->cpu0");
  // Without a socket: the GPU's own one (GPU 7 sits on socket 1).
  EXPECT_EQ(cluster.host_route(7, false), cluster.host_route(7, false, 1));
}

TEST(NumaInput, HostCopiesFromTheOtherSocketShareItsLink) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  ClusterSpec spec;
  spec.node_template = "dgx_a100";
  const Cluster cluster(spec, net);
  CollectiveEngine coll(sim, net, cluster);
  const NodeTemplate& node = find_builtin_node_template("dgx_a100");
  // Every GPU's buffer on the other socket: the four GPUs of socket 0 pull through one direction
  // of cpu1->cpu0 (16 GB/s, efficiency 1): 4 GB/s each, below their half of a switch uplink
  // (31.5 GB/s x 0.762 / 2 = 12.0 GB/s).
  HostBuffers other;
  for (int g = 0; g < 8; ++g) other.socket_of_gpu.push_back(1 - cluster.socket_of_gpu(g));
  EXPECT_NEAR(coll.host_copy_rate_cap(0, false, other), node.socket_link_bytes_per_s / 4, 1.0);
  // Only GPU 0 reads the other socket: it has the link to itself; the uplink it shares with GPU 1.
  HostBuffers one{std::vector<int>(8, -1)};
  one.socket_of_gpu[0] = 1;
  one.socket_of_gpu[1] = 0;
  const double uplink_share = LinkEfficiency::pcie * node.pcie_uplink_bytes_per_s / 2;
  ASSERT_LT(uplink_share, node.socket_link_bytes_per_s);
  EXPECT_NEAR(coll.host_copy_rate_cap(0, false, one), uplink_share, 1.0);
  const int gpus[] = {0, 1};
  const double bytes = 1e9;
  coll.start_host_copy(gpus, bytes, false, nullptr, 0, one);
  sim.run();
  EXPECT_NEAR(sim.now().seconds(), bytes / uplink_share, 1e-6);
  EXPECT_NEAR(net.stats(cluster.host_route(0, false, 1)[0]).bytes_carried, bytes, 1.0);  // cpu1->cpu0
  // Refused: a GPU without a buffer, a table that is not one entry per GPU.
  const int gpu2[] = {2};
  EXPECT_THROW(coll.start_host_copy(gpu2, bytes, false, nullptr, 0, one), std::invalid_argument);
  EXPECT_THROW(coll.host_copy_rate_cap(0, false, HostBuffers{{1, 0}}), std::invalid_argument);
  EXPECT_EQ(coll.active(), 0u);
}

TEST(NumaInput, BlockingFp32CopiesCostWhatTheirBottleneckLinkGives) {
  // 256 images x 3 x 224 x 224 x 4 bytes = 154,140,672 bytes per GPU per iteration.
  const double bytes = 256.0 * 3 * 224 * 224 * 4;
  sim::Simulator sim0;
  sim::FlowNetwork net0(sim0);
  ClusterSpec spec;
  spec.node_template = "dgx_a100";
  Cluster c0(spec, net0);
  CollectiveEngine e0(sim0, net0, c0);
  const NodeTemplate& node = find_builtin_node_template("dgx_a100");
  const double pcie = e0.default_efficiency(LinkKind::pcie), sock = e0.default_efficiency(LinkKind::socket);
  // Right binding: the two GPUs under a switch share its uplink (one per direction, as wide as a
  // GPU's own link) at its PCIe efficiency: each copy takes 2 x bytes / (efficiency x uplink).
  const double right_s = 2 * bytes / (pcie * node.pcie_uplink_bytes_per_s);
  // Wrong binding: the four GPUs of each socket pull through one direction of the socket link:
  // 4 x bytes / (efficiency x socket link), slower than their uplinks.
  const double wrong_s = 4 * bytes / (sock * node.socket_link_bytes_per_s);
  ASSERT_GT(wrong_s, right_s);
  const Report right = simulate_training(resnet50_dgx_a100(NumaBinding::correct, 4, false), nullptr);
  const Report wrong = simulate_training(resnet50_dgx_a100(NumaBinding::other_socket, 4, false), nullptr);
  // Flows start together (the copies are the iterations' first ops on the compute stream), so the
  // exposed time is the copy time; 1% covers the flows' latency and the rounding to ns.
  EXPECT_NEAR(right.breakdown.input_copy_exposed_s, right_s, 0.01 * right_s);
  EXPECT_NEAR(wrong.breakdown.input_copy_exposed_s, wrong_s, 0.01 * wrong_s);
  EXPECT_NEAR(wrong.iteration_time_s - right.iteration_time_s, wrong_s - right_s, 0.02 * (wrong_s - right_s));
  // socket0: GPUs 4-7 cross (one direction, four GPUs): as slow as other_socket for them.
  const Report s0 = simulate_training(resnet50_dgx_a100(NumaBinding::socket0, 4, false), nullptr);
  EXPECT_NEAR(s0.iteration_time_s, wrong.iteration_time_s, 0.01 * wrong.iteration_time_s);
}

TEST(NumaInput, PrefetchedUint8CopiesHideUnderComputeWhateverTheBinding) {
  // 38.5 MB per GPU through the socket link in about 10 ms, beside a ~78 ms iteration: the copy
  // for the next iteration finishes under this one's compute (two iterations are simulated so the
  // reported one has a predecessor to hide under).
  const Report right = simulate_training(resnet50_dgx_a100(NumaBinding::correct, 1, true), nullptr);
  const Report wrong = simulate_training(resnet50_dgx_a100(NumaBinding::other_socket, 1, true), nullptr);
  EXPECT_EQ(right.iterations_simulated, 2);
  EXPECT_EQ(right.breakdown.input_copy_exposed_s, 0.0);
  EXPECT_EQ(wrong.breakdown.input_copy_exposed_s, 0.0);
  EXPECT_NEAR(wrong.iteration_time_s, right.iteration_time_s, 1e-3 * right.iteration_time_s);
}

}  // namespace
}  // namespace traincast::models
