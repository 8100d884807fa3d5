// A bigger NVLink domain never makes a collective slower (docs/properties.md, "NVLink domain
// size"): one GB200 / GB300 NVL72 rack cut into NVLink domains of 4 .. 72 GPUs
// (`cluster.node_template: "gb200_nvl72/N"`, docs/hardware.md), the same 72 GPUs and NICs,
// all_reduce, all_gather and reduce_scatter of 1 KiB .. 1 GiB on automatic, each domain size
// against every smaller one. The one step allowed is NCCL's own: its tree runs a chain through
// every GPU of a node (src/graph/connect.cc ncclTopoPreset: tree.up / tree.down from the tree
// graph's intra order) and its latency is 2 ((nRanks / nNodes - 1) intraLat + log2i(nNodes)
// interLat) (src/graph/tuning.cc ncclTopoTuneModel), so where the smaller domain runs tree, the
// bigger one may be slower by at most its longer chain's latency (tree_latency_s).

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "models/collectives/nccl_tests.h"
#include "models/collectives/nccl_tuning.h"
#include "models/io/scenario_io.h"

namespace traincast::models {
namespace {

constexpr int kRackGpus = 72;
// The domain sizes that divide the rack into whole domains with whole shares of its NICs,
// sockets and hubs (a size of 2 too; 3 and 9 are refused: half a Grace socket).
const std::vector<int> kDomains{4, 6, 8, 12, 18, 24, 36, 72};

struct Point {
  double seconds = 0;
  CollectiveChoice choice;
};

// Per domain size (kDomains order), per size: the automatic run.
std::vector<std::vector<Point>> sweep(const std::string& rack, NcclTestsOp op, const std::vector<double>& sizes) {
  std::vector<std::vector<Point>> out;
  for (int d : kDomains) {
    const std::string tmpl = d == kRackGpus ? rack : rack + "/" + std::to_string(d);
    // As `traincast nccl-tests` reads a cluster-only file (the loader's fabric defaults).
    const std::string path = testing::TempDir() + "nvlink_domain_rack.textproto";
    std::ofstream(path) << "name: \"rack\" cluster { node_template: \"" << tmpl << "\" num_nodes: " << kRackGpus / d
                        << " }\n";
    const Scenario sc = io::load_cluster_scenario_file(path);
    NcclTestsOptions options;
    options.op = op;
    std::vector<Point> row;
    for (const NcclTestsResult& r : simulate_nccl_tests(sc.cluster, options, sizes))
      row.push_back({r.time_s, r.choice});
    out.push_back(std::move(row));
  }
  return out;
}

std::string label(const CollectiveChoice& c) {
  return std::string(algorithm_name(c.algorithm)) + "/" + protocol_name(c.protocol);
}

// NCCL's tree latency on the rack cut into domains of d GPUs, protocol p [s].
double tree_latency(int d, int p) {
  return tree_latency_s(d, kRackGpus / d, /*nvlink=*/true)[static_cast<std::size_t>(p)];
}

// Pairs where a bigger domain is slower and NCCL's tree chain does not account for it, each with
// its cause (docs/properties.md, "Session 36: NVLink domain size"): "rack op /big algorithm > /small
// algorithm". The test fails on a pair not listed and on a listed one that no longer occurs.
// Causes shared by several pairs are written once per pair (a map is simplest to check both ways).
const std::map<std::string, std::string> kKnown{
    {"gb200_nvl72 all_reduce /72 nvls > /24 nvls_tree",
     "OPEN: one-node NVLS's pipeline fill takes 16 x GPUs lanes sharing each NVLink port (nvls_pipeline_fill_s, fitted "
     "on 8 GPUs): 163 us at 128 MiB on 72 GPUs, 81.5 us on 36, while openxla's GB200 rows measure one-node NVLS from "
     "36 to 72 GPUs +1.4 to +4 % at 18-144 MiB (the model +19 to +39 %)"},
    {"gb200_nvl72 all_reduce /72 nvls > /36 nvls_tree",
     "OPEN: one-node NVLS's pipeline fill takes 16 x GPUs lanes sharing each NVLink port (nvls_pipeline_fill_s, fitted "
     "on 8 GPUs): 163 us at 128 MiB on 72 GPUs, 81.5 us on 36, while openxla's GB200 rows measure one-node NVLS from "
     "36 to 72 GPUs +1.4 to +4 % at 18-144 MiB (the model +19 to +39 %)"},
    {"gb200_nvl72 all_gather /18 ring > /12 ring",
     "OPEN: the cut call (ring/LL on 3 channels at 1 MiB) moves 3 / nChannels of the comm's rate, 3 / 30 against 3 / "
     "24 (the kept channels on their own rails: docs/properties.md, session 35's proposal)"},
    {"gb200_nvl72 reduce_scatter /18 ring > /12 ring",
     "OPEN: the cut call (ring/LL on 3 channels at 1 MiB) moves 3 / nChannels of the comm's rate, 3 / 30 against 3 / "
     "24 (the kept channels on their own rails: docs/properties.md, session 35's proposal)"},
    {"gb300_nvl72 all_reduce /72 nvls > /12 nvls_tree",
     "OPEN: one-node NVLS's pipeline fill takes 16 x GPUs lanes sharing each NVLink port (nvls_pipeline_fill_s, fitted "
     "on 8 GPUs): 163 us at 128 MiB on 72 GPUs, 81.5 us on 36, while openxla's GB200 rows measure one-node NVLS from "
     "36 to 72 GPUs +1.4 to +4 % at 18-144 MiB (the model +19 to +39 %)"},
    {"gb300_nvl72 all_reduce /72 nvls > /18 nvls_tree",
     "OPEN: one-node NVLS's pipeline fill takes 16 x GPUs lanes sharing each NVLink port (nvls_pipeline_fill_s, fitted "
     "on 8 GPUs): 163 us at 128 MiB on 72 GPUs, 81.5 us on 36, while openxla's GB200 rows measure one-node NVLS from "
     "36 to 72 GPUs +1.4 to +4 % at 18-144 MiB (the model +19 to +39 %)"},
    {"gb300_nvl72 all_reduce /72 nvls > /24 nvls_tree",
     "OPEN: one-node NVLS's pipeline fill takes 16 x GPUs lanes sharing each NVLink port (nvls_pipeline_fill_s, fitted "
     "on 8 GPUs): 163 us at 128 MiB on 72 GPUs, 81.5 us on 36, while openxla's GB200 rows measure one-node NVLS from "
     "36 to 72 GPUs +1.4 to +4 % at 18-144 MiB (the model +19 to +39 %)"},
    {"gb300_nvl72 all_reduce /72 nvls > /36 nvls_tree",
     "OPEN: one-node NVLS's pipeline fill takes 16 x GPUs lanes sharing each NVLink port (nvls_pipeline_fill_s, fitted "
     "on 8 GPUs): 163 us at 128 MiB on 72 GPUs, 81.5 us on 36, while openxla's GB200 rows measure one-node NVLS from "
     "36 to 72 GPUs +1.4 to +4 % at 18-144 MiB (the model +19 to +39 %)"},
    {"gb300_nvl72 all_reduce /18 tree > /8 tree",
     "OPEN: beyond NCCL's tree chain by the ring graph's channels, 28 against 32 (as the GB300 ring lines)"},
    {"gb300_nvl72 all_reduce /18 nvls_tree > /8 tree",
     "OPEN: beyond NCCL's tree chain by the ring graph's channels, 28 against 32 (as the GB300 ring lines)"},
    {"gb300_nvl72 all_reduce /24 nvls_tree > /18 nvls_tree",
     "OPEN, not diagnosed: +0.13 % at 256 MiB (684.0 against 683.2 us), 3 nodes of 24 heads against 4 of 18"},
    {"gb300_nvl72 all_gather /12 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
    {"gb300_nvl72 all_gather /18 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
    {"gb300_nvl72 all_gather /24 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
    {"gb300_nvl72 all_gather /36 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
    {"gb300_nvl72 reduce_scatter /12 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
    {"gb300_nvl72 reduce_scatter /18 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
    {"gb300_nvl72 reduce_scatter /24 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
    {"gb300_nvl72 reduce_scatter /36 ring > /8 ring",
     "OPEN: NCCL's ring graph on GB300 domains (nccl_topo_search): 14 search channels (28 comm channels) at 18-36 GPUs "
     "against 16 (32) at 8, and 16 channels over 12 NIC rails at /12; not checked against a GB300 graph dump"},
};

TEST(Properties, BiggerNvlinkDomainNeverSlower) {
  std::vector<double> sizes;
  for (double b = 1024; b <= 1024.0 * 1024 * 1024; b *= 2) sizes.push_back(b);
  int checked = 0, allowed = 0;
  std::map<std::string, std::string> found;  // key -> the worst case's figures
  std::map<std::string, double> worst;
  for (const std::string rack : {"gb200_nvl72", "gb300_nvl72"}) {
    for (const NcclTestsOp op : {NcclTestsOp::all_reduce, NcclTestsOp::all_gather, NcclTestsOp::reduce_scatter}) {
      const auto t = sweep(rack, op, sizes);
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        for (std::size_t a = 0; a < kDomains.size(); ++a) {
          for (std::size_t b = a + 1; b < kDomains.size(); ++b) {
            const Point& small = t[a][i];
            const Point& big = t[b][i];
            ++checked;
            if (big.seconds <= small.seconds * (1 + 1e-3)) continue;
            // NCCL's tree chain: the smaller domain runs tree, and the bigger one is slower by no
            // more than NCCL's tree latency grows with its chain.
            const int p = static_cast<int>(small.choice.protocol);
            const double chain_s = tree_latency(kDomains[b], p) - tree_latency(kDomains[a], p);
            // (10 ns: the event times' rounding to whole nanoseconds.)
            if (small.choice.algorithm == CollectiveAlgorithm::tree && big.seconds - small.seconds <= chain_s + 1e-8) {
              ++allowed;
              continue;
            }
            const std::string key = rack + " " + std::string(nccl_tests_op_name(op)) + " /" +
                                    std::to_string(kDomains[b]) + " " + algorithm_name(big.choice.algorithm) + " > /" +
                                    std::to_string(kDomains[a]) + " " + algorithm_name(small.choice.algorithm);
            const double excess = big.seconds / small.seconds - 1;
            if (excess > worst[key]) {
              worst[key] = excess;
              found[key] = "at " + std::to_string(static_cast<long long>(sizes[i])) +
                           " B: " + std::to_string(big.seconds * 1e6) + " us (" + label(big.choice) + ") against " +
                           std::to_string(small.seconds * 1e6) + " us (" + label(small.choice) + ")";
            }
          }
        }
      }
    }
  }
  for (const auto& [key, detail] : found) {
    std::printf("  %s: %s, +%.1f %%\n", key.c_str(), detail.c_str(), worst[key] * 100);
    EXPECT_TRUE(kKnown.contains(key)) << "bigger NVLink domain slower, not listed: " << key << " " << detail;
  }
  for (const auto& [key, cause] : kKnown) EXPECT_TRUE(found.contains(key)) << "listed but no longer occurs: " << key;
  std::printf("BiggerNvlinkDomainNeverSlower: %d pairs, %d at NCCL's tree chain step, %zu listed\n", checked, allowed,
              found.size());
}

}  // namespace
}  // namespace traincast::models
