#include "tools/cli/commands.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "models/io/trace_writer.h"
#include "models/io/validation_case.h"
#include "models/spec/enums.h"
#include "models/workload/cnn.h"
#include "models/workload/transformer.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/interrupt.h"
#include "tools/cli/nccl_validation.h"
#include "tools/cli/summary.h"
#include "tools/cli/validation_stats.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

constexpr const char* kVersion = "traincast 0.1.0";

/// Simulates one validation case: its metric's prediction, the OOM verdict and what the bias
/// table groups by (failure set, nothing else, when the simulation throws).
CaseOutcome simulate_case(const models::ValidationCase& vc) {
  CaseOutcome c;
  try {
    models::throw_if_interrupted("validate: cases");
    const models::Scenario& sc = vc.scenario;
    const models::Report r = models::simulate_training(sc);
    c.predicted = models::metric_value(r, vc.metric);
    c.oom = r.memory.oom;
    c.peak_gib = r.memory.peak_bytes_per_gpu / 1073741824.0;
    c.capacity_gib = r.memory.capacity_bytes / 1073741824.0;
    c.gpus = r.num_gpus;
    c.seq_length = sc.model.seq_length;
    c.parameters = sc.model.family == models::ModelFamily::resnet ? models::resnet_parameters(sc.model)
                                                                  : models::total_parameters(sc.model);
    c.precision = models::precision_name(sc.training.precision);
  } catch (const models::Interrupted&) {
    throw;  // Ctrl-C ends the command, not the case
  } catch (const std::exception& e) {
    c = CaseOutcome{};
    c.failure = e.what();
  }
  return c;
}

}  // namespace

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast run [SCENARIO] [options]\n\n"
      "Simulates one training iteration (or options.iterations) of SCENARIO (.textproto or .json;\n"
      "the embedded default, a Llama-3-8B-class model on one DGX H100, when none is given) and\n"
      "prints a summary: iteration time, tokens/s, TFLOP/s per GPU, MFU/HFU, where the time went,\n"
      "per-GPU memory and OOM verdict, the busiest links; with cluster.overrides, what each entry\n"
      "did and what they cost (the job is simulated once more without them, alongside it where\n"
      "--threads allows). The Monte-Carlo failure draws show progress on stderr when it is a\n"
      "terminal; Ctrl-C (or SIGTERM) stops the run\n"
      "wherever it is, building the network, simulating or drawing (exit status 130, 143 for\n"
      "SIGTERM; no file written).\n\nOptions");
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scalar field, e.g. --set workload.parallel.tp=4; a list's entry by its index from 0, the index\n"
      "equal to the entries adding one: --set 'cluster.overrides[0].select=node1/gpu3' --set\n"
      "'cluster.overrides[0].clock_factor=0.9' on a file without overrides (repeatable; see docs/scenarios.md)")(
      "json", po::value<std::string>(), "write the report as JSON to this file (keys: docs/outputs.md)")(
      "trace", po::value<std::string>(), "write a Chrome/Perfetto trace (ui.perfetto.dev) to this file")(
      "threads", po::value<int>(),
      "threads for the run (ECMP draws, op-graph generation, failure draws, the power and thermal model beside the "
      "event loop), 0 to 1024; default 0, all hardware "
      "threads (same result for any value)")("force", "overwrite existing --json/--trace files")(
      "profile", po::value<std::string>(), "calibration profile (traincast calibrate fit); overrides the scenario's")(
      "print-scenario",
      "print the scenario as loaded (defaults filled in; a field that has presence is printed even at 0, "
      "false or empty, e.g. hidden_dropout: 0, while protobuf's text format leaves other such fields "
      "out) and exit; with --json F, also write it to F as a JSON scenario")("scenario", po::value<std::string>(),
                                                                             "scenario file (positional)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    std::vector<std::string> overrides;
    if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
    if (vm.count("threads")) {
      const int threads = vm["threads"].as<int>();
      check_thread_count("--threads", threads, io::kThreadsWhy, 0);
      overrides.push_back("options.threads=" + std::to_string(threads));
    }
    const bool from_file = vm.count("scenario") > 0;
    keep_freed_memory();
    // --threads is the last override; its origin keeps it out of a file error's "as changed by" note.
    const std::string last_option = vm.count("threads") ? "--threads" : "";
    models::Scenario sc = from_file ? io::load_scenario_file(vm["scenario"].as<std::string>(), overrides, last_option)
                                    : io::default_scenario(overrides, last_option);
    use_profile(
        sc, profile_option(vm), overrides,
        [&](const std::vector<std::string>& o) {
          return from_file ? io::load_scenario_file(vm["scenario"].as<std::string>(), o) : io::default_scenario(o);
        },
        err);
    if (vm.count("print-scenario")) {
      if (vm.count("trace")) throw UsageError("--trace: nothing is simulated with --print-scenario (drop one of them)");
      // --json names the file the scenario goes to as JSON (no report is made).
      if (vm.count("json")) {
        std::vector<std::string> inputs;
        if (from_file) inputs.push_back(vm["scenario"].as<std::string>());
        check_output_path(vm["json"].as<std::string>(), vm.count("force") > 0, inputs);
      }
      out << io::scenario_to_text(sc);
      if (vm.count("json")) write_output_file(vm["json"].as<std::string>(), io::scenario_to_json(sc));
      return 0;
    }
    refuse_job_list(sc, from_file ? vm["scenario"].as<std::string>() : std::string(), "run");
    warn_groups_straddle_nodes(sc, err);
    const std::string scenario_path = from_file ? vm["scenario"].as<std::string>() : std::string();
    warn_settings_without_effect(sc, err, scenario_path, overrides);
    warn_workload_settings_without_effect(sc, err, scenario_path, overrides);
    // Refuse to clobber, and find unusable paths, before spending time simulating.
    const bool force = vm.count("force") > 0;
    const std::vector<std::string> inputs =
        scenario_input_files(sc, from_file ? vm["scenario"].as<std::string>() : std::string());
    if (vm.count("json")) check_output_path(vm["json"].as<std::string>(), force, inputs);
    if (vm.count("trace")) {
      std::vector<std::string> others;
      if (vm.count("json")) others.push_back(vm["json"].as<std::string>());
      check_output_path(vm["trace"].as<std::string>(), force, inputs, others);
    }
    sim::TraceRecorder trace;
    const InterruptScope interrupts;  // Ctrl-C stops the Monte-Carlo draws (exit 130)
    TerminalProgress progress(progress_terminal(err));
    const auto t0 = std::chrono::steady_clock::now();
    models::Report report = [&] {
      try {
        // With cluster.overrides, also the job without them (the summary's and JSON's
        // overrides.cost_s), side by side on --threads.
        return models::simulate_training_with_override_cost(sc, vm.count("trace") ? &trace : nullptr);
      } catch (const std::invalid_argument& e) {
        rethrow_at_field(e, from_file ? vm["scenario"].as<std::string>() : std::string(), overrides);
      }
    }();
    name_price_options(report.cost, overrides, last_option);  // a price --set gave: "--set", not "scenario"
    progress.finish();
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The --set overrides beside the file: the scenario's description (its own text) may predate
    // them. Not --threads (an override too): the output's bytes do not depend on it.
    std::string origin = from_file ? vm["scenario"].as<std::string>() : "(embedded default)";
    bool set_changed = false;  // a --set of the job (not options.*): the description may be stale
    if (vm.count("set")) {
      // options.threads given by --set is left out too.
      bool first = true;
      for (const std::string& set : vm["set"].as<std::vector<std::string>>()) {
        set_changed = set_changed || set.rfind("options.", 0) != 0;
        if (set.rfind("options.threads=", 0) == 0) continue;
        origin += (first ? " with --set " : ", ") + set;
        first = false;
      }
    }
    out << format_summary(sc, report, origin, wall_s, set_changed);
    if (vm.count("json"))
      write_output_file(vm["json"].as<std::string>(), io::report_to_json(with_default_budget(sc, report)));
    if (vm.count("trace")) {
      std::ostringstream s;
      io::write_chrome_trace(trace, s);
      const std::string text = std::move(s).str();  // the buffer itself, not a copy of it (C++20)
      write_output_file(vm["trace"].as<std::string>(), text);
      err << large_trace_note(vm["trace"].as<std::string>(), text.size());
    }
    return 0;
  });
}

namespace {

/// validate's case files, each case's scenario loaded with its sets and then --set; every input
/// error of every file before any simulation runs. --csv must not name a file a case reads.
void load_cases_for_validate(const po::variables_map& vm, std::vector<models::ValidationCase>& cases,
                             std::vector<std::string>& case_file) {
  std::vector<std::string> load_errors;
  const std::vector<std::string> sets =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  // Two files with the same bytes would score each of their cases twice (a path given twice is
  // refused before this)
  // (fresh user, session 36: "2 of 2 cases", both named the same): refused, as merge and
  // calibrate fit refuse a part or measurement file given twice.
  std::map<std::string, std::string> first_with;  // bytes -> the first path with them
  for (const std::string& path : vm["cases"].as<std::vector<std::string>>()) {
    std::string bytes;
    try {
      bytes = io::read_input_file(path);
    } catch (const std::exception&) {
      continue;  // the loader below names what is wrong with it
    }
    if (const auto [it, fresh] = first_with.emplace(std::move(bytes), path); !fresh)
      throw UsageError("validate: " + path + ": the same bytes as " + it->second +
                       " (each of its cases would be scored twice; expected each case file once)");
  }
  for (const std::string& path : vm["cases"].as<std::vector<std::string>>()) {
    try {
      for (auto& c : io::load_validation_cases(path, sets)) {
        cases.push_back(std::move(c));
        case_file.push_back(path);
      }
    } catch (const io::ScenarioError& e) {
      load_errors.insert(load_errors.end(), e.errors().begin(), e.errors().end());
    }
  }
  if (!load_errors.empty()) throw io::ScenarioError(load_errors);
  if (vm.count("csv")) {
    // Nor any file a case names (its scenario, its nccl-tests log).
    std::vector<std::string> named;
    for (const auto& c : cases) {
      if (!c.scenario_path.empty()) named.push_back(c.scenario_path);
      if (c.nccl_tests && !c.nccl_tests->log_path.empty()) named.push_back(c.nccl_tests->log_path);
    }
    check_output_path(vm["csv"].as<std::string>(), true, named);
  }
}

}  // namespace

int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast validate CASES... [options]\n\n"
      "Runs every case of each validation file (scenario + overrides + published measurement +\n"
      "source), prints predicted vs measured and the error of each, then the mean absolute\n"
      "percentage error (MAPE) per metric and overall, and the largest error. Exit status 1 when\n"
      "a case fails to simulate, a case exceeds its own tolerance, a run (a throughput or time\n"
      "case) is predicted out of memory, any metric's MAPE exceeds --max-mape or any error exceeds\n"
      "--max-error; 2 for bad input. Then the bias per source: signed mean error beside MAPE, the\n"
      "largest error and its case, OOM flags, and the trend of signed error against sequence\n"
      "length, GPU count, model size (per doubling) and precision (docs/accuracy.md).\n\nOptions");
  opts.add_options()("help,h", "show this help")("max-mape", po::value<double>(),
                                                 "fail (exit 1) if the MAPE of any metric exceeds this [%]")(
      "max-error", po::value<double>(), "fail (exit 1) if any case's absolute error exceeds this [%]")(
      "jobs,j", po::value<int>()->default_value(1),
      "cases simulated in parallel, 1 to 1024, 0 for all hardware threads (output identical for any value)")(
      "csv", po::value<std::string>(), "also write the table as CSV to this file")("force",
                                                                                   "overwrite an existing --csv file")(
      "half", po::value<std::string>()->default_value("all"),
      "score the fit half, the held half or all cases (split rule: docs/accuracy_split.md; fit|held|all)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "field.path=value applied to every case's scenario after its own set entries, e.g. --set "
      "workload.training.compute_model=kernel; a list's entry by its index, the next index adding one (repeatable)")(
      "cases", po::value<std::vector<std::string>>(), "case files");
  po::positional_options_description pos;
  pos.add("cases", -1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    if (!vm.count("cases")) throw UsageError("validate: no case file given (usage: traincast validate CASES...)");
    refuse_repeated_files(vm["cases"].as<std::vector<std::string>>(), "validate", "each case file once");
    const int jobs = thread_count_option("--jobs", vm["jobs"].as<int>(), kSimulationsWhy);
    if (vm.count("max-mape"))
      check_percentage("--max-mape", vm["max-mape"].as<double>(), "the largest mean error that passes");
    if (vm.count("max-error"))
      check_percentage("--max-error", vm["max-error"].as<double>(), "the largest case error that passes");
    const std::string half = vm["half"].as<std::string>();
    if (half != "fit" && half != "held" && half != "all")
      throw UsageError("--half: got \"" + half + "\" (expected fit, held or all)");
    if (vm.count("csv"))
      check_output_path(vm["csv"].as<std::string>(), vm.count("force") > 0, vm["cases"].as<std::vector<std::string>>());
    std::vector<models::ValidationCase> cases;
    std::vector<std::string> case_file;
    load_cases_for_validate(vm, cases, case_file);
    std::size_t loaded = cases.size();
    if (half != "all") {
      // The split rule (validation_stats.h): cases outside the half, and cases of no shared-table
      // row (nccl-tests logs among them), are not scored.
      std::vector<models::ValidationCase> kept;
      std::vector<std::string> kept_file;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (split_half_name(split_half(cases[i].data_row)) != half) continue;
        kept.push_back(std::move(cases[i]));
        kept_file.push_back(case_file[i]);
      }
      cases.swap(kept);
      case_file.swap(kept_file);
      if (cases.empty()) throw UsageError("--half " + half + ": no case of these files is in that half");
    }
    const std::string half_line = "half: " + half + " (" + std::to_string(cases.size()) + " of " +
                                  std::to_string(loaded) +
                                  " cases; split rule: even data row = fit, odd = held, docs/accuracy_split.md)\n";
    const InterruptScope interrupts;  // Ctrl-C stops the cases (exit 130, no table or --csv written)
    // nccl-tests cases (tools/cli/nccl_validation.cc) are compared per size, apart from the rest;
    // their fields are checked against their logs first (exit 2, positioned, nothing simulated).
    if (std::vector<std::string> e = nccl_case_field_errors(cases); !e.empty()) throw io::ScenarioError(e);
    const NcclValidationReport nccl = run_nccl_validation(cases, case_file, jobs);
    const bool have_nccl = nccl.failed + nccl.known_gaps + nccl.passed > 0;
    {
      std::vector<models::ValidationCase> rest;
      std::vector<std::string> rest_file;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (cases[i].nccl_tests) continue;
        rest.push_back(std::move(cases[i]));
        rest_file.push_back(case_file[i]);
      }
      cases.swap(rest);
      case_file.swap(rest_file);
    }
    if (cases.empty() && have_nccl) {
      if (half != "all") out << half_line;
      out << nccl.text;
      if (vm.count("csv")) {
        write_output_file(vm["csv"].as<std::string>(),
                          "file,case,metric,measured,predicted,error_pct,source\n" + nccl.csv);
      }
      return nccl.failed > 0 ? 1 : 0;
    }
    std::vector<double> predicted(cases.size(), 0.0);
    std::vector<std::string> failure(cases.size());
    std::vector<CaseOutcome> outcome(cases.size());
    auto run_one = [&](std::size_t i) {
      outcome[i] = simulate_case(cases[i]);
      predicted[i] = outcome[i].predicted;
      failure[i] = outcome[i].failure;
    };
    {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(jobs));
      tbb::parallel_for(std::size_t{0}, cases.size(), run_one);
    }
    const ValidationTable table = make_validation_table(cases, case_file, predicted, failure);
    int oom_failures = 0;
    const std::string bias = format_bias_report(cases, case_file, outcome, half, oom_failures);
    out << half_line << table.text << bias;
    if (have_nccl) out << nccl.text;
    if (vm.count("csv")) write_output_file(vm["csv"].as<std::string>(), table.csv + nccl.csv);
    int status = (table.failed_cases > 0 || table.out_of_tolerance > 0 || nccl.failed > 0 || oom_failures > 0) ? 1 : 0;
    // A figure and its limit with as many decimals (1 to 6) as it takes to show the limit as given
    // and to tell the two apart, so that
    // --max-mape 0.01 never prints "0.0% exceeds --max-mape 0.0%".
    const auto exceeds = [&](const char* what, double got, const char* flag, double limit) {
      int decimals = 1;
      while (decimals < 6 && (format_fixed(got, decimals) == format_fixed(limit, decimals) ||
                              std::fabs(std::stod(format_fixed(limit, decimals)) - limit) > 1e-12))
        ++decimals;
      out << "FAIL: " << what << " " << format_fixed(got, decimals) << "% exceeds " << flag << " "
          << format_fixed(limit, decimals) << "%\n";
    };
    if (vm.count("max-mape") && table.worst_metric_mape_pct > vm["max-mape"].as<double>()) {
      exceeds("MAPE", table.worst_metric_mape_pct, "--max-mape", vm["max-mape"].as<double>());
      status = 1;
    }
    if (vm.count("max-error") && table.max_abs_error_pct > vm["max-error"].as<double>()) {
      exceeds("largest error", table.max_abs_error_pct, "--max-error", vm["max-error"].as<double>());
      status = 1;
    }
    return status;
  });
}

int catalog_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast catalog [--prices] [--json F]\n\nLists the GPUs and node templates (with their datasheet sources) "
      "that a\n"
      "scenario's cluster.node_template and cluster.gpu may name. --prices lists, per GPU, the default\n"
      "purchase price per node and rent per GPU-hour with their kind, source page, date and region, or\n"
      "that no public price exists (the scenario's cost section must then give it).\n\nOptions");
  opts.add_options()("help,h", "show this help")("prices", "list the default prices instead of the hardware")(
      "json", po::value<std::string>(),
      "also write the whole catalog and every price as JSON to this file (keys: docs/python.md)")(
      "force", "overwrite an existing --json file");
  const po::positional_options_description pos;
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    if (vm.count("json")) check_output_path(vm["json"].as<std::string>(), vm.count("force") > 0, {});
    out << (vm.count("prices") ? format_prices() : format_catalog());
    if (vm.count("json")) write_output_file(vm["json"].as<std::string>(), catalog_to_json());
    return 0;
  });
}

int main_dispatch(int argc, char** argv, std::ostream& out, std::ostream& err) {
  const std::string usage = std::string(kVersion) +
                            " — predicts deep-learning training time, memory and bottlenecks on GPU clusters\n\n"
                            "usage: traincast <command> [args]\n\n"
                            "commands:\n"
                            "  run [SCENARIO]   simulate a training iteration (embedded default if no file)\n"
                            "  validate CASES   compare predictions with published measurements\n"
                            "  compare A B      scenarios side by side: days, dollars, power, verdict\n"
                            "  catalog          list GPUs and node templates (--prices: dated prices)\n"
                            "  nccl-tests SCEN  simulate nccl-tests on a scenario's GPUs (nccl-tests' table)\n"
                            "  explain SCEN     the topology in words, a GPU-to-GPU path, Graphviz export\n"
                            "  plan [SCENARIO]  search parallel layouts: best few and why\n"
                            "  cluster SCEN     several jobs sharing a cluster under FIFO or backfill\n"
                            "  sweep SWEEP      run every point of a sweep file into a CSV (TBB, MPI, shards)\n"
                            "  merge OUT PARTS  join the CSVs of sweep shards\n"
                            "  chakra run|export  run Chakra execution traces; export a scenario's job as them\n"
                            "  calibrate fit|validate  fit a profile to measurements / check it per point\n"
                            "  --version        print the version\n\n"
                            "`traincast <command> --help` describes each command.\n";
  if (argc < 2) {
    err << usage;
    return 2;
  }
  const std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  // A scenario piped in (`traincast compare <(cat a.textproto) --vary ...`) reads the same each
  // time the command reads it (io::ReadOnceScope).
  const io::ReadOnceScope read_once;
  if (cmd == "run") return run_command(args, out, err);
  if (cmd == "validate") return validate_command(args, out, err);
  if (cmd == "catalog") return catalog_command(args, out, err);
  if (cmd == "compare") return compare_command(args, out, err);
  if (cmd == "nccl-tests") return nccl_tests_command(args, out, err);
  if (cmd == "explain") return explain_command(args, out, err);
  if (cmd == "plan") return plan_command(args, out, err);
  if (cmd == "cluster") return cluster_command(args, out, err);
  if (cmd == "sweep") return sweep_command(args, out, err);
  if (cmd == "merge") return merge_command(args, out, err);
  if (cmd == "chakra") return chakra_command(args, out, err);
  if (cmd == "calibrate") return calibrate_command(args, out, err);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    out << usage;
    return 0;
  }
  if (cmd == "--version") {
    out << kVersion << "\n";
    return 0;
  }
  err << "traincast: unknown command '" << cmd << "'\n\n" << usage;
  return 2;
}

}  // namespace traincast::cli
