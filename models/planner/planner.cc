#include "models/planner/planner.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "models/collectives/collective_engine.h"
#include "models/compute/compute_model.h"
#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/network_size.h"
#include "models/spec/run_control.h"
#include "models/workload/layer_program.h"
#include "models/workload/pipeline_schedule.h"
#include "models/workload/transformer.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models::planner {
namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

void check_options(const PlanOptions& o) {
  if (o.max_tp < 0) throw std::invalid_argument("plan: max_tp must be >= 0 (got " + std::to_string(o.max_tp) + ")");
  if (o.max_virtual_stages < 1)
    throw std::invalid_argument("plan: max_virtual_stages must be >= 1 (got " + std::to_string(o.max_virtual_stages) +
                                ")");
  if (o.max_micro_batch_size < 0)
    throw std::invalid_argument("plan: max_micro_batch_size must be >= 0 (got " +
                                std::to_string(o.max_micro_batch_size) + ")");
}

/// The layout with recomputation blanked: layouts that differ only in recomputation share it.
Layout without_recompute(Layout l) {
  l.recompute = Recompute::none;
  return l;
}

/// Closed-form costs with caches shared by every candidate of one scenario (same model and
/// cluster): per-layer program times keyed by (tp, SP, micro-batch, recompute), collective
/// estimates keyed by (op, first rank, stride, ranks, bytes). Not thread-safe.
class Estimator {
 public:
  explicit Estimator(const Scenario& base)
      : net_(sim_),
        cluster_(base.cluster, net_),
        engine_(sim_, net_, cluster_),
        gpu_(cluster_.gpu_spec(0)),
        params_(compute_params(gpu_, base.cluster.profile)) {}

  double estimate(const Scenario& sc) {
    const int t = sc.parallel.tp, p = sc.parallel.pp, d = sc.parallel.dp;
    const int v =
        sc.parallel.schedule == PipelineSchedule::interleaved_one_f_one_b ? std::max(1, sc.parallel.virtual_stages) : 1;
    const int m = sc.training.global_batch_size / (d * sc.training.micro_batch_size);
    const Costs& c = costs(sc);
    const std::vector<int> layers = layers_per_stage(sc.model.num_layers, p);
    const double first = layers.front() * (c.layer_fwd_s + c.layer_bwd_s) + c.embedding_s + (p == 1 ? c.head_s : 0);
    const double last = layers.back() * (c.layer_fwd_s + c.layer_bwd_s) + c.head_s + (p == 1 ? c.embedding_s : 0);
    // A middle stage receives twice per micro-batch (activation, gradient; the first and last
    // stages once); each receive's scatter/gather all-gather over TP runs on the compute stream
    // (ModelPrograms::p2p_gather_bytes).
    const double gather_s = p > 1 ? collective(CollectiveOp::all_gather, 0, 1, t, c.p2p_gather_bytes) : 0.0;
    const double per_microbatch_s = std::max(first, last) + (p > 2 ? 2 : 1) * gather_s;
    const double p2p_s = p > 1 ? collective(CollectiveOp::send_recv, 0, t * d, 2, c.p2p_bytes) : 0.0;
    double total = m * per_microbatch_s + (p - 1) * (per_microbatch_s / v + 2 * p2p_s);

    // Data parallelism, for the stage with the embedding (the most parameters).
    const bool fp32 = sc.training.precision == Precision::fp32 || sc.training.precision == Precision::tf32;
    const double grad_bytes = (fp32 || sc.training.fp32_grad_accumulation) ? 4 : 2;
    const double weight_bytes = fp32 ? 4 : 2;
    const double params = layers.front() * c.layer_params + c.embedding_params + (p == 1 ? c.head_params : 0);
    const bool zero = sc.parallel.zero_stage >= 1 && d > 1;
    if (d > 1) {
      const CollectiveOp op = zero ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
      const double all_s = collective(op, 0, t, d, params * grad_bytes);
      const double bucket_bytes = std::max(sc.parallel.dp_bucket_bytes, 1e6 * d * grad_bytes);
      const double bucket_s = collective(op, 0, t, d, std::min(bucket_bytes, params * grad_bytes));
      const double hidden_s = sc.parallel.overlap_grad_reduce ? layers.front() * c.layer_bwd_s : 0.0;
      total += std::max(bucket_s, all_s - hidden_s);
      if (zero && !sc.parallel.overlap_param_gather)
        total += collective(CollectiveOp::all_gather, 0, t, d, params * weight_bytes);
    }
    // Adam step: reads and writes fp32 master weights, m, v, the gradient and the weight copy.
    const double state_bytes = 2 * (12 + grad_bytes + weight_bytes) * params / (zero ? d : 1);
    total += state_bytes / (gpu_.hbm_bandwidth_bytes_per_s * params_.memory_efficiency);
    return total;
  }

 private:
  struct Costs {
    double layer_fwd_s = 0, layer_bwd_s = 0, embedding_s = 0, head_s = 0;
    double layer_params = 0, embedding_params = 0, head_params = 0, p2p_bytes = 0, p2p_gather_bytes = 0;
  };

  const Costs& costs(const Scenario& sc) {
    const auto key = std::make_tuple(sc.parallel.tp, sc.parallel.sequence_parallel, sc.parallel.tp_comm_overlap,
                                     sc.training.micro_batch_size, static_cast<int>(sc.training.recompute));
    auto it = costs_.find(key);
    if (it != costs_.end()) return it->second;
    const ModelPrograms prog = build_transformer_programs(sc, gpu_, params_);
    const int t = sc.parallel.tp;
    Costs c;
    // Per-layer costs: the one layer kind of a dense model, else the mean over the layers.
    for (std::size_t k = 0; k < prog.layer_kinds.size(); ++k) {
      const LayerPrograms& lp = prog.layer_kinds[k];
      const double n =
          prog.layer_kinds.size() == 1
              ? 1.0
              : static_cast<double>(std::count(prog.layer_kind.begin(), prog.layer_kind.end(), static_cast<int>(k))) /
                    static_cast<double>(prog.layer_kind.size());
      const double fwd = program_seconds(lp.forward, t);
      const double bwd = program_seconds(lp.recompute, t) + program_seconds(lp.backward, t);
      const double params = lp.params_per_rank + lp.expert_params_per_rank;
      c.layer_fwd_s += n == 1.0 ? fwd : n * fwd;
      c.layer_bwd_s += n == 1.0 ? bwd : n * bwd;
      c.layer_params += n == 1.0 ? params : n * params;
    }
    c.embedding_s = program_seconds(prog.embedding_forward, t) + program_seconds(prog.embedding_backward, t);
    c.head_s = program_seconds(prog.head_forward, t) + program_seconds(prog.head_backward, t);
    c.embedding_params = prog.embedding_params_per_rank;
    c.head_params = prog.head_params_per_rank;
    c.p2p_bytes = prog.p2p_bytes;
    c.p2p_gather_bytes = prog.p2p_gather_bytes;
    return costs_.emplace(key, c).first->second;
  }

  /// Compute segments plus TP collectives; an overlapped collective counts only beyond the
  /// compute segment it runs beside.
  double program_seconds(const Program& prog, int t) {
    double total = 0;
    for (std::size_t i = 0; i < prog.size(); ++i) {
      const Segment& seg = prog[i];
      if (!seg.is_collective) {
        total += seg.seconds;
        continue;
      }
      if (t <= 1) continue;
      // A send_recv: one chunked TP overlap step, all pairs side by side, timed as one (async TP: copy engines).
      const double coll_s = seg.copy_engine
                                ? engine_.peer_copy_seconds(0, 1, seg.bytes)
                                : collective(seg.op, 0, 1, seg.op == CollectiveOp::send_recv ? 2 : t, seg.bytes);
      double beside_s = 0;
      if (seg.overlap == Overlap::with_next) {
        for (std::size_t j = i + 1; j < prog.size(); ++j)
          if (!prog[j].is_collective) {
            beside_s = prog[j].seconds;
            break;
          }
      } else if (seg.overlap == Overlap::with_prev) {
        for (std::size_t j = i; j-- > 0;)
          if (!prog[j].is_collective) {
            beside_s = prog[j].seconds;
            break;
          }
      }
      total += std::max(0.0, coll_s - beside_s);
    }
    return total;
  }

  /// estimate_seconds of `op` over ranks first, first+stride, ... (n of them).
  double collective(CollectiveOp op, int first, int stride, int n, double bytes) {
    if (n <= 1 || bytes <= 0) return 0.0;
    const auto key = std::make_tuple(static_cast<int>(op), first, stride, n, bytes);
    auto it = collectives_.find(key);
    if (it != collectives_.end()) return it->second;
    CollectiveCall call;
    call.op = op;
    call.bytes = bytes;
    for (int i = 0; i < n; ++i) call.ranks.push_back(first + i * stride);
    const double s = engine_.estimate_seconds(call);
    collectives_.emplace(key, s);
    return s;
  }

  sim::Simulator sim_;
  sim::FlowNetwork net_;
  Cluster cluster_;
  CollectiveEngine engine_;
  const GpuSpec& gpu_;
  ComputeParams params_;
  std::map<std::tuple<int, bool, bool, int, int>, Costs> costs_;
  std::map<std::tuple<int, int, int, int, double>, double> collectives_;
};

/// Simulations finished of the budget, reported as "plan: layouts simulated" (report_progress).
class SearchProgress {
 public:
  explicit SearchProgress(std::int64_t total) : total_(static_cast<std::uint64_t>(std::max<std::int64_t>(total, 1))) {}
  void done() {
    const std::uint64_t n = std::min(done_.fetch_add(1, std::memory_order_relaxed) + 1, total_);
    report_progress("plan: layouts simulated", n, total_);
  }

 private:
  std::uint64_t total_;
  std::atomic<std::uint64_t> done_{0};
};

/// Simulates entries[i] for each i in `which`, `jobs` at a time; results stored in place. Throws
/// Interrupted when an interrupt is requested (run_control.h).
void simulate_all(const Scenario& base, std::vector<PlanEntry>& entries, const std::vector<std::size_t>& which,
                  int jobs, SearchProgress* progress = nullptr) {
  auto one = [&](std::size_t k) {
    throw_if_interrupted("plan: layout search");
    PlanEntry& e = entries[which[k]];
    Scenario sc = apply_layout(base, e.layout);
    sc.options.threads = 1;  // parallelism is across layouts
    e.simulated = true;
    try {
      e.report = simulate_training(sc);
    } catch (const Interrupted&) {
      // Ctrl-C ends the search, not this layout, wherever the simulation was (building, running).
      throw Interrupted("plan: layout search: interrupted");
    } catch (const std::exception& ex) {
      e.error = ex.what();
    }
    if (progress != nullptr) progress->done();
  };
  tbb::task_arena arena(jobs);
  arena.execute([&] { tbb::parallel_for(std::size_t{0}, which.size(), one, tbb::simple_partitioner()); });
}

bool faster(const PlanEntry& a, const PlanEntry& b) {
  if (a.report.iteration_time_s != b.report.iteration_time_s)
    return a.report.iteration_time_s < b.report.iteration_time_s;
  return a.layout < b.layout;
}

bool better_estimate(const PlanEntry& a, const PlanEntry& b) {
  if (a.estimate_s != b.estimate_s) return a.estimate_s < b.estimate_s;
  return a.layout < b.layout;
}

/// The search is over transformer layouts; a ResNet trains with DDP only (tp = pp = 1).
void check_transformer(const Scenario& base) {
  if (base.model.family != ModelFamily::transformer)
    throw std::invalid_argument(
        "workload.model.family: resnet: traincast plan searches transformer layouts (TP, PP, interleaving, SP, "
        "ZeRO, micro-batch, recomputation); a ResNet is trained data-parallel only (DDP: tp = pp = 1, dp = GPUs), so "
        "there is no layout to search (expected family: transformer; run a ResNet with traincast run, or compare "
        "micro_batch_size values with traincast sweep)");
  if (base.parallel.cp > 1)
    throw std::invalid_argument(
        "workload.parallel.cp: " + std::to_string(base.parallel.cp) +
        ": traincast plan does not search context parallelism (expected cp: 1; plan the other dimensions at cp 1 on "
        "GPUs / cp GPUs, then compare cp values with traincast run --set workload.parallel.cp=N)");
  if (std::string why = mixed_node_kinds(base); !why.empty()) throw std::invalid_argument(why);
}

}  // namespace

std::vector<Layout> enumerate_layouts(const Scenario& base, const PlanOptions& o) {
  check_options(o);
  check_transformer(base);
  const NodeTemplate& node = cluster_node_template(base.cluster);
  const int gpn = node.gpus_per_node;
  const int gpus = nodes_in_service(base.cluster) * gpn;  // drained nodes (missing GPUs) run nothing
  const int max_tp = o.max_tp > 0 ? o.max_tp : 2 * gpn;
  const ModelSpec& m = base.model;
  const int batch = base.training.global_batch_size;
  std::vector<Layout> out;
  if (gpus < 1 || batch < 1 || m.num_layers < 1 || m.num_attention_heads < 1) return out;
  constexpr Recompute kRecompute[] = {Recompute::none, Recompute::selective, Recompute::full};
  for (int tp : divisors(gpus)) {
    if (tp > max_tp) break;
    for (int pp : divisors(gpus / tp)) {
      if (pp > m.num_layers) break;
      const bool uneven = m.num_layers % pp != 0;
      if (uneven && !o.uneven_stages) continue;
      const int dp = gpus / (tp * pp);
      if (batch % dp != 0) continue;
      for (int v = 1; v <= (pp > 1 && !uneven ? o.max_virtual_stages : 1); ++v) {
        for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
          for (int zero = 0; zero <= (dp > 1 ? 1 : 0); ++zero) {
            for (int mb : divisors(batch / dp)) {
              if (o.max_micro_batch_size > 0 && mb > o.max_micro_batch_size) break;
              for (Recompute rc : kRecompute) {
                Layout l{tp, pp, dp, v, sp == 1, zero, mb, rc, uneven};
                if (layout_error(base, l).empty()) out.push_back(l);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

double estimate_iteration_seconds(const Scenario& scenario) { return Estimator(scenario).estimate(scenario); }

namespace {

/// Throws std::invalid_argument for the options only plan_layouts reads.
void check_search_options(const PlanOptions& o) {
  if (o.max_simulations < 1)
    throw std::invalid_argument("plan: max_simulations must be >= 1 (got " + std::to_string(o.max_simulations) + ")");
  if (o.refine_top < 1)
    throw std::invalid_argument("plan: refine_top must be >= 1 (got " + std::to_string(o.refine_top) + ")");
  if (o.jobs < 1) throw std::invalid_argument("plan: jobs must be >= 1 (got " + std::to_string(o.jobs) + ")");
  if (!(o.estimate_slack >= 0))
    throw std::invalid_argument("plan: estimate_slack must be >= 0 (got " + std::to_string(o.estimate_slack) + ")");
}

/// The layouts that survive the memory and dominance prunes (steps 2-3), their estimate order
/// (step 4), and how to find one again by its layout.
struct Candidates {
  std::vector<PlanEntry> entries;
  std::map<Layout, std::size_t> by_key;  ///< layout without recomputation -> entry
  std::vector<std::size_t> order;        ///< entries by estimate, best first
  std::vector<char> promising;           ///< per entry: estimated within the slack of the best
};

/// Steps 1-3: enumerates the layouts, runs the memory model on each (in parallel; stored by
/// index) and keeps, of the layouts that differ only in recomputation, the lightest that fits.
/// Counts considered, pruned_memory and pruned_dominated; sets least_memory when none fits.
Candidates prune_layouts(const Scenario& base, const PlanOptions& o, PlanResult& result) {
  // 1-2. Enumerate, then the memory model (in parallel; stored by index).
  const std::vector<Layout> all = enumerate_layouts(base, o);
  result.stats.considered = static_cast<std::int64_t>(all.size());
  std::vector<MemoryBreakdown> memory(all.size());
  {
    tbb::task_arena arena(o.jobs);
    arena.execute([&] {
      tbb::parallel_for(std::size_t{0}, all.size(), [&](std::size_t i) {
        throw_if_interrupted("plan: layout search");
        memory[i] = layout_memory(apply_layout(base, all[i]));
      });
    });
  }

  // 3. Dominance: recomputation is the innermost enumeration loop, so a group is consecutive.
  Candidates c;
  std::size_t least = all.size();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (least == all.size() || memory[i].peak_bytes_per_gpu < memory[least].peak_bytes_per_gpu) least = i;
    if (memory[i].oom) {
      ++result.stats.pruned_memory;
      continue;
    }
    const Layout key = without_recompute(all[i]);
    if (c.by_key.count(key) != 0) {
      ++result.stats.pruned_dominated;
      continue;
    }
    c.by_key.emplace(key, c.entries.size());
    PlanEntry e;
    e.layout = all[i];
    e.memory = std::move(memory[i]);
    c.entries.push_back(std::move(e));
  }

  if (c.entries.empty() && least < all.size()) {
    PlanEntry e;
    e.layout = all[least];
    e.memory = memory[least];
    result.least_memory = std::move(e);
  }
  return c;
}

/// Step 4: estimates every candidate (sequential: the estimator's caches are not shared between
/// threads), orders them by estimate and marks those within `slack` of the best as promising.
void estimate_candidates(const Scenario& base, double slack, Estimator& estimator, Candidates& c) {
  for (PlanEntry& e : c.entries) {
    throw_if_interrupted("plan: layout search");
    e.estimate_s = estimator.estimate(apply_layout(base, e.layout));
  }

  // Only layouts estimated within the slack of the best estimate are worth a simulation.
  c.order.resize(c.entries.size());
  for (std::size_t i = 0; i < c.order.size(); ++i) c.order[i] = i;
  std::sort(c.order.begin(), c.order.end(),
            [&](std::size_t a, std::size_t b) { return better_estimate(c.entries[a], c.entries[b]); });
  c.promising.assign(c.entries.size(), 0);
  if (!c.order.empty()) {
    const double cutoff = c.entries[c.order.front()].estimate_s * (1.0 + slack);
    for (std::size_t i : c.order) {
      if (c.entries[i].estimate_s > cutoff) break;
      c.promising[i] = 1;
    }
  }
}

/// Steps 5-6: simulates promising candidates, coarse then refined, within the budget of
/// max_simulations; results land in the candidates' entries.
class Search {
 public:
  Search(const Scenario& base, const PlanOptions& o, Candidates& c)
      : base_(base), o_(o), c_(c), budget_(o.max_simulations), progress_(o.max_simulations) {}

  /// Step 5. Coarse: the best estimate of each (TP, PP, interleaved?) family, then the best
  /// overall, up to half of max_simulations.
  void coarse() {
    const std::size_t coarse_budget = static_cast<std::size_t>(std::max(1, o_.max_simulations / 2));
    std::vector<std::size_t> coarse;
    std::map<std::tuple<int, int, bool>, bool> seen;
    for (std::size_t i : c_.order) {
      if (!c_.promising[i]) break;
      const Layout& l = c_.entries[i].layout;
      if (seen.emplace(std::make_tuple(l.tp, l.pp, l.virtual_stages > 1), true).second) coarse.push_back(i);
    }
    if (coarse.size() > coarse_budget) coarse.resize(coarse_budget);
    for (std::size_t i : c_.order) {
      if (coarse.size() >= coarse_budget || !c_.promising[i]) break;
      if (std::find(coarse.begin(), coarse.end(), i) == coarse.end()) coarse.push_back(i);
    }
    run(coarse);
  }

  /// Step 6. Refine around the fastest simulated layouts; when their neighbourhoods are
  /// exhausted, go on down the estimate order. Counts refine_rounds.
  void refine(PlanStats& stats) {
    while (budget_ > 0) {
      std::vector<std::size_t> next;
      for (std::size_t i : fastest_simulated()) add_neighbours(c_.entries[i].layout, next);
      std::stable_sort(next.begin(), next.end(),
                       [&](std::size_t a, std::size_t b) { return better_estimate(c_.entries[a], c_.entries[b]); });
      if (next.empty()) {
        // Neighbourhoods exhausted: the next best estimates.
        for (std::size_t i : c_.order) {
          if (!c_.promising[i] || next.size() >= static_cast<std::size_t>(o_.refine_top)) break;
          if (!c_.entries[i].simulated) next.push_back(i);
        }
      }
      if (run(next) == 0) break;
      ++stats.refine_rounds;
    }
  }

 private:
  /// Simulates `which` (priority order, duplicates and simulated ones skipped) within the budget.
  std::size_t run(const std::vector<std::size_t>& which) {
    std::vector<std::size_t> now;
    std::vector<char> taken(c_.entries.size(), 0);
    for (std::size_t i : which) {
      if (static_cast<std::int64_t>(now.size()) >= budget_) break;
      if (c_.entries[i].simulated || taken[i]) continue;
      taken[i] = 1;
      now.push_back(i);
    }
    simulate_all(base_, c_.entries, now, o_.jobs, &progress_);
    budget_ -= static_cast<std::int64_t>(now.size());
    return now.size();
  }

  /// The entry of `l` (up to recomputation) when it survived and is promising.
  std::optional<std::size_t> lookup(const Layout& l) const {
    auto it = c_.by_key.find(without_recompute(l));
    if (it == c_.by_key.end() || !c_.promising[it->second]) return std::nullopt;
    return it->second;
  }

  /// The refine_top fastest successful simulations, fastest first.
  std::vector<std::size_t> fastest_simulated() const {
    std::vector<std::size_t> done;
    for (std::size_t i = 0; i < c_.entries.size(); ++i)
      if (c_.entries[i].simulated && c_.entries[i].error.empty()) done.push_back(i);
    std::sort(done.begin(), done.end(),
              [&](std::size_t a, std::size_t b) { return faster(c_.entries[a], c_.entries[b]); });
    if (done.size() > static_cast<std::size_t>(o_.refine_top)) done.resize(static_cast<std::size_t>(o_.refine_top));
    return done;
  }

  /// Appends to `next` the promising, not yet simulated neighbours of `l` (header comment, step 6).
  void add_neighbours(const Layout& l, std::vector<std::size_t>& next) const {
    auto add = [&](const Layout& n) {
      if (auto i = lookup(n); i && !c_.entries[*i].simulated) next.push_back(*i);
    };
    // Nearest smaller and larger micro-batch (and virtual-stage count) that has a survivor.
    const int per_replica = base_.training.global_batch_size / l.dp;
    for (int dir : {-1, 1}) {
      for (int mb = l.micro_batch_size + dir; mb >= 1 && mb <= per_replica; mb += dir) {
        if (per_replica % mb != 0) continue;
        Layout n = l;
        n.micro_batch_size = mb;
        if (auto j = lookup(n)) {
          if (!c_.entries[*j].simulated) next.push_back(*j);
          break;
        }
      }
      for (int v = l.virtual_stages + dir; v >= 1 && v <= o_.max_virtual_stages; v += dir) {
        Layout n = l;
        n.virtual_stages = v;
        if (auto j = lookup(n)) {
          if (!c_.entries[*j].simulated) next.push_back(*j);
          break;
        }
      }
    }
    Layout n = l;
    n.sequence_parallel = !l.sequence_parallel;
    add(n);
    n = l;
    n.zero_stage = 1 - l.zero_stage;
    add(n);
    // Trade a factor of 2 between DP and TP or PP, everything else kept.
    if (l.dp % 2 == 0) {
      n = l;
      n.dp /= 2;
      n.tp *= 2;
      add(n);
      n = l;
      n.dp /= 2;
      n.pp *= 2;
      n.uneven_stages = base_.model.num_layers % n.pp != 0;
      add(n);
    }
    if (l.tp % 2 == 0) {
      n = l;
      n.tp /= 2;
      n.dp *= 2;
      add(n);
    }
    if (l.pp % 2 == 0) {
      n = l;
      n.pp /= 2;
      n.dp *= 2;
      n.uneven_stages = base_.model.num_layers % n.pp != 0;
      add(n);
    }
  }

  const Scenario& base_;
  const PlanOptions& o_;
  Candidates& c_;
  std::int64_t budget_;
  SearchProgress progress_;
};

/// Step 7: counts what became of every candidate and ranks the successful simulations.
void rank_simulations(const Scenario& base, const Candidates& c, PlanResult& result) {
  for (std::size_t i = 0; i < c.entries.size(); ++i) {
    const PlanEntry& e = c.entries[i];
    if (!e.simulated) {
      ++(c.promising[i] ? result.stats.not_simulated : result.stats.pruned_estimate);
      continue;
    }
    ++result.stats.simulated;
    if (!e.error.empty() && result.stats.failed++ == 0)
      result.stats.first_failure = to_string(e.layout, base) + ": " + e.error;
  }
  for (const PlanEntry& e : c.entries)
    if (e.simulated && e.error.empty()) result.ranked.push_back(e);
  std::sort(result.ranked.begin(), result.ranked.end(), faster);
}

/// Baseline: the scenario's own layout, from the ranking, or else simulated apart with a note on
/// why the search did not simulate it (PlanResult::baseline_note).
void add_baseline(const Scenario& base, Estimator& estimator, const Candidates& c, PlanResult& result) {
  const Layout own = layout_of(base);
  if (std::string why = layout_error(base, own); !why.empty()) {
    result.baseline_note = own_layout_note(why);
    return;
  }
  for (std::size_t i = 0; i < result.ranked.size(); ++i)
    if (result.ranked[i].layout == own) {
      result.baseline = result.ranked[i];
      result.baseline_rank = static_cast<int>(i);
    }
  if (result.baseline) return;
  PlanEntry e;
  e.layout = own;
  e.memory = layout_memory(apply_layout(base, own));
  if (e.memory.oom) {
    result.baseline_note = "the scenario's own layout does not fit in memory: " + e.memory.advice;
    return;
  }
  e.estimate_s = estimator.estimate(apply_layout(base, own));
  // Why the search did not simulate it.
  auto it = c.by_key.find(without_recompute(own));
  if (it == c.by_key.end()) {
    result.baseline_note = "outside the searched space (see the --max-* options)";
  } else if (c.entries[it->second].layout != own) {
    result.baseline_note = std::string("the search kept the same layout with lighter recomputation (") +
                           recompute_name(c.entries[it->second].layout.recompute) + "), which also fits";
  } else if (!c.promising[it->second]) {
    result.baseline_note = "estimated beyond the slack of the best estimate";
  } else {
    result.baseline_note = "beyond the simulation budget";
  }
  std::vector<PlanEntry> one{e};
  simulate_all(base, one, {0}, 1);
  if (one[0].error.empty())
    result.baseline = std::move(one[0]);
  else
    result.baseline_note = "the scenario's own layout failed to simulate: " + one[0].error;
  if (result.baseline && !result.ranked.empty() && faster(*result.baseline, result.ranked.front()))
    result.baseline_note += "; it is faster than every layout the search simulated";
}

}  // namespace

void check_search_size(const Scenario& base, const PlanOptions& o) {
  const NodeTemplate& node = cluster_node_template(base.cluster);
  const std::int64_t gpus = static_cast<std::int64_t>(base.cluster.num_nodes) * node.gpus_per_node;
  const std::int64_t sims = std::max(1, o.max_simulations);
  if (gpus * sims <= kMaxSearchGpuSimulations) return;
  const std::int64_t allowed = kMaxSearchGpuSimulations / std::max<std::int64_t>(gpus, 1);
  throw std::invalid_argument(
      "cluster.num_nodes: " + std::to_string(base.cluster.num_nodes) + " x " + node.name + " = " +
      std::to_string(gpus) + " GPUs: a search of up to " + std::to_string(sims) + " simulations of " +
      std::to_string(gpus) + " GPUs = " + std::to_string(gpus * sims) +
      " GPU-simulations is beyond the planner's budget of " + std::to_string(kMaxSearchGpuSimulations) +
      " (120 simulations x 16,384 GPUs; each simulation builds the whole cluster, about 11 KB per GPU) (expected " +
      (allowed >= 1 ? "--max-simulations " + std::to_string(allowed) + " or fewer, or " : std::string()) +
      "fewer nodes; `traincast run` simulates one layout)");
}

PlanResult plan_layouts(const Scenario& base, const PlanOptions& o) {
  check_options(o);
  check_transformer(base);
  check_search_options(o);
  // Before the estimator or any simulation builds the cluster; the network first, since no
  // --max-simulations makes a cluster over its limit fit (models/hardware/network_size.h).
  check_network_size(base.cluster);
  check_search_size(base, o);
  PlanResult result;
  const NodeTemplate& node = cluster_node_template(base.cluster);
  result.gpus_per_node = node.gpus_per_node;
  result.num_gpus = nodes_in_service(base.cluster) * node.gpus_per_node;

  Candidates candidates = prune_layouts(base, o, result);  // steps 1-3
  Estimator estimator(base);
  estimate_candidates(base, o.estimate_slack, estimator, candidates);  // step 4
  Search search(base, o, candidates);
  search.coarse();                             // step 5
  search.refine(result.stats);                 // step 6
  rank_simulations(base, candidates, result);  // step 7
  add_baseline(base, estimator, candidates, result);
  return result;
}

}  // namespace traincast::models::planner
