// Tests of how a node's NICs spread over its PCIe switches (models/hardware/pcie_tree.h
// nic_spread) and of the warning the commands print for an uneven spread
// (Cluster::nic_spread_notes): a dgx_h100 at 3, 5, 6 or 7 NICs is uneven (GPUs without a NIC on
// their switch beside GPUs with one, at unequal shares), at 1, 2, 4 or 8 even, and every built-in
// template at its own NIC count is even.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/pcie_tree.h"

namespace traincast::models {
namespace {

ClusterSpec spec(const std::string& node_template, int nodes, int nics) {
  ClusterSpec s;
  s.node_template = node_template;
  s.num_nodes = nodes;
  s.nics_per_node = nics;
  return s;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(NicSpread, DgxH100IsEvenWhereTheNicsTakeAnEqualShareOfItsSwitches) {
  const NodeTemplate& t = find_builtin_node_template("dgx_h100");  // 8 switches of 1 GPU, 2 sockets
  for (int nics = 1; nics <= 16; ++nics) {
    const NicSpread s = nic_spread(pcie_layout(t, nics));
    EXPECT_EQ(s.gpu_groups, 8);
    const bool expected = nics == 1 || nics == 2 || nics == 4 || nics % 8 == 0;
    EXPECT_EQ(s.even, expected) << nics << " NICs";
  }
  // 3 NICs sit beside GPUs 0, 3 and 6 (NIC i serves GPUs [8i/3, 8(i+1)/3)).
  const NicSpread three = nic_spread(pcie_layout(t, 3));
  EXPECT_EQ(three.group_nics, (std::vector<int>{1, 0, 0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(three.gpus_without_nic, (std::vector<int>{1, 2, 4, 5, 7}));
  // 2 NICs: GPUs without one on their switch too, but an equal share of each NIC's.
  EXPECT_EQ(nic_spread(pcie_layout(t, 2)).gpus_without_nic, (std::vector<int>{1, 2, 3, 5, 6, 7}));
  EXPECT_TRUE(nic_spread(pcie_layout(t, 8)).gpus_without_nic.empty());
}

TEST(NicSpread, UnequalNicsPerSwitchAreUnevenWithoutAGpuLacking) {
  const NodeTemplate& t = find_builtin_node_template("dgx_a100");  // 4 switches of 2 GPUs
  const NicSpread six = nic_spread(pcie_layout(t, 6));             // beside GPUs 0, 2, 3, 4, 6, 7
  EXPECT_EQ(six.group_nics, (std::vector<int>{1, 2, 1, 2}));
  EXPECT_TRUE(six.gpus_without_nic.empty());
  EXPECT_FALSE(six.even);
  EXPECT_TRUE(nic_spread(pcie_layout(t, 8)).even);
  EXPECT_TRUE(nic_spread(pcie_layout(t, 2)).even);   // switches 0 and 2
  EXPECT_FALSE(nic_spread(pcie_layout(t, 3)).even);  // beside GPUs 0, 3, 6: switches 0, 1, 3
}

// A second fresh user (session 38): 12 NICs on a dgx_a100 put 3 on each switch of 2 GPUs, one GPU
// getting 2 and the other 1, and all_to_all 64 MiB over 2 nodes took 1,945 us against 1,421 at 8
// and 16 NICs, without a word.
TEST(NicSpread, NicsASwitchsGpusCannotShareEquallyAreUneven) {
  const NodeTemplate& t = find_builtin_node_template("dgx_a100");
  const NicSpread twelve = nic_spread(pcie_layout(t, 12));
  EXPECT_EQ(twelve.group_nics, (std::vector<int>{3, 3, 3, 3}));
  EXPECT_EQ(twelve.group_gpus, (std::vector<int>{2, 2, 2, 2}));
  EXPECT_FALSE(twelve.even);
  EXPECT_EQ(twelve.unshared_group, 0);
  for (const int nics : {4, 8, 16}) {
    EXPECT_TRUE(nic_spread(pcie_layout(t, nics)).even) << nics;
    EXPECT_EQ(nic_spread(pcie_layout(t, nics)).unshared_group, -1) << nics;
  }
  const std::vector<std::string> notes = Cluster::nic_spread_notes(spec("dgx_a100", 2, 12));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(has(notes[0],
                  "cluster.nics_per_node 12 on dgx_a100 puts 3 NICs on each PCIe switch of 2 GPUs: the "
                  "switch's GPUs cannot share them equally"))
      << notes[0];
  // 16 is not offered: two NICs per GPU run as one (NoCountAboveOneNicPerGpuIsOffered).
  EXPECT_TRUE(has(notes[0], "(expected cluster.nics_per_node 8 or 4, a NIC on every GPU's switch)")) << notes[0];
}

// Fresh user 39: 9 NICs on dgx_h100 were told "expected cluster.nics_per_node 8 or 16", and 16
// runs as 8 (NCCL's rings and trees give each GPU its own first NIC; the same times at 8 and 16).
TEST(NicSpreadNotes, NoCountAboveOneNicPerGpuIsOffered) {
  const std::vector<std::string> notes = Cluster::nic_spread_notes(spec("dgx_h100", 2, 9));
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_TRUE(has(notes[0], "(expected cluster.nics_per_node 8, a NIC on every GPU's switch)")) << notes[0];
  EXPECT_FALSE(has(notes[0], "16")) << notes[0];
}

TEST(NicSpread, EveryBuiltinTemplateAtItsOwnCountIsEven) {
  for (const std::string& name : node_template_names()) {
    const NodeTemplate& t = find_builtin_node_template(name);
    EXPECT_TRUE(nic_spread(pcie_layout(t, t.nics)).even) << name;
  }
}

TEST(NicSpreadNotes, NameTheGpusTheirNicTheCostAndTheCountsThatAvoidIt) {
  const std::vector<std::string> notes = Cluster::nic_spread_notes(spec("dgx_h100", 2, 3));
  ASSERT_EQ(notes.size(), 1U);
  const std::string& n = notes[0];
  EXPECT_TRUE(has(n,
                  "cluster.nics_per_node 3 on dgx_h100 leaves gpu1, gpu2, gpu4, gpu5 and gpu7 without a NIC on "
                  "their PCIe switch (the NICs sit beside gpu0, gpu3 and gpu6, on 8 switches holding GPUs)"))
      << n;
  EXPECT_TRUE(has(n,
                  "(gpu1 and gpu2 -> nic0 via gpu0 over NVLink (PXN); gpu4 and gpu5 -> nic1 on the other socket "
                  "via gpu3 over NVLink (PXN); gpu7 -> nic2 via gpu6 over NVLink (PXN))"))
      << n;
  EXPECT_TRUE(has(n, "all_to_all")) << n;
  EXPECT_TRUE(has(n,
                  "(expected cluster.nics_per_node 2 or 4, as many NICs on each of an equal share of the 8 "
                  "switches, or 8, a NIC on every GPU's switch)"))
      << n;
  // Unequal NICs per switch; the even counts either side give every GPU one.
  const std::string six = Cluster::nic_spread_notes(spec("dgx_a100", 2, 6)).at(0);
  EXPECT_TRUE(has(six, "puts its NICs unevenly on the 4 PCIe switches holding its GPUs (1, 2, 1 and 2 NICs)")) << six;
  EXPECT_TRUE(has(six, "(expected cluster.nics_per_node 4 or 8, a NIC on every GPU's switch)")) << six;
}

TEST(NicSpreadNotes, NoneForAnEvenSpreadOrOneNode) {
  for (const int nics : {1, 2, 4, 8, 16}) EXPECT_TRUE(Cluster::nic_spread_notes(spec("dgx_h100", 2, nics)).empty());
  EXPECT_TRUE(Cluster::nic_spread_notes(spec("dgx_h100", 1, 3)).empty());  // NICs carry only inter-node traffic
  ClusterSpec own;
  own.node_template = "dgx_h100";
  own.num_nodes = 4;
  EXPECT_TRUE(Cluster::nic_spread_notes(own).empty());
}

TEST(NicSpreadNotes, WithoutNvlinkTheGpusGoThroughTheCpu) {
  // pcie_8gpu_2socket: 4 switches of 2 GPUs, no NVLink; 3 NICs beside GPUs 0, 3 and 6.
  const std::string n = Cluster::nic_spread_notes(spec("pcie_8gpu_2socket", 2, 3)).at(0);
  EXPECT_TRUE(has(n, "leaves gpu4 and gpu5 without a NIC on their PCIe switch")) << n;
  EXPECT_TRUE(has(n, "(gpu4 and gpu5 -> nic1 on the other socket through the CPU)")) << n;
  EXPECT_FALSE(has(n, "PXN")) << n;
}

}  // namespace
}  // namespace traincast::models
