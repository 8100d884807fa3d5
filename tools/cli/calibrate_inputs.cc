// Reading `traincast calibrate`'s inputs and resolving --base, --gpus and --holdout. See
// calibrate_inputs.h.

#include "tools/cli/calibrate_inputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "calibrate/fit/inputs.h"
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

namespace traincast::cli {
namespace {

bool has_ext(const std::string& path, std::initializer_list<const char*> exts) {
  std::string e = std::filesystem::path(path).extension().string();
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* x : exts) {
    if (e == x) return true;
  }
  return false;
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

}  // namespace

bool is_scenario_file(const std::string& base) {
  return has_ext(base, {".textproto", ".txtpb", ".pbtxt", ".txt", ".json"});
}

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
        // An empty or comment-only file parses to an empty set: refused here, named, rather than
        // fitting nothing (a profile without a fitted field is not a profile).
        if (m.gemm.empty() && m.bandwidth.empty() && m.collectives.empty() && m.power.empty() &&
            m.launch_back_to_back_s == 0 && m.launch_empty_kernel_s == 0) {
          throw UsageError(p +
                           ": no measurements (expected gemm, bandwidth, launch, collective or burn samples as "
                           "traincast-bench writes them; an empty or comment-only file?)");
        }
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

void resolve_base(const std::string& base, int nodes, const std::vector<std::string>& sets, calibrate::FitOptions& o) {
  o.base = base;
  if (is_scenario_file(base)) {
    models::Scenario sc = io::load_cluster_scenario_file(base, sets, {"traincast calibrate --base", {}});
    sc.cluster.profile = nullptr;  // a fit starts from the datasheet defaults
    o.cluster = sc.cluster;
  } else {
    if (!sets.empty()) {
      // Worded as every other --set error (a scenario error, without "traincast: ").
      const std::string& set = sets.front();
      throw io::ScenarioError({"--set: " + set.substr(0, set.find('=')) + ": has no effect: --base " + base +
                               " is not a scenario file (expected --set only with a scenario file --base)"});
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
      std::string msg = "--gpus ";
      msg.append(text).append(": GPU ").append(std::to_string(g)).append(" is not in the base, which has ");
      msg.append(std::to_string(n)).append(" GPUs (").append(expected).append(")");
      throw UsageError(msg);
    }
    if (!seen_any.insert(g).second) {
      std::string msg = "--gpus ";
      msg.append(text).append(": GPU ").append(std::to_string(g)).append(" given twice (").append(expected).append(")");
      throw UsageError(msg);
    }
  }
  return gpus;
}

calibrate::Holdout parse_holdout(const std::string& s) {
  if (s == "odd") return calibrate::Holdout::odd;
  if (s == "even") return calibrate::Holdout::even;
  if (s == "none") return calibrate::Holdout::none;
  throw UsageError("--holdout: got \"" + s + "\" (expected odd, even or none)");
}

}  // namespace traincast::cli
