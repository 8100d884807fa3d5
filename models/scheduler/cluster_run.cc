#include "models/scheduler/cluster_run.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "models/executor/power_thermal_setup.h"
#include "models/executor/training_run.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/leaf_ports.h"
#include "models/hardware/placed_overrides.h"
#include "models/scheduler/placement.h"
#include "models/scheduler/scheduler.h"

namespace traincast::models {
namespace {

/// One detailed simulation's result.
struct Timing {
  double iteration_time_s = 0.0;
  double tokens_per_iteration = 0.0;
  bool oom = false;
  UpLinkTraffic own;  ///< its traffic over the leaf up-links (measured without background)
};

/// Co-runners' traffic on a job's sub-cluster leaf groups: (group, up, down, flows), ascending group.
using Background = std::vector<std::tuple<int, double, double, int>>;
/// (job scenario class, leaves spanned, its nodes' overrides (overrides_key), co-runners'
/// background): one detailed simulation.
using Key = std::tuple<int, int, std::string, Background>;
using Cache = std::map<Key, Timing>;

/// Leaf groups exist on the switched fabrics; elsewhere the cluster is one group.
int nodes_per_leaf(const ClusterSpec& c) {
  const bool leaves = c.fabric.kind == FabricKind::fat_tree || c.fabric.kind == FabricKind::rail_optimized;
  return leaves ? std::max(1, std::min(c.fabric.nodes_per_leaf, c.num_nodes)) : std::max(1, c.num_nodes);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// The drained nodes (a missing GPU, cluster.overrides missing): never given to a job.
std::vector<int> drained_nodes(const ClusterSpec& c) {
  std::vector<int> out;
  for (const std::pair<int, int>& d : drained_nodes_of(c)) out.push_back(d.first);
  return out;
}

/// Seconds of `t`, exact for whole seconds (ns / 1e9 rather than ns x 1e-9, which gives 15.000000000000002).
double secs(sim::Time t) { return static_cast<double>(t.ns()) / 1e9; }

/// The whole fabric's leaf up-link ports, where they are fewer than its down ports (an
/// oversubscribed leaf, whose up-links co-runners contend for); 0 elsewhere (one leaf group, a
/// torus, or up-links as wide as the leaf's down ports, which its nodes' NICs cannot oversubscribe).
/// The ports are the ones models::Cluster builds (leaf_ports_used): cluster.fabric.leaf_up_ports
/// when set, else ceil(down / oversubscription).
int oversubscribed_up_ports(const ClusterSpec& c, int nics_per_node) {
  const int npl = nodes_per_leaf(c);
  if (npl >= c.num_nodes) return 0;
  const LeafPortsUsed ports = leaf_ports_used(c.fabric, c.num_nodes, nics_per_node, npl);
  return ports.up > 0 && ports.up < ports.down ? ports.up : 0;
}

/// The job on `leaves` leaves: nodes_per_leaf = ceil(nodes / leaves), so its collectives cross the
/// spine as placed; with up_ports > 0 each leaf gets the whole fabric's up-link ports (a job alone
/// gets its leaves' up-links as the fabric has them). Background flows stand for co-runners.
Timing simulate(const Scenario& job, int leaves, std::vector<ElementOverride> overrides, int up_ports,
                const Background& bg) {
  Scenario s = job;
  s.cluster.overrides = std::move(overrides);
  s.cluster.fabric.nodes_per_leaf = ceil_div(s.cluster.num_nodes, leaves);
  if (leaves > 1 && up_ports > 0) s.cluster.fabric.leaf_up_ports = up_ports;
  std::vector<LeafBackground> background;
  for (const auto& [group, up, down, flows] : bg) background.push_back({group, up, down, flows});
  Timing t;
  const Report r = simulate_training_timing(s, background, &t.own);
  t.iteration_time_s = r.iteration_time_s;
  t.tokens_per_iteration = r.tokens_per_s * r.iteration_time_s;
  t.oom = r.memory.oom;
  return t;
}

/// "0-3,8": ascending nodes as ranges.
std::string node_ranges(const std::vector<int>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size();) {
    std::size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(nodes[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(nodes[j]);
    }
    i = j + 1;
  }
  return out;
}

/// The GPUs' power limit [W] without a cap of their own (gpu_power_limit_w of the cluster's GPU).
double job_power_limit_w(const Scenario& s) {
  return gpu_power_limit_w(s, find_gpu(s.cluster.gpu.empty() ? cluster_node_template(s.cluster).gpu : s.cluster.gpu));
}

class ClusterRun {
 public:
  ClusterRun(const ClusterJobs& in, const SchedulerSpec& scheduler, Cache& cache)
      : in_(in),
        scheduler_(scheduler),
        npl_(nodes_per_leaf(in.cluster.cluster)),
        nics_(Cluster(in.cluster.cluster).nics_per_node()),
        up_ports_(oversubscribed_up_ports(in.cluster.cluster, nics_)),
        power_limit_w_(job_power_limit_w(in.cluster)),
        cache_(cache) {}

  ClusterRunResult run(int threads) {
    const std::vector<JobSpec>& specs = in_.cluster.jobs;
    alone_timings(threads);
    std::vector<QueuedJob> queued;
    std::vector<std::size_t> index;  // queued -> job
    out_.jobs.resize(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      ClusterJobResult& r = out_.jobs[i];
      r.name = specs[i].name.empty() ? "job" + std::to_string(i) : specs[i].name;
      r.gpus = specs[i].gpus;
      r.arrival_s = specs[i].arrival_s;
      r.priority = specs[i].priority;
      r.problem = in_.problem[i];
      if (r.problem.empty() && specs[i].duration_s == 0.0) {
        const Timing& alone = cache_.at(key(i, alone_leaves(i), alone_nodes()));
        if (alone.oom)
          r.problem =
              "out of memory on its " + std::to_string(r.gpus) + " GPUs (traincast run on its workload says why)";
        else if (!(alone.tokens_per_iteration > 0.0))
          r.problem = "its workload reports no tokens per iteration (expected duration_s for a non-token workload)";
      }
      if (!r.problem.empty()) continue;
      const sim::Time alone = run_time(i, alone_leaves(i), alone_nodes());
      r.alone_run_s = secs(alone);
      queued.push_back({nodes_of(i), sim::Time::from_seconds(specs[i].arrival_s), specs[i].priority, alone});
      index.push_back(i);
    }
    const Schedule sched = schedule(queued, index, threads);
    for (std::size_t q = 0; q < queued.size(); ++q) fill(index[q], sched.jobs[q]);
    summarise(sched);
    return std::move(out_);
  }

 private:
  int nodes_of(std::size_t i) const { return in_.job_scenarios[i].cluster.num_nodes; }
  int alone_leaves(std::size_t i) const { return ceil_div(nodes_of(i), npl_); }
  /// The nodes whose overrides a job's isolated run gets: none. Alone means on an empty cluster of
  /// healthy nodes, so the backfill estimate is the job's nominal run time and its slowdown counts
  /// what its placement's nodes (their cluster.overrides) and its co-runners cost: never below 1
  /// (a slower GPU, a capped or failed part never makes a job faster).
  static const std::vector<int>& alone_nodes() {
    static const std::vector<int> none;
    return none;
  }
  /// Job i on `leaves` leaves and `nodes` (its nodes' overrides, less the power caps without
  /// effect: at or above the GPUs' limit, power_thermal_setup.h's acting_power_cap_w), with `bg`.
  Key key(std::size_t i, int leaves, const std::vector<int>& nodes, Background bg = {}) const {
    std::vector<ElementOverride> placed = placed_overrides(in_.cluster.cluster, nodes);
    std::erase_if(placed, [this](const ElementOverride& o) { return o.power_cap_w >= power_limit_w_; });
    return {in_.scenario_class[i], leaves, overrides_key(placed), std::move(bg)};
  }
  bool token_job(std::size_t i) const { return in_.cluster.jobs[i].duration_s == 0.0; }

  /// Simulations still to run, each key with a job of its class.
  struct Pending {
    std::vector<Key> keys;
    std::vector<std::size_t> job_of_key;
    std::vector<std::vector<int>> nodes_of_key;

    /// Adds job i's `k` (on `nodes`) unless cached or already pending.
    void add(const Cache& cache, const Key& k, std::size_t i, const std::vector<int>& nodes) {
      if (cache.count(k) > 0 || std::find(keys.begin(), keys.end(), k) != keys.end()) return;
      keys.push_back(k);
      job_of_key.push_back(i);
      nodes_of_key.push_back(nodes);
    }
  };

  /// Runs the pending simulations in parallel (each deterministic; results stored by key, so the
  /// cache holds the same whatever the thread count).
  void simulate_pending(const Pending& p, int threads) {
    std::vector<Timing> timings(p.keys.size());
    // 0: all hardware threads (the arena's default), as `run --threads 0`.
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    arena.execute([&] {
      tbb::parallel_for(std::size_t{0}, p.keys.size(), [&](std::size_t k) {
        timings[k] =
            simulate(in_.job_scenarios[p.job_of_key[k]], std::get<1>(p.keys[k]),
                     placed_overrides(in_.cluster.cluster, p.nodes_of_key[k]), up_ports_, std::get<3>(p.keys[k]));
      });
    });
    for (std::size_t k = 0; k < p.keys.size(); ++k) cache_[p.keys[k]] = timings[k];
    out_.simulations += static_cast<int>(p.keys.size());
  }

  /// The isolated simulations, in parallel.
  void alone_timings(int threads) {
    Pending p;
    for (std::size_t i = 0; i < in_.cluster.jobs.size(); ++i)
      if (in_.problem[i].empty() && token_job(i))
        p.add(cache_, key(i, alone_leaves(i), alone_nodes()), i, alone_nodes());
    simulate_pending(p, threads);
  }

  /// The co-runners' traffic on the leaves job i (on `nodes`) crosses the spine from, among
  /// `running`: a co-runner B counts on leaf l when both span more than one leaf and B has d nodes
  /// on l; it adds B's measured up-link traffic (its own placement's simulation, no background)
  /// x d / B's nodes each way, in as many flows as B has on a leaf's up-links while they are busy
  /// there (scaled by d / its nodes per simulated leaf, at least 1). Groups are the job's sub-cluster leaf
  /// groups: its leaves in ascending order. Empty on a fabric whose up-links nobody can
  /// oversubscribe (up_ports_ == 0), for a one-leaf job, and for a co-runner of fixed duration
  /// (no simulation: its traffic is unknown) or whose placement is not simulated yet (a round's
  /// stand-in, redone once it is).
  Background background(std::size_t i, const std::vector<int>& nodes, const std::vector<RunningJob>& running,
                        const std::vector<std::size_t>& index) const {
    Background bg;
    if (up_ports_ == 0) return bg;
    std::vector<int> leaves;
    leaves.reserve(nodes.size());
    for (int n : nodes) leaves.push_back(n / npl_);
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());  // nodes ascending
    if (leaves.size() < 2) return bg;
    for (std::size_t g = 0; g < leaves.size(); ++g) {
      double up = 0.0, down = 0.0;
      int flows = 0;
      for (const RunningJob& b : running) {
        const std::size_t j = index[b.job];
        if (j == i || !token_job(j) || leaves_spanned(*b.nodes, npl_) < 2) continue;
        const int d = static_cast<int>(
            std::count_if(b.nodes->begin(), b.nodes->end(), [&](int n) { return n / npl_ == leaves[g]; }));
        const auto it = cache_.find(key(j, leaves_spanned(*b.nodes, npl_), *b.nodes));
        if (d == 0 || it == cache_.end()) continue;
        const double share = static_cast<double>(d) / static_cast<double>(b.nodes->size());
        up += it->second.own.up_bytes_per_s * share;
        down += it->second.own.down_bytes_per_s * share;
        // Its flows on a leaf of its own simulation (ceil(n / L) nodes each), for its d nodes here.
        const int per_leaf = ceil_div(static_cast<int>(b.nodes->size()), leaves_spanned(*b.nodes, npl_));
        flows += std::max(1, static_cast<int>(std::lround(it->second.own.up_flows_per_leaf * d / per_leaf)));
      }
      if (up > 0.0 && down > 0.0) bg.emplace_back(static_cast<int>(g), up, down, flows);
    }
    return bg;
  }

  /// The schedule, with the placements' and co-runner sets' simulations run in parallel rounds:
  /// each round schedules with the cached timings, standing in a job's isolated run time where its
  /// placement's simulation is missing (its placement's run time alone where its co-runner set's
  /// is), and collects those; they are simulated together and the schedule is redone, until one
  /// round misses nothing. The schedule up to a round's first miss is exact, so that simulation is
  /// needed and every round adds at least one: the last round is the schedule of the exact run
  /// times, the same as simulating each when it is first needed. The rounds, and so the simulations
  /// run (counted, stand-ins included), do not depend on the thread count.
  Schedule schedule(const std::vector<QueuedJob>& queued, const std::vector<std::size_t>& index, int threads) {
    for (;;) {
      Pending missing;
      const RunTimeOf alone = [&](std::size_t q, const std::vector<int>& nodes) {
        const std::size_t i = index[q];
        const int leaves = leaves_spanned(nodes, npl_);
        if (token_job(i) && cache_.count(key(i, leaves, nodes)) == 0) {
          missing.add(cache_, key(i, leaves, nodes), i, nodes);
          return run_time(i, alone_leaves(i), alone_nodes());  // stand-in for this round
        }
        return run_time(i, leaves, nodes);
      };
      const CoRunTimeOf together = [&](std::size_t q, const std::vector<RunningJob>& running) {
        const std::size_t i = index[q];
        const std::vector<int>& nodes =
            *std::find_if(running.begin(), running.end(), [&](const RunningJob& r) { return r.job == q; })->nodes;
        const int leaves = leaves_spanned(nodes, npl_);
        if (!token_job(i) || cache_.count(key(i, leaves, nodes)) == 0) return alone(q, nodes);
        Background bg = background(i, nodes, running, index);
        if (bg.empty()) return run_time(i, leaves, nodes);
        const Key k = key(i, leaves, nodes, std::move(bg));
        const auto it = cache_.find(k);
        if (it == cache_.end()) {
          missing.add(cache_, k, i, nodes);
          return run_time(i, leaves, nodes);  // stand-in for this round
        }
        return run_time(i, leaves, nodes, it->second.iteration_time_s);
      };
      Schedule sched = run_scheduler(queued, {in_.cluster.cluster.num_nodes, npl_, drained_nodes(in_.cluster.cluster)},
                                     scheduler_, alone, up_ports_ > 0 ? together : CoRunTimeOf{});
      if (missing.keys.empty()) return sched;
      simulate_pending(missing, threads);
    }
  }

  const Timing& timing(std::size_t i, int leaves, const std::vector<int>& nodes) {
    const Key k = key(i, leaves, nodes);
    auto it = cache_.find(k);
    if (it == cache_.end()) {
      it = cache_
               .emplace(k, simulate(in_.job_scenarios[i], leaves, placed_overrides(in_.cluster.cluster, nodes),
                                    up_ports_, {}))
               .first;
      ++out_.simulations;
    }
    return it->second;
  }

  /// The token budget: tokens, or alone_duration_s x the isolated tokens/s.
  double tokens_of(std::size_t i) {
    const JobSpec& j = in_.cluster.jobs[i];
    if (j.tokens > 0.0) return j.tokens;
    const Timing& alone = timing(i, alone_leaves(i), alone_nodes());
    return j.alone_duration_s * alone.tokens_per_iteration / alone.iteration_time_s;
  }

  std::int64_t iterations(std::size_t i, int leaves, const std::vector<int>& nodes) {
    return static_cast<std::int64_t>(std::ceil(tokens_of(i) / timing(i, leaves, nodes).tokens_per_iteration));
  }

  /// Its whole run time on `leaves` and `nodes` at `iteration_s` per iteration (0: its placement's alone).
  sim::Time run_time(std::size_t i, int leaves, const std::vector<int>& nodes, double iteration_s = 0.0) {
    const JobSpec& j = in_.cluster.jobs[i];
    if (j.duration_s != 0.0) return sim::Time::from_seconds(j.duration_s);
    if (iteration_s == 0.0) iteration_s = timing(i, leaves, nodes).iteration_time_s;
    const double run_s = static_cast<double>(iterations(i, leaves, nodes)) * iteration_s;
    // The loader bounds each budget; a small job with a large token budget can still run longer
    // than the scheduler's clock holds (1e9 s per job, as job[i].duration_s).
    if (!(run_s <= 1e9)) {
      std::ostringstream m;
      m << "job[" << i << "] (" << in_.job_scenarios[i].name << "): its token budget takes " << run_s << " s on "
        << j.gpus << " GPUs at its simulated iteration time (expected a budget that runs in at most 1e9 s, "
        << "31.7 years: lower job[" << i << "]." << (j.tokens > 0.0 ? "tokens" : "alone_duration_s") << ")";
      throw std::invalid_argument(m.str());
    }
    return sim::Time::from_seconds(run_s);
  }

  void fill(std::size_t i, const JobOutcome& o) {
    ClusterJobResult& r = out_.jobs[i];
    r.start_s = secs(o.start);
    r.end_s = secs(o.end);
    r.wait_s = secs(o.start - sim::Time::from_seconds(r.arrival_s));
    r.run_s = secs(o.end - o.start);
    r.slowdown = r.run_s / r.alone_run_s;
    r.stretch = (r.wait_s + r.run_s) / r.alone_run_s;
    r.leaves = o.leaves;
    r.nodes = node_ranges(o.nodes);
    // Its run alone on the nodes it got: the placement's share of the slowdown; the rest is co-runners'.
    const double placed_s = secs(run_time(i, o.leaves, o.nodes));
    r.placement_slowdown = placed_s / r.alone_run_s;
    r.co_runner_slowdown = r.run_s / placed_s;
    if (in_.cluster.jobs[i].duration_s == 0.0) {
      r.iteration_time_s = timing(i, o.leaves, o.nodes).iteration_time_s;
      r.iterations = iterations(i, o.leaves, o.nodes);
    }
  }

  void summarise(const Schedule& sched) {
    const int per_node = cluster_node_template(in_.cluster.cluster).gpus_per_node;
    // The GPUs in service: a drained node's are neither busy nor idle capacity (docs/cluster.md).
    out_.cluster_gpus = nodes_in_service(in_.cluster.cluster) * per_node;
    out_.makespan_s = secs(sched.makespan);
    double busy_gpu_s = 0.0;
    for (std::size_t k = 0; k < sched.busy_nodes.size(); ++k) {
      out_.busy_gpus.emplace_back(secs(sched.busy_nodes[k].first), sched.busy_nodes[k].second * per_node);
      const sim::Time next = k + 1 < sched.busy_nodes.size() ? sched.busy_nodes[k + 1].first : sched.makespan;
      busy_gpu_s += secs(next - sched.busy_nodes[k].first) * sched.busy_nodes[k].second * per_node;
    }
    if (out_.makespan_s > 0.0) out_.utilisation = busy_gpu_s / (out_.cluster_gpus * out_.makespan_s);
    std::vector<double> waits;
    for (const ClusterJobResult& r : out_.jobs)
      if (r.problem.empty()) waits.push_back(r.wait_s);
    out_.jobs_run = static_cast<int>(waits.size());
    if (waits.empty()) return;
    std::sort(waits.begin(), waits.end());
    double sum = 0.0;
    for (double w : waits) sum += w;
    out_.mean_wait_s = sum / static_cast<double>(waits.size());
    const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(waits.size())));
    out_.p95_wait_s = waits[std::max<std::size_t>(rank, 1) - 1];
  }

  const ClusterJobs& in_;
  const SchedulerSpec& scheduler_;
  int npl_;
  int nics_;              ///< compute NICs per node
  int up_ports_;          ///< oversubscribed_up_ports of the cluster (0: no interference modelled)
  double power_limit_w_;  ///< the GPUs' limit without a cap of their own [W] (one GPU: no mixed groups here)
  Cache& cache_;          ///< shared by the policies of one simulate_cluster call
  ClusterRunResult out_;
};

}  // namespace

std::vector<ClusterRunResult> simulate_cluster(const ClusterJobs& jobs, const std::vector<SchedulerSpec>& schedulers,
                                               int threads) {
  Cache cache;
  std::vector<ClusterRunResult> out;
  out.reserve(schedulers.size());
  for (const SchedulerSpec& s : schedulers) out.push_back(ClusterRun(jobs, s, cache).run(threads));
  return out;
}

ClusterRunResult simulate_cluster(const ClusterJobs& jobs, int threads) {
  return std::move(simulate_cluster(jobs, {jobs.cluster.scheduler}, threads).front());
}

std::vector<double> utilisation_by_slice(const ClusterRunResult& r, int buckets) {
  std::vector<double> out(static_cast<std::size_t>(std::max(1, buckets)), 0.0);
  if (r.makespan_s <= 0.0 || r.cluster_gpus == 0) return out;
  const double width = r.makespan_s / static_cast<double>(out.size());
  for (std::size_t k = 0; k < r.busy_gpus.size(); ++k) {
    const double a = r.busy_gpus[k].first;
    const double b = k + 1 < r.busy_gpus.size() ? r.busy_gpus[k + 1].first : r.makespan_s;
    for (std::size_t s = 0; s < out.size(); ++s) {
      const double lo = std::max(a, width * static_cast<double>(s));
      const double hi = std::min(b, width * static_cast<double>(s + 1));
      if (hi > lo) out[s] += (hi - lo) * r.busy_gpus[k].second;
    }
  }
  for (double& u : out) u /= width * r.cluster_gpus;
  return out;
}

}  // namespace traincast::models
