// What a fresh user found in `traincast cluster` (session 36): cluster.overrides were applied by
// each job's own node numbering (an override of node3 made every job "never ran" with exit 0, one
// of node0 slowed a job placed on node 3); an explicit fabric.leaf_up_ports turned co-runner
// interference off; reliability and cost were ignored without a word; --csv --force overwrote a
// job's workload file; a default job name could repeat an explicit one; a sweep over a job list
// marked every point invalid; the header printed "32 nodes per leaf" on a 4-node cluster.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/executor/training_run.h"
#include "models/io/cluster_jobs_io.h"
#include "models/scheduler/cluster_run.h"
#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;
using test_support::slurp;

/// A small dense model, 4 layers, on 8 GPUs per replica (DP 8): tens of ms per simulation.
constexpr const char* kWorkload = R"(workload {
  model { name: "small" num_layers: 4 hidden_size: 4096 num_attention_heads: 32 ffn_hidden_size: 16384
          vocab_size: 32000 seq_length: 2048 }
  parallel { tp: 1 pp: 1 dp: 8 zero_stage: 0 overlap_grad_reduce: false }
  training { global_batch_size: 8 micro_batch_size: 1 precision: bf16 }
}
)";

/// Four DGX H100 under one leaf (the default fabric), packed FIFO, `extra` inside cluster { }, and
/// jobs A (2 nodes), B (1 node), C (1 node), all at 0: packed, A gets nodes 0-1, B node 2, C node 3.
std::string four_nodes(const std::string& extra) {
  return "name: \"fresh36\"\ncluster { node_template: \"dgx_h100\" num_nodes: 4 " + extra +
         " }\nscheduler { policy: fifo placement: packed }\n" + kWorkload +
         "job { name: \"A\" gpus: 16 tokens: 2e8 }\njob { name: \"B\" gpus: 8 tokens: 1e8 }\n"
         "job { name: \"C\" gpus: 8 tokens: 1e8 }\n";
}

/// Job i's iteration time simulated on its own sub-cluster (one leaf group) with `overrides`.
double iteration_with(const models::ClusterJobs& jobs, std::size_t i,
                      const std::vector<models::ElementOverride>& overrides) {
  models::Scenario s = jobs.job_scenarios[i];
  s.cluster.fabric.nodes_per_leaf = s.cluster.num_nodes;  // as cluster_run.cc simulates one leaf
  s.cluster.overrides = overrides;
  return models::simulate_training_timing(s).iteration_time_s;
}

class FreshUser36Cluster : public traincast::test_support::TempDirTest {};

// Before: "A:27:5: cluster.overrides[0].select: no node3 (the cluster has node0-1)" for every job,
// 0 of 3 run, exit 0. After: every job runs; only C, on node 3, has the slow clock, as its own
// node 0.
TEST_F(FreshUser36Cluster, AnOverrideOfNode3SlowsTheJobPlacedOnNode3Only) {
  const std::string scen = write("clock3.textproto", four_nodes("overrides { select: \"node3\" clock_factor: 0.5 }"));
  const models::ClusterJobs jobs = io::load_cluster_jobs(scen);
  const models::ClusterRunResult r = models::simulate_cluster(jobs);
  ASSERT_EQ(r.jobs_run, 3);
  EXPECT_EQ(r.jobs[0].nodes, "0-1");
  EXPECT_EQ(r.jobs[1].nodes, "2");
  EXPECT_EQ(r.jobs[2].nodes, "3");
  models::ElementOverride slow;
  slow.select = "node0";
  slow.clock_factor = 0.5;
  EXPECT_DOUBLE_EQ(r.jobs[0].iteration_time_s, iteration_with(jobs, 0, {}));
  EXPECT_DOUBLE_EQ(r.jobs[1].iteration_time_s, iteration_with(jobs, 1, {}));
  EXPECT_DOUBLE_EQ(r.jobs[2].iteration_time_s, iteration_with(jobs, 2, {slow}));
  EXPECT_GT(r.jobs[2].iteration_time_s, 1.3 * r.jobs[1].iteration_time_s);
  // Alone means on an empty cluster of healthy nodes, so C's slowdown is its placement on the
  // slow node.
  EXPECT_DOUBLE_EQ(r.jobs[2].alone_run_s, r.jobs[1].run_s);
  EXPECT_GT(r.jobs[2].slowdown, 1.3);
  // Session 39: the slowdown is the placement's (its slow node), none of it the co-runners'. Before,
  // the header blamed "co-runners on shared oversubscribed leaf up-links" for every slowdown.
  EXPECT_DOUBLE_EQ(r.jobs[2].placement_slowdown, r.jobs[2].slowdown);
  EXPECT_EQ(r.jobs[2].co_runner_slowdown, 1.0);

  const Result cli = run({"cluster", scen});
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_FALSE(has(cli.out, "Never ran")) << cli.out;
  EXPECT_TRUE(has(cli.out, "Jobs run     3 of 3")) << cli.out;
  EXPECT_TRUE(has(cli.out, "slowdown  placement  co-runners  leaves\n")) << cli.out;
  EXPECT_FALSE(has(cli.out, "Interference")) << cli.out;
}

// A job's run alone is on healthy nodes (no cluster.overrides): with node 0 slow, A (on nodes
// 0-1) is slowed against it, and B and C, on healthy nodes, run as fast as alone: no slowdown
// below 1 (measured alone on the lowest nodes in service, node 0's slow clock, B read 0.513).
TEST_F(FreshUser36Cluster, AloneIsOnHealthyNodesSoNoSlowdownIsBelowOne) {
  const std::string scen = write("clock0.textproto", four_nodes("overrides { select: \"node0\" clock_factor: 0.5 }"));
  const models::ClusterRunResult r = models::simulate_cluster(io::load_cluster_jobs(scen));
  ASSERT_EQ(r.jobs_run, 3);
  EXPECT_EQ(r.jobs[0].nodes, "0-1");
  EXPECT_GT(r.jobs[0].slowdown, 1.3);
  for (std::size_t j = 1; j < 3; ++j) {
    EXPECT_DOUBLE_EQ(r.jobs[j].alone_run_s, r.jobs[j].run_s) << r.jobs[j].name;
    EXPECT_GE(r.jobs[j].slowdown, 1.0) << r.jobs[j].name;
  }
}

// Before: an override of node0 slowed whichever job sat on its own node 0 (B on node 3: 26.58 s vs
// 14.22 s per iteration). After: only A, on nodes 0-1, has it, on its own node 0.
TEST_F(FreshUser36Cluster, AnOverrideOfNode1GpuReachesTheJobOnNode1AsItsNode1) {
  const std::string scen = write("gpu.textproto", four_nodes("overrides { select: \"node1/gpu2\" clock_factor: 0.5 }"));
  const models::ClusterJobs jobs = io::load_cluster_jobs(scen);
  const models::ClusterRunResult r = models::simulate_cluster(jobs);
  ASSERT_EQ(r.jobs_run, 3);
  models::ElementOverride slow;
  slow.select = "node1/gpu2";
  slow.clock_factor = 0.5;
  EXPECT_DOUBLE_EQ(r.jobs[0].iteration_time_s, iteration_with(jobs, 0, {slow}));
  EXPECT_DOUBLE_EQ(r.jobs[1].iteration_time_s, iteration_with(jobs, 1, {}));
  EXPECT_DOUBLE_EQ(r.jobs[2].iteration_time_s, iteration_with(jobs, 2, {}));
  EXPECT_GT(r.jobs[0].iteration_time_s, iteration_with(jobs, 0, {}));
}

// Before: "node0-1 power_cap_w: 200" left B "never ran" (no node1 in its one-node sub-cluster) and
// "node0/nic0 failed: true" too (a one-node cluster has no network). After: A, on nodes 0-1, gets
// both; B and C run as without them (a one-node job's traffic never reaches a NIC).
TEST_F(FreshUser36Cluster, PowerCapRangeAndFailedNicReachOnlyTheJobsOnThoseNodes) {
  const std::string scen =
      write("cap.textproto", four_nodes("overrides { select: \"node0-1\" power_cap_w: 200 } overrides { select: "
                                        "\"node1/nic0\" failed: true }"));
  const models::ClusterJobs jobs = io::load_cluster_jobs(scen);
  const models::ClusterRunResult r = models::simulate_cluster(jobs);
  ASSERT_EQ(r.jobs_run, 3);
  models::ElementOverride cap;
  cap.select = "node0";
  cap.power_cap_w = 200;
  models::ElementOverride cap1 = cap;
  cap1.select = "node1";
  models::ElementOverride nic;
  nic.select = "node1/nic0";
  nic.failed = true;
  EXPECT_DOUBLE_EQ(r.jobs[0].iteration_time_s, iteration_with(jobs, 0, {cap, cap1, nic}));
  EXPECT_GT(r.jobs[0].iteration_time_s, iteration_with(jobs, 0, {}));
  EXPECT_DOUBLE_EQ(r.jobs[1].iteration_time_s, iteration_with(jobs, 1, {}));
  const Result cli = run({"cluster", scen});
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_FALSE(has(cli.out, "Never ran")) << cli.out;
}

// A link between switches is shared by the jobs and is in no job's sub-cluster: refused at load.
TEST_F(FreshUser36Cluster, AnOverrideOfALeafUpLinkIsRefusedWithItsPosition) {
  const std::string text = four_nodes(
      "fabric { kind: fat_tree nodes_per_leaf: 2 routing: d_mod_k }\n"
      "overrides { select: \"leaf0->spine1\" bandwidth_factor: 0.5 }");
  const Result r = run({"cluster", write("leaf.textproto", text)});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "leaf.textproto:3:13: cluster.overrides[0].select: \"leaf0->spine1\" is a link between "
                  "switches or nodes, which the jobs share"))
      << r.err;
  EXPECT_EQ(r.out, "");
}

// Before: oversubscription 8 gave job A 17,973.0 s (1.379), leaf_up_ports 2 (the same 8:1) the job
// alone, and the header said "oversubscription 2". After: the same interference either way.
TEST_F(FreshUser36Cluster, LeafUpPortsGiveTheSameInterferenceAsTheSameOversubscription) {
  const std::string base =
      "name: \"two\"\ncluster { node_template: \"dgx_h100\" num_nodes: 4 fabric { kind: fat_tree nodes_per_leaf: 2 "
      "FABRIC } collectives { algorithm: ring } }\nscheduler { policy: fifo placement: spread }\n" +
      std::string(kWorkload) + "job { name: \"A\" gpus: 16 tokens: 4e8 }\njob { name: \"B\" gpus: 16 tokens: 4e8 }\n";
  const auto with = [&](const std::string& name, const std::string& fabric) {
    std::string t = base;
    t.replace(t.find("FABRIC"), 6, fabric);
    return write(name, t);
  };
  const std::string ratio = with("ratio.textproto", "oversubscription: 2");
  const std::string ports = with("ports.textproto", "leaf_up_ports: 8");
  const models::ClusterRunResult a = models::simulate_cluster(io::load_cluster_jobs(ratio));
  const models::ClusterRunResult b = models::simulate_cluster(io::load_cluster_jobs(ports));
  ASSERT_EQ(a.jobs_run, 2);
  ASSERT_EQ(b.jobs_run, 2);
  EXPECT_GT(a.jobs[0].slowdown, 1.05);  // the two spread jobs meet on the 2:1 up-links
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.jobs[i].run_s, b.jobs[i].run_s) << i;
    EXPECT_EQ(a.jobs[i].slowdown, b.jobs[i].slowdown) << i;
  }
  const Result cr = run({"cluster", ratio});
  const Result cp = run({"cluster", ports});
  EXPECT_TRUE(has(cr.out,
                  "Cluster    4 x dgx_h100 = 32 GPUs, 2 nodes per leaf group, oversubscription 2 (16:8 ports "
                  "per leaf)\n"))
      << cr.out;
  EXPECT_EQ(cr.out.substr(cr.out.find("\nSlowdown")), cp.out.substr(cp.out.find("\nSlowdown")));
  EXPECT_TRUE(has(cp.out, "oversubscription 2 (16:8 ports per leaf)")) << cp.out;
}

// Before: "32 nodes per leaf" on a 4-node cluster and on a torus.
TEST_F(FreshUser36Cluster, TheHeaderPrintsTheFabricAsBuilt) {
  const Result one = run({"cluster", write("one.textproto", four_nodes(""))});
  EXPECT_TRUE(has(one.out, "Cluster    4 x dgx_h100 = 32 GPUs, one leaf group of 4 nodes (no spine), non-blocking\n"))
      << one.out;
  const Result torus = run({"cluster", write("torus.textproto", four_nodes("fabric { kind: torus }"))});
  EXPECT_TRUE(has(torus.out, "Cluster    4 x dgx_h100 = 32 GPUs, torus (no leaf switches)\n")) << torus.out;
}

// Before: the same run times and no word.
TEST_F(FreshUser36Cluster, ReliabilityAndCostAreNamedAsWithoutEffect) {
  const std::string plain = write("plain.textproto", four_nodes(""));
  const std::string with =
      write("rel.textproto", four_nodes("") +
                                 "reliability { failure { cause: \"x\" per_node_hour: 0.01 } horizon_s: 86400 }\n"
                                 "cost { utilization: 0.5 }\n");
  const Result a = run({"cluster", plain});
  const Result b = run({"cluster", with});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.err, "");
  EXPECT_TRUE(has(b.err, "warning: " + with +
                             ":13:1: reliability: has no effect in traincast cluster (expected it "
                             "on a job's own scenario with traincast run"))
      << b.err;
  EXPECT_TRUE(has(b.err, "warning: " + with + ":14:1: cost: has no effect in traincast cluster")) << b.err;
  EXPECT_EQ(a.out.substr(a.out.find("\n\n")), b.out.substr(b.out.find("\n\n")));
}

// Before: `--csv w.textproto --force` replaced the job's workload file with CSV.
TEST_F(FreshUser36Cluster, OutputsRefuseAJobsWorkloadFileEvenWithForce) {
  const std::string w = write("w.textproto", kWorkload);
  const std::string scen =
      write("s.textproto", four_nodes("") + "job { name: \"D\" gpus: 8 tokens: 1e8 workload: \"w.textproto\" }\n");
  for (const char* option : {"--csv", "--json", "--trace"}) {
    const Result r = run({"cluster", scen, option, w, "--force"});
    EXPECT_EQ(r.status, 2) << option;
    EXPECT_TRUE(has(r.err, w + ": is one of the input files")) << r.err;
    EXPECT_EQ(slurp(w), kWorkload) << option;
  }
}

// Before: two rows "job1".
TEST_F(FreshUser36Cluster, AnExplicitNameEqualToADefaultNameIsRefused) {
  const std::string text =
      four_nodes("") + "job { name: \"job4\" gpus: 8 duration_s: 1 }\njob { gpus: 8 duration_s: 2 }\n";
  const Result r = run({"cluster", write("dup.textproto", text)});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "dup.textproto:13:7: job[3].name: \"job4\" is the name job[4] is reported by, which has "
                  "none (expected a unique name"))
      << r.err;
}

// Before: every point invalid with "tp*cp*pp*dp = 8 but the cluster has 32 GPUs", and an axis over
// `job` suggested `traincast run --set job[i]`, which run refuses.
TEST_F(FreshUser36Cluster, ASweepOverAJobListIsRefusedUpFront) {
  write("jobs.textproto", four_nodes(""));
  const std::string sweep = write("s.sweep.textproto",
                                  "scenario_file: \"jobs.textproto\"\naxis { path: \"cluster.num_nodes\" values: \"4\" "
                                  "values: \"8\" }\n");
  const Result r = run({"sweep", sweep, "--out", path("o.csv"), "--progress", "never"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "s.sweep.textproto:1:1: scenario_file: the base scenario holds several jobs (3 job entries) "
                  "(expected a scenario without job entries"))
      << r.err;
  const std::string axis = write("a.sweep.textproto",
                                 "scenario_file: \"jobs.textproto\"\naxis { path: \"job.gpus\" "
                                 "values: \"8\" }\n");
  const Result a = run({"sweep", axis, "--out", path("a.csv"), "--progress", "never"});
  EXPECT_EQ(a.status, 2);
  EXPECT_TRUE(has(a.err, "traincast cluster --set job[i]")) << a.err;
  EXPECT_FALSE(has(a.err, "traincast run --set job")) << a.err;
}

}  // namespace
}  // namespace traincast::cli
