#pragma once
// One parallel layout of a training job (the knobs `traincast plan` searches over), how it is
// written into a scenario, whether a scenario's model and cluster allow it, and its per-GPU
// memory from the memory model alone (no simulation). Plain structs: no protobuf, no CLI.

#include <compare>
#include <string>

#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models::planner {

/// The searched knobs. Everything else (model, cluster, batch, precision, flash attention,
/// overlap flags, bucket size) is the base scenario's.
struct Layout {
  int tp = 1;                      ///< tensor-parallel size (Megatron), divides heads and GPUs
  int pp = 1;                      ///< pipeline stages
  int dp = 1;                      ///< data-parallel size = GPUs / (tp * pp)
  int virtual_stages = 1;          ///< model chunks per GPU; > 1 = interleaved 1F1B
  bool sequence_parallel = false;  ///< Megatron SP (only with tp > 1)
  int zero_stage = 0;              ///< 0 or 1 (ZeRO-1 = distributed optimizer)
  int micro_batch_size = 1;        ///< sequences per micro-batch
  Recompute recompute = Recompute::none;
  bool uneven_stages = false;  ///< pp does not divide the layers (first stages get one more)

  /// Field-by-field order (tp, pp, dp, virtual_stages, sequence_parallel, zero_stage,
  /// micro_batch_size, recompute, uneven_stages): the deterministic tie-break of rankings.
  auto operator<=>(const Layout&) const = default;
  bool operator==(const Layout&) const = default;
};

/// The layout `scenario` uses (schedule one_f_one_b reads as virtual_stages = 1).
Layout layout_of(const Scenario& scenario);

/// `base` with the layout written in: tp/pp/dp, schedule (interleaved_one_f_one_b when
/// virtual_stages > 1), virtual_stages, uneven_stages, sequence_parallel (forced off with tp = 1),
/// zero_stage, micro_batch_size, recompute. tp_comm_overlap is kept only when the layout has
/// sequence parallelism (Megatron-Core requires it), overlap_param_gather only with ZeRO-1 (there is
/// no parameter gather without it). Does not check validity (see layout_error).
Scenario apply_layout(const Scenario& base, const Layout& layout);

/// Why `layout` cannot run `base`'s model on `base`'s cluster, in the scenario checker's words
/// (e.g. "tp 3 does not divide num_attention_heads 32"); empty when it can. The rules are those of
/// scenarios/README.md "Checks" that involve the layout: tp divides heads (and query groups, and
/// ffn_hidden_size when set),
/// tp*pp*dp = GPUs, pp <= layers and divides them unless uneven_stages, interleaving needs
/// pp >= 2, virtual_stages >= 2, pp*virtual_stages dividing the layers and micro-batches per
/// pipeline divisible by pp, global batch divisible by dp*micro_batch_size, zero_stage 0 or 1;
/// with sequence parallelism tp divides seq_length; a MoE model with tp > 1 has sequence
/// parallelism and tp divides its shared experts' width; the base's ep divides dp; optimizer
/// offload with dp > 1 has ZeRO. (These are the loader's layout rules, the ones
/// io::load_scenario_for_layout_search leaves to the search.)
/// Throws std::invalid_argument for an unknown node template (the cluster, not the layout, is bad).
std::string layout_error(const Scenario& base, const Layout& layout);

/// The plan's note on the scenario's own layout when layout_error gave `why`: "the scenario's own
/// layout is not valid: WHY", or, for a ZeRO-2/3 layout (valid for `traincast run`, outside the
/// search), "the scenario's own layout has WHY".
std::string own_layout_note(const std::string& why);

/// Peak per-GPU memory of `scenario` (a scenario with the layout applied): the stage with the
/// highest peak, exactly as simulate_training reports it (memory_model.h stage_memory with the
/// in-flight layers of pipeline_schedule.h), without simulating. Throws std::invalid_argument for
/// an unknown node template/GPU or a schedule pipeline_steps rejects.
MemoryBreakdown layout_memory(const Scenario& scenario);

/// Short human form, e.g. "TP 8 x PP 8 (2 chunks) x DP 16, mb 1, SP, ZeRO-1, recompute full".
std::string to_string(const Layout& layout);

/// to_string(layout) with the per-stage layer list that apply_layout(base, layout) keeps from
/// base (same pp, no interleaving), e.g. "TP 8 x PP 2 (stages 10 + 22) x DP 4, mb 1, ...".
std::string to_string(const Layout& layout, const Scenario& base);

/// The most layers one pipeline stage holds when `layout` runs `base` (its kept per-stage list,
/// the uneven rule, or layers / pp), chunks of a stage counted together.
int max_stage_layers(const Layout& layout, const Scenario& base);

/// "none", "selective" or "full" (models/spec/enums.h).
using models::recompute_name;

}  // namespace traincast::models::planner
