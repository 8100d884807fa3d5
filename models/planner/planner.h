#pragma once
// Layout search for `traincast plan`: for a scenario's model, batch and cluster, enumerate
// parallel layouts (TP, PP, DP, interleaving, sequence parallelism, ZeRO stage, micro-batch,
// recomputation), drop those the memory model says do not fit without simulating them, and
// simulate the promising rest with simulate_training in parallel. A library: no printing.
//
// The search, in order (each count lands in PlanStats):
//  1. enumerate: every layout the scenario checker would accept (layout_error empty):
//     TP over divisors of the heads (and query groups) and of the GPU count, up to max_tp
//     (default 2 x GPUs per node, so node-crossing TP is considered); PP over divisors of
//     GPUs / TP up to the layer count (uneven stages where PP does not divide the layers);
//     DP = GPUs / (TP * PP); virtual stages 1 and every valid v in [2, max_virtual_stages];
//     SP on/off with TP > 1; ZeRO 0/1 with DP > 1; micro-batch over divisors of
//     global_batch / DP (up to max_micro_batch_size); recomputation none/selective/full.
//  2. memory prune: layout_memory peak > HBM capacity -> dropped, never simulated.
//  3. dominance prune: of layouts that differ only in recomputation, only the lightest one that
//     fits is kept (recomputation only adds work; the memory it saves is all it buys).
//  4. estimate: a closed-form iteration time per survivor (estimate_iteration_seconds). Layouts
//     estimated more than estimate_slack above the best estimate are not simulated (counted in
//     pruned_estimate); the estimate also orders the simulations. It never ranks: only
//     simulated times do.
//  5. coarse: simulate the best-estimated layout of every (TP, PP, interleaved or not) family
//     within the slack, then the best-estimated overall, up to half of max_simulations.
//  6. refine (coarse-to-fine): around the refine_top fastest simulated layouts, simulate their
//     neighbours within the slack (nearest smaller/larger micro-batch, nearest virtual-stage
//     counts, SP and ZeRO toggled, a factor 2 moved between DP and TP or PP), repeating while
//     the budget lasts; when no new neighbour is left, the next best estimates.
//  7. rank simulated layouts by iteration time (ties: Layout order). The scenario's own
//     layout is simulated too (baseline) so the result can say what the plan gains over it.
// Determinism: every choice depends only on the inputs and on simulation results, results are
// stored by index, so the result is identical for any `jobs`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/planner/layout.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models::planner {

/// Bounds of the search. Defaults keep GPT-3 175B on 1,024 A100s to about a minute on 2 cores.
struct PlanOptions {
  int max_tp = 0;                ///< largest TP tried; 0 = 2 x GPUs per node
  int max_virtual_stages = 4;    ///< largest interleaving degree tried (>= 1; 1 = no interleaving)
  int max_micro_batch_size = 0;  ///< largest micro-batch tried; 0 = no cap (memory decides)
  bool uneven_stages = true;     ///< also try PP that does not divide the layers
  int max_simulations = 120;     ///< simulation budget (>= 1), baseline not counted
  int refine_top = 4;            ///< layouts whose neighbours each refinement round explores (>= 1)
  /// Layouts estimated more than this fraction above the best estimate are not simulated (>= 0).
  /// 0.10: the estimate was within 3% of the simulation for the 30 best GPT-3 175B layouts and
  /// within 10% for all simulated ones (uneven pipelines, node-crossing TP), see planner_test.cc.
  double estimate_slack = 0.10;
  int jobs = 1;  ///< simulations run in parallel (TBB); result identical for any value
};

/// One layout the search looked at.
struct PlanEntry {
  Layout layout;
  MemoryBreakdown memory;  ///< from the memory model (equal to the simulated report's)
  double estimate_s = 0;   ///< closed-form iteration-time estimate [s] (ordering only)
  bool simulated = false;
  Report report;      ///< the simulation's report (when simulated and no error)
  std::string error;  ///< why the simulation failed (empty when it ran)
};

/// How many layouts went where. considered = pruned_memory + pruned_dominated + pruned_estimate +
/// simulated + not_simulated.
struct PlanStats {
  std::int64_t considered = 0;        ///< valid layouts enumerated
  std::int64_t pruned_memory = 0;     ///< dropped: peak memory above HBM capacity
  std::int64_t pruned_dominated = 0;  ///< dropped: same layout with lighter recomputation fits
  std::int64_t pruned_estimate = 0;   ///< not simulated: estimated beyond estimate_slack of the best
  std::int64_t simulated = 0;         ///< simulated (failures included)
  std::int64_t failed = 0;            ///< simulations that threw (their message in PlanEntry::error)
  std::string first_failure;          ///< the first failed layout (enumeration order) and its message
  std::int64_t not_simulated = 0;     ///< within the slack but beyond the simulation budget
  int refine_rounds = 0;              ///< refinement rounds that simulated something
};

struct PlanResult {
  std::vector<PlanEntry> ranked;  ///< every successful simulation, fastest first
  /// The scenario's own layout, simulated (from `ranked` when the search simulated it, else
  /// simulated apart, not counted in stats). Empty when that layout is invalid, does not fit or
  /// fails to simulate.
  std::optional<PlanEntry> baseline;
  /// Empty when the search itself simulated the baseline; otherwise why there is no baseline, or
  /// why the search skipped it (e.g. "the search kept the same layout with lighter recomputation
  /// (selective), which also fits"), with "; it is faster than every layout the search simulated"
  /// appended should that happen.
  std::string baseline_note;
  int baseline_rank = -1;  ///< 0-based position of the baseline in `ranked`, -1 when not there
  /// When no layout fits: the one with the smallest peak memory (memory only, not simulated), to
  /// say how far from fitting the job is.
  std::optional<PlanEntry> least_memory;
  PlanStats stats;
  int num_gpus = 0;
  int gpus_per_node = 0;
};

/// Every valid layout of step 1 above, in enumeration order (tp, pp, virtual stages, SP, ZeRO,
/// micro-batch, recompute ascending). Throws std::invalid_argument for bad options (max_tp < 0,
/// max_virtual_stages < 1, max_micro_batch_size < 0) or an unknown node template.
std::vector<Layout> enumerate_layouts(const Scenario& base, const PlanOptions& options = {});

/// Why no layout of step 1 is valid, for a refusal: empty when enumerate_layouts finds one; else "no parallel layout is
/// valid on N GPUs for this model and batch (S TP x PP x DP splits ... tried at micro-batch 1, e.g. TP 1 x PP 1 x DP
/// 24: <layout_error>; ...)" with up to 3 splits and why each fails. Throws as enumerate_layouts.
std::string why_no_layout(const Scenario& base, const PlanOptions& options = {});

/// "cluster.node_group: 1 x dgx_a100 and 1 x dgx_h100: traincast plan searches clusters of one
/// node kind (expected ...)" when the cluster's node groups differ in node_template or gpu (the
/// search prices memory and estimates on one node kind), else empty.
std::string mixed_node_kinds(const Scenario& base);

/// Closed-form iteration time of `scenario` [s], for ordering candidates only (the ranking uses
/// simulation): per micro-batch, the busiest stage's compute from the workload programs plus TP
/// collectives from CollectiveEngine::estimate_seconds (overlapped ones count only beyond the
/// compute they hide under) and pipeline send/recv; times (micro-batches + (pp - 1) / virtual
/// stages) for 1F1B fill and drain; plus the gradient reduction not hidden under the last
/// micro-batch's backward, the ZeRO-1 parameter all-gather unless overlapped, and the optimizer
/// step at HBM speed. Throws what build_transformer_programs or Cluster throw.
double estimate_iteration_seconds(const Scenario& scenario);

/// Largest search plan_layouts takes, in GPU-simulations: max_simulations x the cluster's GPUs.
/// Every simulation builds the whole cluster and its flow network (measured with `traincast run`
/// at 131,072 H100: 1.4 GB, about 11 KB per GPU, and 35 s for one folded Llama 3 405B iteration),
/// so a search's memory and time grow with this product. The limit is the default budget of 120
/// simulations on the scenario gallery's largest job, Llama 3 405B on 16,384 H100
/// (scenarios/models/llama3_405b.textproto): 120 x 16,384 = 1,966,080.
inline constexpr std::int64_t kMaxSearchGpuSimulations = std::int64_t{120} * 16384;

/// Throws std::invalid_argument ("cluster.num_nodes: ...", naming the GPUs, the budget and the
/// largest max_simulations the cluster allows) when options.max_simulations x the cluster's GPUs
/// exceeds kMaxSearchGpuSimulations; plan_layouts calls it before it builds anything. Throws
/// std::invalid_argument for an unknown node template.
void check_search_size(const Scenario& base, const PlanOptions& options);

/// Runs the search of this header's comment on `base` (its model, cluster, batch, precision and
/// flags; its own layout is the baseline). Throws std::invalid_argument for bad options
/// (also max_simulations < 1, refine_top < 1, jobs < 1), a cluster the catalog lacks, or a search
/// beyond kMaxSearchGpuSimulations (check_search_size) or a network beyond kMaxNetworkResources
/// (check_network_size, models/hardware/network_size.h); Interrupted (models/spec/run_control.h)
/// when an interrupt is requested. Reports "plan: layouts simulated" progress (report_progress).
PlanResult plan_layouts(const Scenario& base, const PlanOptions& options = {});

}  // namespace traincast::models::planner
