#include "tools/cli/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/compute/framework_constants.h"
#include "models/cost/prices.h"
#include "models/executor/job_effects.h"
#include "models/hardware/catalog.h"
#include "models/workload/cnn.h"
#include "models/workload/layer_program.h"
#include "models/workload/memory_model.h"
#include "models/workload/transformer.h"
#include "tools/cli/compare.h"
#include "tools/cli/summary_cost.h"

namespace traincast::cli {
namespace {

const char* fabric_name(models::FabricKind k) {
  switch (k) {
    case models::FabricKind::none:
      return "none";
    case models::FabricKind::rail_optimized:
      return "rail-optimized";
    case models::FabricKind::fat_tree:
      return "fat-tree";
    case models::FabricKind::torus:
      return "torus";
  }
  return "?";
}

std::string pct(double fraction) { return format_fixed(100.0 * fraction, 1) + " %"; }

}  // namespace

std::string format_count(double v) {
  const char* units[] = {"", "K", "M", "B", "T", "P", "E"};
  int u = 0;
  while (v >= 1000.0 && u < 6) v /= 1000.0, ++u;
  return u == 0 ? format_fixed(v, v == static_cast<long long>(v) ? 0 : 1) : format_fixed(v, 1) + units[u];
}

double default_token_budget(const models::Scenario& sc) {
  if (sc.model.family == models::ModelFamily::resnet) return 0.0;
  return models::kDefaultTokensPerParameter * models::total_parameters(sc.model);
}

double default_budget_time_s(const models::Scenario& sc, const models::Report& r) {
  const double budget = default_token_budget(sc);
  // Whole iterations, as the report counts a scenario's budget (training_report.cc): an optimizer
  // step trains a whole global batch.
  const double tokens = static_cast<double>(sc.training.global_batch_size) * models::tokens_per_sample(sc.model);
  if (!(budget > 0) || !(tokens > 0) || !(r.iteration_time_s > 0)) return 0.0;
  return std::ceil(budget / tokens) * r.iteration_time_s;
}

models::Report with_default_budget(const models::Scenario& sc, models::Report r) {
  const bool own_budget = r.train_tokens > 0;  // the scenario's: kept, with its own cost section's figures
  const double budget = own_budget ? 0.0 : default_token_budget(sc);
  if (budget > 0) {
    r.train_tokens = budget;
    r.train_tokens_source = kDefaultBudgetRule;
    // A run that does not fit in memory has no time to train (the summary says "not feasible").
    if (!r.memory.oom) r.time_to_train_s = default_budget_time_s(sc, r);
  }
  // The cost of the summary's "To train" line (print_to_train), in the report: the scenario's
  // cost section, evaluated with no training time, gets its to-train figures; without a section,
  // the catalog's rent alone (the summary prints no own side for it either).
  // GPU-hours of the wall clock: with failures where the scenario models them (the default
  // budget's time over the mean goodput, as compare's time to train and job_effects' cost of a
  // scenario's budget without a Monte-Carlo figure for it).
  const bool failures = r.reliability.modelled && r.reliability.goodput_mean > 0;
  const double wall_s = failures ? r.time_to_train_s / r.reliability.goodput_mean : r.time_to_train_s;
  const double gpu_hours = r.num_gpus * wall_s / 3600.0;
  // Its facility energy, as the summary's "To train" line prints it (the power model's average),
  // over the same wall clock (the scenario's own budget has it from the executor already).
  if (r.power.energy_to_train_kwh == 0 && r.time_to_train_s > 0)
    r.power.energy_to_train_kwh = r.power.facility_average_w * wall_s / 3.6e6;
  models::CostReport& c = r.cost;
  const models::GpuPrices* p = models::find_prices(r.gpu);
  // The scenario's own budget with its own cost section: the report's figures stand as computed.
  if (!(gpu_hours > 0) || (own_budget && c.modelled)) return r;
  if (c.modelled) {
    c.train_gpu_hours = gpu_hours;
    if (c.rent_modelled) c.cloud_cost_to_train_usd = c.cloud_price_per_gpu_hour_usd * gpu_hours;
    if (c.own_modelled) c.own_cost_to_train_usd = c.own_cost_per_gpu_hour_usd * gpu_hours;
  } else if (!sc.cost && p != nullptr && p->rent) {
    c.modelled = c.rent_modelled = true;
    c.nodes = r.num_nodes;
    c.cloud_price_per_gpu_hour_usd = p->rent->usd;
    c.cloud_price_source = models::describe_price(*p->rent, true);
    c.train_gpu_hours = gpu_hours;
    c.cloud_cost_to_train_usd = p->rent->usd * gpu_hours;
    c.note = std::string("rent only, ") + (own_budget ? "at the catalog's rate" : "for the default token budget") +
             ": the scenario has no cost section (give cost {} for the own side)";
  }
  return r;
}

bool tight_memory(const models::MemoryBreakdown& m) {
  return !m.oom && m.capacity_bytes - m.peak_bytes_per_gpu < kMemoryModelMapeFraction * m.peak_bytes_per_gpu;
}

std::string tight_memory_reason() {
  return "within the memory model's error, +/-" + format_fixed(100 * kMemoryModelMapeFraction, 1) +
         " % of the peak against 89 measured peaks, which are usually higher than predicted (docs/accuracy.md): it "
         "may not fit";
}

namespace {

/// Issue 21: days and dollars to train the scenario's token budget, or when it gives none the
/// default one, marked as such (20 tokens per parameter, models::kDefaultTokensPerParameter), at
/// the scenario's rent or the catalog's; the default budget's energy too (the Power section prints
/// a scenario budget's).
void print_to_train(std::ostream& o, const models::Scenario& sc, const models::Report& r) {
  const models::Report d = with_default_budget(sc, r);  // the figures run --json writes
  if (!(d.time_to_train_s > 0)) return;
  // Failure-free time; where the scenario models failures, the wall clock with them beside it (the
  // Failures section's Monte-Carlo figure for a scenario's budget, else the default budget's time
  // over its mean goodput), so the two sections do not read as two answers.
  const models::ReliabilityReport& rel = r.reliability;
  std::string failures = r.train_tokens > 0 ? "no failures or restarts counted" : "no failures counted";
  if (rel.modelled && r.train_tokens > 0 && rel.work_requested_s > 0 && rel.wall_clock_s_mean > 0)
    failures =
        "failure-free; " + format_duration(rel.wall_clock_s_mean) + " with failures and restarts (Failures, below)";
  else if (rel.modelled && rel.goodput_mean > 0)
    failures = "failure-free; about " + format_duration(d.time_to_train_s / rel.goodput_mean) + " at the " +
               format_fixed(100 * rel.goodput_mean, 1) + " % goodput of Failures, below";
  o << "To train   " << format_duration(d.time_to_train_s) << " for " << format_count(d.train_tokens)
    << (r.train_tokens > 0 ? " tokens (" + failures + ")"
                           : " tokens (default budget: 20 tokens per parameter, Hoffmann et al. 2022; set "
                             "workload.training.train_tokens; " +
                                 failures + ")");
  const models::CostReport& c = d.cost;
  if (c.rent_modelled) {
    // The rent is of the wall clock with failures where they are modelled (with_default_budget).
    o << (rel.modelled && rel.goodput_mean > 0 ? ", rent with failures $" : ", rent $")
      << with_thousands(c.cloud_cost_to_train_usd) << " at $" << format_fixed(c.cloud_price_per_gpu_hour_usd, 2)
      << "/GPU-hour (";
    const models::GpuPrices* p = models::find_prices(r.gpu);
    if (sc.cost && sc.cost->cloud_price_per_gpu_hour_usd > 0)
      o << "scenario";
    else if (p != nullptr && p->rent)
      o << p->rent->vendor << " " << p->rent->kind << ", " << p->rent->date;
    o << ")";
  }
  // The facility energy of that time, as the Power section's "to train" for a scenario's budget.
  if (d.power.energy_to_train_kwh > 0 && !(r.train_tokens > 0))
    o << ", " << format_energy_kwh(d.power.energy_to_train_kwh) << " at the facility";
  o << "\n";
}

/// The scenario's name, cluster and model (MoE and LoRA when present).
void print_cluster_and_model(std::ostream& o, const models::Scenario& sc, const models::Report& r,
                             const std::string& origin, bool set_changed) {
  o << "traincast: " << (sc.name.empty() ? std::string("(unnamed scenario)") : sc.name) << "  [" << origin << "]\n";
  if (!sc.description.empty())
    o << "  " << sc.description << (set_changed ? "  (the scenario's description, not updated by --set)" : "") << "\n";
  if (r.mixed.groups.empty()) {
    o << "\nCluster    " << r.num_nodes << " x " << sc.cluster.node_template << " = " << r.num_gpus << " x " << r.gpu;
  } else {
    o << "\nCluster    " << r.num_nodes << " nodes, " << r.num_gpus << " GPUs in " << r.mixed.groups.size()
      << " node groups:";
    for (std::size_t i = 0; i < r.mixed.groups.size(); ++i) {
      const models::NodeGroupReport& g = r.mixed.groups[i];
      o << (i == 0 ? " " : " + ") << g.num_nodes << " x " << g.node_template << " (" << g.gpu << ")";
    }
  }
  if (r.num_nodes > 1) {
    o << ", " << fabric_name(sc.cluster.fabric.kind) << " fabric" << fabric_ratio_text(sc.cluster);
  }
  o << "\n";
  if (sc.cluster.profile) {
    // What the calibration profile replaces (models/compute compute_params, power_thermal_setup).
    const models::CalibrationProfile& p = *sc.cluster.profile;
    std::vector<std::string> parts;
    if (!p.gemm.surfaces.empty()) parts.emplace_back("GEMM table");
    if (p.memory_efficiency) parts.push_back("HBM " + format_fixed(*p.memory_efficiency, 3));
    if (p.kernel_fixed_s) parts.push_back("launch " + format_fixed(*p.kernel_fixed_s * 1e6, 2) + " us");
    if (!p.collectives.empty()) parts.emplace_back("collectives");
    if (p.power_thermal.any()) parts.emplace_back("power and thermal");
    o << "Profile    " << (p.origin.empty() ? std::string("(in memory)") : p.origin);
    if (!p.gpu.empty()) o << " (fitted on " << p.gpu << ")";
    if (!parts.empty()) {
      o << ":";
      for (std::size_t i = 0; i < parts.size(); ++i) o << (i == 0 ? " " : ", ") << parts[i];
    }
    o << "\n";
  }
  if (sc.training.compute_model == models::ComputeModel::kernel) {
    // The default (training_fit) prints nothing here; the JSON report's "compute" has both.
    // A profile's GEMM table times the GEMMs of its precisions instead of the tile model
    // (compute_model.cc kernel_seconds); the framework efficiency applies to both.
    const bool table = sc.cluster.profile != nullptr && sc.cluster.profile->gemm.has(sc.training.precision);
    o << "Compute    kernel model (" << (table ? "GEMMs from the profile's GEMM table" : "GEMM tile model")
      << ", framework efficiency " << format_fixed(models::framework_constants().in_framework_efficiency, 3) << ")";
    if (!r.attention_kernel.empty()) o << ", attention " << r.attention_kernel;
    o << "\n";
  }
  if (sc.model.family == models::ModelFamily::resnet) {
    o << "Model      " << sc.model.name << ": ResNet-" << sc.model.num_layers << " v1.5, " << sc.model.image_size
      << " px, " << sc.model.num_classes << " classes, " << format_fixed(models::resnet_parameters(sc.model) / 1e6, 1)
      << "M parameters, " << format_flop(r.model_flops_per_iteration) << " per iteration\n";
  } else {
    o << "Model      " << sc.model.name << ": " << sc.model.num_layers << " layers, hidden " << sc.model.hidden_size
      << ", " << sc.model.num_attention_heads << " heads, seq " << sc.model.seq_length << ", vocab "
      << sc.model.vocab_size
      << (models::padded_vocab_size(sc.model, sc.parallel.tp) != sc.model.vocab_size
              ? " (padded to " +
                    std::to_string(static_cast<long long>(models::padded_vocab_size(sc.model, sc.parallel.tp))) +
                    " as Megatron-LM pads it)"
              : std::string())
      << ", " << format_flop(r.model_flops_per_iteration) << " per iteration\n";
  }
  if (sc.model.num_experts > 0) {
    o << "           MoE: " << sc.model.num_experts << " experts, top-" << sc.model.moe_top_k;
    if (sc.model.num_shared_experts > 0) o << ", " << sc.model.num_shared_experts << " shared";
    if (sc.model.first_dense_layers > 0) o << ", first " << sc.model.first_dense_layers << " dense";
    o << (sc.model.moe_capacity_factor > 0 ? ", capacity factor " + format_fixed(sc.model.moe_capacity_factor, 2)
                                           : std::string(", dropless"))
      << "; " << format_fixed(models::total_parameters(sc.model) / 1e9, 1) << "B parameters, "
      << format_fixed(models::active_parameters(sc.model) / 1e9, 1) << "B active\n";
  }
  if (sc.training.lora_rank > 0) {
    // Adapters over all layers, against the frozen base (Hu et al. 2021: r * (d_in + d_out) each).
    const double adapters = sc.model.num_layers * models::lora_layer_parameters(sc);
    o << "           LoRA: rank " << sc.training.lora_rank << " on " << sc.training.lora_target_modules << ", "
      << format_fixed(adapters / 1e6, 1) << "M trainable of "
      << format_fixed(models::total_parameters(sc.model) / 1e9, 1) << "B frozen parameters\n";
  }
}

/// ", no flash attention: GPU (sm70) cannot run it ..." without a fused attention kernel (off there), else "".
std::string no_flash_note(const models::Scenario& sc, const models::Report& r) {
  if (sc.model.family != models::ModelFamily::transformer || sc.training.flash_attention) return "";
  const models::GpuSpec& gpu = models::find_gpu(r.gpu);
  if (models::runs_flash_attention(gpu)) return "";
  return ", no flash attention: " + gpu.name + " (" + models::kernel_arch(gpu) +
         ") cannot run it (FlashAttention-2 needs sm80+), so attention keeps its s x s scores in memory";
}

/// The parallel layout, batch, precision and the options that change the work.
void print_layout(std::ostream& o, const models::Scenario& sc, const models::Report& r) {
  o << "Layout     TP " << r.tp;
  if (r.cp > 1) o << " x CP " << r.cp;
  o << " x PP " << r.pp << " x DP " << r.dp;
  if (r.ep > 1) {
    o << " (EP " << r.ep;
    if (sc.training.ep_all_to_all == models::EpAllToAll::deepep) {
      o << ", DeepEP all-to-all";
      // The EP group's ranks lie TP apart: it spans ceil(ep x tp / GPUs per node) nodes.
      const int gpn = std::max(1, models::cluster_node_template(sc.cluster).gpus_per_node);
      const int group_nodes = (r.ep * r.tp + gpn - 1) / gpn;
      const int limit = sc.training.moe_max_nodes_per_token;
      if (limit > 0 && limit < group_nodes)
        o << ", at most " << limit << (limit == 1 ? " node" : " nodes") << " of the group's " << group_nodes
          << " per token";
    }
    o << ")";
  }
  if (sc.parallel.schedule == models::PipelineSchedule::interleaved_one_f_one_b)
    o << " (interleaved, " << sc.parallel.virtual_stages << " chunks)";
  o << ", micro-batch " << sc.training.micro_batch_size << " x " << r.micro_batches << " per pipeline, global batch "
    << sc.training.global_batch_size << "\n";
  // Recomputation is a transformer option (models/spec/scenario.h); a ResNet's summary leaves it out.
  o << "           " << models::precision_name(sc.training.precision)
    << (sc.model.family == models::ModelFamily::resnet
            ? std::string()
            : ", recompute " + std::string(models::recompute_name(sc.training.recompute)))
    // The policy when it is not Megatron's and applies (fresh-user finding: a torchtitan_op run
    // printed "recompute selective" alone).
    << (models::torchtitan_op_applies(sc) ? " (torchtitan op-level)" : "")
    << (sc.parallel.sequence_parallel && r.tp > 1 ? ", sequence parallel" : "")
    << (!sc.parallel.tp_comm_overlap || !sc.parallel.sequence_parallel || r.tp <= 1 ? ""
        : sc.parallel.tp_overlap_implementation == models::TpOverlapImplementation::async_tp
            ? ", TP overlap async_tp"
            : ", TP overlap userbuffers")
    << (sc.parallel.zero_stage >= 1 ? ", ZeRO-" + std::to_string(sc.parallel.zero_stage) : std::string())
    << (sc.training.flash_attention && sc.model.family == models::ModelFamily::transformer ? ", flash attention" : "")
    << no_flash_note(sc, r) << "\n\n";
}

/// Iteration time, throughput, MFU/HFU and time to train.
void print_performance(std::ostream& o, const models::Scenario& sc, const models::Report& r) {
  o << "Iteration  " << format_duration(r.iteration_time_s) << "\n";
  if (sc.model.family == models::ModelFamily::resnet)
    o << "Throughput " << with_thousands(r.samples_per_s) << " images/s, " << format_fixed(r.tflops_per_gpu, 1)
      << " model TFLOP/s per GPU\n";
  else
    o << "Throughput " << with_thousands(r.tokens_per_s) << " tokens/s, " << format_fixed(r.tflops_per_gpu, 1)
      << " model TFLOP/s per GPU (" << format_fixed(r.hardware_tflops_per_gpu, 1) << " with recomputation)\n";
  o << "MFU        " << pct(r.mfu) << "   HFU " << pct(r.hfu) << "   (of "
    << format_fixed(r.peak_flops_per_gpu / 1e12, 1) << " TFLOP/s dense "
    << models::precision_name(sc.training.precision) << " peak)\n";
  if (!r.caveat.empty()) o << "Note       " << r.caveat << "\n";
  if (r.memory.oom)  // no days or dollars for a run that cannot happen (issue 21)
    o << "To train   not feasible: the job does not fit in GPU memory (see Memory below)\n";
  else
    print_to_train(o, sc, r);
}

/// Where an iteration goes on the busiest pipeline stage (rows of what was not modelled left out).
void print_breakdown(std::ostream& o, const models::Scenario& sc, const models::Report& r) {
  const models::TimeBreakdown& b = r.breakdown;
  o << "\nWhere an iteration goes (busiest pipeline stage):\n";
  const std::pair<const char*, double> rows[] = {{"compute (incl. recompute)", b.compute_s},
                                                 {"optimizer step", b.optimizer_s},
                                                 {"exposed TP communication", b.tp_comm_exposed_s},
                                                 {"exposed DP communication", b.dp_comm_exposed_s},
                                                 {"exposed PP send/recv", b.pp_comm_exposed_s},
                                                 {"pipeline bubble / waiting", b.pipeline_bubble_s},
                                                 {"storage stall", b.storage_stall_s},
                                                 {"exposed EP all-to-all", b.ep_comm_exposed_s},
                                                 {"CPU offload (Adam, copies)", b.offload_s},
                                                 {"exposed CP send/recv", b.cp_comm_exposed_s},
                                                 {"exposed input copies (H2D)", b.input_copy_exposed_s},
                                                 {"waiting for slower GPUs", b.straggler_wait_s}};
  for (const auto& [name, v] : rows) {
    if (name == std::string_view("storage stall") && !r.storage.modelled) continue;
    if (name == std::string_view("exposed EP all-to-all") && r.ep <= 1 && v == 0) continue;
    if (name == std::string_view("CPU offload (Adam, copies)") && !sc.offload.optimizer) continue;
    if (name == std::string_view("exposed CP send/recv") && r.cp <= 1 && v == 0) continue;
    if (name == std::string_view("exposed input copies (H2D)") && !sc.data_loader) continue;
    if (name == std::string_view("waiting for slower GPUs") && v == 0) continue;
    o << "  " << pad(name, 28) << lpad(format_duration(v), 12)
      << lpad(pct(r.iteration_time_s > 0 ? v / r.iteration_time_s : 0), 9) << "\n";
  }
}

/// The cluster.overrides power_cap_w below the cluster's `limit_w` (each binds instead of it on
/// the GPUs it selects), as "; cluster.overrides power_cap_w 400 W on node0/gpu0"; the first three,
/// then how many more; "" when none.
std::string override_caps(const models::Scenario& sc, double limit_w) {
  std::string text;
  int shown = 0, more = 0;
  constexpr int kShown = 3;
  for (const models::ElementOverride& e : sc.cluster.overrides) {
    if (e.power_cap_w <= 0 || e.power_cap_w >= limit_w) continue;
    if (shown == kShown) {
      ++more;
      continue;
    }
    text += (shown++ == 0 ? "; cluster.overrides power_cap_w " : ", ") + format_fixed(e.power_cap_w, 0) + " W on " +
            e.select;
  }
  if (more > 0) text += " and " + std::to_string(more) + " more";
  return text;
}

/// The power cap holding `gpu`'s clock: its cluster.overrides power_cap_w when that is below the
/// cluster's limit ("cluster.overrides power_cap_w 400 W on node0/gpu0"), else "" (the cluster's).
std::string own_cap(const models::PowerReport& pw, int gpu, const std::string& name) {
  for (const models::GpuPower& g : pw.gpus)
    if (g.gpu == gpu && g.power_cap_w > 0 && g.power_cap_w < pw.gpu_power_limit_w)
      return "cluster.overrides power_cap_w " + format_fixed(g.power_cap_w, 0) + " W on " + name;
  return "";
}

/// The slowest GPU and why, when a straggler was found.
void print_straggler(std::ostream& o, const models::Scenario& sc, const models::Report& r) {
  if (const models::StragglerReport& st = r.straggler; st.found) {
    o << "    slowest: node" << st.node << " gpu" << st.local_gpu << " (GPU " << st.gpu << ", ";
    if (r.pp > 1)  // the stage too: the breakdown's stage need not be the slow one's
      o << "pipeline stage " << st.slowest_stage << " of DP replica " << st.slowest_replica
        << "; this breakdown: stage " << st.breakdown_stage << " of replica " << st.breakdown_replica
        << ")\n    cause: ";
    else
      o << "DP replica " << st.slowest_replica << "; this breakdown: replica " << st.breakdown_replica
        << ")\n    cause: ";
    const std::string clock = "SM clock " + with_thousands(st.sm_clock_mhz) + " of " +
                              with_thousands(st.boost_clock_mhz) + " MHz while computing";
    if (st.cause == "thermal") {
      o << "thermal slowdown " << pct(st.throttled_time_fraction) << " of the iteration at "
        << format_fixed(st.temperature_c, 1) << " C mean";
      const std::vector<double>& air = sc.thermal.gpu_airflow_fraction;
      if (static_cast<std::size_t>(st.local_gpu) < air.size() && air[static_cast<std::size_t>(st.local_gpu)] < 1)
        o << " (airflow " << pct(air[static_cast<std::size_t>(st.local_gpu)]) << " of design)";
      o << ", " << clock;
    } else if (st.cause == "clock_factor") {
      o << "cluster.overrides clock_factor on node" << st.node << "/gpu" << st.local_gpu << ", " << clock;
    } else if (st.cause == "power_cap") {
      const std::string own =
          own_cap(r.power, st.gpu, "node" + std::to_string(st.node) + "/gpu" + std::to_string(st.local_gpu));
      o << (own.empty() ? std::string("power limit") : own) << ", " << clock;
    } else if (st.cause == "input_copy") {
      o << "slower host-to-device input copies";
    } else {
      o << "arrived last (no lower clock or slower input copy found)";
    }
    o << "; its kernels " << format_duration(st.slowest_kernel_s) << " vs " << format_duration(st.breakdown_kernel_s)
      << " here\n";
  }
}

/// Partial folding's classes (with cluster.overrides): one line, the first four classes or one reason.
void print_folding(std::ostream& o, const models::Report& r) {
  const models::FoldingReport& f = r.folding;
  if (f.classes.empty()) return;
  const auto unfolded = [&](const auto& c) { return c.replicas == 1 && c.reason == f.classes.front().reason; };
  if (f.classes.size() > 1 && std::all_of(f.classes.begin(), f.classes.end(), unfolded))
    return void(o << "Folding: " << f.replicas << " replicas, none folded (" << f.classes.front().reason << ")\n");
  o << "Folding: " << count_of(f.replicas, "replica") << " in "
    << count_of(static_cast<long long>(f.classes.size()), "class") << ", " << f.simulated_replicas << " simulated:";
  constexpr std::size_t kShown = 4;
  for (std::size_t i = 0; i < f.classes.size() && i < kShown; ++i) {
    const models::FoldingClassReport& c = f.classes[i];
    o << (i == 0 ? " " : "; ") << "replicas " << c.members;
    if (c.replicas > 1) o << " as " << c.representative;
    o << " (" << c.reason << ")";
  }
  if (f.classes.size() > kShown) o << "; " << f.classes.size() - kShown << " more in --json";
  o << "\n";
}

/// A mixed cluster's stages (group, GPU, layers, kernel time per micro-batch, memory) and what the
/// slow group costs against every stage at the fast group's pace (models/spec/report.h).
void print_mixed(std::ostream& o, const models::Report& r) {
  const models::MixedClusterReport& x = r.mixed;
  if (x.groups.empty()) return;
  o << "\nPipeline stages by node group (forward + backward kernels per micro-batch):\n";
  for (const models::StageTimeReport& s : x.stages) {
    o << "  stage " << s.stage << "  node_group[" << s.node_group << "] " << s.gpu << "  " << s.layers << " layers  "
      << format_duration(s.compute_s_per_micro_batch) << "  memory " << format_gib(s.memory_peak_bytes) << " of "
      << format_gib(s.memory_capacity_bytes) << (s.oom ? "  OUT OF MEMORY" : "") << "\n";
  }
  if (x.slow_group < 0) return;
  const auto group_name = [&](int g) {
    return "node_group[" + std::to_string(g) + "] (" + x.groups[static_cast<std::size_t>(g)].gpu + ")";
  };
  o << "  1F1B compute (m - 1) x slowest + sum of stages: " << format_duration(x.pipeline_s) << "; with every stage at "
    << group_name(x.fast_group) << "'s " << format_duration(x.fast_stage_s) << ": "
    << format_duration(x.all_fast_pipeline_s) << "\n";
  // The group of the slowest stage: its GPUs and its share of the layers together (a faster GPU
  // with more layers can be it).
  // With three or more groups the difference is every slower group's, not the slowest one's alone.
  std::vector<bool> holds(x.groups.size(), false);
  for (const models::StageTimeReport& s : x.stages) holds[static_cast<std::size_t>(s.node_group)] = true;
  o << (std::count(holds.begin(), holds.end(), true) > 2
            ? "  the groups slower than " + group_name(x.fast_group) + " (the slowest stage on " +
                  group_name(x.slow_group) + ") cost "
            : "  the slow group " + group_name(x.slow_group) +
                  ", holding the slowest stage (its GPUs and its layers), costs ")
    << format_duration(x.slow_group_cost_s) << " per iteration ("
    << format_fixed(100.0 * x.slow_group_cost_s / r.iteration_time_s, 1) << " % of the simulated "
    << format_duration(r.iteration_time_s) << ")\n";
}

/// Memory per GPU of the fullest pipeline stage, and whether it fits.
void print_memory(std::ostream& o, const models::Scenario& sc, const models::Report& r) {
  const models::MemoryBreakdown& m = r.memory;
  o << "\nMemory per GPU (pipeline stage " << m.worst_stage << ", the fullest): " << format_gib(m.peak_bytes_per_gpu)
    << " of " << format_gib(m.capacity_bytes)
    << (m.oom             ? "  -> OUT OF MEMORY"
        : tight_memory(m) ? "  -> fits, tight: the " + format_gib(m.capacity_bytes - m.peak_bytes_per_gpu) +
                                " left is " + tight_memory_reason()
                          : std::string("  -> fits"))
    << "\n";
  o << "  weights " << format_gib(m.weights_bytes) << ", gradients " << format_gib(m.grads_bytes) << ", optimizer "
    << format_gib(m.optimizer_bytes) << ", activations " << format_gib(m.activations_bytes) << ", workspace "
    << format_gib(m.workspace_bytes) << "\n";
  if (sc.offload.optimizer)
    o << "  offloaded to host memory: " << format_gib(m.host_bytes) << " per GPU (optimizer state, fp32 gradients)\n";
  if (m.oom) o << "  " << m.advice << "\n";
}

/// GPU compute, NVLink and NIC utilisation, and the busiest links.
void print_utilisation(std::ostream& o, const models::Report& r) {
  const models::UtilizationReport& u = r.utilization;
  o << "\nUtilisation: GPU compute busy " << pct(u.gpu_compute_busy_fraction_mean) << " mean ("
    << pct(u.gpu_compute_busy_fraction_min) << " - " << pct(u.gpu_compute_busy_fraction_max) << ")";
  if (u.nvlink_links_used > 0)
    o << ", NVLink " << pct(u.nvlink_utilization_mean) << " mean over " << u.nvlink_links_used << " links";
  if (u.nic_links_used > 0) o << ", NIC " << pct(u.nic_utilization_mean) << " mean over " << u.nic_links_used;
  // Folded, the counts are the simulated replicas' (their links stand for the others'): said so.
  if (r.folded && (u.nvlink_links_used > 0 || u.nic_links_used > 0)) o << " (of the simulated replicas)";
  o << "\n";
  if (!r.busiest_links.empty()) {
    o << "\nBusiest links (average over the run):\n";
    for (const auto& l : r.busiest_links)
      o << "  " << pad(l.name, 40) << lpad(pct(l.utilization), 9) << " of "
        << format_fixed(l.capacity_bytes_per_s / 1e9, 1) << " GB/s, " << format_fixed(l.bytes / 1e9, 2)
        << " GB per iteration\n";
  }
}

/// Power of GPUs, nodes and facility (PSU overloads), and the thermal state, when modelled.
void print_power_and_thermal(std::ostream& o, const models::Scenario& sc, const models::Report& r) {
  const models::PowerReport& pw = r.power;
  const models::ThermalReport& th = r.thermal;
  if (!pw.gpus.empty()) {
    o << "\nPower (last iteration)  GPU avg " << format_fixed(pw.gpu_average_w, 0) << " W, peak "
      << format_fixed(pw.gpu_peak_w, 0) << " W (limit " << format_fixed(pw.gpu_power_limit_w, 0) << " W"
      << override_caps(sc, pw.gpu_power_limit_w) << "); node avg " << format_fixed(pw.node_average_w / 1e3, 2)
      << " kW, peak " << format_fixed(pw.node_peak_w / 1e3, 2) << " kW (PSUs "
      << format_fixed(pw.node_psu_capacity_w / 1e3, 1) << " kW with redundancy)\n";
    o << "  facility " << format_power(pw.facility_average_w) << " at PUE " << format_fixed(pw.pue, 2) << "; energy "
      << format_energy(pw.energy_per_iteration_j) << " per iteration";
    if (pw.energy_to_train_kwh > 0)
      o << ", " << format_energy_kwh(pw.energy_to_train_kwh) << " to train"
        << (models::wall_clock_to_train_s(r) > r.time_to_train_s ? " with failures" : "");
    o << "\n" << spare_gpus_note(sc.cluster);
    // Liquid cooling at the default PUE: cooling does not change PUE, which is then the survey's
    // average, not a liquid-cooled facility's figure (fresh user, session 42).
    // Written (power.pue in the file or a --set, at any value): the user's figure, no note.
    if (sc.thermal.cooling == models::Cooling::liquid && !sc.power.given.pue && pw.pue == models::PowerSpec{}.pue)
      o << "  PUE " << format_fixed(pw.pue, 2) << " is power.pue's default (" << kDefaultPueSource
        << "); cooling: liquid does not change it: give your facility's PUE with power { pue: ... } (or --set "
           "power.pue=X)\n";
    // Clocks held below the maximum: by temperature (the Thermal line), by a cluster.overrides
    // clock_factor (the straggler's cause when it is this GPU), or by the power limit (its
    // override's power_cap_w when below the cluster's, else the cluster's).
    const models::GpuPower* slowest = nullptr;
    for (const auto& g : pw.gpus)
      if (slowest == nullptr || g.clock_fraction_min < slowest->clock_fraction_min) slowest = &g;
    if (slowest != nullptr && slowest->clock_fraction_min < 0.999) {
      bool hot = false;  // the slowest GPU slowed down at its slowdown temperature
      for (const auto& g : th.gpus) hot = hot || (g.gpu == slowest->gpu && g.throttled_time_fraction > 0);
      o << "  SM clock down to " << format_fixed(slowest->clock_fraction_min, 3) << " of the maximum (GPU "
        << slowest->gpu << "; " << format_fixed(slowest->compute_clock_fraction_mean, 3)
        << " mean while computing), held by "
        << (hot ? std::string("its temperature (Thermal, below)")
            // At its override's cap: that holds it, whether or not a straggler was found (a slow
            // stage of a pipeline delays the others as bubble, not as straggler wait).
            : slowest->clock_factor < 1.0 && slowest->clock_fraction_min >= slowest->clock_factor * (1 - 1e-9)
                ? std::string("its cluster.overrides clock_factor")
            : slowest->power_cap_w > 0 && slowest->power_cap_w < pw.gpu_power_limit_w
                ? "its cluster.overrides power_cap_w " + format_fixed(slowest->power_cap_w, 0) +
                      " W (the cluster's limit " + format_fixed(pw.gpu_power_limit_w, 0) + " W)"
                : "the " + format_fixed(pw.gpu_power_limit_w, 0) + " W power limit")
        << "\n";
    }
    for (const auto& ov : pw.psu_overloads)
      o << "  node " << ov.node << " PSU OVERLOAD: peak " << format_fixed(ov.peak_w / 1e3, 2) << " kW > "
        << format_fixed(ov.capacity_w / 1e3, 2) << " kW (+" << format_fixed(ov.excess_w, 0) << " W), first at "
        << format_duration(ov.first_time_s) << ", " << pct(ov.overload_time_fraction) << " of the time\n";
    o << "Thermal  hottest GPU " << th.hottest_gpu << " at " << format_fixed(th.peak_c, 1) << " C (slowdown "
      << format_fixed(th.slowdown_c, 0) << " C); ";
    if (th.throttled_gpus > 0) {
      // In GPU index order (th.gpus is in the simulation's order: 0-7, 32-39, 8-15, ... on a
      // 64-GPU NVL72 job; fresh user 43).
      std::vector<const models::GpuThermal*> hot_gpus;
      for (const auto& g : th.gpus)
        if (g.throttled_time_fraction > 0) hot_gpus.push_back(&g);
      std::sort(hot_gpus.begin(), hot_gpus.end(), [](const auto* a, const auto* b) { return a->gpu < b->gpu; });
      const bool folded = static_cast<int>(hot_gpus.size()) != th.throttled_gpus;  // the count is of real GPUs
      o << th.throttled_gpus << " GPU(s) throttled, up to " << pct(th.throttled_time_fraction) << " of the iteration"
        << (folded ? " (GPUs listed: the simulated replicas):" : ":");
      for (const auto* g : hot_gpus) o << " GPU " << g->gpu << " (" << pct(g->throttled_time_fraction) << ")";
      o << "\n  thermal slowdown adds " << format_duration(th.throttle_iteration_increase_s) << " ("
        << pct(th.throttle_iteration_increase_fraction) << ") to the iteration (vs the same run without slowdown)\n";
    } else {
      o << "no throttling\n";
    }
    // Liquid cooling: the cold plates' coolant inlet (thermal.coolant_c), no rack air recirculation.
    o << (sc.thermal.cooling == models::Cooling::liquid ? "  coolant inlet up to " : "  rack inlet up to ")
      << format_fixed(th.rack_inlet_max_c, 1) << " C; thermal steady state "
      << (th.steady_state ? "reached" : "NOT reached") << " (drift " << format_fixed(th.max_drift_c, 2)
      << " K over the last iteration"
      << (th.steady_state ? std::string()
                          : "; up to " + format_fixed(th.steady_state_offset_c, 1) +
                                " K from the periodic steady state at its start")
      << ")\n";
  }
}

}  // namespace

std::string format_summary(const models::Scenario& sc, const models::Report& r, const std::string& origin,
                           double wall_s, bool set_changed) {
  std::ostringstream o;
  print_cluster_and_model(o, sc, r, origin, set_changed);
  for (const std::string& d : r.drained_nodes) o << "Drained    " << d << ": no job runs on it\n";
  print_layout(o, sc, r);
  print_performance(o, sc, r);
  print_breakdown(o, sc, r);
  print_straggler(o, sc, r);
  o << format_overrides(r);
  print_mixed(o, r);
  print_memory(o, sc, r);
  o << format_job_effects(r);
  print_utilisation(o, r);
  print_power_and_thermal(o, sc, r);
  o << "\nSimulated " << with_thousands(static_cast<double>(r.events)) << " events in " << format_fixed(wall_s, 2)
    << " s wall";
  if (wall_s > 0) o << " (" << with_thousands(static_cast<double>(r.events) / wall_s) << " events/s)";
  o << (r.folded ? "; identical DP replicas simulated once" : "") << "\n";
  print_folding(o, r);
  return o.str();
}

std::string format_job_effects(const models::Report& r) {
  std::ostringstream o;
  const models::StorageReport& st = r.storage;
  if (st.modelled) {
    o << "\nStorage:\n";
    o << "  data loader   " << format_fixed(st.data_bytes_per_iteration / 1e9, 3) << " GB per iteration, needs "
      << format_fixed(st.data_read_gb_per_s_needed, 2) << " GB/s of "
      << format_fixed(st.data_read_gb_per_s_available, 2) << " GB/s available; stall "
      << format_duration(st.data_stall_s_per_iteration) << " per iteration\n";
    o << "  checkpoint    " << format_fixed(st.checkpoint_bytes / 1e9, 1) << " GB from " << st.checkpoint_writer_nodes
      << " node(s): write " << format_duration(st.checkpoint_write_s) << " at "
      << format_fixed(st.checkpoint_write_gb_per_s, 2) << " GB/s (" << st.bottleneck << "), stall "
      << format_duration(st.checkpoint_stall_s)
      << (st.checkpoint_interval_s >= models::kNoFailureCheckpointIntervalS
              ? std::string(" a checkpoint, none needed (the job never fails)")
              : " every " + format_duration(st.checkpoint_interval_s) + " = " +
                    format_duration(st.checkpoint_stall_s_per_iteration) + " per iteration")
      << "; read back " << format_duration(st.checkpoint_read_s) << "\n";
  }
  const models::ReliabilityReport& rl = r.reliability;
  if (rl.modelled) {
    o << "\nFailures (" << rl.draws << " Monte-Carlo draws, seed " << rl.seed << "):\n";
    o << "  job MTBF      "
      << (rl.job_mtbf_h > 0   ? format_duration(rl.job_mtbf_h * 3600)
          : rl.causes.empty() ? std::string("never (no failure rates given)")
                              : std::string("never (every failure rate is 0)"))
      << (rl.checkpoint_interval_s >= models::kNoFailureCheckpointIntervalS
              ? std::string("; no checkpoint needed (the job never fails)")
              : "; checkpoint every " + format_duration(rl.checkpoint_interval_s))
      << ", restart " << format_duration(rl.restart_s) << "\n";
    o << "  interruptions " << format_fixed(rl.interruptions_mean, 1) << " +- "
      << format_fixed(rl.interruptions_stddev, 1) << " (p5 " << format_fixed(rl.interruptions_p5, 0) << ", p95 "
      << format_fixed(rl.interruptions_p95, 0) << ")\n";
    o << "  goodput       " << format_fixed(100 * rl.goodput_mean, 1) << "% (p5 "
      << format_fixed(100 * rl.goodput_p5, 1) << "%, p95 " << format_fixed(100 * rl.goodput_p95, 1) << "%); lost work "
      << format_duration(rl.lost_work_s_mean) << ", restarting " << format_duration(rl.restart_time_s_mean)
      << ", checkpointing " << format_duration(rl.checkpoint_time_s_mean) << "\n";
    o << "  wall clock    " << format_duration(rl.wall_clock_s_mean) << " (p5 " << format_duration(rl.wall_clock_s_p5)
      << ", p95 " << format_duration(rl.wall_clock_s_p95) << ") for " << format_duration(rl.useful_work_s)
      << " of training";
    if (rl.work_requested_s > 0 && rl.useful_work_s < rl.work_requested_s * (1 - 1e-9))
      o << " (reliability.horizon_s ended the run before train_tokens were trained: "
        << format_duration(rl.work_requested_s) << " asked for)";
    o << "\n";
  }
  o << format_cost(r.cost);
  return o.str();
}

}  // namespace traincast::cli
