// NCCL's ring graph search (nccl_topo_search.h): NICs never lower busbw (the L40S series of issue
// 16), the graph it finds, the versions' constants, and forced algorithms that cannot run.

#include "models/collectives/nccl_topo_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/collectives/nccl_tests.h"
#include "models/collectives/nccl_tuning.h"
#include "models/collectives/nccl_versions.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

ClusterSpec two_nodes(const std::string& tmpl, int nics) {
  ClusterSpec c;
  c.node_template = tmpl;
  c.num_nodes = 2;
  c.fabric.kind = FabricKind::fat_tree;
  c.nics_per_node = nics;
  return c;
}

double busbw_gb_per_s(const ClusterSpec& c, NcclTestsOp op) {
  NcclTestsOptions o;
  o.op = op;
  return simulate_nccl_tests(c, o, {kGiB}).front().busbw_gbps;
}

// Issue 16: on 2 x 8 L40S PCIe servers 2 -> 4 -> 8 NICs lowered all_reduce busbw 17.2 -> 11.5 ->
// 10.4 GB/s. NCCL's search never keeps a slower graph than one it has (the 2-NIC graph is still
// feasible with 8 NICs), so busbw is non-decreasing in the NIC count, for every op, forced ring
// and automatic, on every PCIe template with a tree of switches.
TEST(NcclTopoSearch, MoreNicsNeverLowerBusbw) {
  const std::vector<std::string> templates{"pcie_8gpu_2socket", "pcie_8gpu_2socket_h100_nvlink_bridge",
                                           "workstation_4gpu_pcie", "a30_4gpu_bridged", "tinybox_6x4090"};
  const std::vector<NcclTestsOp> ops{NcclTestsOp::all_reduce, NcclTestsOp::all_gather, NcclTestsOp::reduce_scatter,
                                     NcclTestsOp::broadcast, NcclTestsOp::reduce};
  int checked = 0;
  for (const std::string& t : templates) {
    for (CollectiveAlgorithm a : {CollectiveAlgorithm::automatic, CollectiveAlgorithm::ring}) {
      for (NcclTestsOp op : ops) {
        double last = 0;
        for (int nics : {1, 2, 3, 4, 6, 8}) {
          ClusterSpec c = two_nodes(t, nics);
          c.collectives.algorithm = a;
          const double bw = busbw_gb_per_s(c, op);
          EXPECT_GE(bw, last * (1 - 1e-9)) << t << " " << algorithm_name(a) << " " << nccl_tests_op_name(op) << " "
                                           << nics << " NICs: " << bw << " < " << last;
          last = std::max(last, bw);
          ++checked;
        }
      }
    }
  }
  std::printf("NIC series checked: %d points\n", checked);
}

// The 2 x 8 L40S all_reduce of the issue, each NIC count as the issue printed it.
TEST(NcclTopoSearch, L40sAllReduceSeriesIsMonotone) {
  double last = 0;
  for (int nics : {1, 2, 4, 8}) {
    const double bw = busbw_gb_per_s(two_nodes("pcie_8gpu_2socket", nics), NcclTestsOp::all_reduce);
    std::printf("pcie_8gpu_2socket %d NICs: all_reduce busbw %.2f GB/s\n", nics, bw);
    EXPECT_GE(bw, last * (1 - 1e-9)) << nics;
    last = bw;
  }
}

TEST(NcclTopoSearch, RingGraphUsesTheNodesNics) {
  // DGX H100 across 2 nodes: 8 NICs, each PCIe-local to a GPU; the search finds channels on
  // NICs at NVLink-class speed and every channel visits every GPU once.
  ClusterSpec spec;
  spec.node_template = "dgx_h100";
  spec.num_nodes = 2;
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster cluster(spec, net);
  const std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7};
  const NcclTopoGraph g = search_ring_graph(cluster, net, gpus, 8, kNewestNcclVersion);
  ASSERT_FALSE(g.fallback);
  ASSERT_GE(g.search_channels, 1);
  EXPECT_GE(g.channels.size(), static_cast<std::size_t>(g.search_channels));
  for (const NcclTopoChannel& c : g.channels) {
    std::vector<int> seen(8, 0);
    for (int p : c.order) ++seen[p];
    for (int k : seen) EXPECT_EQ(k, 1);
    EXPECT_GE(c.nic_in, 0);
    EXPECT_EQ(c.nic_in, c.nic_out);
  }
  EXPECT_GT(g.bw_gb_per_s, 0);
  EXPECT_LT(g.steps, 1 << 20);  // NCCL's global timeout bounds the search
}

// The open 4 -> 6 NIC case of docs/properties.md (DGX H100, 2 nodes): the NIC pairing is not its
// cause. Every channel enters its node through a NIC on its entry GPU's own PCIe switch (no CPU on
// the NIC -> GPU route) and leaves through the same NIC (crossNic 0). What differs is the channel
// count: 4 NICs give 4 channels at 48 GB/s, which ncclTopoDupChannels doubles (8 at 24 GB/s); 6
// NICs give 6 at 48 GB/s, which it keeps (search.cc ncclTopoDupChannels: ccMin > 80, bwIntra <
// 50, nChannels > 4); 8 NICs give 8 at 45 GB/s. The tree graph has the ring's channels, and the
// tree's per-channel maxima (tuning.cc perChMaxTreeBw x graph channels) then bind at 6, not 8.
TEST(NcclTopoSearch, DgxH100GraphChannelsByNicCount) {
  struct Want {
    int nics, search_channels, graph_channels;
    double bw_gb_per_s;
  };
  for (const Want w : {Want{4, 4, 8, 24.0}, Want{6, 6, 6, 48.0}, Want{8, 8, 8, 45.0}}) {
    ClusterSpec spec;
    spec.node_template = "dgx_h100";
    spec.num_nodes = 2;
    spec.nics_per_node = w.nics;
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const Cluster cluster(spec, net);
    const std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7};
    const NcclTopoGraph g = search_ring_graph(cluster, net, gpus, 8, kNewestNcclVersion);
    EXPECT_EQ(g.search_channels, w.search_channels) << w.nics << " NICs";
    EXPECT_EQ(static_cast<int>(g.channels.size()), w.graph_channels) << w.nics << " NICs";
    EXPECT_DOUBLE_EQ(g.bw_gb_per_s, w.bw_gb_per_s) << w.nics << " NICs";
    for (const NcclTopoChannel& c : g.channels) {
      EXPECT_EQ(c.nic_in, c.nic_out);
      for (auto r : cluster.route(8, c.order[0], c.nic_in)) {
        EXPECT_EQ(cluster.resource(r).to.find(".cpu"), std::string::npos)
            << w.nics << " NICs: nic" << c.nic_in << " -> gpu" << c.order[0] << " crosses " << cluster.resource(r).to;
      }
    }
  }
}

// More NICs than GPUs (issue 16): 2 x DGX H100 with 16 NICs per node, 4 on each PCIe switch with
// its 2 GPUs. Before, the search kept the NICs in type order and tried them all from the first for
// every channel; it spent NCCL's global timeout on the surplus NICs and kept 3 channels at 48 GB/s
// (all_gather busbw 368 -> 144 GB/s, all_reduce 440 -> 230 against 8 NICs). NCCL (NVIDIA/nccl
// src/graph/topo.cc ncclTopoGetLocalNet, 2.28.3, NCCL_NETDEVS_POLICY AUTO) gives each GPU
// DIVUP(local nets, local GPUs) of its switch's NICs from mirrorBits(dev, local nets)
// (OneGpuCommunicatorStartsOnTheNicOfItsDeviceIndex); ncclTopoSelectNets (search.cc) lists those first, and
// ncclTopoSearchRecNet starts channel c at the c-th of them and takes the channel's speed off each
// NIC it enters (net.bw). A GPU's PCIe link still carries one channel at 45-48 GB/s each way
// (NCCL's PCI gen5 x16 figure, 48 GB/s), so 16 NICs give the graph of 8: 8 channels at 45 GB/s
// (8 x 45 = 360 of at most 8 x 48), no dup (ncclTopoDupChannels: bwIntra < 50, nChannels > 4),
// each channel on its own NIC, on its entry GPU's switch, in and out through the same one.
TEST(NcclTopoSearch, DgxH100SixteenNicsKeepTheEightNicGraph) {
  auto graph_of = [](int nics) {
    ClusterSpec spec;
    spec.node_template = "dgx_h100";
    spec.num_nodes = 2;
    spec.nics_per_node = nics;
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const Cluster cluster(spec, net);
    const std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7};
    NcclTopoGraph g = search_ring_graph(cluster, net, gpus, 8, kNewestNcclVersion);
    std::vector<int> nic_used(static_cast<std::size_t>(nics), 0);
    for (const NcclTopoChannel& c : g.channels) {
      EXPECT_EQ(c.nic_in, c.nic_out) << nics << " NICs";
      ++nic_used[static_cast<std::size_t>(c.nic_in)];
      for (auto r : cluster.route(8, c.order[0], c.nic_in))
        EXPECT_EQ(cluster.resource(r).to.find(".cpu"), std::string::npos) << nics << " NICs: nic" << c.nic_in;
    }
    for (int k : nic_used) EXPECT_LE(k, 1) << nics << " NICs: a NIC carries one channel at 45 GB/s";
    return g;
  };
  const NcclTopoGraph eight = graph_of(8), sixteen = graph_of(16);
  EXPECT_EQ(sixteen.search_channels, 8);
  EXPECT_EQ(sixteen.channels.size(), 8u);
  EXPECT_DOUBLE_EQ(sixteen.bw_gb_per_s, 45.0);
  EXPECT_EQ(sixteen.type_inter, eight.type_inter);
  EXPECT_EQ(eight.channels.size(), 8u);
  EXPECT_DOUBLE_EQ(eight.bw_gb_per_s, 45.0);
}

// Which of several equally close NICs a GPU starts on (ncclTopoGetLocalNet, NCCL_NETDEVS_POLICY
// AUTO): from its device index on the node (gpu.dev), bit-mirrored over the local net count, in
// every modelled release (the 2.28.3-1 source; the 2.1x/2.2x sources alike), whatever GPUs the
// communicator holds. 2 x DGX H100 with 16 NICs, one-GPU-per-node communicators (a data-parallel
// ring): GPU d's local nets are the two NICs on its own PCIe switch (one switch per GPU), 2d and
// 2d + 1 (the others are reached over NVLink through their own GPU, PXN), localGpuCount is 1, so GPU d starts on
// NIC 2d + mirrorBits(d, 2): odd GPUs on their second NIC. (A later release starts from
// gpu.dev % localGpuCount = 0, every GPU on its first NIC: not modelled.)
TEST(NcclTopoSearch, OneGpuCommunicatorStartsOnTheNicOfItsDeviceIndex) {
  ClusterSpec spec = two_nodes("dgx_h100", 16);
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster cluster(spec, net);
  for (const char* version : {"2.18.3", "2.28.3"}) {
    NcclVersion v;
    std::string error;
    ASSERT_TRUE(parse_nccl_version(version, v, error)) << error;
    for (const auto& [gpu, nic] : std::vector<std::pair<int, int>>{{0, 0}, {1, 3}, {2, 4}, {3, 7}, {6, 12}}) {
      const std::vector<int> gpus{gpu};
      const NcclTopoGraph g = search_ring_graph(cluster, net, gpus, 8 + gpu, v);
      ASSERT_FALSE(g.channels.empty()) << version << " gpu" << gpu;
      EXPECT_EQ(g.channels.front().nic_in, nic) << version << " gpu" << gpu;
    }
  }
}

// The same 2 x DGX H100, 8 -> 16 NICs per node, never slower at any size: ring all_gather and
// all_reduce, tree all_reduce (each protocol forced and automatic) and the automatic choice.
TEST(NcclTopoSearch, DgxH100SixteenNicsNeverSlowerThanEight) {
  struct Case {
    NcclTestsOp op;
    CollectiveAlgorithm algorithm;
    std::optional<CollectiveProtocol> protocol;  // empty: automatic
  };
  std::vector<Case> cases;
  for (std::optional<CollectiveProtocol> p :
       {std::optional<CollectiveProtocol>{}, std::optional{CollectiveProtocol::simple},
        std::optional{CollectiveProtocol::ll128}}) {
    cases.push_back({NcclTestsOp::all_gather, CollectiveAlgorithm::ring, p});
    cases.push_back({NcclTestsOp::all_reduce, CollectiveAlgorithm::ring, p});
    cases.push_back({NcclTestsOp::all_reduce, CollectiveAlgorithm::tree, p});
  }
  cases.push_back({NcclTestsOp::all_gather, CollectiveAlgorithm::automatic, {}});
  cases.push_back({NcclTestsOp::all_reduce, CollectiveAlgorithm::automatic, {}});
  const std::vector<double> sizes{1 << 20, 16 << 20, 256 << 20, kGiB, 4 * kGiB};
  for (const Case& k : cases) {
    std::vector<std::vector<NcclTestsResult>> rows;
    for (int nics : {8, 16}) {
      ClusterSpec c;
      c.node_template = "dgx_h100";
      c.num_nodes = 2;
      c.nics_per_node = nics;
      c.collectives.algorithm = k.algorithm;
      c.collectives.protocol = k.protocol;
      NcclTestsOptions o;
      o.op = k.op;
      rows.push_back(simulate_nccl_tests(c, o, sizes));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_GE(rows[1][i].busbw_gbps, rows[0][i].busbw_gbps * (1 - 1e-3))
          << nccl_tests_op_name(k.op) << " " << algorithm_name(k.algorithm) << " "
          << (k.protocol ? protocol_name(*k.protocol) : "any") << " " << sizes[i] << " B: 16 NICs "
          << rows[1][i].busbw_gbps << " GB/s < 8 NICs " << rows[0][i].busbw_gbps;
    }
  }
}

// The open 4 -> 6 NIC tree case (docs/properties.md) is NCCL's own prediction, which the model
// follows. NCCL's tuner (src/graph/tuning.cc ncclTopoTuneModel, 2.18-2.2x) takes on <= 2 nodes
// "bw = nNodes <= 2 || collnet ? graphs[a]->bwIntra : graphs[a]->bwInter" of the tree graph,
// which has the ring's channels (src/init.cc: treeGraph->minChannels = maxChannels =
// ringGraph->nChannels: 8, 6, 8 here) and whose pass 2 raises bwIntra to 45-48 GB/s; all_reduce
// busBw = min(nChannels x bw x 0.92, nChannels x perChMaxTreeBw 41.4 (Hopper, 2 nodes)): 331.2,
// 248.4, 331.2 GB/s. nccl-tests' busbw is that x 15/16 (its 2 (n - 1) / n against the tuner's
// algBw = busBw / 2), so forced tree/Simple at 4 GiB reads 310.5, 232.9, 310.5 less the latency.
TEST(NcclTopoSearch, DgxH100TreeFollowsNcclsTunerAcrossNicCounts) {
  for (const auto& [nics, channels] : {std::pair{4, 8}, std::pair{6, 6}, std::pair{8, 8}}) {
    ClusterSpec c;
    c.node_template = "dgx_h100";
    c.num_nodes = 2;
    c.nics_per_node = nics;
    c.collectives.algorithm = CollectiveAlgorithm::tree;
    c.collectives.protocol = CollectiveProtocol::simple;
    NcclTestsOptions o;
    o.op = NcclTestsOp::all_reduce;
    const double busbw = simulate_nccl_tests(c, o, {4 * kGiB}).front().busbw_gbps;
    const double nccl_busbw = channels * 41.4 * 15.0 / 16.0;
    EXPECT_LE(busbw, nccl_busbw) << nics << " NICs";
    EXPECT_GE(busbw, nccl_busbw * 0.99) << nics << " NICs";
  }
}

TEST(NcclTopoSearch, SpeedArraysByVersionAndArchitecture) {
  NcclVersion v;
  std::string why;
  ASSERT_TRUE(parse_nccl_version("2.18.3", v, why));
  EXPECT_EQ(v.code(), 21803);
  EXPECT_EQ(nccl_speed_array(v, 80, false).front(), 48.0);  // speedArrayInter
  EXPECT_EQ(nccl_speed_array(v, 90, true).front(), 40.0);   // no sm90 arrays yet
  EXPECT_EQ(nccl_speed_array(kNewestNcclVersion, 90, true).front(), 60.0);
  EXPECT_EQ(nccl_speed_array(kNewestNcclVersion, 100, false).front(), 96.0);
  ASSERT_TRUE(parse_nccl_version("2.9.9", v, why));
  EXPECT_EQ(nccl_speed_array(v, 80, true).front(), 42.0);  // the single speedArray
  EXPECT_FALSE(nccl_has_pat(v));
  EXPECT_FALSE(nccl_has_nvls(v));
  ASSERT_TRUE(parse_nccl_version("2.23.4", v, why));
  EXPECT_TRUE(nccl_has_pat(v));
}

TEST(NcclTopoSearch, MalformedAndOutOfRangeVersionsAreRefused) {
  NcclVersion v;
  std::string why;
  EXPECT_FALSE(parse_nccl_version("2.x", v, why));
  EXPECT_EQ(why,
            "expected MAJOR.MINOR.PATCH such as 2.18.3 (MAJOR.MINOR means patch 0; no leading zeros) (got \"2.x\")");
  EXPECT_FALSE(parse_nccl_version("2.16.100", v, why));  // would read as 2.17.0 in NCCL's code
  EXPECT_EQ(why, "expected MINOR and PATCH of at most 99, as NCCL's version code has them (got \"2.16.100\")");
  EXPECT_FALSE(parse_nccl_version("2.8.4", v, why));
  EXPECT_EQ(why, "2.8.4 is older than 2.9.0, the oldest modelled release (got \"2.8.4\")");
  EXPECT_FALSE(parse_nccl_version("2.29.1", v, why));
  EXPECT_FALSE(parse_nccl_version("2.18.3-1", v, why));
  EXPECT_FALSE(parse_nccl_version("2.08.0", v, why));  // was read as 2.8.0 (fresh-user finding)
  EXPECT_NE(why.find("no leading zeros) (got \"2.08.0\")"), std::string::npos) << why;
  EXPECT_FALSE(parse_nccl_version("2.18.03", v, why));
  EXPECT_TRUE(parse_nccl_version("2.20.0", v, why));  // a lone 0 is a number, not a leading zero
  EXPECT_FALSE(parse_nccl_version("", v, why));
  EXPECT_EQ(error_of([] { nccl_version_of("3.0.0"); }).rfind("cluster.collectives.nccl_version: ", 0), 0u);
}

TEST(NcclTopoSearch, ForcedAlgorithmThatCannotRunIsRefused) {
  ClusterSpec c = two_nodes("dgx_h100", 8);
  c.collectives.algorithm = CollectiveAlgorithm::tree;
  EXPECT_EQ(error_of([&] { busbw_gb_per_s(c, NcclTestsOp::all_gather); }),
            "cluster.collectives.algorithm: tree cannot run all_gather over 16 GPUs on 2 node(s): NCCL's tree runs "
            "only all_reduce (NCCL: no algorithm available with NCCL_ALGO=tree)");
  EXPECT_GT(busbw_gb_per_s(c, NcclTestsOp::all_reduce), 0);  // what tree can run still runs
  c.collectives.algorithm = CollectiveAlgorithm::pat;
  c.collectives.nccl_version = "2.22.3";
  NcclTestsOptions o;
  o.op = NcclTestsOp::all_gather;
  o.gpus = {0, 8};
  EXPECT_NE(error_of([&] { simulate_nccl_tests(c, o, {kGiB}); }).find("PAT exists from NCCL 2.23"), std::string::npos);
  c.collectives.nccl_version = "";
  EXPECT_GT(simulate_nccl_tests(c, o, {kGiB}).front().busbw_gbps, 0);
  ClusterSpec one;
  one.node_template = "dgx_h100";
  one.collectives.algorithm = CollectiveAlgorithm::nvls;
  EXPECT_NE(error_of([&] { busbw_gb_per_s(one, NcclTestsOp::broadcast); }).find("NVLS runs only all_reduce"),
            std::string::npos);
}

TEST(NcclTopoSearch, ForcedProtocolThatCannotRunIsRefused) {
  ClusterSpec c = two_nodes("pcie_8gpu_2socket", 2);
  c.collectives.protocol = CollectiveProtocol::ll128;  // no NVLink: NCCL disables LL128
  EXPECT_EQ(
      error_of([&] { busbw_gb_per_s(c, NcclTestsOp::all_gather); }).rfind("cluster.collectives.protocol: LL128", 0),
      0u);
}

// NCCL_MAX_NCHANNELS caps every algorithm's channels (src/graph/connect.cc ncclTopoPostset keeps
// the first ones), the tree's too: with 1 channel only tree 0 of the first graph channel runs,
// through that channel's one NIC; the default runs both trees of every search channel.
TEST(NcclTopoSearch, MaxChannelsCapsTheTreeGraphsChannels) {
  ClusterSpec c = two_nodes("dgx_h100", 8);
  c.collectives.algorithm = CollectiveAlgorithm::tree;
  NcclTestsOptions o;
  const NcclTestsResult all = simulate_nccl_tests(c, o, {kGiB}).front();
  EXPECT_EQ(all.choice.algorithm, CollectiveAlgorithm::tree);
  EXPECT_EQ(all.choice.channels, 16);  // 8 search channels x 2 trees
  c.collectives.max_channels = 1;
  const NcclTestsResult one = simulate_nccl_tests(c, o, {kGiB}).front();
  EXPECT_EQ(one.choice.channels, 1);
  // One channel of 16: one NIC of 8 carries all of it, so the time grows (>= 3x: the NIC's line
  // rate is then the bound, not the 8 NICs together).
  EXPECT_GT(one.time_s, 3.0 * all.time_s);
  c.collectives.max_channels = 0;
  c.num_nodes = 1;  // one node: the kernel launches comm->nChannels, the ring graph's doubled
  {
    CollectiveCall call;
    call.op = CollectiveOp::all_reduce;
    call.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
    call.bytes = kGiB;
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const Cluster one_node(c, net);
    const int ctas = CollectiveEngine(sim, net, one_node).kernel_ctas(call);
    EXPECT_GE(ctas, 2);
    EXPECT_EQ(simulate_nccl_tests(c, o, {kGiB}).front().choice.channels, ctas);
  }
  c.collectives.max_channels = 1;
  EXPECT_EQ(simulate_nccl_tests(c, o, {kGiB}).front().choice.channels, 1);
}

// all_to_all and send/recv are NCCL's grouped send/recv, which NCCL_ALGO does not govern: a forced
// tree runs them (not refused) and the choice says p2p, not ring.
TEST(NcclTopoSearch, AllToAllIsPointToPointWhateverTheAlgorithm) {
  ClusterSpec c = two_nodes("dgx_h100", 8);
  c.collectives.algorithm = CollectiveAlgorithm::tree;
  NcclTestsOptions o;
  o.op = NcclTestsOp::alltoall;
  const NcclTestsResult r = simulate_nccl_tests(c, o, {kGiB}).front();
  EXPECT_TRUE(r.choice.point_to_point);
  EXPECT_STREQ(choice_algorithm_name(r.choice), "p2p");
  c.collectives.algorithm = CollectiveAlgorithm::automatic;
  EXPECT_DOUBLE_EQ(simulate_nccl_tests(c, o, {kGiB}).front().time_s, r.time_s);
  o.op = NcclTestsOp::all_reduce;
  const NcclTestsResult ar = simulate_nccl_tests(c, o, {kGiB}).front();
  EXPECT_FALSE(ar.choice.point_to_point);
  EXPECT_STREQ(choice_algorithm_name(ar.choice), algorithm_name(ar.choice.algorithm));
}

TEST(NcclTopoSearch, ForcedProtocolDoesNotApplyToPointToPoint) {
  // NCCL_PROTO governs the collectives, not grouped send/recv: alltoall and sendrecv at 32 MiB
  // take the same time and protocol whatever protocol the scenario forces.
  ClusterSpec c = two_nodes("dgx_h100", 8);
  NcclTestsOptions o;
  for (NcclTestsOp op : {NcclTestsOp::alltoall, NcclTestsOp::sendrecv}) {
    o.op = op;
    c.collectives.protocol.reset();
    const NcclTestsResult automatic = simulate_nccl_tests(c, o, {32.0 * (1 << 20)}).front();
    for (CollectiveProtocol p : {CollectiveProtocol::ll, CollectiveProtocol::ll128, CollectiveProtocol::simple}) {
      c.collectives.protocol = p;
      const NcclTestsResult forced = simulate_nccl_tests(c, o, {32.0 * (1 << 20)}).front();
      EXPECT_DOUBLE_EQ(forced.time_s, automatic.time_s);
      EXPECT_EQ(forced.choice.protocol, automatic.choice.protocol);
    }
  }
}

// p2p's NIC per channel (NcclTopoGraph::p2p_nics): NCCL's ncclTopoGetNetDev without a graph
// (src/graph/search.cc; sendSetup / recvSetup in src/transport/net.cc) gives the receiver
// ncclTopoGetLocalNet(itself, channel) and the sender the same NIC through its node's GPU of the
// receiver's device index. On 2 x DGX H100 cut to 3 NICs (beside gpu0 and gpu3 on socket 0, gpu6 on
// socket 1), a sendrecv of gpu4 -> gpu12 had taken nic1, cabled for gpus 3-5, whose receive crosses
// the 22 GB/s socket link: 48.8 ms at 1 GiB against 22.4 ms with 2 NICs. NCCL's communicator holds
// only gpu4 on each node, so no PXN: nic2 is PHB at PCIe speed, nic0 and nic1 SYS at the socket
// link's, and ncclTopoGetLocal keeps the fastest. With all 8 GPUs in the communicator every NIC is
// PXN-reachable at one speed from a GPU without a NIC on its own switch: gpu4 takes them all,
// (dev 4 + channel) % 3 (localGpuCount 1), gpus 0, 3 and 6 their own.
TEST(NcclTopoSearch, P2pNicsFollowNcclGetLocalNet) {
  const ClusterSpec spec = two_nodes("dgx_h100", 3);
  {
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const Cluster cluster(spec, net);
    const std::vector<int> one{4};
    EXPECT_EQ(search_ring_graph(cluster, net, one, 12, kNewestNcclVersion).p2p_nics,
              (std::vector<std::vector<int>>{{2}}));
    const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
    const NcclTopoGraph g = search_ring_graph(cluster, net, all, 8, kNewestNcclVersion);
    ASSERT_EQ(g.p2p_nics.size(), 8U);
    EXPECT_EQ(g.p2p_nics[0], std::vector<int>{0});
    EXPECT_EQ(g.p2p_nics[3], std::vector<int>{1});
    EXPECT_EQ(g.p2p_nics[6], std::vector<int>{2});
    EXPECT_EQ(g.p2p_nics[4], (std::vector<int>{1, 2, 0}));
  }
  NcclTestsOptions o;
  o.op = NcclTestsOp::sendrecv;
  o.gpus = {4, 12};
  const double three = simulate_nccl_tests(spec, o, {kGiB}).front().busbw_gbps;
  const double two = simulate_nccl_tests(two_nodes("dgx_h100", 2), o, {kGiB}).front().busbw_gbps;
  EXPECT_GE(three, two * 0.999);  // was 22.0 against 48.0 GB/s
  EXPECT_GT(three, 40.0);         // a NIC's 50 GB/s, not the socket link's 22
}

}  // namespace
}  // namespace traincast::models
