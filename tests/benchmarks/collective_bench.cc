// Ring all-reduce of 1 GiB on 16,384 GPUs (2,048 DGX H100) in a 3-tier fat tree (issue 3):
// wall time of building the cluster and of one collective, engine events per second, and the
// process's peak resident memory. Run: build/release/tests/benchmarks/collective_bench
// (a few seconds per repetition; quote the medians).
// AllGather1GiB_1024Ranks/{ring,pat} (issue 18): an all-gather of 1 GiB over GPU 0 of each of
// 1,024 DGX H100 (one GPU per node, the data-parallel groups of the folded Llama-3-405B layout at
// DP 1,024), ring and PAT forced: the collective's thread CPU time (cluster building excluded),
// its events and flows; PAT prints x_ring, its CPU time over ring's in the same run (PAT is one
// multi-path flow per rank and channel, as many flows as ring).
// PriceDataParallelGroups/{oracle,floor} (issue 18): the tuner's choice for the data-parallel
// all-gathers and reduce-scatters of 2,048 DGX H100 at DP 256, with and without the PAT price
// floor; the floor prints x_oracle (its CPU time over the oracle's, same run) and plans_built.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <ctime>
#include <numeric>
#include <utility>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace {

using namespace traincast;

models::ClusterSpec fat_tree_16k() {
  models::ClusterSpec s;
  s.node_template = "dgx_h100";
  s.num_nodes = 2048;  // 16,384 GPUs
  s.fabric.kind = models::FabricKind::fat_tree;
  s.fabric.tiers = 3;
  s.fabric.nodes_per_leaf = 8;   // 64 NICs down per leaf
  s.fabric.leaves_per_pod = 16;  // 16 pods of 16 leaves
  return s;
}

struct Done : models::CollectiveListener {
  void on_collective_done(std::uint64_t) override { ++count; }
  int count = 0;
};

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kB
}

void BM_RingAllReduce1GiB_16384Gpus_FatTree3(benchmark::State& state) {
  const models::ClusterSpec spec = fat_tree_16k();
  double events = 0, sim_ms = 0, resources = 0;
  for (auto _ : state) {
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const models::Cluster cluster(spec, net);
    models::CollectiveEngine engine(sim, net, cluster);
    models::CollectiveCall call;
    call.op = models::CollectiveOp::all_reduce;
    call.algorithm = models::CollectiveAlgorithm::ring;
    call.ranks.resize(static_cast<std::size_t>(cluster.num_gpus()));
    std::iota(call.ranks.begin(), call.ranks.end(), 0);
    call.bytes = 1024.0 * 1024.0 * 1024.0;
    Done done;
    engine.start(call, &done, 0);
    sim.run();
    benchmark::DoNotOptimize(done.count);
    events = static_cast<double>(sim.events_processed());
    sim_ms = sim.now().seconds() * 1e3;
    resources = static_cast<double>(net.num_resources());
  }
  state.counters["events"] = events;
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["simulated_ms"] = sim_ms;
  state.counters["resources"] = resources;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double ring_all_gather_cpu_s = 0;  // the ring run's CPU time, for PAT's x_ring

void BM_AllGather1GiB_1024Ranks(benchmark::State& state) {
  const bool pat = state.range(0) == 1;
  models::ClusterSpec spec = fat_tree_16k();
  spec.num_nodes = 1024;  // 8,192 GPUs, 8 pods of 16 leaves
  double cpu_s = 0, events = 0, flows = 0;
  for (auto _ : state) {
    state.PauseTiming();
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const models::Cluster cluster(spec, net);
    models::CollectiveEngine engine(sim, net, cluster);
    models::CollectiveCall call;
    call.op = models::CollectiveOp::all_gather;
    call.algorithm = pat ? models::CollectiveAlgorithm::pat : models::CollectiveAlgorithm::ring;
    for (int node = 0; node < spec.num_nodes; ++node) call.ranks.push_back(8 * node);
    call.bytes = 1024.0 * 1024.0 * 1024.0;
    const models::CollectiveEngine::Prepared prepared = engine.prepare(call);  // builds the plan
    state.ResumeTiming();
    const double t0 = thread_cpu_s();
    Done done;
    engine.start(prepared, &done, 0);
    sim.run();
    cpu_s = thread_cpu_s() - t0;
    benchmark::DoNotOptimize(done.count);
    events = static_cast<double>(sim.events_processed());
    flows = static_cast<double>(prepared.plan->flows.size());
  }
  if (!pat) ring_all_gather_cpu_s = cpu_s;
  state.counters["cpu_s"] = cpu_s;
  state.counters["events"] = events;
  state.counters["flows"] = flows;
  if (pat && ring_all_gather_cpu_s > 0) state.counters["x_ring"] = cpu_s / ring_all_gather_cpu_s;
  state.SetLabel(pat ? "pat" : "ring");
}

double oracle_pricing_cpu_s = 0;  // the oracle's CPU time, for the floor's x_oracle

// What the tuner spends choosing the data-parallel collectives of the Llama-3-405B layout at DP 256
// on 16,384 GPUs (2,048 DGX H100, RoCE, 3-tier fat tree, ECMP): all_gather and reduce_scatter of
// 1.59 GB (one ZeRO-1 bucket of 2 layers of bf16 parameters) over the 64 groups of 256 ranks (GPU g
// of 256 consecutive nodes), where ring wins. Arg 0: the oracle, which builds every PAT plan to
// price it; 1: the PAT price floor (CollectiveEngine::set_pat_price_floor). The same choices; the
// floor prints x_oracle, its CPU time over the oracle's in the same run.
void BM_PriceDataParallelGroups(benchmark::State& state) {
  const bool with_floor = state.range(0) == 1;
  models::ClusterSpec spec = fat_tree_16k();
  spec.nic = "RoCE-400GbE";
  double cpu_s = 0, plans = 0;
  for (auto _ : state) {
    state.PauseTiming();
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const models::Cluster cluster(spec, net);
    models::CollectiveEngine engine(sim, net, cluster);
    engine.set_pat_price_floor(with_floor);
    std::vector<models::CollectiveCall> calls;
    for (int first = 0; first < spec.num_nodes; first += 256) {
      for (int g = 0; g < 8; ++g) {
        for (models::CollectiveOp op : {models::CollectiveOp::all_gather, models::CollectiveOp::reduce_scatter}) {
          models::CollectiveCall call;
          call.op = op;
          for (int node = first; node < first + 256; ++node) call.ranks.push_back(8 * node + g);
          call.bytes = 1.59e9;
          calls.push_back(std::move(call));
        }
      }
    }
    state.ResumeTiming();
    const double t0 = thread_cpu_s();
    for (const models::CollectiveCall& call : calls) benchmark::DoNotOptimize(engine.prepare(call).choice);
    cpu_s = thread_cpu_s() - t0;
    plans = static_cast<double>(engine.plans_built());
  }
  if (!with_floor) oracle_pricing_cpu_s = cpu_s;
  state.counters["cpu_s"] = cpu_s;
  state.counters["plans_built"] = plans;
  if (with_floor && oracle_pricing_cpu_s > 0) state.counters["x_oracle"] = cpu_s / oracle_pricing_cpu_s;
  state.SetLabel(with_floor ? "floor" : "oracle");
}

}  // namespace

BENCHMARK(BM_PriceDataParallelGroups)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_AllGather1GiB_1024Ranks)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_RingAllReduce1GiB_16384Gpus_FatTree3)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);
BENCHMARK_MAIN();
