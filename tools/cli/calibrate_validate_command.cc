// `traincast calibrate validate`: measured vs re-simulated per point for a profile (or refitted
// on half the sizes with --holdout), and --cases: every nccl-tests case of a validation file
// fitted on half its sizes and checked on the other half (calibrate/fit/).

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/fit/inputs.h"
#include "calibrate/fit/power_fit.h"
#include "calibrate/fit/profile_fit.h"
#include "calibrate/fit/profile_validate.h"
#include "calibrate/nccl_tests_log.h"
#include "models/collectives/nccl_tests.h"
#include "models/hardware/catalog.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "models/io/validation_case.h"
#include "tools/cli/calibrate_inputs.h"
#include "tools/cli/calibrate_subcommands.h"
#include "tools/cli/calibrate_tables.h"
#include "tools/cli/cli_util.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

/// "a | b": the model-free neighbour reference of a --cases row (see ValidationGroup).
std::string neighbour_cell(const calibrate::ValidationGroup& g) {
  auto one = [](int n, double e) { return n == 0 ? std::string("-") : percent(e); };
  return one(g.neighbour_large, g.neighbour_large_error) + " | " + one(g.neighbour_small, g.neighbour_small_error);
}

/// `traincast calibrate validate`'s help text and options.
po::options_description validate_options() {
  po::options_description opts(
      "traincast calibrate validate PROFILE MEASUREMENTS... [options]\n"
      "traincast calibrate validate --cases CASES --holdout odd|even [--max-large-error PCT --max-small-error PCT]\n\n"
      "Re-simulates every measured point with PROFILE and prints measured vs predicted with the error\n"
      "per point, marking the points the fit used, then the geometric-mean error per group split at\n"
      "1 MiB (collective busbw). The system is the profile's base (or --base). With --holdout the\n"
      "profile is refitted from MEASUREMENTS on the other half of the sizes (the profile's base and\n"
      "GPUs), so the error shown on the held-out half is on points the fit never saw. Without\n"
      "--holdout, the points of a file that is not among the profile's sources (by SHA-256) are\n"
      "marked '-' (not used by the fit). The profile's base resolves from its own directory; its\n"
      "base_set overrides apply before --set.\n"
      "With --cases, every nccl-tests case of a validation file (scenarios/nccl/) is fitted on half\n"
      "its sizes (the log's table `run`, default the first) and checked on the other half; exit 1\n"
      "when a case exceeds the limits or its fit is refused, unless it states a holdout_known_gap.\n\nOptions");
  opts.add_options()("help,h", "show this help")("base", po::value<std::string>(), "override the profile's base")(
      "gpus", po::value<std::string>(), "GPUs the collectives ran on (default: the profile's)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a cluster field of a scenario file base (others are refused)")(
      "nodes", po::value<int>()->default_value(1), "nodes when the base is a node template")(
      "holdout", po::value<std::string>(), "odd | even: refit on the other half, show error on this one")(
      "device", po::value<std::string>(), "CSV: keep the rows of this device_key")(
      "op", po::value<std::string>(), "operation of nccl-tests logs that name none (a name nccl-tests --op takes)")(
      "cases", po::value<std::string>(), "validation cases file (nccl_tests cases) instead of PROFILE")(
      "max-large-error", po::value<double>()->default_value(5.0), "--cases: limit >= 1 MiB [%]")(
      "max-small-error", po::value<double>()->default_value(15.0), "--cases: limit < 1 MiB [%]")(
      "quiet,q", "--cases: summary only")("inputs", po::value<std::vector<std::string>>(), "PROFILE MEASUREMENTS...");
  return opts;
}

/// What the --cases summary counts.
struct CaseCounts {
  int failed = 0, checked = 0, too_few = 0, known = 0;
};

/// A case's fit options: its scenario's cluster (the datasheet defaults), its GPUs, the holdout.
calibrate::FitOptions case_fit_options(const models::ValidationCase& c, calibrate::Holdout h) {
  calibrate::FitOptions o;
  o.base = c.scenario_path;
  o.cluster = c.scenario.cluster;
  o.cluster->profile = nullptr;
  o.holdout = h;
  if (!c.nccl_tests->gpus.empty()) o.gpus = models::parse_gpu_list(c.nccl_tests->gpus);
  return o;
}

/// Fits case c on its fit sizes and validates it. Throws whatever reading the log or the fit throws.
calibrate::Validation fit_and_validate_case(const models::ValidationCase& c, const calibrate::FitOptions& o) {
  // One table of the log: `run` (default 0) selects it, as `traincast validate` does, so
  // each op of a multi-op paste (r02, r03, r11) is its own case.
  calibrate::NcclTestsLog log = calibrate::read_nccl_tests_log(c.nccl_tests->log_path);
  const int run = c.nccl_tests->run;
  if (run >= static_cast<int>(log.runs.size())) {
    throw UsageError(c.nccl_tests->log_path + ": run " + std::to_string(run) + " asked, the log has " +
                     std::to_string(log.runs.size()));
  }
  log.runs = {log.runs[static_cast<std::size_t>(run)]};
  calibrate::InputNotes n;
  const models::MeasurementSet m = calibrate::samples_from_nccl_log(log, c.nccl_tests->log_path, c.nccl_tests->op, n,
                                                                    "case " + c.name + " nccl_tests.op");
  auto profile = std::make_shared<const models::CalibrationProfile>(calibrate::fit_profile(m, o));
  return calibrate::validate_profile(profile, m, o);
}

/// The verdict of a case whose fit could not run (e: why), counted in `counts`.
std::string refused_verdict(const models::ValidationCase& c, const std::exception& e, CaseCounts& counts) {
  // A case whose holdout_known_gap says why its fit is refused (e.g. a run far below its
  // links' rate, under the fit's other-hardware check) is reported, not failed; the
  // refusal is printed with it.
  if (!c.nccl_tests->holdout_known_gap.empty()) {
    ++counts.checked;
    ++counts.known;
    return "KNOWN GAP: " + c.nccl_tests->holdout_known_gap + " [fit refused: " + e.what() + "]";
  }
  ++counts.failed;
  return std::string("FAILED (cannot run: ") + e.what() + ")";
}

/// The verdict of one group (op) of a case against the limits, counted in `counts`.
std::string group_verdict(const calibrate::ValidationGroup& g, const std::string& gap, double max_large,
                          double max_small, CaseCounts& counts) {
  const int sizes = g.held_large + g.held_small + g.fit_large + g.fit_small;
  const bool bad =
      (g.held_large > 0 && g.held_large_error > max_large) || (g.held_small > 0 && g.held_small_error > max_small);
  if (g.held_large + g.held_small == 0 || g.fit_large + g.fit_small == 0) {
    ++counts.too_few;
    return std::string(g.fit_large + g.fit_small == 0 ? "no fit size" : "no held-out size") + " (the log has " +
           std::to_string(sizes) + "); not checked";
  }
  ++counts.checked;
  if (bad && !gap.empty()) {
    ++counts.known;
    return "KNOWN GAP: " + gap;
  }
  if (bad) {
    ++counts.failed;
    return "FAILED";
  }
  // holdout_known_gap may be written for the other split (the CTest runs odd): say
  // what this run shows, not that the gap is gone.
  return gap.empty() ? "ok"
                     : "ok on this split (holdout_known_gap is set: remove it only if the other "
                       "--holdout split is ok too)";
}

/// The --cases summary rows of case c: one per group, or one with its verdict when it has none.
std::string case_rows(const models::ValidationCase& c, const calibrate::Validation& v, std::string verdict,
                      double max_large, double max_small, CaseCounts& counts) {
  std::ostringstream summary;
  char line[512];
  std::string opname = c.nccl_tests->op;
  for (const auto& g : v.groups) {
    opname = g.group;
    const int sizes = g.held_large + g.held_small + g.fit_large + g.fit_small;
    verdict = group_verdict(g, c.nccl_tests->holdout_known_gap, max_large, max_small, counts);
    auto cell = [](int n, double e) { return n == 0 ? std::string("-") : percent(e) + " (" + std::to_string(n) + ")"; };
    // The verdict goes after the fixed columns, whatever its length.
    std::snprintf(line, sizeof line, "%-40s %-14s %5d %24s %24s %16s  ", c.name.c_str(), opname.c_str(), sizes,
                  cell(g.held_large, g.held_large_error).c_str(), cell(g.held_small, g.held_small_error).c_str(),
                  neighbour_cell(g).c_str());
    summary << line << verdict << "\n";
  }
  if (v.groups.empty()) {
    std::snprintf(line, sizeof line, "%-40s %-14s %5s %24s %24s %16s  ", c.name.c_str(), opname.c_str(), "-", "-", "-",
                  "-");
    summary << line << verdict << "\n";
  }
  return summary.str();
}

/// --cases: every nccl_tests case of the file fitted on half its sizes (the holdout) and checked
/// on the other half; exit 1 when one fails.
int validate_cases(const po::variables_map& vm, std::ostream& out) {
  if (!vm.count("holdout")) throw UsageError("calibrate validate --cases: --holdout odd|even is required");
  const calibrate::Holdout h = parse_holdout(vm["holdout"].as<std::string>());
  for (const char* limit : {"max-large-error", "max-small-error"}) {
    const double pct_limit = vm[limit].as<double>();
    if (!(pct_limit > 0) || !std::isfinite(pct_limit)) {
      throw UsageError(std::string("--") + limit + ": got " + fmt("%g", pct_limit) +
                       " (expected a number > 0, in percent)");
    }
  }
  const double max_large = vm["max-large-error"].as<double>() / 100,
               max_small = vm["max-small-error"].as<double>() / 100;
  const auto cases = io::load_validation_cases(vm["cases"].as<std::string>());
  if (std::none_of(cases.begin(), cases.end(), [](const auto& c) { return c.nccl_tests.has_value(); })) {
    throw UsageError(vm["cases"].as<std::string>() + ": no nccl_tests case among its " + std::to_string(cases.size()) +
                     " cases (calibrate validate --cases refits nccl-tests logs; expected a file with nccl_tests "
                     "cases, such as scenarios/nccl/shared_logs.cases.textproto)");
  }
  CaseCounts counts;
  char line[512];
  std::ostringstream summary;
  std::snprintf(line, sizeof line, "%-40s %-14s %5s %24s %24s %16s  %s\n", "case", "op", "sizes", "held out >= 1 MiB",
                "held out < 1 MiB", "neighbours", "verdict");
  summary << line;
  for (const auto& c : cases) {
    if (!c.nccl_tests) continue;
    const calibrate::FitOptions o = case_fit_options(c, h);
    std::string verdict;
    calibrate::Validation v;
    try {
      v = fit_and_validate_case(c, o);
    } catch (const std::exception& e) {
      verdict = refused_verdict(c, e, counts);
    }
    summary << case_rows(c, v, verdict, max_large, max_small, counts);
    if (!vm.count("quiet") && !v.points.empty()) {
      out << "\n"
          << c.name << ": " << c.nccl_tests->log_path << " on " << c.scenario_path << "\n"
          << format_validation(v, true);
    }
  }
  out << "\ncalibrate validate --holdout " << vm["holdout"].as<std::string>()
      << ": fit on half the sizes of each log, geometric-mean busbw error on the other half (limits "
      << percent(max_large) << " >= 1 MiB, " << percent(max_small) << " below); neighbours: the same error when each "
      << "held-out size between two fit sizes is interpolated from their measured times (no model: how rough the "
      << "log is from size to size)\n"
      << summary.str() << counts.checked << " cases checked, " << counts.failed << " failed, " << counts.known
      << " known gaps, " << counts.too_few << " with too few sizes to split\n";
  return counts.failed > 0 ? 1 : 0;
}

/// PROFILE MEASUREMENTS...: the profile's points re-simulated (with --holdout: refitted on the
/// other half first); points of files not among its sources are marked as not used by the fit.
int validate_profile_file(const po::variables_map& vm, const std::string& device, const std::string& op,
                          std::ostream& out) {
  if (!vm.count("inputs") || vm["inputs"].as<std::vector<std::string>>().size() < 2) {
    throw UsageError("calibrate validate: expected PROFILE and at least one measurement file");
  }
  auto inputs = vm["inputs"].as<std::vector<std::string>>();
  const std::string profile_path = inputs.front();
  inputs.erase(inputs.begin());
  std::shared_ptr<const models::CalibrationProfile> profile = io::load_profile_file(profile_path);
  calibrate::FitOptions o;
  calibrate::apply_fit_options_text(profile->fit_options, o);
  // The fit's recorded --set first, then this command's (which win).
  std::vector<std::string> sets = profile->base_sets;
  if (vm.count("set")) {
    const auto more = vm["set"].as<std::vector<std::string>>();
    sets.insert(sets.end(), more.begin(), more.end());
  }
  const std::string base = vm.count("base") ? vm["base"].as<std::string>() : profile->base_path;
  if (base.empty()) throw UsageError("calibrate validate: the profile names no base (give --base)");
  if (!vm.count("base") && is_scenario_file(base) && !std::filesystem::exists(base)) {
    throw io::ScenarioError({profile->base_where + ": base: scenario file \"" + profile->base + "\" not found (tried " +
                             base +
                             "; a relative base is resolved from the profile file's directory; expected the "
                             "scenario the profile was fitted on there, or give --base)"});
  }
  resolve_base(base, vm["nodes"].as<int>(), sets, o);
  if (vm.count("gpus")) o.gpus = parse_gpus_option(vm["gpus"].as<std::string>(), o);
  std::vector<models::ProfileSource> sources;
  std::vector<std::string> notes;
  const models::MeasurementSet m = read_inputs(inputs, device, op, sources, notes);
  if (vm.count("holdout")) {
    o.holdout = parse_holdout(vm["holdout"].as<std::string>());
    profile = std::make_shared<const models::CalibrationProfile>(calibrate::fit_profile(m, o));
    out << "refitted on the " << (o.holdout == calibrate::Holdout::odd ? "even" : "odd")
        << "-indexed sizes of each group (base " << base << "); error on the others is out of sample\n";
    if (!m.power.empty())
      out << "burn samples: refitted on the idle baseline and the first half of each burn; the rest is out of "
             "sample\n";
  } else {
    // Points of files the profile was fitted from are fit points (as its holdout left them);
    // a file that is not among its sources (by SHA-256) was not used by the fit at all.
    std::map<std::string, bool> fitted;
    for (const auto& s : profile->sources) fitted[s.sha256] = true;
    out << "profile " << profile_path << " (base " << base << ")\n";
    for (const auto& s : sources) {
      if (fitted.count(s.sha256)) continue;
      o.unfitted_files.push_back(s.path);
      out << s.path << ": not among the profile's sources (no source with its SHA-256 " << s.sha256.substr(0, 12)
          << "...): its points were not used by the fit ('-')\n";
    }
  }
  const calibrate::Validation v = calibrate::validate_profile(profile, m, o);
  if (!v.points.empty() || m.power.empty())
    out << format_validation(v, o.holdout != calibrate::Holdout::none || !o.unfitted_files.empty());
  if (!m.power.empty()) {
    if (o.gpu.empty()) throw UsageError("calibrate validate: burn samples need a GPU (give --base)");
    out << format_burn_validation(calibrate::validate_burn(*profile, models::find_gpu(o.gpu), m.power, m.power_limit_w,
                                                           o.holdout != calibrate::Holdout::none),
                                  o.holdout != calibrate::Holdout::none);
  }
  return 0;
}

/// Help, --cases or PROFILE MEASUREMENTS... .
int run_validate(const po::variables_map& vm, const po::options_description& opts, std::ostream& out) {
  if (vm.count("help")) {
    out << opts << "\n";
    return 0;
  }
  const std::string device = vm.count("device") ? vm["device"].as<std::string>() : "";
  const std::string op = vm.count("op") ? vm["op"].as<std::string>() : "";
  if (vm.count("op")) nccl_op_option("--op", op);  // exactly nccl-tests' --op names
  if (vm.count("cases")) return validate_cases(vm, out);
  return validate_profile_file(vm, device, op, out);
}

}  // namespace

int calibrate_validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description opts = validate_options();
  po::positional_options_description pos;
  pos.add("inputs", -1);
  return guarded(err, [&]() -> int { return run_validate(parse_options(args, opts, pos), opts, out); });
}

}  // namespace traincast::cli
