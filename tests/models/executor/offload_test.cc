// CPU offload of the optimizer (ZeRO-Offload, Ren et al. 2021): host copies as flows on the
// GPUs' PCIe paths, the CPU-Adam step from host-memory bandwidth, HBM memory without optimizer
// state, and the direction of the effects (slower PCIe or host memory: slower steps).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "models/calibration/calibration_profile.h"
#include "models/collectives/collective_engine.h"
#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/workload/offload.h"
#include "models/workload/transformer.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

TEST(Offload, SocketMemoryBandwidthFromTheCpuFamily) {
  // Channels x MT/s x 8 bytes (AMD EPYC 7002 / Intel Xeon 4th gen datasheets).
  EXPECT_DOUBLE_EQ(socket_memory_bytes_per_s(find_builtin_node_template("dgx_a100").cpu), 8 * 3200e6 * 8);  // EPYC 7742
  EXPECT_DOUBLE_EQ(socket_memory_bytes_per_s(find_builtin_node_template("dgx_h100").cpu), 8 * 4800e6 * 8);  // 8480C
  EXPECT_DOUBLE_EQ(socket_memory_bytes_per_s(find_builtin_node_template("gb200_nvl72").cpu), 512e9);  // Grace LPDDR5X
  EXPECT_DOUBLE_EQ(socket_memory_bytes_per_s(find_builtin_node_template("gh200_1gpu").cpu), 512e9);
  EXPECT_DOUBLE_EQ(socket_memory_bytes_per_s(find_builtin_node_template("dgx1v_1gpu").cpu),
                   4 * 2400e6 * 8);  // E5-2698 v4
  EXPECT_EQ(socket_memory_bytes_per_s("single socket"), 0.0);
  // 1e9 parameters x 30 B over 204.8 GB/s x 0.7 shared by 4 GPUs: 30e9 / 35.84e9 = 0.837 s.
  EXPECT_NEAR(cpu_adam_seconds(1e9, 204.8e9, 0.7, 4), 30e9 / (204.8e9 * 0.7 / 4), 1e-12);
}

TEST(Offload, HostCopiesShareThePcieSwitchUplink) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  ClusterSpec spec;
  spec.node_template = "dgx_a100";  // 4 PCIe gen4 switches, 2 GPUs each
  const Cluster cluster(spec, net);
  CollectiveEngine coll(sim, net, cluster);
  // GPUs 0 and 1 sit under switch 0: their device-to-host copies share its uplink
  // (31.5 GB/s x 0.762 achievable), so each gets half.
  const double bytes = 1e9;
  const double link = pcie_bytes_per_s(4, 16) * LinkEfficiency::pcie;
  const int same[] = {0, 1};
  EXPECT_NEAR(coll.host_copy_seconds(same, bytes, true), 2 * bytes / link, 1e-9);
  EXPECT_NEAR(coll.host_copy_rate_cap(0, false), link / 2, 1e-6);
  // Simulated: the flows land on the GPU's pcie_up and the switch uplink.
  coll.start_host_copy(same, bytes, true, nullptr, 0);
  sim.run();
  EXPECT_NEAR(sim.now().seconds(), 2 * bytes / link, 1e-6);
  const auto route = cluster.host_route(0, true);
  ASSERT_EQ(route.size(), 2u);
  EXPECT_NEAR(net.stats(route[0]).bytes_carried, bytes, 1.0);      // GPU 0's own link
  EXPECT_NEAR(net.stats(route[1]).bytes_carried, 2 * bytes, 1.0);  // the shared uplink
  EXPECT_THROW(cluster.host_route(8, true), std::out_of_range);
}

/// A Llama-2-7B-shaped model (4 layers) on one DGX A100, DP 8 with ZeRO-1.
Scenario llama_dp8() {
  Scenario sc;
  sc.name = std::string("t");
  sc.cluster.node_template = std::string("dgx_a100");  // (a temporary: GCC 12 -Wrestrict false positive)
  sc.model.num_layers = 4;
  sc.model.hidden_size = 4096;
  sc.model.num_attention_heads = 32;
  sc.model.ffn_hidden_size = 11008;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 2048;
  sc.model.gated_mlp = true;
  sc.model.untied_embeddings = true;
  sc.parallel.dp = 8;
  sc.parallel.zero_stage = 1;
  sc.training.global_batch_size = 16;
  return sc;
}

TEST(Offload, OptimizerStateLeavesHbm) {
  Scenario sc = llama_dp8();
  const Report gpu = simulate_training(sc);
  sc.offload.optimizer = true;
  const Report off = simulate_training(sc);
  // ZeRO-1 over 8: 12 B/param of Adam state / 8 on the GPU; with offload none, and the host
  // holds that plus a 4 B fp32 gradient buffer per shard parameter: 16 x P / 8.
  const double params = total_parameters(sc.model);
  EXPECT_NEAR(gpu.memory.optimizer_bytes, 12 * params / 8, 1e-6 * params);
  EXPECT_EQ(off.memory.optimizer_bytes, 0.0);
  EXPECT_NEAR(off.memory.host_bytes, 16 * params / 8, 1e-6 * params);
  EXPECT_NEAR(gpu.memory.peak_bytes_per_gpu - off.memory.peak_bytes_per_gpu, 12 * params / 8, 1e-6 * params);
  EXPECT_EQ(gpu.memory.host_bytes, 0.0);
}

TEST(Offload, CpuStepAndCopiesCostTime) {
  Scenario sc = llama_dp8();
  const Report gpu = simulate_training(sc);
  sc.offload.optimizer = true;
  const Report off = simulate_training(sc);
  EXPECT_EQ(gpu.breakdown.offload_s, 0.0);
  // The CPU-Adam step by hand: P/8 parameters x 30 B over 204.8 GB/s x 0.7 / 4 GPUs per socket;
  // the parameter copy back: P/8 x 2 B over one PCIe gen4 uplink shared by 2 GPUs at 0.762.
  const double shard = total_parameters(sc.model) / 8;
  const double adam = shard * 30 / (204.8e9 * 0.7 / 4);
  const double h2d = 2 * shard * 2 / (pcie_bytes_per_s(4, 16) * LinkEfficiency::pcie);
  EXPECT_GE(off.breakdown.offload_s, adam + h2d - 1e-6);
  EXPECT_GT(off.iteration_time_s, gpu.iteration_time_s + adam);
  // GPU kernels: the GPU's own Adam step is gone.
  EXPECT_EQ(off.breakdown.optimizer_s, 0.0);
}

TEST(Offload, SlowerPcieOrHostMemoryIsSlower) {
  Scenario sc = llama_dp8();
  sc.offload.optimizer = true;
  const Report base = simulate_training(sc);
  // Half the achievable PCIe bandwidth (a calibration profile's fitted efficiency).
  auto profile = std::make_shared<CalibrationProfile>();
  profile->link_efficiency[static_cast<std::size_t>(LinkKind::pcie)] = LinkEfficiency::pcie / 2;
  Scenario slow_pcie = sc;
  slow_pcie.cluster.profile = profile;
  const Report p = simulate_training(slow_pcie);
  EXPECT_GT(p.iteration_time_s, base.iteration_time_s);
  EXPECT_GT(p.breakdown.offload_s, base.breakdown.offload_s);
  // Half the host-memory bandwidth: the CPU-Adam step doubles.
  Scenario slow_dram = sc;
  slow_dram.offload.host_memory_bytes_per_s = 204.8e9 / 2;
  const Report d = simulate_training(slow_dram);
  const double adam = total_parameters(sc.model) / 8 * 30 / (204.8e9 * 0.7 / 4);
  EXPECT_NEAR(d.iteration_time_s - base.iteration_time_s, adam, 0.02 * adam);
}

TEST(Offload, SingleGpuCopiesShowOnItsPcieLinks) {
  // One A30 on a PCIe gen4 switch: with DP 1 the only PCIe traffic is the offload's, so the
  // busiest links are the GPU's PCIe link and the switch uplink.
  Scenario sc = llama_dp8();
  sc.cluster.node_template = std::string("pcie_1gpu_ib_hdr");
  sc.model.num_layers = 2;
  sc.model.seq_length = 1024;
  sc.parallel.dp = 1;
  sc.parallel.zero_stage = 0;
  sc.training.global_batch_size = 2;
  sc.offload.optimizer = true;
  const Report r = simulate_training(sc);
  ASSERT_GE(r.busiest_links.size(), 2u);
  for (int i = 0; i < 2; ++i) EXPECT_NE(r.busiest_links[i].name.find("pcie"), std::string::npos) << i;
  // Every iteration moves the fp32 gradients down (4 B/param) and 16-bit parameters up (2 B).
  const double params = total_parameters(sc.model);
  double d2h = 0, h2d = 0;
  for (const LinkUsage& l : r.busiest_links) {  // the GPU link or the switch uplink, each way
    if (l.name.find("_up") != std::string::npos) d2h = l.bytes;
    if (l.name.find("_down") != std::string::npos) h2d = l.bytes;
  }
  EXPECT_NEAR(d2h, 4 * params, 1e-6 * params);
  EXPECT_NEAR(h2d, 2 * params, 1e-6 * params);
}

}  // namespace
}  // namespace traincast::models
