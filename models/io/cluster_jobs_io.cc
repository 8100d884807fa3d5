#include "models/io/cluster_jobs_io.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include "models/hardware/catalog.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/placed_overrides.h"
#include "models/io/scenario_io.h"
#include "models/io/scenario_io_internal.h"

namespace traincast::io {
namespace {

namespace fs = std::filesystem;

/// A zoo name: no directory and no extension.
bool is_zoo_name(const std::string& w) { return w.find('/') == std::string::npos && w.find('.') == std::string::npos; }

/// The file a job's workload names, or "" when a zoo name is not found.
std::string workload_path(const std::string& scenario_path, const std::string& w) {
  // The scenario's directory (the working directory for a pipe: relative_base_dir).
  const std::string base = detail::relative_base_dir(scenario_path);
  const fs::path dir = base.empty() ? fs::current_path() : fs::absolute(base);
  if (!is_zoo_name(w)) return (dir / w).lexically_normal().string();
  for (fs::path d = dir;; d = d.parent_path()) {
    for (const fs::path& candidate :
         {d / "models" / (w + ".textproto"), d / "scenarios" / "models" / (w + ".textproto")}) {
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
    }
    if (d == d.parent_path()) return "";
  }
}

/// The first message of a ScenarioError.
std::string first_error(const ScenarioError& e) { return e.errors().empty() ? std::string(e.what()) : e.errors()[0]; }

/// Loads every distinct workload the jobs name; errors at job[i].workload.
std::map<std::string, models::Scenario> load_workloads(const std::string& path, const models::Scenario& base,
                                                       std::vector<std::string>& errors,
                                                       std::vector<std::string>& files) {
  std::map<std::string, models::Scenario> workloads;
  workloads.emplace("", base);
  std::map<std::string, bool> failed;
  for (std::size_t i = 0; i < base.jobs.size(); ++i) {
    const std::string& w = base.jobs[i].workload;
    if (workloads.count(w) > 0 || failed.count(w) > 0) continue;
    const std::string field = "job[" + std::to_string(i) + "].workload";
    const std::string file = workload_path(path, w);
    if (file.empty()) {
      std::string m = field_position(path, field);
      m.append(": ")
          .append(field)
          .append(": no zoo model \"")
          .append(w)
          .append(
              "\" (expected a NAME.textproto in a models/ or scenarios/models/ folder at or above the scenario's "
              "folder, "
              "or a scenario path)");
      errors.push_back(std::move(m));
      failed[w] = true;
      continue;
    }
    files.push_back(file);
    try {
      workloads.emplace(w, load_scenario_file(file));
    } catch (const ScenarioError& e) {
      std::string m = field_position(path, field);
      m.append(": ")
          .append(field)
          .append(": \"")
          .append(w)
          .append("\" does not load (")
          .append(first_error(e))
          .append(")");
      errors.push_back(std::move(m));
      failed[w] = true;
    }
  }
  return workloads;
}

/// What a job's workload file holds that the job does not take (models::ClusterJobs::workload_notes).
std::vector<std::string> workload_file_notes(const std::string& file, const models::Scenario& w,
                                             const std::string& scenario_path) {
  // A job whose workload file is the cluster scenario itself runs that file's workload section:
  // its job list, scheduler and other sections are the ones in use, its warnings already printed.
  std::error_code ec;
  if (std::filesystem::equivalent(file, scenario_path, ec) && !ec) return {};
  std::vector<std::string> notes = w.input_warnings;
  const auto section = [&](bool present, const char* name) {
    if (!present) return;
    std::string m = field_position(file, name);
    m.append(": ").append(name).append(
        ": has no effect in traincast cluster: a job takes only the workload section of its workload file (expected "
        "storage, power and thermal in the cluster scenario ");
    m.append(scenario_path).append(", which every job's simulation takes them from; reliability and cost are not ");
    m.append("modelled by traincast cluster)");
    notes.push_back(std::move(m));
  };
  section(w.storage.has_value(), "storage");
  section(w.reliability.has_value(), "reliability");
  section(w.cost.has_value(), "cost");
  section(w.power != models::PowerSpec{}, "power");
  section(w.thermal != models::ThermalSpec{} || w.thermal.given.supply_air_c || w.thermal.given.coolant_c, "thermal");
  // A workload file that is itself a shared-cluster scenario: its job list and scheduler are
  // another cluster's, never run here.
  const auto cluster_part = [&](bool present, const char* name) {
    if (!present) return;
    std::string m = field_position(file, name);
    m.append(": ").append(name).append(
        ": has no effect in traincast cluster: a job takes only the workload section of its workload file, so this "
        "file's own job list and scheduler are not run (expected the jobs and the scheduler in the cluster "
        "scenario ");
    m.append(scenario_path).append(")");
    notes.push_back(std::move(m));
  };
  cluster_part(!w.jobs.empty(), "job");
  cluster_part(w.scheduler != models::SchedulerSpec{}, "scheduler");
  return notes;
}

}  // namespace

models::Scenario job_scenario(const models::Scenario& cluster, const models::Scenario& workload, int gpus,
                              int gpus_per_node) {
  models::Scenario s = cluster;
  s.jobs.clear();
  s.scheduler = {};
  s.reliability.reset();
  s.model = workload.model;
  s.parallel = workload.parallel;
  s.training = workload.training;
  s.offload = workload.offload;
  s.data_loader = workload.data_loader;
  s.cluster.num_nodes = gpus / gpus_per_node;
  // A job runs on nodes in service (the drained ones are not among them); the overrides of the
  // nodes it is placed on are added per placement (models/hardware/placed_overrides.h).
  s.cluster.overrides.clear();
  const int model_parallel = std::max(1, s.parallel.tp * s.parallel.pp * std::max(1, s.parallel.cp));
  const int per_replica = workload.training.global_batch_size / std::max(1, workload.parallel.dp);
  s.parallel.dp = gpus / model_parallel;
  s.training.global_batch_size = per_replica * s.parallel.dp;
  return s;
}

models::ClusterJobs load_cluster_jobs(const std::string& path, const std::vector<std::string>& overrides) {
  models::ClusterJobs out;
  bool own_workload = true;  // false: every job that would run it has a fixed duration_s (the loader checked)
  out.cluster = detail::load_job_list_file(path, overrides, own_workload);
  const models::Scenario& base = out.cluster;
  if (base.jobs.empty())
    throw ScenarioError({field_position(path, "job") +
                         ": job: none (expected at least one job { gpus: N tokens: T } for traincast cluster)"});
  if (const auto bad = models::override_not_per_job(base.cluster)) {
    const std::string field = "cluster.overrides[" + std::to_string(bad->first) + "].select";
    throw ScenarioError({field_position(path, field) + ": " + field + ": " + bad->second});
  }
  std::vector<std::string> errors;
  const std::map<std::string, models::Scenario> workloads = load_workloads(path, base, errors, out.workload_files);
  if (!errors.empty()) throw ScenarioError(errors);
  std::map<std::string, std::vector<std::string>> notes_of;  // workload -> its file's notes
  for (std::size_t i = 0; i < base.jobs.size(); ++i) {
    const std::string& w = base.jobs[i].workload;
    if (!w.empty() && notes_of.count(w) == 0)
      notes_of[w] = workload_file_notes(workload_path(path, w), workloads.at(w), path);
    out.workload_notes.push_back(w.empty() ? std::vector<std::string>{} : notes_of[w]);
  }

  const int per_node = models::cluster_node_template(base.cluster).gpus_per_node;
  const int cluster_gpus =  // in service: drained nodes (missing GPUs) run no job
      models::nodes_in_service(base.cluster) * per_node;
  std::map<std::pair<std::string, int>, std::size_t> first_of_class;  // (workload, gpus) -> first job
  for (std::size_t i = 0; i < base.jobs.size(); ++i) {
    const models::JobSpec& j = base.jobs[i];
    const std::string name = j.name.empty() ? "job" + std::to_string(i) : j.name;
    const auto [it, added] = first_of_class.emplace(std::make_pair(j.workload, j.gpus), i);
    out.scenario_class.push_back(added ? static_cast<int>(first_of_class.size()) - 1 : out.scenario_class[it->second]);
    if (!added) {  // everything below depends on (workload, gpus) only
      out.job_scenarios.push_back(out.job_scenarios[it->second]);
      out.job_scenarios.back().name = name;
      out.problem.push_back(out.problem[it->second]);
      continue;
    }
    out.job_scenarios.emplace_back();
    out.problem.emplace_back();
    if (j.gpus > cluster_gpus) {
      out.problem.back() = "asks for " + std::to_string(j.gpus) + " GPUs; the cluster has " +
                           std::to_string(cluster_gpus) + ": it can never run";
      continue;
    }
    if (!own_workload && j.workload.empty()) {
      // A job of fixed duration_s on a file without a workload: nothing of it is simulated; the
      // scheduler needs its nodes only.
      models::Scenario& js = out.job_scenarios.back();
      js.name = name;
      js.cluster = base.cluster;
      js.cluster.num_nodes = j.gpus / per_node;
      js.cluster.overrides.clear();
      continue;
    }
    const models::Scenario& w = workloads.at(j.workload);
    const int model_parallel = w.parallel.tp * w.parallel.pp * std::max(1, w.parallel.cp);
    if (j.gpus % model_parallel != 0) {
      out.problem.back() = std::to_string(j.gpus) + " GPUs is not a multiple of its workload's tp x pp" +
                           std::string(w.parallel.cp > 1 ? " x cp" : "") + " = " + std::to_string(model_parallel);
      continue;
    }
    models::Scenario js = job_scenario(base, w, j.gpus, per_node);
    js.name = name;
    try {
      // The loader's checks on the job as one scenario (dp against batch, experts, memory rules).
      out.job_scenarios.back() = load_scenario_text(scenario_to_text(js), js.name, Format::text);
    } catch (const ScenarioError& e) {
      out.problem.back() = "its workload on " + std::to_string(j.gpus) + " GPUs is invalid: " + first_error(e);
    }
  }
  return out;
}

}  // namespace traincast::io
