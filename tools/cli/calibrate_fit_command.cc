// `traincast calibrate fit`: measured points (traincast-bench files, nccl-tests logs, CSV) -> a
// calibration profile, with the fit's own error per group (calibrate/fit/).

#include <boost/program_options.hpp>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/fit/power_fit.h"
#include "calibrate/fit/profile_fit.h"
#include "calibrate/fit/profile_validate.h"
#include "models/hardware/catalog.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "tools/cli/calibrate_inputs.h"
#include "tools/cli/calibrate_subcommands.h"
#include "tools/cli/calibrate_tables.h"
#include "tools/cli/cli_util.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

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

/// Counts each source's validation points: fit points as used, the others as skipped.
void count_points(const calibrate::Validation& v, std::vector<models::ProfileSource>& sources) {
  for (auto& s : sources) {
    for (const auto& p : v.points) {
      if (p.where.rfind(s.path + ":", 0) == 0) (p.fit_point ? s.points_used : s.points_skipped)++;
    }
  }
}

/// Counts the burn's temperature points per source: fit points as used, the others as skipped.
void count_burn_points(const calibrate::BurnValidation& bv, std::vector<models::ProfileSource>& sources) {
  for (auto& s : sources)
    for (const auto& p : bv.points)
      if (p.quantity == "temperature" && p.where.rfind(s.path + ":", 0) == 0)
        (p.fit_point ? s.points_used : s.points_skipped)++;
}

/// `traincast calibrate fit`'s help text and options.
po::options_description fit_options() {
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
      "run over (at its largest size; above 1.05 at any size) is refused (exit 2): it ran on other\n"
      "hardware than BASE. The profile stores a scenario\n"
      "BASE relative to its own directory, and the --set cluster.* overrides (base_set), which are\n"
      "applied again wherever the profile is used.\n"
      "Use the profile with `traincast run --profile`, `traincast nccl-tests\n"
      "--profile` or a scenario's `profile` field.\n\nOptions");
  opts.add_options()("help,h", "show this help")("base", po::value<std::string>(),
                                                 "scenario file, node template or GPU")(
      "out,o", po::value<std::string>(), "profile file to write: text format, or JSON when named .json")(
      "gpus", po::value<std::string>(), "GPUs the collectives ran on, in rank order (default: all of the base)")(
      "nodes", po::value<int>()->default_value(1), "nodes when BASE is a node template")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a cluster field of a scenario file BASE (others are refused)")(
      "holdout", po::value<std::string>()->default_value("none"),
      "odd | even | none: leave the odd- (even-) indexed sizes out of the fit")(
      "device", po::value<std::string>(), "CSV: keep the rows of this device_key (e.g. sm_90)")(
      "op", po::value<std::string>(), "operation of nccl-tests logs that name none (a name nccl-tests --op takes)")(
      "force", "overwrite an existing profile")("inputs", po::value<std::vector<std::string>>(), "measurement files");
  return opts;
}

/// The profile as text (with its header comment), checked by its own reader, written to out_path.
/// Throws std::logic_error when the reader refuses it (a fit bug, exit 1).
void write_profile(const models::CalibrationProfile& profile, const std::string& base, std::size_t files,
                   const std::string& out_path) {
  std::string header =
      "Calibration profile written by `traincast calibrate fit` (models/calibration/calibration_profile.h).\n";
  header += "Base: " + base + "; fitted from " + std::to_string(files) + " file(s).";
  // A .json name gets JSON (no comment header: JSON has none), the text names text format.
  const io::Format format = io::format_for_path(out_path);
  const std::string text =
      format == io::Format::json ? io::profile_to_json(profile) : io::profile_to_text(profile, header);
  // The fit clips or refuses what the reader would refuse (calibrate/fit/README.md); a profile
  // its own reader refuses is a fit bug, reported as one (exit 1) rather than written.
  try {
    (void)io::load_profile_text(text, out_path, format);
  } catch (const io::ScenarioError& e) {
    throw std::logic_error("calibrate fit made a profile its reader refuses: " + std::string(e.what()));
  }
  write_output_file(out_path, text);
}

/// Help, or the fit: inputs read, profile fitted, validated on its own points, written.
int run_fit(const po::variables_map& vm, const po::options_description& opts, std::ostream& out) {
  if (vm.count("help")) {
    out << opts << "\n";
    return 0;
  }
  if (!vm.count("inputs")) throw UsageError("calibrate fit: no measurement files given");
  if (!vm.count("base")) throw UsageError("calibrate fit: --base is required (scenario file, node template or GPU)");
  if (!vm.count("out")) throw UsageError("calibrate fit: --out PROFILE is required");
  const auto inputs = vm["inputs"].as<std::vector<std::string>>();
  const std::string out_path = vm["out"].as<std::string>();
  // --base names a scenario file, a node template or a GPU; a file it names is an input too.
  std::vector<std::string> read = inputs;
  if (std::error_code ec; std::filesystem::exists(vm["base"].as<std::string>(), ec))
    read.push_back(vm["base"].as<std::string>());
  check_output_path(out_path, vm.count("force") > 0, read);
  // The profile must be readable back: a name the readers know (an output need not exist yet).
  std::string ext = std::filesystem::path(out_path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));  // as the readers do
  const std::string name = std::filesystem::path(out_path).filename().string();
  if (ext.empty() && name.size() > 1 && name[0] == '.')
    throw UsageError("--out " + out_path + ": the name \"" + name +
                     "\" has no extension: a name that starts with its only dot is a hidden file's whole name "
                     "(expected a name before the extension, e.g. profile" +
                     name +
                     ", with .textproto, .txtpb, .pbtxt, .txt or .json: --profile reads the profile back by "
                     "its extension)");
  if (ext != ".textproto" && ext != ".txtpb" && ext != ".pbtxt" && ext != ".txt" && ext != ".json")
    throw UsageError("--out " + out_path + ": unknown file extension \"" + ext +
                     "\" (expected .textproto, .txtpb, .pbtxt, .txt or .json: --profile reads the profile back by "
                     "its extension)");
  calibrate::FitOptions o;
  std::vector<std::string> sets;
  if (vm.count("set")) sets = vm["set"].as<std::vector<std::string>>();
  check_at_least("--nodes", vm["nodes"].as<int>(), 1, "the nodes of the base node template");
  resolve_base(vm["base"].as<std::string>(), vm["nodes"].as<int>(), sets, o);
  if (vm.count("gpus")) o.gpus = parse_gpus_option(vm["gpus"].as<std::string>(), o);
  o.holdout = parse_holdout(vm["holdout"].as<std::string>());
  if (vm.count("op")) nccl_op_option("--op", vm["op"].as<std::string>());  // exactly nccl-tests' --op names
  std::vector<models::ProfileSource> sources;
  std::vector<std::string> notes;
  const models::MeasurementSet m = read_inputs(inputs, vm.count("device") ? vm["device"].as<std::string>() : "",
                                               vm.count("op") ? vm["op"].as<std::string>() : "", sources, notes);
  // Rows of size 0 (nccl-tests' first row; nothing moves) are read but kept out of the fit: a log of
  // only such rows leaves nothing to fit, which the profile's reader would refuse as empty.
  if (m.collectives.empty() && m.gemm.empty() && m.bandwidth.empty() && m.power.empty()) {
    std::string files;
    for (const std::string& f : inputs) files += (files.empty() ? "" : ", ") + f;
    // Worded as the other errors about the measurement files (a file error, without "traincast: ").
    throw io::ScenarioError({files +
                             ": no point to fit (expected at least one collective of size > 0, GEMM, bandwidth or "
                             "burn sample; nccl-tests rows of size 0 move nothing and are not fitted)"});
  }
  auto profile = std::make_shared<models::CalibrationProfile>(calibrate::fit_profile(m, o, &notes));
  profile->created_by = "traincast 0.1.0 calibrate fit";
  const calibrate::Validation v = calibrate::validate_profile(profile, m, o);
  for (auto& s : sources) s.points_skipped = 0;
  count_points(v, sources);
  std::optional<calibrate::BurnValidation> bv;
  if (!m.power.empty()) {
    bv = calibrate::validate_burn(*profile, models::find_gpu(o.gpu), m.power, m.power_limit_w,
                                  o.holdout != calibrate::Holdout::none);
    count_burn_points(*bv, sources);
  }
  profile->sources = sources;
  profile->base = stored_base(o.base, out_path);
  profile->base_sets = recorded_sets(o.base, sets);
  for (const std::string& set : sets) {
    if (set.rfind("cluster.", 0) != 0)
      notes.push_back("--set " + set + ": not recorded in the profile (only cluster.* fields describe the system)");
  }
  write_profile(*profile, o.base, inputs.size(), out_path);
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
}

}  // namespace

int calibrate_fit_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description opts = fit_options();
  po::positional_options_description pos;
  pos.add("inputs", -1);
  return guarded(err, [&]() -> int { return run_fit(parse_options(args, opts, pos), opts, out); });
}

}  // namespace traincast::cli
