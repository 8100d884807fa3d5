// Cluster: resources per template, route bandwidths, rails/PXN, oversubscription, ECMP.

#include "models/hardware/cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "models/hardware/network_size.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

ClusterSpec make_spec(const std::string& tmpl, int nodes) {
  ClusterSpec s;
  s.node_template = tmpl;
  s.num_nodes = nodes;
  return s;
}

double path_bandwidth(const sim::FlowNetwork& net, std::span<const sim::ResourceId> path) {
  double bw = 1e300;
  for (auto r : path) bw = std::min(bw, net.capacity(r));
  return bw;
}

std::int64_t path_latency_ns(const sim::FlowNetwork& net, std::span<const sim::ResourceId> path) {
  std::int64_t ns = 0;
  for (auto r : path) ns += net.latency(r).ns();
  return ns;
}

std::vector<std::string> names(const sim::FlowNetwork& net, std::span<const sim::ResourceId> path) {
  std::vector<std::string> out;
  for (auto r : path) out.push_back(net.resource_name(r));
  return out;
}

struct Fixture {
  explicit Fixture(const ClusterSpec& spec) : net(sim), cluster(spec, net) {}
  sim::Simulator sim;
  sim::FlowNetwork net;
  Cluster cluster;
};

TEST(Cluster, DgxA100SingleNodeCounts) {
  Fixture f(make_spec("dgx_a100", 1));
  EXPECT_EQ(f.cluster.num_gpus(), 8);
  EXPECT_EQ(f.cluster.num_nodes(), 1);
  EXPECT_EQ(f.cluster.gpus_per_node(), 8);
  EXPECT_EQ(f.cluster.gpu_spec(0).name, "A100-SXM4-80GB");
  // 8 GPUs x (nvl_up, nvl_down, pcie_up, pcie_down) + 4 PCIe switches x (uplink up, down) + 2
  // socket links (0->1, 1->0) + 8 NICs x (pcie_up, pcie_down); a single node has no NIC cables.
  EXPECT_EQ(f.net.num_resources(), 8u * 4 + 4u * 2 + 2 + 8u * 2);
  EXPECT_EQ(f.cluster.edges().size(), f.net.num_resources());
  EXPECT_EQ(f.cluster.num_spines(), 0);
}

TEST(Cluster, TwoDgxH100Counts) {
  Fixture f(make_spec("dgx_h100", 2));
  EXPECT_EQ(f.cluster.num_gpus(), 16);
  EXPECT_EQ(f.cluster.node_of(9), 1);
  EXPECT_EQ(f.cluster.local_rank(9), 1);
  // Per node 8 x 4 GPU resources + 8 x 2 switch uplinks (one switch per GPU and its NIC) + 2 socket
  // links + 8 x 4 NIC resources (pcie up/down, tx, rx); both nodes under the same rail leaves: no spine.
  EXPECT_EQ(f.net.num_resources(), 2u * (32 + 16 + 2 + 32));
  EXPECT_EQ(f.cluster.num_leaves(), 8);
  EXPECT_EQ(f.cluster.num_spines(), 0);
}

TEST(Cluster, IntraNodePathIsNvlinkBound) {
  Fixture a(make_spec("dgx_a100", 1));
  // NVLink3: 12 x 25 GB/s per direction.
  EXPECT_DOUBLE_EQ(path_bandwidth(a.net, a.cluster.route(0, 5)), 300e9);
  EXPECT_EQ(names(a.net, a.cluster.route(0, 5)),
            (std::vector<std::string>{"node0.gpu0.nvl_up", "node0.gpu5.nvl_down"}));
  Fixture h(make_spec("dgx_h100", 1));
  EXPECT_DOUBLE_EQ(path_bandwidth(h.net, h.cluster.route(7, 2)), 450e9);
  EXPECT_EQ(a.cluster.link_kind(a.cluster.route(0, 5)[0]), LinkKind::nvlink);
}

TEST(Cluster, InterNodePathIsNicBoundAndRailAligned) {
  Fixture f(make_spec("dgx_h100", 2));
  auto p = f.cluster.route(3, 8 + 3);
  EXPECT_DOUBLE_EQ(path_bandwidth(f.net, p), 50e9);  // NDR 400 Gb/s
  EXPECT_EQ(names(f.net, p), (std::vector<std::string>{"node0.gpu3.pcie_up", "node0.nic3.pcie_down", "node0.nic3.tx",
                                                       "node1.nic3.rx", "node1.nic3.pcie_up", "node1.gpu3.pcie_down"}));
  // Adapter latency 600 ns (ConnectX-7) + one leaf switch hop of 130 ns.
  EXPECT_EQ(path_latency_ns(f.net, p), 600 + 130);
  EXPECT_EQ(f.cluster.link_kind(p[2]), LinkKind::nic);

  Fixture a(make_spec("dgx_a100", 2));
  EXPECT_DOUBLE_EQ(path_bandwidth(a.net, a.cluster.route(0, 8)), 25e9);  // HDR 200 Gb/s
}

TEST(Cluster, CrossRailUsesPxn) {
  Fixture f(make_spec("dgx_h100", 2));
  // GPU 2 of node 0 to GPU 5 of node 1: NVLink to local GPU 5, then rail 5.
  auto p = f.cluster.route(2, 8 + 5);
  EXPECT_EQ(names(f.net, p), (std::vector<std::string>{"node0.gpu2.nvl_up", "node0.gpu5.nvl_down", "node0.gpu5.pcie_up",
                                                       "node0.nic5.pcie_down", "node0.nic5.tx", "node1.nic5.rx",
                                                       "node1.nic5.pcie_up", "node1.gpu5.pcie_down"}));
}

// NCCL's PXN rule (src/graph/paths.cc): the relay only when the NIC's GPU reaches it under a
// switch and either has the faster path or the sender's own path crosses the host.
TEST(Cluster, PxnOnlyWhereNcclTakesIt) {
  Fixture a(make_spec("dgx_a100", 2));
  // DGX A100: GPUs 0-1 and NICs 0-1 share a PCIe switch. GPU 0 to rail 1: its own path to NIC 1
  // stays in the switch at the same width as GPU 1's: no relay.
  EXPECT_EQ(names(a.net, a.cluster.route(0, 8 + 1)),
            (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.nic1.pcie_down", "node0.nic1.tx", "node1.nic1.rx",
                                      "node1.nic1.pcie_up", "node1.gpu1.pcie_down"}));
  // GPU 0 to rail 2 (NIC 2 on the next switch): its own path crosses the root complex, so it
  // relays through GPU 2 over NVLink.
  const auto far = names(a.net, a.cluster.route(0, 8 + 2));
  ASSERT_GE(far.size(), 3u);
  EXPECT_EQ(far[0], "node0.gpu0.nvl_up");
  EXPECT_EQ(far[1], "node0.gpu2.nvl_down");
  EXPECT_EQ(far[2], "node0.gpu2.pcie_up");

  // GPU 0's PCIe link at half width (an override, as a link trained at x8): GPU 1 now has the
  // faster path to NIC 1, so GPU 0 relays through it.
  ClusterSpec slow = make_spec("dgx_a100", 2);
  slow.overrides.push_back({.select = "node0.gpu0.pcie_up", .bandwidth_factor = 0.5});
  Fixture b(slow);
  const auto relayed = names(b.net, b.cluster.route(0, 8 + 1));
  ASSERT_GE(relayed.size(), 3u);
  EXPECT_EQ(relayed[0], "node0.gpu0.nvl_up");
  EXPECT_EQ(relayed[1], "node0.gpu1.nvl_down");
  EXPECT_EQ(relayed[2], "node0.gpu1.pcie_up");
}

TEST(Cluster, OversubscriptionDividesUplinks) {
  ClusterSpec s = make_spec("dgx_h100", 64);
  s.fabric.nodes_per_leaf = 32;
  s.fabric.oversubscription = 2.0;
  s.fabric.routing = FabricRouting::d_mod_k;  // one resource per up-link (adaptive pools them)
  Fixture f(s);
  // 2 leaf groups x 8 rails = 16 leaves; 32 down ports of 50 GB/s / 2 = 800 GB/s up per leaf,
  // spread over 16 spines of 50 GB/s each.
  EXPECT_EQ(f.cluster.num_leaves(), 16);
  EXPECT_EQ(f.cluster.num_spines(), 16);
  auto p = f.cluster.route(0, 40 * 8);  // node 0 -> node 40 (other group), rail 0
  ASSERT_EQ(p.size(), 8u);
  EXPECT_EQ(f.cluster.link_kind(p[3]), LinkKind::fabric);
  EXPECT_DOUBLE_EQ(f.net.capacity(p[3]) * f.cluster.num_spines(), 32 * 50e9 / 2.0);
  // Three switch hops (leaf, spine, leaf) + adapters.
  EXPECT_EQ(path_latency_ns(f.net, p), 600 + 3 * 130);

  ClusterSpec nb = make_spec("dgx_h100", 64);
  nb.fabric.routing = FabricRouting::d_mod_k;
  Fixture g(nb);  // defaults: 32 nodes per leaf, non-blocking
  auto q = g.cluster.route(0, 40 * 8);
  EXPECT_DOUBLE_EQ(g.net.capacity(q[3]) * g.cluster.num_spines(), 32 * 50e9);
}

TEST(Cluster, EcmpIsDeterministicAndSpreads) {
  ClusterSpec s = make_spec("dgx_a100", 8);
  s.fabric.nodes_per_leaf = 2;
  Fixture a(s), b(s);
  std::set<std::string> spines;
  for (int src = 0; src < 8; ++src) {
    for (int dst = 48; dst < 64; ++dst) {
      auto pa = a.cluster.route(src, dst);
      auto pb = b.cluster.route(src, dst);
      ASSERT_EQ(names(a.net, pa), names(b.net, pb));
      for (auto r : pa) {
        if (a.cluster.link_kind(r) == LinkKind::fabric) spines.insert(a.net.resource_name(r));
      }
    }
  }
  EXPECT_GT(spines.size(), 4u);
  // Cached: the same span twice.
  EXPECT_EQ(a.cluster.route(1, 50).data(), a.cluster.route(1, 50).data());
}

TEST(Cluster, FatTreeSharesLeafAcrossRails) {
  ClusterSpec s = make_spec("dgx_a100", 4);
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.nodes_per_leaf = 2;
  s.fabric.oversubscription = 4.0;
  s.fabric.routing = FabricRouting::d_mod_k;
  Fixture f(s);
  EXPECT_EQ(f.cluster.num_leaves(), 2);
  // 2 nodes x 8 NICs = 16 down ports / 4 = 4 uplinks.
  EXPECT_EQ(f.cluster.num_spines(), 4);
  EXPECT_EQ(f.cluster.route(0, 8).size(), 6u);   // same leaf: no spine
  EXPECT_EQ(f.cluster.route(0, 16).size(), 8u);  // other leaf: via a spine
  EXPECT_DOUBLE_EQ(f.net.capacity(f.cluster.route(0, 16)[3]), 25e9);
}

TEST(Cluster, Mi300xMesh) {
  Fixture f(make_spec("mi300x_platform", 1));
  auto p = f.cluster.route(0, 1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_DOUBLE_EQ(f.net.capacity(p[0]), 64e9);
  EXPECT_DOUBLE_EQ(f.cluster.scale_up_bytes_per_s(), 7 * 64e9);
}

TEST(Cluster, RouteSpansStayValid) {
  Fixture f(make_spec("dgx_h100", 4));
  auto first = f.cluster.route(0, 9);
  const std::vector<std::string> before = names(f.net, first);
  for (int s = 0; s < 32; ++s) {
    for (int d = 0; d < 32; ++d) {
      if (s != d) f.cluster.route(s, d);
    }
  }
  EXPECT_EQ(names(f.net, first), before);
}

TEST(Cluster, Errors) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  ClusterSpec s = make_spec("dgx_h100", 2);
  s.fabric.kind = FabricKind::none;
  try {
    Cluster c(s, net);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cluster.fabric.kind: none allows a single node (got num_nodes = 2)");
  }
  try {
    Cluster c(make_spec("dgx_h100", 0), net);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cluster.num_nodes: must be > 0 (got 0)");
  }
  ClusterSpec o = make_spec("dgx_h100", 2);
  o.fabric.oversubscription = 0.5;
  EXPECT_THROW(Cluster(o, net), std::invalid_argument);
  EXPECT_THROW(Cluster(make_spec("dgx_nope", 1), net), std::invalid_argument);

  Fixture f(make_spec("dgx_a100", 1));
  EXPECT_THROW(f.cluster.route(0, 8), std::out_of_range);
  EXPECT_THROW(f.cluster.route(-1, 2), std::out_of_range);
  EXPECT_THROW(f.cluster.route(3, 3), std::out_of_range);
}

TEST(Cluster, GpuOverride) {
  ClusterSpec s = make_spec("dgx_h100", 1);
  s.gpu = "H800-SXM5-80GB";
  Fixture f(s);
  EXPECT_EQ(f.cluster.gpu_spec(0).name, "H800-SXM5-80GB");
  EXPECT_DOUBLE_EQ(path_bandwidth(f.net, f.cluster.route(0, 1)), 200e9);  // 8 x 25 GB/s
  // The A800 on the HGX A100 baseboard: its own 8 NVLink3 links, not the A100's 12 (300 GB/s).
  ClusterSpec a = make_spec("dgx_a100", 1);
  a.gpu = "A800-SXM4-80GB";
  Fixture fa(a);
  EXPECT_DOUBLE_EQ(fa.cluster.scale_up_bytes_per_s(), 200e9);
  EXPECT_DOUBLE_EQ(path_bandwidth(fa.net, fa.cluster.route(0, 1)), 200e9);
}

TEST(Cluster, DescribeNamesDevicesAndBandwidths) {
  Fixture f(make_spec("dgx_a100", 2));
  const std::string d = f.cluster.describe();
  EXPECT_NE(d.find("2 x dgx_a100"), std::string::npos) << d;
  EXPECT_NE(d.find("NVLink3 12 links x 25 GB/s = 300 GB/s per direction"), std::string::npos) << d;
  EXPECT_NE(d.find("8 x IB-HDR-200 at 25 GB/s"), std::string::npos) << d;
  EXPECT_NE(d.find("PCIe gen4: 31.51 GB/s"), std::string::npos) << d;
  EXPECT_NE(d.find("rail_optimized"), std::string::npos) << d;
}

// ---- Node templates of issue 3: device and link counts, path bandwidths. ----

TEST(Cluster, PcieServerSwitchesSocketsAndP2p) {
  Fixture f(make_spec("pcie_8gpu_2socket", 1));
  // 8 GPUs x 2 PCIe + 4 switches x 2 uplinks + 2 socket links + 4 NICs x 2 = 34 (no NVLink).
  EXPECT_EQ(f.net.num_resources(), 8u * 2 + 4u * 2 + 2 + 4u * 2);
  EXPECT_FALSE(f.cluster.has_scale_up());
  // Same switch (GPUs 0, 1): x16 gen4 down and up, 31.5 GB/s, no uplink.
  EXPECT_EQ(names(f.net, f.cluster.route(0, 1)),
            (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.gpu1.pcie_down"}));
  EXPECT_NEAR(path_bandwidth(f.net, f.cluster.route(0, 1)), 31.51e9, 0.01e9);
  // Other switch, same socket (0 -> 2): through both uplinks.
  EXPECT_EQ(names(f.net, f.cluster.route(0, 2)),
            (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.pcie_sw0.uplink_up", "node0.pcie_sw1.uplink_down",
                                      "node0.gpu2.pcie_down"}));
  // Other socket (0 -> 5): UPI at NCCL's Skylake-class figure, 10 GB/s.
  EXPECT_EQ(names(f.net, f.cluster.route(0, 5)),
            (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.pcie_sw0.uplink_up", "node0.cpu0->cpu1",
                                      "node0.pcie_sw2.uplink_down", "node0.gpu5.pcie_down"}));
  EXPECT_DOUBLE_EQ(path_bandwidth(f.net, f.cluster.route(0, 5)), 10e9);
  EXPECT_EQ(f.cluster.link_kind(f.cluster.route(0, 5)[2]), LinkKind::socket);
  EXPECT_EQ(f.cluster.socket_of_gpu(5), 1);
  // Without P2P the bytes are staged through host memory even under one switch.
  ClusterSpec s = make_spec("pcie_8gpu_2socket", 1);
  s.pcie_p2p = false;
  Fixture g(s);
  EXPECT_EQ(g.cluster.route(0, 1).size(), 4u);  // pcie_up, uplink_up, uplink_down, pcie_down
}

TEST(Cluster, WorkstationAndConsumerTemplates) {
  Fixture w(make_spec("workstation_4gpu_pcie", 1));
  // 4 GPUs x 2 + 1 switch x 2 + 1 NIC x 2; one socket: no socket links.
  EXPECT_EQ(w.net.num_resources(), 4u * 2 + 2 + 2);
  for (int b = 1; b < 4; ++b) EXPECT_EQ(w.cluster.route(0, b).size(), 2u);
  // tinybox: GPUs on root ports of one socket, P2P on: GPU -> root complex -> GPU.
  Fixture t(make_spec("tinybox_6x4090", 1));
  EXPECT_EQ(names(t.net, t.cluster.route(0, 5)),
            (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.gpu5.pcie_down"}));
  EXPECT_EQ(t.net.num_resources(), 6u * 2 + 1 * 2);
  // 2x 2080 Ti without P2P under one gen3 switch: both directions share the switch uplink.
  Fixture c(make_spec("consumer_2x2080ti_nop2p", 1));
  EXPECT_EQ(names(c.net, c.cluster.route(0, 1)),
            (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.pcie_sw0.uplink_up", "node0.pcie_sw0.uplink_down",
                                      "node0.gpu1.pcie_down"}));
  EXPECT_NEAR(path_bandwidth(c.net, c.cluster.route(0, 1)), 15.75e9, 0.01e9);
}

TEST(Cluster, NvlinkBridgePairsAndMeshes) {
  Fixture a(make_spec("a30_4gpu_bridged", 1));
  // A30 bridge: 4 NVLink3 links x 25 GB/s = 100 GB/s per direction between 0 and 1 only.
  EXPECT_EQ(names(a.net, a.cluster.route(0, 1)), (std::vector<std::string>{"node0.gpu0.bridge->gpu1"}));
  EXPECT_DOUBLE_EQ(path_bandwidth(a.net, a.cluster.route(0, 1)), 100e9);
  EXPECT_TRUE(a.cluster.nvlink_between(2, 3));
  EXPECT_FALSE(a.cluster.nvlink_between(1, 2));
  EXPECT_EQ(a.cluster.link_kind(a.cluster.route(1, 2)[0]), LinkKind::pcie);
  // 4 GPUs x 2 PCIe + 2 bridges x 2 directions + 2 switches x 2 + 1 NIC x 2.
  EXPECT_EQ(a.net.num_resources(), 4u * 2 + 4 + 4 + 2);
  Fixture h(make_spec("hgx_a100_4gpu", 1));
  // NVLink3 mesh of 4: 12 links / 3 peers = 4 links = 100 GB/s per pair and direction.
  EXPECT_DOUBLE_EQ(path_bandwidth(h.net, h.cluster.route(1, 3)), 100e9);
  EXPECT_DOUBLE_EQ(h.cluster.scale_up_bytes_per_s(), 300e9);
  Fixture k(make_spec("kestrel_h100_4gpu", 2));
  // HGX H100 4-GPU: 18 links / 3 = 6 links = 150 GB/s per pair.
  EXPECT_DOUBLE_EQ(path_bandwidth(k.net, k.cluster.route(0, 2)), 150e9);
}

TEST(Cluster, NicAffinityGpuDirectAndWrongSocket) {
  // DGX H100: NIC 3 sits on GPU 3's PCIe switch: GPUDirect goes GPU -> switch -> NIC.
  Fixture f(make_spec("dgx_h100", 2));
  EXPECT_EQ(f.cluster.route(3, 11).size(), 6u);
  // GPUDirect RDMA off: through the root complex (switch uplink) on both sides.
  ClusterSpec nogdr = make_spec("dgx_h100", 2);
  nogdr.gpu_direct_rdma = false;
  Fixture g(nogdr);
  EXPECT_EQ(
      names(g.net, g.cluster.route(3, 11)),
      (std::vector<std::string>{"node0.gpu3.pcie_up", "node0.pcie_sw3.uplink_up", "node0.pcie_sw3.uplink_down",
                                "node0.nic3.pcie_down", "node0.nic3.tx", "node1.nic3.rx", "node1.nic3.pcie_up",
                                "node1.pcie_sw3.uplink_up", "node1.pcie_sw3.uplink_down", "node1.gpu3.pcie_down"}));
  // NICs on the other socket: NIC 3 (cabled for GPU 3) sits beside GPU 7, and a byte from GPU 3
  // through it crosses UPI (Sapphire Rapids figure 22 GB/s < 50). GPU 3's own NIC is now NIC 7,
  // beside it (NCCL's ncclTopoGetLocalNet; p2p's receiver takes its own), so its p2p route
  // (destination GPU 11's NIC, NIC 7 too) stays under the switch: a relabelling of affine.
  ClusterSpec wrong = make_spec("dgx_h100", 2);
  wrong.nic_placement = NicPlacement::other_socket;
  Fixture w(wrong);
  EXPECT_EQ(w.cluster.socket_of_nic(3), 1);
  EXPECT_EQ(w.cluster.gpu_of_nic(3), 7);
  EXPECT_EQ(w.cluster.cabled_gpu_of_nic(3), 3);
  EXPECT_EQ(w.cluster.nic_of_local(3), 7);
  EXPECT_DOUBLE_EQ(path_bandwidth(w.net, w.cluster.route(3, 11, 3)), 22e9);
  EXPECT_DOUBLE_EQ(path_bandwidth(w.net, w.cluster.route(3, 11)), 50e9);
  EXPECT_EQ(w.cluster.route(3, 11).size(), f.cluster.route(3, 11).size());
  // 16 NICs for 8 GPUs (OCI BM.GPU4.8): GPU 1 owns NICs 2 and 3.
  Fixture o(make_spec("oci_bm_gpu4_8", 2));
  EXPECT_EQ(o.cluster.nic_of_local(1), 2);
  EXPECT_EQ(o.cluster.gpu_of_nic(3), 1);
  EXPECT_EQ(names(o.net, o.cluster.route(1, 9, 3))[1], "node0.nic3.pcie_down");
  // 5 NICs for 8 GPUs (a count that does not divide them): each NIC sits beside the first GPU it
  // serves (fresh-user finding: NIC 2, serving GPUs 4 and 5, sat beside GPU 3 across the socket).
  ClusterSpec five = make_spec("dgx_h100", 2);
  five.nics_per_node = 5;
  Fixture fv(five);
  for (int nic = 0; nic < 5; ++nic) {
    const int gpu = fv.cluster.gpu_of_nic(nic);
    EXPECT_EQ(fv.cluster.nic_of_local(gpu), nic) << "NIC " << nic << " beside GPU " << gpu;
    EXPECT_TRUE(gpu == 0 || fv.cluster.nic_of_local(gpu - 1) != nic) << "NIC " << nic << " beside GPU " << gpu;
  }
  EXPECT_EQ(fv.cluster.gpu_of_nic(2), 4);
}

TEST(Cluster, ThreeTierFatTreeAndCableLength) {
  ClusterSpec s = make_spec("dgx_h100", 256);
  s.fabric.tiers = 3;
  s.fabric.nodes_per_leaf = 16;
  s.fabric.leaves_per_pod = 4;
  s.fabric.cable_length_m = 30;
  Fixture f(s);
  // 16 leaf groups x 8 rails = 128 leaves; 4 groups per pod -> 4 pods; 16 aggregation uplinks.
  EXPECT_EQ(f.cluster.num_leaves(), 128);
  // Same pod, other leaf (node 0 -> node 16): leaf -> agg -> leaf.
  auto p = f.cluster.route(0, 16 * 8);
  EXPECT_EQ(p.size(), 8u);
  // Other pod (node 0 -> node 64): leaf -> agg -> core -> agg -> leaf.
  auto q = f.cluster.route(0, 64 * 8);
  EXPECT_EQ(q.size(), 10u);
  // Latency: adapters 600 + 5 switch hops x 130 ns + 6 cables x 30 m x 5 ns/m.
  EXPECT_EQ(path_latency_ns(f.net, q), 600 + 5 * 130 + 6 * 150);
  EXPECT_DOUBLE_EQ(path_bandwidth(f.net, q), 50e9);
}

TEST(Cluster, TorusRoutesDimensionOrder) {
  ClusterSpec s = make_spec("dgx_h100", 16);
  s.fabric.kind = FabricKind::torus;
  s.fabric.torus_dims = {4, 4};
  Fixture f(s);
  // Node 0 (0,0) to node 10 (2,2): 2 hops in x, then 2 in y.
  auto p = f.cluster.route(0, 10 * 8);
  std::vector<std::string> fabric;
  for (auto r : p) {
    if (f.cluster.link_kind(r) == LinkKind::fabric) fabric.push_back(f.net.resource_name(r));
  }
  EXPECT_EQ(fabric,
            (std::vector<std::string>{"node0.router.d0+", "node1.router.d0+", "node2.router.d1+", "node6.router.d1+"}));
  // Node 0 to node 3 (3,0): one hop the other way round.
  auto q = f.cluster.route(0, 3 * 8);
  EXPECT_EQ(f.net.resource_name(q[3]), "node0.router.d0-");
  // Each link: 8 NICs x 50 GB/s / (2 x 2 dimensions) = 100 GB/s.
  EXPECT_DOUBLE_EQ(f.net.capacity(q[3]), 100e9);
  ClusterSpec bad = s;
  bad.fabric.torus_dims = {4, 3};
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  try {
    Cluster c(bad, net);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cluster.fabric.torus_dims: product 12 != num_nodes 16");
  }
}

// A dimension of extent 2 has one neighbour: one link each way takes that direction's share of the
// NICs (session 36; before, a second link each way to the same node went unused, ties routing +).
TEST(Cluster, TorusDimensionOfExtentTwoIsOneDirection) {
  ClusterSpec s = make_spec("dgx_h100", 8);
  s.fabric.kind = FabricKind::torus;
  s.fabric.torus_dims = {2, 4};
  s.nics_per_node = 6;  // 3 directions: + and - in the extent-4 dimension, one in the extent-2 one
  Fixture f(s);
  std::vector<std::string> fabric;
  for (auto r : f.cluster.route(8, 0)) {  // node 1 (1,0) to node 0 (0,0)
    if (f.cluster.link_kind(r) != LinkKind::fabric) continue;
    fabric.push_back(f.net.resource_name(r));
    EXPECT_DOUBLE_EQ(f.net.capacity(r), 100e9);  // 6 NICs x 50 GB/s / 3 directions
  }
  EXPECT_EQ(fabric, (std::vector<std::string>{"node1.router.d0+"}));
  EXPECT_EQ(Cluster::network_size(s).resources(), static_cast<std::int64_t>(f.cluster.num_resources()));
  ClusterSpec bad = s;
  bad.nics_per_node = 4;
  try {
    Cluster c(bad);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cluster.nics_per_node: 4 NICs per node do not split evenly over the 3 "
                                          "neighbour directions of a 2x4 torus",
                                          0),
              0u)
        << e.what();
  }
}

TEST(Cluster, DotExport) {
  Fixture f(make_spec("dgx_h100", 2));
  const std::string dot = f.cluster.to_dot();
  EXPECT_EQ(dot.rfind("digraph cluster {", 0), 0u);
  EXPECT_NE(dot.find("\"node0.gpu3\" -> \"node0.nvswitch\" [label=\"450 GB/s NVLink\"]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"leaf3\" -> \"node1.nic3\""), std::string::npos);
  EXPECT_NE(f.cluster.to_dot(1).find("links of nodes >= 1 not drawn"), std::string::npos);
}

TEST(Cluster, EveryTemplateCountsAndRoutes) {
  // For every catalog template on 2 nodes: the resource count follows the template's graph, and
  // every GPU pair has a route whose bottleneck is the scale-up link, the PCIe (or socket) path,
  // or for GPUs on different nodes at most the NIC line rate.
  for (const std::string& name : node_template_names()) {
    SCOPED_TRACE(name);
    const NodeTemplate& t = find_builtin_node_template(name);
    Fixture f(make_spec(name, 2));
    const Cluster& c = f.cluster;
    const int g = t.gpus_per_node, q = t.nics, sockets = std::max(1, t.sockets);
    int links = 0;
    switch (c.scale_up()) {
      case ScaleUp::nvswitch:
        links = 2 * g;
        break;
      case ScaleUp::mesh:
        links = g * (g - 1);
        break;
      case ScaleUp::bridges:
        links = g * (t.bridge_gpus - 1);  // every GPU to each peer of its bridge
        break;
      case ScaleUp::graph:
        links = 2 * static_cast<int>(t.nvlinks.size());  // each listed pair, both ways
        break;
      case ScaleUp::none:
        break;
    }
    const std::size_t per_node =
        static_cast<std::size_t>(2 * g + links + 2 * t.pcie_switches + sockets * (sockets - 1) + 4 * q);
    std::size_t fabric = 0;
    for (const ClusterEdge& e : c.edges()) fabric += c.link_kind(e.resource) == LinkKind::fabric ? 1 : 0;
    EXPECT_EQ(f.net.num_resources(), 2 * per_node + fabric);
    for (int a = 0; a < c.num_gpus(); ++a) {
      for (int b = 0; b < c.num_gpus(); ++b) {
        if (a == b) continue;
        const double bw = path_bandwidth(f.net, c.route(a, b));
        if (c.node_of(a) != c.node_of(b)) {
          EXPECT_LE(bw, c.nic().bytes_per_s);
        } else if (c.nvlink_between(c.local_rank(a), c.local_rank(b))) {
          EXPECT_GE(bw, c.gpu_spec(0).nvlink_bytes_per_s_per_link);
        } else {
          EXPECT_LE(bw, t.pcie_bytes_per_s);
          EXPECT_GT(bw, 0);
        }
      }
    }
  }
}

TEST(Cluster, TableWithoutANetworkIsWhatInstallPutsOnOne) {
  // The network-free cluster has the same resources (ids, capacities, latencies, names, kinds,
  // devices) and routes as one built on a network; install() reproduces them id for id.
  for (const auto& [tmpl, nodes] : {std::pair<std::string, int>{"dgx_h100", 4},
                                    {"mi300x_platform", 2},
                                    {"pcie_8gpu_2socket", 3},
                                    {"a30_4gpu_bridged", 1}}) {
    ClusterSpec spec = make_spec(tmpl, nodes);
    const Cluster table(spec);
    Fixture f(spec);
    ASSERT_EQ(table.num_resources(), f.net.num_resources());
    ASSERT_EQ(table.edges().size(), f.cluster.edges().size());
    for (sim::ResourceId r = 0; r < table.num_resources(); ++r) {
      const ClusterEdge& e = table.resource(r);
      EXPECT_EQ(e.resource, r);
      EXPECT_EQ(table.capacity(r), f.net.capacity(r));
      EXPECT_EQ(table.latency(r), f.net.latency(r));
      EXPECT_EQ(table.resource_name(r), f.net.resource_name(r));
      EXPECT_EQ(table.link_kind(r), f.cluster.link_kind(r));
      EXPECT_EQ(e.from, f.cluster.edges()[r].from);
      EXPECT_EQ(e.to, f.cluster.edges()[r].to);
    }
    for (int a = 0; a < table.num_gpus(); a += 3) {
      for (int b = 0; b < table.num_gpus(); b += 5) {
        if (a == b) continue;
        const auto x = table.route(a, b), y = f.cluster.route(a, b);
        EXPECT_EQ(std::vector<sim::ResourceId>(x.begin(), x.end()), std::vector<sim::ResourceId>(y.begin(), y.end()));
      }
    }
    EXPECT_EQ(table.describe(), f.cluster.describe());
    EXPECT_EQ(table.to_dot(), f.cluster.to_dot());
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    table.install(net);
    ASSERT_EQ(net.num_resources(), table.num_resources());
    for (sim::ResourceId r = 0; r < table.num_resources(); ++r) {
      EXPECT_EQ(net.capacity(r), table.capacity(r));
      EXPECT_EQ(net.resource_name(r), table.resource_name(r));
    }
  }
}

TEST(Cluster, InstallNeedsAnEmptyNetworkAndTheTableChecksIds) {
  const Cluster c(make_spec("dgx_a100", 1));
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  c.install(net);
  try {
    c.install(net);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "Cluster::install: the network already has " + std::to_string(c.num_resources()) +
                  " resources (a cluster is installed on an empty network, so that its resource ids are the "
                  "network's)");
  }
  EXPECT_THROW(Cluster(make_spec("dgx_a100", 1), net), std::invalid_argument);
  try {
    (void)c.capacity(static_cast<sim::ResourceId>(c.num_resources()));
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_EQ(std::string(e.what()), "Cluster::resource: unknown resource id " + std::to_string(c.num_resources()) +
                                         " (cluster has " + std::to_string(c.num_resources()) + ")");
  }
}

}  // namespace
}  // namespace traincast::models
