// Co-runner interference in `traincast cluster` (docs/cluster.md, issue 20's acceptance): two
// spread jobs whose rings share a 2:1 leaf's up-links, against a hand computation; and, over 50
// random job mixes, topology-aware placement never worse than spread.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "models/executor/training_run.h"
#include "models/hardware/catalog.h"
#include "models/io/cluster_jobs_io.h"
#include "models/scheduler/cluster_run.h"
#include "tests/support/fixtures.h"

namespace traincast::cli {
namespace {

/// A small dense model (about 1.1 B parameters: 4 layers of hidden 4096 and a 32,000-token
/// vocabulary) whose data-parallel all-reduce is not overlapped (overlap_grad_reduce off, ZeRO 0),
/// so its cross-leaf traffic is on the critical path and a large part of its iteration: one micro-
/// batch of 2,048 tokens per DP replica (global batch 8 per 8 GPUs). Simulates in tens of ms.
constexpr const char* kWorkload = R"(workload {
  model { name: "small" num_layers: 4 hidden_size: 4096 num_attention_heads: 32 ffn_hidden_size: 16384
          vocab_size: 32000 seq_length: 2048 }
  parallel { tp: 1 pp: 1 dp: 8 zero_stage: 0 overlap_grad_reduce: false }
  training { global_batch_size: 8 micro_batch_size: 1 precision: bf16 }
}
)";

/// A cluster of `nodes` DGX H100 on a 2:1 fat tree of `per_leaf` nodes per leaf, FIFO, `placement`.
/// NCCL_ALGO=Ring: every ring edge runs at once, so the cross-leaf edges (NIC rate, not NVLink)
/// bound the all-reduce and the up-links' share sets its time (the hierarchical algorithm
/// pipelines its inter-node phase behind NVLink phases, which hides small changes).
std::string cluster_text(int nodes, int per_leaf, const std::string& placement) {
  return "name: \"interference\"\ncluster { node_template: \"dgx_h100\" num_nodes: " + std::to_string(nodes) +
         " fabric { kind: fat_tree oversubscription: 2 nodes_per_leaf: " + std::to_string(per_leaf) +
         " } collectives { algorithm: ring } }\nscheduler { policy: fifo placement: " + placement + " }\n" + kWorkload;
}

class ClusterInterference : public traincast::test_support::TempDirTest {};

// Two jobs of 2 nodes each, spread over 2 leaves of 2 DGX H100 (2:1): job A on nodes 0 and 2, B
// on 1 and 3. Each leaf has 16 NIC ports down and 8 up (ceil(16 / 2)): C = 8 x 50 GB/s = 400 GB/s
// per direction (IB NDR 400 Gb/s, catalog). Alone, a job's 8 cross-leaf ring flows per direction
// (one per NIC) fit C: it runs as on a non-blocking tree, its flows at NCCL's achievable rate a
// (< C: link efficiency and protocol; measured as its up-link bytes / the up-links' busy time).
// Together, by hand: A's DP all-reduce moves X bytes per iteration up each leaf (X = its measured
// up-link traffic U_A x T_A / 2 leaves) at a, taking X / a of its iteration T_A, exposed (no
// overlap). B stands in on each leaf as F flows of b / F each, b = U_B / 2 (B's mean rate per
// leaf, measured from its own simulation; U_B = U_A by symmetry), F = B's mean flow count on a
// leaf's up-links while busy (= A's, m, by symmetry). Max-min on the leaf's up-links: if a + b <= C
// nothing changes; else, while b / F is below the fair share C / (m + F), i.e. b < C / 2, the
// background keeps b and A's flows share C - b; above it both get C / 2. So A's collective moves at
// r = min(a, max(C - b, C / 2)), takes X / r - X / a longer, and
//   slowdown = 1 + (X / r - X / a) / T_A   (the same for B by symmetry).
// Measured: hand 1.122742, simulated 1.122769 (C 400 GB/s, a 370.8 GB/s, b 127.0 GB/s, X 7.02 GB,
// T_A 55.30 ms). Tolerance 1 % of the extra time: the ring's per-step latency and protocol terms
// do not run at the up-links' rate, and a is a mean over the busy time (0.02 % apart here).
TEST_F(ClusterInterference, TwoSpreadJobsOnA2To1LeafMatchAHandComputation) {
  const std::string scen =
      write("two.textproto", cluster_text(4, 2, "spread") + "job { name: \"A\" gpus: 16 tokens: 4e8 }\n" +
                                 "job { name: \"B\" gpus: 16 tokens: 4e8 }\n");
  const models::ClusterJobs jobs = io::load_cluster_jobs(scen);
  const models::ClusterRunResult r = models::simulate_cluster(jobs);
  ASSERT_EQ(r.jobs.size(), 2U);
  // A alone on its placement class: 2 nodes over 2 leaves with the fabric's 8 up-ports per leaf.
  models::Scenario alone = jobs.job_scenarios[0];
  alone.cluster.fabric.nodes_per_leaf = 1;
  alone.cluster.fabric.leaf_up_ports = 8;
  models::UpLinkTraffic own;
  const models::Report a_alone = models::simulate_training_timing(alone, {}, &own);
  const double c = 8 * models::find_nic("IB-NDR-400").bytes_per_s;
  const double t = a_alone.iteration_time_s;
  const double x = own.up_bytes_per_s * t / 2;
  const double a = own.up_busy_bytes_per_s;
  const double b = own.up_bytes_per_s / 2;
  const double rate = std::min(a, std::max(c - b, c / 2));
  const double extra_s = x / rate - x / a;
  const double hand = 1.0 + extra_s / t;
  std::printf("C %.4g B/s, a %.4g B/s, T_A %.6g s, X %.6g B/leaf/iteration (X/a %.6g s), b %.6g B/s: hand %.6f\n", c, a,
              t, x, x / a, b, hand);
  ASSERT_GT(a + b, c);  // the case binds: the test compares a real slowdown
  for (const models::ClusterJobResult& j : r.jobs) {
    std::printf("%s: run %.6g s, alone %.6g s, slowdown %.6f, leaves %d\n", j.name.c_str(), j.run_s, j.alone_run_s,
                j.slowdown, j.leaves);
    EXPECT_EQ(j.leaves, 2);
    EXPECT_NEAR(j.slowdown - 1.0, hand - 1.0, 0.01 * (hand - 1.0)) << j.name;
    // Alone its flows fit the up-links (above): the slowdown is the co-runner's, not the placement's.
    EXPECT_NEAR(j.placement_slowdown, 1.0, 1e-3) << j.name;
    EXPECT_NEAR(j.co_runner_slowdown - 1.0, hand - 1.0, 0.01 * (hand - 1.0)) << j.name;
    EXPECT_NEAR(j.placement_slowdown * j.co_runner_slowdown, j.slowdown, 1e-12 * j.slowdown) << j.name;
  }
  EXPECT_EQ(r.jobs[0].run_s, r.jobs[1].run_s);  // symmetric
}

// Packed, the same two jobs keep to one leaf each: no shared up-links, no interference.
TEST_F(ClusterInterference, PackedJobsOnOneLeafEachDoNotInterfere) {
  const std::string scen =
      write("two.textproto", cluster_text(4, 2, "packed") + "job { name: \"A\" gpus: 16 tokens: 4e8 }\n" +
                                 "job { name: \"B\" gpus: 16 tokens: 4e8 }\n");
  const models::ClusterRunResult r = models::simulate_cluster(io::load_cluster_jobs(scen));
  for (const models::ClusterJobResult& j : r.jobs) EXPECT_EQ(j.slowdown, 1.0) << j.name;
}

// Property: 50 random mixes of 2-4 jobs (seeded; sizes 1-4 nodes that fit 8 nodes together, all
// arriving at 0) on 4 leaves of 2 DGX H100 (2:1). "Worse" = a job's run time, or the makespan,
// longer under topology-aware placement than under spread (1e-9 relative). Violations are printed
// as loadable scenarios; the counts are printed.
TEST_F(ClusterInterference, TopologyAwareNeverWorseThanSpreadOver50RandomMixes) {
  std::mt19937 rng(20);  // fixed seed: the same 50 mixes every run
  int job_worse = 0, makespan_worse = 0, job_better = 0, jobs_total = 0;
  for (int mix = 0; mix < 50; ++mix) {
    const int count = std::uniform_int_distribution<int>(2, 4)(rng);
    std::string list;
    int free = 8;
    for (int j = 0; j < count && free > 0; ++j) {
      const int nodes = std::uniform_int_distribution<int>(1, std::min(4, free))(rng);
      free -= nodes;
      const double tokens = std::uniform_int_distribution<int>(1, 8)(rng) * 1e8;
      list += "job { name: \"j" + std::to_string(j) + "\" gpus: " + std::to_string(8 * nodes) +
              " tokens: " + std::to_string(tokens) + " }\n";
    }
    const std::string text = cluster_text(8, 2, "spread") + list;
    const models::ClusterJobs jobs = io::load_cluster_jobs(write("mix.textproto", text));
    models::SchedulerSpec spread = jobs.cluster.scheduler, aware = spread;
    aware.placement = models::JobPlacement::topology_aware;
    const std::vector<models::ClusterRunResult> r = models::simulate_cluster(jobs, {spread, aware});
    bool bad = r[1].makespan_s > r[0].makespan_s * (1 + 1e-9);
    makespan_worse += bad ? 1 : 0;
    for (std::size_t j = 0; j < r[0].jobs.size(); ++j) {
      ++jobs_total;
      if (r[1].jobs[j].run_s > r[0].jobs[j].run_s * (1 + 1e-9)) {
        ++job_worse;
        bad = true;
      }
      if (r[1].jobs[j].run_s < r[0].jobs[j].run_s * (1 - 1e-9)) ++job_better;
    }
    if (bad) ADD_FAILURE() << "topology_aware worse than spread on mix " << mix << ":\n" << text;
  }
  std::printf("50 mixes, %d jobs: topology_aware faster for %d jobs, slower for %d; makespan longer in %d mixes\n",
              jobs_total, job_better, job_worse, makespan_worse);
  EXPECT_EQ(job_worse, 0);
  EXPECT_EQ(makespan_worse, 0);
  EXPECT_GT(job_better, 0);  // the property is not vacuous: spread costs somewhere
}

}  // namespace
}  // namespace traincast::cli
