// `traincast calibrate fit|validate`: measured points (traincast-bench files, nccl-tests logs,
// CSV) -> a calibration profile, and measured vs re-simulated per point (calibrate/fit/).

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/fit/inputs.h"
#include "calibrate/fit/power_fit.h"
#include "calibrate/fit/profile_fit.h"
#include "calibrate/fit/sha256.h"
#include "calibrate/nccl_tests_log.h"
#include "models/collectives/nccl_tests.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

bool has_ext(const std::string& path, std::initializer_list<const char*> exts) {
  std::string e = std::filesystem::path(path).extension().string();
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* x : exts) {
    if (e == x) return true;
  }
  return false;
}

/// Whether a --base (or a profile's base) names a scenario file rather than a node template or
/// catalog GPU: by its extension, text format or JSON.
bool is_scenario_file(const std::string& base) {
  return has_ext(base, {".textproto", ".txtpb", ".pbtxt", ".txt", ".json"});
}

void append(models::MeasurementSet& to, const models::MeasurementSet& from) {
  if (to.gpu_name.empty()) to.gpu_name = from.gpu_name;
  to.gemm.insert(to.gemm.end(), from.gemm.begin(), from.gemm.end());
  to.bandwidth.insert(to.bandwidth.end(), from.bandwidth.begin(), from.bandwidth.end());
  to.collectives.insert(to.collectives.end(), from.collectives.begin(), from.collectives.end());
  if (from.launch_back_to_back_s > 0) to.launch_back_to_back_s = from.launch_back_to_back_s;
  if (from.launch_empty_kernel_s > 0) to.launch_empty_kernel_s = from.launch_empty_kernel_s;
  to.power.insert(to.power.end(), from.power.begin(), from.power.end());
  if (from.sm_clock_max_mhz > 0) to.sm_clock_max_mhz = from.sm_clock_max_mhz;
  if (from.power_limit_w > 0) to.power_limit_w = from.power_limit_w;
  to.power_samples_skipped += from.power_samples_skipped;
}

/// The burn's measured vs predicted temperature and power: every `stride`-th sample of each GPU
/// (and the last), then RMS and largest error per GPU over all samples, fit vs held out.
std::string format_burn_validation(const calibrate::BurnValidation& v, bool holdout) {
  std::ostringstream o;
  char line[512];
  o << "\nburn (power vs load, thermal RC): " << v.note << "\n";
  std::snprintf(line, sizeof line, "%-4s %9s %-5s %10s %10s %8s  %9s %9s %8s  %-4s %s\n", "gpu", "t_s", "phase",
                "temp_C", "pred_C", "err_K", "power_W", "pred_W", "err_W", "fit", "where");
  o << line;
  std::map<int, std::size_t> count;
  for (std::size_t i = 0; i + 1 < v.points.size(); i += 2) ++count[v.points[i].gpu];
  std::map<int, std::size_t> seen;
  for (std::size_t i = 0; i + 1 < v.points.size(); i += 2) {
    const auto& t = v.points[i];
    const auto& p = v.points[i + 1];
    const std::size_t n = count[t.gpu], k = seen[t.gpu]++;
    const std::size_t stride = std::max<std::size_t>(1, n / 24);
    if (k % stride != 0 && k + 1 != n) continue;
    std::snprintf(line, sizeof line, "%-4d %9.2f %-5s %10.2f %10.2f %8.2f  %9.1f %9.1f %8.1f  %-4s %s\n", t.gpu, t.t_s,
                  t.loaded ? "burn" : "idle", t.measured, t.predicted, t.predicted - t.measured, p.measured,
                  p.predicted, p.predicted - p.measured, t.fit_point ? "fit" : "-", t.where.c_str());
    o << line;
  }
  o << (holdout ? "fit = samples up to the middle of the burn (the fit used them); the rest are held out\n"
                : "every sample was a fit sample (no --holdout)\n");
  std::snprintf(line, sizeof line, "%-4s %-12s %22s %12s %22s %12s\n", "gpu", "quantity", "fit RMS (samples)",
                "fit max", "held-out RMS (samples)", "held-out max");
  o << line;
  for (const auto& g : v.groups) {
    const char* unit = g.quantity == "temperature" ? "K" : "W";
    auto cell = [&](int n, double e) {
      return n == 0 ? std::string("-") : fmt("%.2f ", e) + unit + " (" + std::to_string(n) + ")";
    };
    std::snprintf(line, sizeof line, "%-4d %-12s %22s %12s %22s %12s\n", g.gpu, g.quantity.c_str(),
                  cell(g.fit_n, g.fit_rms).c_str(), g.fit_n ? (fmt("%.2f ", g.fit_max) + unit).c_str() : "-",
                  cell(g.held_n, g.held_rms).c_str(), g.held_n ? (fmt("%.2f ", g.held_max) + unit).c_str() : "-");
    o << line;
  }
  return o.str();
}

/// Reads every input (Measurements text by extension .textproto/.txtpb/.pbtxt, CSV by .csv,
/// anything else an nccl-tests log). Errors of every file are collected, then thrown (exit 2).
models::MeasurementSet read_inputs(const std::vector<std::string>& paths, const std::string& device,
                                   const std::string& op, std::vector<models::ProfileSource>& sources,
                                   std::vector<std::string>& notes) {
  models::MeasurementSet all;
  std::vector<std::string> errors;
  std::map<std::string, std::string> first_with;  // SHA-256 -> the first path with those bytes
  for (const std::string& p : paths) {
    models::ProfileSource src;
    src.path = p;
    try {
      const std::string bytes = io::read_input_file(p);
      src.sha256 = calibrate::sha256_hex(bytes);
      // The same measurements twice would double the weight of each of their points in the fit.
      if (const auto [it, fresh] = first_with.emplace(src.sha256, p); !fresh) {
        throw UsageError(p + ": the same bytes as " + it->second +
                         " (a file given twice doubles the weight of each of its points; expected each measurement "
                         "file once)");
      }
      calibrate::InputNotes n;
      models::MeasurementSet m;
      if (has_ext(p, {".textproto", ".txtpb", ".pbtxt"})) {
        src.kind = "measurements";
        m = io::load_measurements_text(bytes, p);
      } else if (has_ext(p, {".csv"})) {
        src.kind = "csv";
        m = calibrate::read_measurement_csv(bytes, p, device, n);
      } else {
        src.kind = "nccl-tests log";
        m = calibrate::samples_from_nccl_log(calibrate::parse_nccl_tests_log(bytes, p), p, op, n);
      }
      src.points_skipped = n.skipped;
      notes.insert(notes.end(), n.notes.begin(), n.notes.end());
      append(all, m);
    } catch (const io::ScenarioError& e) {
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    } catch (const calibrate::NcclTestsLogError& e) {
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    } catch (const calibrate::InputError& e) {
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    } catch (const UsageError& e) {
      errors.push_back(e.what());
    }
    sources.push_back(src);
  }
  if (!errors.empty()) throw io::ScenarioError(errors);
  return all;
}

/// --base: a scenario file (cluster and GPU), a node template (one node unless --nodes), or a
/// catalog GPU (compute points only).
void resolve_base(const std::string& base, int nodes, const std::vector<std::string>& sets, calibrate::FitOptions& o) {
  o.base = base;
  if (is_scenario_file(base)) {
    models::Scenario sc = io::load_cluster_scenario_file(base, sets, {"traincast calibrate --base", {}});
    sc.cluster.profile = nullptr;  // a fit starts from the datasheet defaults
    o.cluster = sc.cluster;
  } else {
    if (!sets.empty()) {
      throw UsageError("--set " + sets.front() + ": has no effect: --base " + base +
                       " is not a scenario file (expected --set only with a scenario file --base)");
    }
    const auto templates = models::node_template_names();
    const auto gpus = models::gpu_names();
    if (std::find(templates.begin(), templates.end(), base) != templates.end()) {
      models::ClusterSpec cs;
      cs.node_template = base;
      cs.num_nodes = nodes;
      if (nodes > 1) cs.fabric.kind = models::FabricKind::rail_optimized;
      o.cluster = cs;
    } else if (std::find(gpus.begin(), gpus.end(), base) != gpus.end()) {
      o.gpu = base;
      return;
    } else {
      throw UsageError("--base: \"" + base +
                       "\" is neither a scenario file (.textproto, .json), a node template nor a catalog GPU "
                       "(`traincast catalog` lists them)");
    }
  }
  const models::Cluster c(*o.cluster);
  o.gpu = c.gpu_spec(0).name;
}

/// --gpus: the base's GPUs the collectives ran on, in rank order; each one of 0..N-1 of the base's
/// cluster (N its GPU count) and none twice. UsageError naming --gpus otherwise.
std::vector<int> parse_gpus_option(const std::string& text, const calibrate::FitOptions& o) {
  std::vector<int> gpus;
  try {
    gpus = models::parse_gpu_list(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--gpus: ") + e.what());
  }
  int n = -1;
  if (o.cluster) n = models::Cluster(*o.cluster).num_gpus();
  std::set<int> seen_any;
  const std::string expected =
      n > 0 ? "expected distinct GPUs 0.." + std::to_string(n - 1) + " of --base " + o.base : "expected distinct GPUs";
  for (const int g : gpus) {
    if (n > 0 && g >= n) {
      throw UsageError("--gpus " + text + ": GPU " + std::to_string(g) + " is not in the base, which has " +
                       std::to_string(n) + " GPUs (" + expected + ")");
    }
    if (!seen_any.insert(g).second) {
      throw UsageError("--gpus " + text + ": GPU " + std::to_string(g) + " given twice (" + expected + ")");
    }
  }
  return gpus;
}

/// --base as the profile stores it: a scenario file relative to the profile's directory
/// (absolute when the two share no directory below the root), so that the profile resolves it
/// from wherever it is used; catalog names as given.
std::string stored_base(const std::string& base, const std::string& profile_path) {
  if (!is_scenario_file(base)) return base;
  namespace fs = std::filesystem;
  const fs::path abs = fs::absolute(base).lexically_normal();
  const fs::path dir = fs::absolute(profile_path).parent_path().lexically_normal();
  auto top = [](const fs::path& p) {
    auto it = p.begin();
    if (it != p.end()) ++it;  // the root
    return it == p.end() ? fs::path() : *it;
  };
  const fs::path rel = abs.lexically_relative(dir);
  if (rel.empty() || top(abs) != top(dir)) return abs.string();
  return rel.string();
}

/// The fit's --set overrides a profile records (cluster.* fields: they describe the system; the
/// others cannot change a fit and are not carried to where the profile is used).
std::vector<std::string> recorded_sets(const std::string& base, const std::vector<std::string>& sets) {
  std::vector<std::string> out;
  if (!is_scenario_file(base)) return out;  // --set applies to scenarios
  for (const std::string& s : sets) {
    if (s.rfind("cluster.", 0) == 0) out.push_back(s);
  }
  return out;
}

std::string pct(double f) { return fmt("%.1f%%", 100 * f); }

/// The validation table: every point, then a summary per group.
std::string format_validation(const calibrate::Validation& v, bool holdout) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%-10s %-14s %-22s %12s %12s %8s  %-4s %s\n", "kind", "group", "point", "measured",
                "predicted", "error", "fit", "where");
  o << line;
  for (const auto& p : v.points) {
    std::snprintf(line, sizeof line, "%-10s %-14s %-22s %12.4g %12.4g %7.1f%%  %-4s %s\n", p.kind.c_str(),
                  p.group.c_str(), p.label.c_str(), p.measured, p.predicted, 100 * p.error, p.fit_point ? "fit" : "-",
                  p.where.c_str());
    o << line;
  }
  o << "\nunits: collective busbw GB/s (size in bytes), gemm TFLOP/s (m x n x k), bandwidth GB/s\n";
  o << "geometric-mean |error| = exp(mean |ln(predicted/measured)|) - 1"
    << (holdout ? "; held out = points not used by the fit" : "; every point was a fit point") << "\n";
  std::snprintf(line, sizeof line, "%-10s %-14s %22s %22s %22s %22s\n", "kind", "group", "held out >= 1 MiB",
                "held out < 1 MiB", "fit >= 1 MiB", "fit < 1 MiB");
  o << line;
  auto cell = [](int n, double e) { return n == 0 ? std::string("-") : pct(e) + " (" + std::to_string(n) + ")"; };
  for (const auto& g : v.groups) {
    if (g.kind == "collective") {
      std::snprintf(line, sizeof line, "%-10s %-14s %22s %22s %22s %22s\n", g.kind.c_str(), g.group.c_str(),
                    cell(g.held_large, g.held_large_error).c_str(), cell(g.held_small, g.held_small_error).c_str(),
                    cell(g.fit_large, g.fit_large_error).c_str(), cell(g.fit_small, g.fit_small_error).c_str());
    } else {
      std::snprintf(line, sizeof line, "%-10s %-14s %22s %22s %22s %22s\n", g.kind.c_str(), g.group.c_str(),
                    cell(g.held_large, g.held_large_error).c_str(), "(all sizes)",
                    cell(g.fit_large, g.fit_large_error).c_str(), "(all sizes)");
    }
    o << line;
  }
  if (holdout) {
    for (const auto& g : v.groups) {
      if (g.kind != "collective" || g.neighbour_large + g.neighbour_small == 0) continue;
      o << g.group
        << " held out, no model (from the two measured fit neighbours, linear in ln size, ln time): >= 1 MiB "
        << cell(g.neighbour_large, g.neighbour_large_error) << ", < 1 MiB "
        << cell(g.neighbour_small, g.neighbour_small_error) << "\n";
    }
  }
  return o.str();
}

/// "a | b": the model-free neighbour reference of a --cases row (see ValidationGroup).
std::string neighbour_cell(const calibrate::ValidationGroup& g) {
  auto one = [](int n, double e) { return n == 0 ? std::string("-") : pct(e); };
  return one(g.neighbour_large, g.neighbour_large_error) + " | " + one(g.neighbour_small, g.neighbour_small_error);
}

calibrate::Holdout parse_holdout(const std::string& s) {
  if (s == "odd") return calibrate::Holdout::odd;
  if (s == "even") return calibrate::Holdout::even;
  if (s == "none") return calibrate::Holdout::none;
  throw UsageError("--holdout: got \"" + s + "\" (expected odd, even or none)");
}

void count_points(const calibrate::Validation& v, std::vector<models::ProfileSource>& sources) {
  for (auto& s : sources) {
    for (const auto& p : v.points) {
      if (p.where.rfind(s.path + ":", 0) == 0) (p.fit_point ? s.points_used : s.points_skipped)++;
    }
  }
}

int fit(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast calibrate fit MEASUREMENTS... --base BASE --out PROFILE [options]\n\n"
      "Fits a calibration profile (an overlay on the catalog's datasheet defaults) to measured points:\n"
      "traincast-bench files (.textproto), nccl-tests stdout logs as pasted (any other extension; a\n"
      "malformed row, a row with text in front of it, or a last row cut inside its out-of-place columns, is\n"
      "refused with its line, and so is a file given twice; --op names the operation of logs that name none,\n"
      "and is refused where the log names another; a row\n"
      "whose out-of-place time is over 1.4x its in-place time is disturbed and its in-place time is taken) and\n"
      "CSV (.csv; columns in calibrate/fit/README.md). GEMM efficiency tables, HBM/PCIe/NVLink efficiencies\n"
      "and launch overhead need a GPU, and so do burn samples (idle and full-load power, thermal R and C\n"
      "of the lumped RC, inlet fitted as a constant); collectives need a system: BASE is a scenario file (its "
      "cluster;\n"
      "--set applies), a node template (--nodes) or a catalog GPU. Prints what was fitted and the\n"
      "fit's own error per group; with --holdout the odd (or even) sizes are left out of the fit and\n"
      "the error on them is shown (burn: the samples after the middle of each burn are held out).\n"
      "A log whose busbw is outside 0.1 to 1.05 of the datasheet rate of the base's links it would\n"
      "run over is refused (exit 2): it ran on other hardware than BASE. The profile stores a scenario\n"
      "BASE relative to its own directory, and the --set cluster.* overrides (base_set), which are\n"
      "applied again wherever the profile is used.\n"
      "Use the profile with `traincast run --profile`, `traincast nccl-tests\n"
      "--profile` or a scenario's `profile` field.\n\nOptions");
  opts.add_options()("help,h", "show this help")(
      "base", po::value<std::string>(), "scenario file, node template or GPU")("out,o", po::value<std::string>(),
                                                                               "profile file to write (text format)")(
      "gpus", po::value<std::string>(), "GPUs the collectives ran on, in rank order (default: all of the base)")(
      "nodes", po::value<int>()->default_value(1), "nodes when BASE is a node template")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a cluster field of a scenario file BASE (others are refused)")(
      "holdout", po::value<std::string>()->default_value("none"),
      "odd | even | none: leave the odd- (even-) indexed sizes out of the fit")(
      "device", po::value<std::string>(), "CSV: keep the rows of this device_key (e.g. sm_90)")(
      "op", po::value<std::string>(), "operation of nccl-tests logs that name none")(
      "force", "overwrite an existing profile")("inputs", po::value<std::vector<std::string>>(), "measurement files");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    if (!vm.count("inputs")) throw UsageError("calibrate fit: no measurement files given");
    if (!vm.count("base")) throw UsageError("calibrate fit: --base is required (scenario file, node template or GPU)");
    if (!vm.count("out")) throw UsageError("calibrate fit: --out PROFILE is required");
    const auto inputs = vm["inputs"].as<std::vector<std::string>>();
    const std::string out_path = vm["out"].as<std::string>();
    check_output_path(out_path, vm.count("force") > 0, inputs);
    io::format_for_path(out_path);  // the profile must be readable back (.textproto, ...)
    calibrate::FitOptions o;
    std::vector<std::string> sets;
    if (vm.count("set")) sets = vm["set"].as<std::vector<std::string>>();
    if (vm["nodes"].as<int>() < 1) throw UsageError("--nodes: must be >= 1");
    resolve_base(vm["base"].as<std::string>(), vm["nodes"].as<int>(), sets, o);
    if (vm.count("gpus")) o.gpus = parse_gpus_option(vm["gpus"].as<std::string>(), o);
    o.holdout = parse_holdout(vm["holdout"].as<std::string>());
    std::vector<models::ProfileSource> sources;
    std::vector<std::string> notes;
    const models::MeasurementSet m = read_inputs(inputs, vm.count("device") ? vm["device"].as<std::string>() : "",
                                                 vm.count("op") ? vm["op"].as<std::string>() : "", sources, notes);
    auto profile = std::make_shared<models::CalibrationProfile>(calibrate::fit_profile(m, o, &notes));
    profile->created_by = "traincast 0.1.0 calibrate fit";
    const calibrate::Validation v = calibrate::validate_profile(profile, m, o);
    for (auto& s : sources) s.points_skipped = 0;
    count_points(v, sources);
    std::optional<calibrate::BurnValidation> bv;
    if (!m.power.empty()) {
      bv = calibrate::validate_burn(*profile, models::find_gpu(o.gpu), m.power, m.power_limit_w,
                                    o.holdout != calibrate::Holdout::none);
      for (auto& s : sources)
        for (const auto& p : bv->points)
          if (p.quantity == "temperature" && p.where.rfind(s.path + ":", 0) == 0)
            (p.fit_point ? s.points_used : s.points_skipped)++;
    }
    profile->sources = sources;
    profile->base = stored_base(o.base, out_path);
    profile->base_sets = recorded_sets(o.base, sets);
    for (const std::string& set : sets) {
      if (set.rfind("cluster.", 0) != 0)
        notes.push_back("--set " + set + ": not recorded in the profile (only cluster.* fields describe the system)");
    }
    std::string header = "Calibration profile written by `traincast calibrate fit` (models/calibration_profile.h).\n";
    header += "Base: " + o.base + "; fitted from " + std::to_string(inputs.size()) + " file(s).";
    const std::string text = io::profile_to_text(*profile, header);
    // The fit clips or refuses what the reader would refuse (calibrate/fit/README.md); a profile
    // its own reader refuses is a fit bug, reported as one (exit 1) rather than written.
    try {
      (void)io::load_profile_text(text, out_path);
    } catch (const io::ScenarioError& e) {
      throw std::logic_error("calibrate fit made a profile its reader refuses: " + std::string(e.what()));
    }
    write_output_file(out_path, text);
    out << "calibrate fit: " << m.collectives.size() << " collective, " << m.gemm.size() << " GEMM, "
        << m.bandwidth.size() << " bandwidth points, " << m.power.size() << " burn samples from " << inputs.size()
        << " file(s); base " << o.base << "\n";
    if (m.power_samples_skipped > 0)
      out << "  " << m.power_samples_skipped << " burn samples without power or temperature skipped\n";
    for (const auto& n : notes) out << "  " << n << "\n";
    std::ostringstream table;
    table << format_validation(v, o.holdout != calibrate::Holdout::none);
    const std::string t = table.str();
    if (!v.points.empty()) out << t.substr(t.find("\nunits:") + 1);
    if (bv) {
      const std::string b = format_burn_validation(*bv, o.holdout != calibrate::Holdout::none);
      out << b.substr(b.find("\ngpu  quantity") + 1);
    }
    out << "wrote " << out_path << "\n";
    return 0;
  });
}

int validate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
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
      "op", po::value<std::string>(), "operation of nccl-tests logs that name none")(
      "cases", po::value<std::string>(), "validation cases file (nccl_tests cases) instead of PROFILE")(
      "max-large-error", po::value<double>()->default_value(5.0), "--cases: limit >= 1 MiB [%]")(
      "max-small-error", po::value<double>()->default_value(15.0), "--cases: limit < 1 MiB [%]")(
      "quiet,q", "--cases: summary only")("inputs", po::value<std::vector<std::string>>(), "PROFILE MEASUREMENTS...");
  po::positional_options_description pos;
  pos.add("inputs", -1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    const std::string device = vm.count("device") ? vm["device"].as<std::string>() : "";
    const std::string op = vm.count("op") ? vm["op"].as<std::string>() : "";
    if (vm.count("cases")) {
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
        throw UsageError(vm["cases"].as<std::string>() + ": no nccl_tests case among its " +
                         std::to_string(cases.size()) +
                         " cases (calibrate validate --cases refits nccl-tests logs; expected a file with nccl_tests "
                         "cases, such as scenarios/nccl/shared_logs.cases.textproto)");
      }
      int failed = 0, checked = 0, too_few = 0, known = 0;
      char line[512];
      std::ostringstream summary;
      std::snprintf(line, sizeof line, "%-40s %-14s %5s %24s %24s %16s  %s\n", "case", "op", "sizes",
                    "held out >= 1 MiB", "held out < 1 MiB", "neighbours", "verdict");
      summary << line;
      for (const auto& c : cases) {
        if (!c.nccl_tests) continue;
        calibrate::FitOptions o;
        o.base = c.scenario_path;
        o.cluster = c.scenario.cluster;
        o.cluster->profile = nullptr;
        o.holdout = h;
        if (!c.nccl_tests->gpus.empty()) o.gpus = models::parse_gpu_list(c.nccl_tests->gpus);
        std::string verdict;
        std::string opname = c.nccl_tests->op;
        calibrate::Validation v;
        try {
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
          const models::MeasurementSet m = calibrate::samples_from_nccl_log(
              log, c.nccl_tests->log_path, c.nccl_tests->op, n, "case " + c.name + " nccl_tests.op");
          auto profile = std::make_shared<const models::CalibrationProfile>(calibrate::fit_profile(m, o));
          v = calibrate::validate_profile(profile, m, o);
        } catch (const std::exception& e) {
          // A case whose holdout_known_gap says why its fit is refused (e.g. a run far below its
          // links' rate, under the fit's other-hardware check) is reported, not failed; the
          // refusal is printed with it.
          if (!c.nccl_tests->holdout_known_gap.empty()) {
            verdict = "KNOWN GAP: " + c.nccl_tests->holdout_known_gap + " [fit refused: " + e.what() + "]";
            ++checked;
            ++known;
          } else {
            verdict = std::string("FAILED (cannot run: ") + e.what() + ")";
            ++failed;
          }
        }
        for (const auto& g : v.groups) {
          opname = g.group;
          const int sizes = g.held_large + g.held_small + g.fit_large + g.fit_small;
          const bool bad = (g.held_large > 0 && g.held_large_error > max_large) ||
                           (g.held_small > 0 && g.held_small_error > max_small);
          if (g.held_large + g.held_small == 0 || g.fit_large + g.fit_small == 0) {
            verdict = std::string(g.fit_large + g.fit_small == 0 ? "no fit size" : "no held-out size") +
                      " (the log has " + std::to_string(sizes) + "); not checked";
            ++too_few;
          } else {
            ++checked;
            const std::string& gap = c.nccl_tests->holdout_known_gap;
            if (bad && !gap.empty()) {
              verdict = "KNOWN GAP: " + gap;
              ++known;
            } else if (bad) {
              verdict = "FAILED";
              ++failed;
            } else {
              // holdout_known_gap may be written for the other split (the CTest runs odd): say
              // what this run shows, not that the gap is gone.
              verdict = gap.empty() ? "ok"
                                    : "ok on this split (holdout_known_gap is set: remove it only if the other "
                                      "--holdout split is ok too)";
            }
          }
          auto cell = [](int n, double e) {
            return n == 0 ? std::string("-") : pct(e) + " (" + std::to_string(n) + ")";
          };
          // The verdict goes after the fixed columns, whatever its length.
          std::snprintf(line, sizeof line, "%-40s %-14s %5d %24s %24s %16s  ", c.name.c_str(), opname.c_str(), sizes,
                        cell(g.held_large, g.held_large_error).c_str(), cell(g.held_small, g.held_small_error).c_str(),
                        neighbour_cell(g).c_str());
          summary << line << verdict << "\n";
        }
        if (v.groups.empty()) {
          std::snprintf(line, sizeof line, "%-40s %-14s %5s %24s %24s %16s  ", c.name.c_str(), opname.c_str(), "-", "-",
                        "-", "-");
          summary << line << verdict << "\n";
        }
        if (!vm.count("quiet") && !v.points.empty()) {
          out << "\n"
              << c.name << ": " << c.nccl_tests->log_path << " on " << c.scenario_path << "\n"
              << format_validation(v, true);
        }
      }
      out << "\ncalibrate validate --holdout " << vm["holdout"].as<std::string>()
          << ": fit on half the sizes of each log, geometric-mean busbw error on the other half (limits "
          << pct(max_large) << " >= 1 MiB, " << pct(max_small) << " below); neighbours: the same error when each "
          << "held-out size between two fit sizes is interpolated from their measured times (no model: how rough the "
          << "log is from size to size)\n"
          << summary.str() << checked << " cases checked, " << failed << " failed, " << known << " known gaps, "
          << too_few << " with too few sizes to split\n";
      return failed > 0 ? 1 : 0;
    }
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
      throw io::ScenarioError({profile->base_where + ": base: scenario file \"" + profile->base +
                               "\" not found (tried " + base +
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
      out << format_burn_validation(calibrate::validate_burn(*profile, models::find_gpu(o.gpu), m.power,
                                                             m.power_limit_w, o.holdout != calibrate::Holdout::none),
                                    o.holdout != calibrate::Holdout::none);
    }
    return 0;
  });
}

}  // namespace

int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "usage: traincast calibrate fit MEASUREMENTS... --base BASE --out PROFILE [options]\n"
      "       traincast calibrate validate PROFILE MEASUREMENTS... [--holdout odd|even]\n"
      "       traincast calibrate validate --cases CASES --holdout odd|even\n"
      "`traincast calibrate fit --help` and `traincast calibrate validate --help` describe them.\n";
  if (args.empty()) {
    err << usage;
    return 2;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "fit") return fit(rest, out, err);
  if (args[0] == "validate") return validate(rest, out, err);
  if (args[0] == "--help" || args[0] == "-h") {
    out << usage;
    return 0;
  }
  err << "traincast calibrate: unknown subcommand '" << args[0] << "'\n" << usage;
  return 2;
}

}  // namespace traincast::cli
