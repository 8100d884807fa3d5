// `traincast plan`: argument parsing and printing around models/planner (the search itself).

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/element_overrides.h"
#include "models/io/scenario_io.h"
#include "models/planner/explain.h"
#include "models/planner/planner.h"
#include "models/workload/settings_notes.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/interrupt.h"
#include "tools/cli/summary.h"

namespace traincast::cli {
namespace po = boost::program_options;
namespace planner = models::planner;

namespace {

std::string json_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string layout_json(const planner::Layout& l, const models::Scenario& sc) {
  std::ostringstream o;
  o << "{\"tp\": " << l.tp << ", \"pp\": " << l.pp << ", \"dp\": " << l.dp
    << ", \"virtual_stages\": " << l.virtual_stages
    << ", \"sequence_parallel\": " << (l.sequence_parallel ? "true" : "false") << ", \"zero_stage\": " << l.zero_stage
    << ", \"micro_batch_size\": " << l.micro_batch_size << ", \"recompute\": \"" << planner::recompute_name(l.recompute)
    << "\", \"uneven_stages\": " << (l.uneven_stages ? "true" : "false")
    << ", \"text\": " << json_string(planner::to_string(l, sc)) << "}";
  return o.str();
}

std::string entry_json(const planner::PlanEntry& e, const models::Scenario& sc, const std::string& indent) {
  const models::Report& r = e.report;
  const models::TimeBreakdown& b = r.breakdown;
  std::ostringstream o;
  o << "{\n"
    << indent << "  \"layout\": " << layout_json(e.layout, sc) << ",\n"
    << indent << "  \"iteration_time_s\": " << json_number(r.iteration_time_s) << ",\n"
    << indent << "  \"tokens_per_s\": " << json_number(r.tokens_per_s) << ",\n"
    << indent << "  \"mfu\": " << json_number(r.mfu) << ",\n"
    << indent << "  \"hfu\": " << json_number(r.hfu) << ",\n"
    << indent << "  \"peak_bytes_per_gpu\": " << json_number(r.memory.peak_bytes_per_gpu) << ",\n"
    << indent << "  \"capacity_bytes\": " << json_number(r.memory.capacity_bytes) << ",\n"
    << indent << "  \"memory_tight\": " << (tight_memory(r.memory) ? "true" : "false") << ",\n"
    << indent << "  \"estimate_s\": " << json_number(e.estimate_s) << ",\n"
    << indent << "  \"breakdown\": {\"compute_s\": " << json_number(b.compute_s)
    << ", \"tp_comm_exposed_s\": " << json_number(b.tp_comm_exposed_s)
    << ", \"dp_comm_exposed_s\": " << json_number(b.dp_comm_exposed_s)
    << ", \"pp_comm_exposed_s\": " << json_number(b.pp_comm_exposed_s)
    << ", \"pipeline_bubble_s\": " << json_number(b.pipeline_bubble_s)
    << ", \"optimizer_s\": " << json_number(b.optimizer_s)
    << ", \"straggler_wait_s\": " << json_number(b.straggler_wait_s)
    << ", \"ep_comm_exposed_s\": " << json_number(b.ep_comm_exposed_s)
    << ", \"cp_comm_exposed_s\": " << json_number(b.cp_comm_exposed_s)
    << ", \"offload_s\": " << json_number(b.offload_s)
    << ", \"input_copy_exposed_s\": " << json_number(b.input_copy_exposed_s)
    << ", \"storage_stall_s\": " << json_number(b.storage_stall_s) << "}\n"
    << indent << "}";
  return o.str();
}

std::string explanation_json(const planner::Explanation& x) {
  std::ostringstream o;
  o << "{\"headline\": " << json_string(x.headline) << ", \"components\": [";
  for (std::size_t i = 0; i < x.components.size(); ++i) {
    const planner::ComponentDelta& c = x.components[i];
    o << (i ? ", " : "") << "{\"component\": " << json_string(c.component)
      << ", \"delta_s\": " << json_number(c.delta_s) << ", \"percent\": " << json_number(c.percent)
      << ", \"reason\": " << json_string(c.reason) << "}";
  }
  return o.str() + "]}";
}

void print_explanation(std::ostream& o, const planner::Explanation& x) {
  o << "  " << x.headline << ".\n";
  for (const planner::ComponentDelta& c : x.components) {
    o << "    " << pad(c.component, 26) << lpad(signed_fixed(c.delta_s, 3) + " s", 11)
      << lpad(signed_fixed(c.percent, 1) + "%", 8);
    if (!c.reason.empty()) o << "   " << c.reason;
    o << "\n";
  }
}

/// `traincast plan`'s help text and options (defaults from planner::PlanOptions).
po::options_description plan_options(const planner::PlanOptions& defaults) {
  po::options_description opts(
      "traincast plan [SCENARIO] [options]\n\n"
      "Searches parallel layouts (TP, PP, DP, interleaving, sequence parallelism, ZeRO stage,\n"
      "micro-batch size, recomputation) for SCENARIO's model, batch and cluster (the embedded\n"
      "default when none is given). Layouts whose per-GPU memory exceeds HBM are dropped without\n"
      "simulation; the promising rest are simulated in parallel. Prints the best --top layouts with\n"
      "iteration time, tokens/s, MFU and memory per GPU, why the runner-up lost to the winner, and\n"
      "how the scenario's own layout compares. The scenario's own layout need not fit the cluster\n"
      "(e.g. after --set cluster.num_nodes=N): it is what the search replaces, so only a note says\n"
      "why it is not valid; the rest of the scenario is checked as for `traincast run`, and a\n"
      "cluster, batch and model that no layout can divide is refused (exit status 2), saying why;\n"
      "when layouts exist but none fits in memory, it says so and exits 1 (--json still written).\n"
      "Same output for any --jobs (except the wall time).\n"
      "Progress on stderr when it is a terminal; Ctrl-C stops the search (exit status 130).\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scalar field of the scenario first, e.g. --set cluster.num_nodes=16; a list's entry by its "
      "index, the next index adding one (repeatable)")("top", po::value<int>()->default_value(5), "layouts to print")(
      "jobs,j", po::value<int>(), "simulations in parallel, 1 to 1024, 0 for all hardware threads (the default)")(
      "json", po::value<std::string>(), "also write the result as JSON to this file")(
      "force", "overwrite an existing --json file")(
      "max-simulations", po::value<int>()->default_value(defaults.max_simulations),
      "simulation budget (the scenario's own layout is simulated on top); budget x GPUs is at most 1,966,080 "
      "(120 x 16,384)")("estimate-slack", po::value<double>()->default_value(100 * defaults.estimate_slack),
                        "simulate only layouts estimated within this many percent of the best estimate")(
      "max-tp", po::value<int>()->default_value(0), "largest TP tried (0 = 2 x GPUs per node)")(
      "max-virtual-stages", po::value<int>()->default_value(defaults.max_virtual_stages),
      "largest interleaving degree tried (1 = no interleaving)")("max-micro-batch", po::value<int>()->default_value(0),
                                                                 "largest micro-batch size tried (0 = no cap)")(
      "no-uneven", "only try PP that divides the layer count")("scenario", po::value<std::string>(),
                                                               "scenario file (positional)");
  return opts;
}

/// What the command line asks of the search: its options and the layouts to print (--top).
struct PlanRequest {
  planner::PlanOptions options;
  int top = 0;
};

/// The search options and --top from the command line. UsageError for a value out of range.
PlanRequest read_plan_request(const po::variables_map& vm) {
  PlanRequest req;
  planner::PlanOptions& o = req.options;
  o.max_simulations = vm["max-simulations"].as<int>();
  o.max_tp = vm["max-tp"].as<int>();
  o.estimate_slack = vm["estimate-slack"].as<double>() / 100.0;
  check_percentage("--estimate-slack", vm["estimate-slack"].as<double>(),
                   "layouts estimated within this many percent of the best are simulated");
  o.max_virtual_stages = vm["max-virtual-stages"].as<int>();
  o.max_micro_batch_size = vm["max-micro-batch"].as<int>();
  o.uneven_stages = vm.count("no-uneven") == 0;
  o.jobs = thread_count_option("--jobs", vm.count("jobs") ? vm["jobs"].as<int>() : 0, kSimulationsWhy);
  req.top = vm["top"].as<int>();
  check_at_least("--top", req.top, 1, "the layouts to print");
  check_at_least("--max-simulations", o.max_simulations, 1, "the layouts simulated at most");
  check_at_least("--max-tp", o.max_tp, 0, "the largest TP tried, 0 for 2 x GPUs per node");
  check_at_least("--max-virtual-stages", o.max_virtual_stages, 1, "the largest interleaving, 1 for none");
  check_at_least("--max-micro-batch", o.max_micro_batch_size, 0, "the largest micro-batch tried, 0 for no cap");
  return req;
}

/// A scenario the planner cannot search (not a transformer, context parallel, or node groups of
/// different kinds) is refused
/// with the planner's own message, positioned at the field (or the --set that chose it).
void check_plannable(const models::Scenario& sc, const planner::PlanOptions& o, const std::string& scenario_path,
                     const std::vector<std::string>& overrides) {
  const bool mixed = !planner::mixed_node_kinds(sc).empty();
  if (sc.model.family != models::ModelFamily::transformer || sc.parallel.cp > 1 || mixed) {
    const std::string field = sc.model.family != models::ModelFamily::transformer ? "workload.model.family"
                              : sc.parallel.cp > 1                                ? "workload.parallel.cp"
                                                                                  : "cluster.node_group";
    const std::string where = scenario_field_origin(scenario_path, field, overrides);
    try {
      planner::enumerate_layouts(sc, o);
    } catch (const std::invalid_argument& e) {
      throw io::ScenarioError({where + ": " + e.what()});
    }
  }
}

/// The search's heading: the scenario, its cluster and model, what the search considered,
/// pruned and simulated, and its wall time.
void print_search(std::ostream& p, const models::Scenario& sc, const planner::PlanResult& r,
                  const planner::PlanOptions& o, const std::string& origin, double wall_s) {
  const models::NodeTemplate& node = models::cluster_node_template(sc.cluster);
  const std::string gpu = sc.cluster.gpu.empty() ? node.gpu : sc.cluster.gpu;
  const planner::PlanStats& st = r.stats;
  p << "traincast plan: " << sc.name << "  [" << origin << "]\n";
  if (!sc.description.empty()) p << "  " << sc.description << "\n";
  const int in_service = models::nodes_in_service(sc.cluster);
  p << "\nCluster    " << in_service << " x " << sc.cluster.node_template << " = " << r.num_gpus << " x " << gpu << " ("
    << r.gpus_per_node << " per node"
    << (in_service < sc.cluster.num_nodes
            ? "; " + std::to_string(sc.cluster.num_nodes - in_service) + " more drained for a missing GPU"
            : std::string())
    << ")\n";
  // The default (training_fit) prints nothing here, as in `run`; the kernel model ranks by other
  // GEMM and attention times, so it is said.
  if (sc.training.compute_model == models::ComputeModel::kernel)
    p << "Compute    kernel model (workload.training.compute_model: kernel)\n";
  p << "Model      " << sc.model.name << ": " << sc.model.num_layers << " layers, hidden " << sc.model.hidden_size
    << ", " << sc.model.num_attention_heads << " heads, global batch " << sc.training.global_batch_size << " x "
    << sc.model.seq_length << " tokens";
  // The search keeps the scenario's expert parallelism (it divides each layout's DP).
  if (sc.model.num_experts > 0)
    p << "; " << sc.model.num_experts << " experts, EP " << sc.parallel.ep << " in every layout (not searched)";
  p << "\n";
  p << "\nLayouts    " << with_thousands(static_cast<double>(st.considered)) << " considered, "
    << with_thousands(static_cast<double>(st.pruned_memory)) << " pruned by memory (peak above HBM), "
    << with_thousands(static_cast<double>(st.pruned_dominated))
    << " dominated (a lighter recomputation fits),\n           "
    << with_thousands(static_cast<double>(st.pruned_estimate)) << " estimated more than "
    << format_fixed(100 * o.estimate_slack, 0) << "% slower than the best estimate, "
    << with_thousands(static_cast<double>(st.simulated)) << " simulated";
  if (st.failed > 0) p << " (" << st.failed << " failed)";
  p << ", " << with_thousands(static_cast<double>(st.not_simulated)) << " left over (budget " << o.max_simulations
    << (o.max_simulations == 1 ? " simulation)\n" : " simulations)\n");
  if (st.failed > 0) p << "Failed     the first failed simulation: " << st.first_failure << "\n";
  p << "Search     coarse pass + " << st.refine_rounds << " refinement rounds, " << o.jobs
    << (o.jobs == 1 ? " job\n" : " jobs\n");
  p << "Wall time  " << format_fixed(wall_s, 1) << " s\n";
}

/// No layout fits: the smallest footprint and what it needs, or why the simulations failed.
void print_no_layout(std::ostream& p, const models::Scenario& sc, const planner::PlanResult& r) {
  if (r.stats.failed > 0 && r.stats.failed == r.stats.simulated) {
    p << "\nEvery simulated layout failed; the first: " << r.stats.first_failure << "\n";
    if (!r.baseline_note.empty()) p << "Note: " << r.baseline_note << "\n";
    return;
  }
  p << "\nNo layout fits in memory and simulates.\n";
  if (r.least_memory) {
    const models::MemoryBreakdown& m = r.least_memory->memory;
    p << "The smallest footprint, " << planner::to_string(r.least_memory->layout, sc) << ", needs "
      << format_memory_need(m.peak_bytes_per_gpu, m.capacity_bytes) << " (weights " << format_gib(m.weights_bytes)
      << ", gradients " << format_gib(m.grads_bytes) << ", optimizer " << format_gib(m.optimizer_bytes)
      << ", activations " << format_gib(m.activations_bytes) << "): more GPUs, or GPUs with more memory, are needed.\n";
  }
  if (!r.baseline_note.empty()) p << "Note: " << r.baseline_note << "\n";
}

/// The best `top` layouts, fastest first (the scenario's own marked *, a tight fit !).
void print_ranked(std::ostream& p, const models::Scenario& sc, const planner::PlanResult& r, int top) {
  const std::size_t shown = std::min(r.ranked.size(), static_cast<std::size_t>(top));
  p << "\nBest layouts (fastest first):\n";
  std::size_t width = 8;
  for (std::size_t i = 0; i < shown; ++i)
    width = std::max(width, planner::to_string(r.ranked[i].layout, sc).size() + 3);
  p << "   #  " << pad("layout", width) << lpad("iteration", 11) << lpad("tokens/s", 12) << lpad("MFU", 8)
    << lpad("memory/GPU", 12) << "\n";
  bool any_tight = false;
  for (std::size_t i = 0; i < shown; ++i) {
    const planner::PlanEntry& e = r.ranked[i];
    const std::string mark = static_cast<int>(i) == r.baseline_rank ? " *" : "";
    const bool tight = tight_memory(e.report.memory);
    any_tight = any_tight || tight;
    p << lpad(std::to_string(i + 1), 4) << "  " << pad(planner::to_string(e.layout, sc) + mark, width)
      << lpad(format_fixed(e.report.iteration_time_s, 3) + " s", 11) << lpad(with_thousands(e.report.tokens_per_s), 12)
      << lpad(format_fixed(100 * e.report.mfu, 1) + " %", 8) << lpad(format_gib(e.report.memory.peak_bytes_per_gpu), 12)
      << (tight ? " !" : "") << "\n";
  }
  if (r.baseline_rank >= 0 && static_cast<std::size_t>(r.baseline_rank) < shown)
    p << "   (* the scenario's own layout)\n";
  if (any_tight) p << "   (! tight: the headroom left is " << tight_memory_reason() << ")\n";
  // When the fastest may not fit, the fastest that surely does (by the model's error) is named.
  if (!r.ranked.empty() && tight_memory(r.ranked.front().report.memory)) {
    const auto roomy = std::find_if(r.ranked.begin(), r.ranked.end(),
                                    [](const planner::PlanEntry& e) { return !tight_memory(e.report.memory); });
    if (roomy == r.ranked.end()) {
      p << "   Every layout's headroom is within the memory model's error: none surely fits.\n";
    } else {
      const double slower = roomy->report.iteration_time_s / r.ranked.front().report.iteration_time_s - 1;
      p << "   Fastest layout with headroom beyond that error: #" << (roomy - r.ranked.begin()) + 1 << " "
        << planner::to_string(roomy->layout, sc) << ", " << format_fixed(roomy->report.iteration_time_s, 3) << " s ("
        << format_fixed(100 * slower, 1) << " % slower than #1), "
        << format_gib(roomy->report.memory.peak_bytes_per_gpu) << " per GPU\n";
    }
  }
}

/// Why the runner-up lost to the winner and why the scenario's own layout lost (either absent).
struct PlanExplanations {
  std::optional<planner::Explanation> runner_up, own;
};

/// The winner's iteration breakdown, why #1 beat #2, and how the scenario's own layout compares.
PlanExplanations print_winner(std::ostream& p, const models::Scenario& sc, const planner::PlanResult& r) {
  PlanExplanations x;
  const planner::PlanEntry& best = r.ranked.front();
  const models::TimeBreakdown& b = best.report.breakdown;
  p << "\nWinner's iteration: compute " << format_fixed(b.compute_s, 3) << " s, exposed TP "
    << format_fixed(b.tp_comm_exposed_s, 3) << " s, exposed DP " << format_fixed(b.dp_comm_exposed_s, 3)
    << " s, exposed PP " << format_fixed(b.pp_comm_exposed_s, 3) << " s, bubble "
    << format_fixed(b.pipeline_bubble_s, 3) << " s, optimizer " << format_fixed(b.optimizer_s, 3) << " s"
    << (b.straggler_wait_s > 0 ? ", waiting for slower GPUs " + format_fixed(b.straggler_wait_s, 3) + " s" : "");
  // The parts only some jobs have (MoE, CP, offload, input copies, storage), when present.
  for (const auto& [name, s] : {std::pair<const char*, double>{"exposed EP all-to-all", b.ep_comm_exposed_s},
                                {"exposed CP", b.cp_comm_exposed_s},
                                {"offload", b.offload_s},
                                {"exposed input copies", b.input_copy_exposed_s},
                                {"storage stall", b.storage_stall_s}})
    if (s > 0) p << ", " << name << " " << format_fixed(s, 3) << " s";
  p << "\n";
  if (r.ranked.size() > 1) {
    x.runner_up = planner::explain_difference(best, r.ranked[1], r.gpus_per_node, sc);
    p << "\nWhy #1 beat #2:\n";
    print_explanation(p, *x.runner_up);
  }
  p << "\nThe scenario's own layout";
  if (r.baseline) {
    p << " (" << planner::to_string(r.baseline->layout, sc) << "): ";
    if (r.baseline_rank == 0) {
      p << "it is the winner.\n";
    } else {
      p << (r.baseline_rank > 0
                ? "rank " + std::to_string(r.baseline_rank + 1) + " of " + std::to_string(r.ranked.size())
                : "simulated apart (" + r.baseline_note + ")")
        << ", " << format_fixed(r.baseline->report.iteration_time_s, 3) << " s per iteration.\n";
      if (r.baseline->report.iteration_time_s >= best.report.iteration_time_s) {
        x.own = planner::explain_difference(best, *r.baseline, r.gpus_per_node, sc);
      } else {
        p << "  It beats every layout the search simulated; why the search's best is slower:\n";
        x.own = planner::explain_difference(*r.baseline, best, r.gpus_per_node, sc);
      }
      print_explanation(p, *x.own);
    }
  } else {
    // The planner's notes that name the layout themselves read as one sentence with the heading.
    const std::string lead = "the scenario's own layout ";
    if (r.baseline_note.rfind(lead, 0) == 0)
      p << " " << r.baseline_note.substr(lead.size()) << "\n";
    else
      p << ": " << r.baseline_note << "\n";
  }
  return x;
}

/// The result as JSON (--json).
std::string plan_json(const models::Scenario& sc, const planner::PlanResult& r, const PlanExplanations& x) {
  const planner::PlanStats& st = r.stats;
  std::ostringstream j;
  j << "{\n  \"scenario\": " << json_string(sc.name) << ",\n  \"num_gpus\": " << r.num_gpus
    << ",\n  \"gpus_per_node\": " << r.gpus_per_node << ",\n  \"stats\": {\"considered\": " << st.considered
    << ", \"pruned_memory\": " << st.pruned_memory << ", \"pruned_dominated\": " << st.pruned_dominated
    << ", \"pruned_estimate\": " << st.pruned_estimate << ", \"simulated\": " << st.simulated
    << ", \"failed\": " << st.failed << ", \"not_simulated\": " << st.not_simulated
    << ", \"refine_rounds\": " << st.refine_rounds << "},\n  \"ranked\": [";
  for (std::size_t i = 0; i < r.ranked.size(); ++i) j << (i ? ", " : "") << entry_json(r.ranked[i], sc, "  ");
  j << "],\n  \"baseline\": " << (r.baseline ? entry_json(*r.baseline, sc, "  ") : "null")
    << ",\n  \"baseline_rank\": " << r.baseline_rank << ",\n  \"baseline_note\": " << json_string(r.baseline_note)
    << ",\n  \"why_runner_up_lost\": " << (x.runner_up ? explanation_json(*x.runner_up) : "null")
    << ",\n  \"why_baseline_lost\": " << (x.own ? explanation_json(*x.own) : "null") << "\n}\n";
  return j.str();
}

/// Help, or the search and its report (exit 1 when no layout fits).
int run_plan(const po::variables_map& vm, const po::options_description& opts, std::ostream& out, std::ostream& err) {
  if (vm.count("help")) {
    out << opts << "\n";
    return 0;
  }
  const PlanRequest req = read_plan_request(vm);
  const planner::PlanOptions& o = req.options;
  const bool force = vm.count("force") > 0;
  std::vector<std::string> overrides;
  if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
  const bool from_file = vm.count("scenario") > 0;
  const std::string origin = from_file ? vm["scenario"].as<std::string>() : "(embedded default)";
  // The scenario's own layout is what the search replaces: its rules (tp * pp * dp = GPUs, ...)
  // are not errors here, only what the note below says about it.
  std::vector<std::string> own_layout_problems;
  const models::Scenario sc =
      io::load_scenario_for_layout_search(from_file ? origin : std::string(), overrides, own_layout_problems);
  refuse_job_list(sc, from_file ? origin : std::string(), "plan");
  std::string json_path;
  if (vm.count("json")) {
    json_path = vm["json"].as<std::string>();
    check_output_path(json_path, force, scenario_input_files(sc, from_file ? origin : std::string()));
  }
  check_plannable(sc, o, from_file ? origin : std::string(), overrides);
  // The file's and the cluster's fields without effect (no layout enters them), then the
  // workload's that hold whatever the layout (the layout-dependent ones would speak of the
  // scenario's own layout, which the search replaces).
  warn_settings_without_effect(sc, err, from_file ? origin : std::string(), overrides);
  for (const std::string& note : models::compute_settings_without_effect(sc))
    err << "warning: " << note_at_field(note, from_file ? origin : std::string(), overrides) << "\n";
  // The network first: no --max-simulations makes a cluster over its limit fit.
  check_network_size_at(sc, from_file ? origin : std::string(), overrides);
  try {
    planner::check_search_size(sc, o);  // before anything is built: a refusal in milliseconds
  } catch (const std::invalid_argument& e) {
    throw io::ScenarioError(
        {scenario_field_origin(from_file ? origin : std::string(), "cluster.num_nodes", overrides) + ": " + e.what()});
  }

  if (const std::string why = planner::why_no_layout(sc, o); !why.empty()) {
    throw io::ScenarioError({scenario_field_origin(from_file ? origin : std::string(), "cluster.num_nodes", overrides) +
                             ": cluster.num_nodes: " + why +
                             " (expected a cluster, batch and model that some layout fits: docs/scenarios.md, "
                             "\"Checks\")"});
  }

  const InterruptScope interrupts;  // Ctrl-C ends the search (exit 130)
  TerminalProgress progress(progress_terminal(err));
  const auto t0 = std::chrono::steady_clock::now();
  const planner::PlanResult r = planner::plan_layouts(sc, o);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.finish();

  std::ostringstream p;
  print_search(p, sc, r, o, origin, wall_s);
  if (!own_layout_problems.empty()) {
    p << "\nThe scenario's own layout is not valid here (the search replaces it):\n";
    for (const std::string& why : own_layout_problems) p << "  " << why << "\n";
  }
  if (r.ranked.empty()) {
    print_no_layout(p, sc, r);
    out << p.str();
    // Issue 21: exit 1 said nothing on stderr and left no --json file; the file now records the
    // empty ranking (and the search's counts), and stderr says why the status is 1.
    if (!json_path.empty()) write_output_file(json_path, plan_json(sc, r, PlanExplanations{}));
    const bool all_failed = r.stats.failed > 0 && r.stats.failed == r.stats.simulated;
    err << "traincast: plan: "
        << (all_failed ? "every simulated layout failed (exit status 1)"
                       : "no layout fits in memory and simulates (exit status 1)")
        << (json_path.empty() ? std::string() : "; " + json_path + " holds the empty ranking") << "\n";
    return 1;
  }
  print_ranked(p, sc, r, req.top);
  const PlanExplanations x = print_winner(p, sc, r);
  out << p.str();

  if (!json_path.empty()) write_output_file(json_path, plan_json(sc, r, x));
  return 0;
}

}  // namespace

int plan_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const planner::PlanOptions defaults;
  const po::options_description opts = plan_options(defaults);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  return guarded(err, [&]() -> int { return run_plan(parse_options(args, opts, pos), opts, out, err); });
}

}  // namespace traincast::cli
