// `traincast cluster`: argument parsing and printing around models/scheduler (several jobs sharing
// one cluster under a scheduler, docs/cluster.md).

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/leaf_ports.h"
#include "models/hardware/placed_overrides.h"
#include "models/io/cluster_jobs_io.h"
#include "models/io/scenario_io.h"
#include "models/io/sweep_csv.h"
#include "models/io/trace_writer.h"
#include "models/scheduler/cluster_run.h"
#include "models/scheduler/cluster_trace.h"
#include "models/workload/settings_notes.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/summary.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

/// Slices of the makespan the utilisation-over-time line prints.
constexpr int kUtilisationSlices = 10;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// The shortest text that reads back as v (2.8, not %.17g's 2.7999999999999998).
std::string num(double v) { return io::shortest_text(v); }

const char* policy_name(models::SchedulerPolicy p) { return p == models::SchedulerPolicy::fifo ? "fifo" : "backfill"; }

const char* placement_name(models::JobPlacement p) {
  switch (p) {
    case models::JobPlacement::packed:
      return "packed";
    case models::JobPlacement::spread:
      return "spread";
    case models::JobPlacement::topology_aware:
      return "topology_aware";
  }
  return "packed";
}

/// The fabric as models::Cluster builds it: its leaf groups, their size and a leaf's down:up
/// ports (the effective oversubscription, whether from oversubscription or leaf_up_ports).
std::string fabric_text(const models::ClusterSpec& c) {
  const models::FabricSpec& f = c.fabric;
  if (c.num_nodes <= 1) return "one node, no network";
  if (f.kind == models::FabricKind::torus) return "torus (no leaf switches)";
  if (f.kind != models::FabricKind::fat_tree && f.kind != models::FabricKind::rail_optimized) return "no fabric";
  // The run header's count (summary_fabric.cc): over the fabric slots, without building the network.
  const models::LeafPortsUsed ports = built_leaf_ports(c);
  if (ports.up == 0) return "one leaf group of " + std::to_string(c.num_nodes) + " nodes (no spine), non-blocking";
  return std::to_string(f.nodes_per_leaf) + " nodes per leaf group, oversubscription " +
         fmt("%.3g", static_cast<double>(ports.down) / ports.up) + " (" + std::to_string(ports.down) + ":" +
         std::to_string(ports.up) + " ports per leaf)";
}

/// One policy's run.
struct PolicyRun {
  models::SchedulerSpec scheduler;
  models::ClusterRunResult result;
};

po::options_description cluster_options() {
  po::options_description o(
      "traincast cluster SCENARIO [options]\n\n"
      "Several jobs (the scenario's `job` entries) share the scenario's cluster under a scheduler: FIFO or EASY\n"
      "backfill (run-time estimate = the job's simulated isolated run time), packed, spread or topology-aware\n"
      "placement on whole nodes. Each job's iteration time comes from the detailed simulator, cached per\n"
      "(workload, GPUs, leaves spanned, co-runners on shared leaf up-links): jobs that cross the spine from\n"
      "one oversubscribed leaf slow each other through the flow model. Prints per job its wait, run time and\n"
      "slowdown vs alone, then the cluster's utilisation over time, mean and p95 wait. docs/cluster.md\n\nOptions");
  o.add_options()("help,h", "this text")("scenario", po::value<std::string>(), "the scenario file (with job entries)")(
      "set", po::value<std::vector<std::string>>()->composing(), "field.path=value, e.g. scheduler.placement=spread")(
      "policy", po::value<std::string>(), "fifo, backfill or both (default: the scenario's scheduler.policy)")(
      "threads", po::value<int>()->default_value(0),
      "worker threads for the isolated simulations, 0 to 1024; 0 = all hardware threads (same result)")(
      "csv", po::value<std::string>(), "write one row per job (and policy) to this file")(
      "json", po::value<std::string>(), "write the whole result as JSON to this file")(
      "trace", po::value<std::string>(),
      "write a Chrome/Perfetto trace (ui.perfetto.dev): one process per job (its wait and run), busy GPUs as a "
      "counter")("force", "overwrite existing --csv/--json/--trace files");
  return o;
}

void print_run(std::ostream& p, const PolicyRun& run) {
  const models::ClusterRunResult& r = run.result;
  p << "Scheduler  " << policy_name(run.scheduler.policy)
    << (run.scheduler.policy == models::SchedulerPolicy::backfill ? " (EASY; estimate = isolated simulated run time)"
                                                                  : "")
    << ", placement " << placement_name(run.scheduler.placement) << "\n\n";
  p << "  job                   gpus     arrival_s       start_s        wait_s         run_s   alone_run_s  slowdown  "
       "placement  co-runners  leaves\n";
  for (const models::ClusterJobResult& j : r.jobs) {
    char line[256];
    if (!j.problem.empty()) continue;
    std::snprintf(line, sizeof line, "  %-20.20s %5d %13.1f %13.1f %13.1f %13.1f %13.1f %9.3f %10.3f %11.3f %7d\n",
                  j.name.c_str(), j.gpus, j.arrival_s, j.start_s, j.wait_s, j.run_s, j.alone_run_s, j.slowdown,
                  j.placement_slowdown, j.co_runner_slowdown, j.leaves);
    p << line;
  }
  bool any_problem = false;
  for (const models::ClusterJobResult& j : r.jobs) {
    if (j.problem.empty()) continue;
    if (!any_problem) p << "\nNever ran (reported, not dropped):\n";
    any_problem = true;
    p << "  " << j.name << " (" << j.gpus << " GPUs): " << j.problem << "\n";
  }
  p << "\nJobs run     " << r.jobs_run << " of " << r.jobs.size() << "\n";
  // Seconds, and from an hour on the unit the other commands print long durations in (summary.h).
  const auto seconds = [](double s) {
    return fmt("%.1f", s) + " s" + (s >= 3600 ? " (" + format_duration(s) + ")" : std::string());
  };
  p << "Makespan     " << seconds(r.makespan_s) << "\n";
  p << "Utilisation  " << fmt("%.1f", 100.0 * r.utilisation) << " % of " << r.cluster_gpus
    << " GPUs over the makespan\n";
  p << "Wait         mean " << seconds(r.mean_wait_s) << ", p95 " << seconds(r.p95_wait_s) << "\n";
  p << "Utilisation over time (" << kUtilisationSlices << " equal slices of the makespan):";
  for (double u : models::utilisation_by_slice(r, kUtilisationSlices)) p << " " << fmt("%.0f", 100.0 * u) << "%";
  p << "\nDetailed simulations " << r.simulations
    << " (cached per workload, GPUs, leaves spanned, the cluster.overrides of its nodes and co-runners)\n";
}

std::string csv_text(const std::vector<PolicyRun>& runs) {
  std::ostringstream o;
  o << "policy,placement,job,gpus,priority,arrival_s,start_s,end_s,wait_s,run_s,alone_run_s,slowdown,"
       "placement_slowdown,co_runner_slowdown,stretch,iteration_time_s,iterations,leaves,nodes,problem\n";
  for (const PolicyRun& run : runs) {
    for (const models::ClusterJobResult& j : run.result.jobs) {
      // A job that never ran has no start, end, wait or run: empty cells, not zeros.
      const bool ran = j.problem.empty();
      const auto v = [&](double x) { return ran ? num(x) : std::string(); };
      const auto n = [&](long long x) { return ran ? std::to_string(x) : std::string(); };
      o << policy_name(run.scheduler.policy) << "," << placement_name(run.scheduler.placement) << ","
        << io::csv_field(j.name) << "," << j.gpus << "," << j.priority << "," << num(j.arrival_s) << "," << v(j.start_s)
        << "," << v(j.end_s) << "," << v(j.wait_s) << "," << v(j.run_s) << "," << v(j.alone_run_s) << ","
        << v(j.slowdown) << "," << v(j.placement_slowdown) << "," << v(j.co_runner_slowdown) << "," << v(j.stretch)
        << "," << v(j.iteration_time_s) << "," << n(j.iterations) << "," << n(j.leaves) << "," << io::csv_field(j.nodes)
        << "," << io::csv_field(j.problem) << "\n";
    }
  }
  return o.str();
}

std::string json_text(const std::vector<PolicyRun>& runs) {
  std::ostringstream o;
  o << "{\"runs\": [";
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const models::ClusterRunResult& r = runs[k].result;
    o << (k ? ", " : "") << "{\n  \"policy\": \"" << policy_name(runs[k].scheduler.policy) << "\", \"placement\": \""
      << placement_name(runs[k].scheduler.placement) << "\", \"cluster_gpus\": " << r.cluster_gpus
      << ", \"jobs_run\": " << r.jobs_run << ", \"makespan_s\": " << num(r.makespan_s)
      << ", \"utilisation\": " << num(r.utilisation) << ", \"mean_wait_s\": " << num(r.mean_wait_s)
      << ", \"p95_wait_s\": " << num(r.p95_wait_s) << ", \"simulations\": " << r.simulations << ",\n  \"busy_gpus\": [";
    for (std::size_t i = 0; i < r.busy_gpus.size(); ++i)
      o << (i ? ", " : "") << "[" << num(r.busy_gpus[i].first) << ", " << r.busy_gpus[i].second << "]";
    o << "],\n  \"jobs\": [";
    for (std::size_t i = 0; i < r.jobs.size(); ++i) {
      const models::ClusterJobResult& j = r.jobs[i];
      // A job that never ran: null times, not zeros.
      const bool ran = j.problem.empty();
      const auto v = [&](double x) { return ran ? num(x) : std::string("null"); };
      const auto n = [&](long long x) { return ran ? std::to_string(x) : std::string("null"); };
      o << (i ? "," : "") << "\n    {\"name\": " << json_string(j.name) << ", \"gpus\": " << j.gpus
        << ", \"priority\": " << j.priority << ", \"arrival_s\": " << num(j.arrival_s)
        << ", \"problem\": " << json_string(j.problem) << ", \"start_s\": " << v(j.start_s)
        << ", \"end_s\": " << v(j.end_s) << ", \"wait_s\": " << v(j.wait_s) << ", \"run_s\": " << v(j.run_s)
        << ", \"alone_run_s\": " << v(j.alone_run_s) << ", \"slowdown\": " << v(j.slowdown)
        << ", \"placement_slowdown\": " << v(j.placement_slowdown)
        << ", \"co_runner_slowdown\": " << v(j.co_runner_slowdown) << ", \"stretch\": " << v(j.stretch)
        << ", \"iteration_time_s\": " << v(j.iteration_time_s) << ", \"iterations\": " << n(j.iterations)
        << ", \"leaves\": " << n(j.leaves) << ", \"nodes\": " << json_string(j.nodes) << "}";
    }
    o << "]}";
  }
  o << "]}\n";
  return o.str();
}

/// The scenario's sections this command does not model, each with what it uses instead.
void warn_sections_without_effect(const models::Scenario& sc, const std::string& path, std::ostream& err) {
  if (sc.reliability)
    err << "warning: " << io::field_position(path, "reliability")
        << ": reliability: has no effect in traincast cluster (expected it on a job's own scenario with traincast "
           "run: the scheduler runs every job failure-free, without checkpoints or restarts)\n";
  if (sc.cost)
    err << "warning: " << io::field_position(path, "cost")
        << ": cost: has no effect in traincast cluster (expected it on a job's own scenario with traincast run: "
           "this command reports times and utilisation, no money or energy)\n";
}

/// The warnings `traincast run` would print for the jobs, each once, naming the jobs it concerns:
/// the scenario's input warnings and its cluster's fabric settings without effect (the whole
/// cluster's, as for run of the file), each job's workload settings without effect for its layout
/// on its GPUs, and what its workload file holds that a job does not take (ClusterJobs::workload_notes).
/// A job's own sub-cluster is not checked for fabric settings: a one-node job ignores the fabric
/// that the cluster's other jobs use (docs/cluster.md).
void warn_job_settings(const models::ClusterJobs& jobs, const std::string& path,
                       const std::vector<std::string>& overrides, std::ostream& err) {
  // Positioned as `run` positions them (FILE:LINE:COL:, --set:; fresh user 39).
  warn_settings_without_effect(jobs.cluster, err, path, overrides);
  std::vector<std::pair<std::string, std::vector<std::string>>> notes;  // note -> its jobs, in order
  const auto add = [&notes](const std::string& note, const std::string& job) {
    auto it = std::find_if(notes.begin(), notes.end(), [&](const auto& n) { return n.first == note; });
    if (it == notes.end()) it = notes.insert(notes.end(), {note, {}});
    it->second.push_back(job);
  };
  std::map<int, std::vector<std::string>> settings_of;  // scenario class -> its workload settings notes
  for (std::size_t i = 0; i < jobs.cluster.jobs.size(); ++i) {
    const models::JobSpec& j = jobs.cluster.jobs[i];
    const std::string name = j.name.empty() ? "job" + std::to_string(i) : j.name;
    if (i < jobs.workload_notes.size())
      for (const std::string& n : jobs.workload_notes[i]) add(n, name);
    if (!jobs.problem[i].empty() || j.duration_s != 0.0) continue;  // not simulated
    const int c = jobs.scenario_class[i];
    if (settings_of.count(c) == 0) settings_of[c] = models::workload_settings_without_effect(jobs.job_scenarios[i]);
    for (const std::string& n : settings_of[c]) add(n, name);
  }
  constexpr std::size_t kNamed = 3;  // jobs named before "and N more"
  for (const auto& [note, names] : notes) {
    err << "warning: " << (names.size() == 1 ? "job " : "jobs ");
    for (std::size_t k = 0; k < names.size() && k < kNamed; ++k)
      err << (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") << names[k];
    if (names.size() > kNamed) err << " and " << names.size() - kNamed << " more";
    err << ": " << note << "\n";
  }
}

/// Warns once per cluster.overrides entry naming a NIC (or one direction of it) of a node where a
/// one-node job ran: placed_overrides leaves it out of that job (docs/cluster.md), whose traffic
/// never leaves its node; names those jobs. Positioned as warn_settings_without_effect's.
void warn_nic_overrides_of_one_node_jobs(const models::ClusterJobs& jobs,
                                         const std::vector<models::ClusterRunResult>& results, const std::string& path,
                                         const std::vector<std::string>& overrides, std::ostream& err) {
  std::map<int, std::vector<std::string>> jobs_of;  // override index -> "A (node2)", first placed first
  for (const models::ClusterRunResult& r : results)
    for (std::size_t i = 0; i < r.jobs.size() && i < jobs.cluster.jobs.size(); ++i) {
      const models::ClusterJobResult& j = r.jobs[i];
      const bool one_node = !j.nodes.empty() && j.nodes.size() < 10 &&
                            std::all_of(j.nodes.begin(), j.nodes.end(), [](char c) { return c >= '0' && c <= '9'; });
      // A job of fixed duration_s is not simulated: no override reaches it.
      if (!j.problem.empty() || !one_node || jobs.cluster.jobs[i].duration_s != 0.0) continue;
      const std::string who = j.name + " (node" + j.nodes + ")";
      for (int o : models::overrides_left_out_of_one_node_job(jobs.cluster.cluster, std::stoi(j.nodes))) {
        std::vector<std::string>& named = jobs_of[o];
        if (std::find(named.begin(), named.end(), who) == named.end()) named.push_back(who);
      }
    }
  constexpr std::size_t kNamed = 3;  // jobs named before "and N more"
  for (const auto& [o, named] : jobs_of) {
    std::string list;
    for (std::size_t k = 0; k < named.size() && k < kNamed; ++k)
      list += (k == 0 ? "" : k + 1 == named.size() ? " and " : ", ") + named[k];
    if (named.size() > kNamed) list += " and " + std::to_string(named.size() - kNamed) + " more";
    const std::string& select = jobs.cluster.cluster.overrides[static_cast<std::size_t>(o)].select;
    std::string note = "cluster.overrides[" + std::to_string(o) + "] has no effect on ";
    note.append(named.size() == 1 ? "job " : "jobs ")
        .append(list)
        .append(", of one node: a one-node job's traffic never leaves its node, so the NIC \"")
        .append(select)
        .append("\" names carries none of it (expected a NIC override on the nodes of a job of 2 or more nodes)");
    err << "warning: " << note_at_field(note, path, overrides) << "\n";
  }
}

int run_cluster(const po::variables_map& vm, const po::options_description& opts, std::ostream& out,
                std::ostream& err) {
  if (vm.count("help")) {
    out << opts << "\n";
    return 0;
  }
  if (!vm.count("scenario")) throw UsageError("traincast cluster: a scenario file is required (see --help)");
  const std::string path = vm["scenario"].as<std::string>();
  std::vector<std::string> overrides;
  if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
  const int threads = vm["threads"].as<int>();
  check_thread_count("--threads", threads, kSimulationsWhy, 0);
  std::vector<std::string> policies;
  if (vm.count("policy")) {
    const std::string p = vm["policy"].as<std::string>();
    if (p == "both")
      policies = {"fifo", "backfill"};
    else if (p == "fifo" || p == "backfill")
      policies = {p};
    else
      throw UsageError("--policy: got \"" + p + "\" (expected fifo, backfill or both)");
  }
  const bool force = vm.count("force") > 0;
  const std::string csv = vm.count("csv") ? vm["csv"].as<std::string>() : std::string();
  const std::string json = vm.count("json") ? vm["json"].as<std::string>() : std::string();
  const std::string trace_path = vm.count("trace") ? vm["trace"].as<std::string>() : std::string();
  // An empty name is refused there; no two outputs may name one file.
  if (vm.count("csv")) check_output_path(csv, force, {path}, {json, trace_path});
  if (vm.count("json")) check_output_path(json, force, {path}, {csv, trace_path});
  if (vm.count("trace")) check_output_path(trace_path, force, {path}, {csv, json});

  const models::ClusterJobs jobs = io::load_cluster_jobs(path, overrides);
  // Now that the jobs' workload files are known: no output may overwrite one of them either.
  std::vector<std::string> inputs = scenario_input_files(jobs.cluster, path);
  inputs.insert(inputs.end(), jobs.workload_files.begin(), jobs.workload_files.end());
  if (vm.count("csv")) check_output_path(csv, force, inputs, {json, trace_path});
  if (vm.count("json")) check_output_path(json, force, inputs, {csv, trace_path});
  if (vm.count("trace")) check_output_path(trace_path, force, inputs, {csv, json});
  warn_sections_without_effect(jobs.cluster, path, err);
  warn_job_settings(jobs, path, overrides, err);
  std::vector<models::SchedulerSpec> schedulers;
  for (const std::string& policy : policies) {
    schedulers.push_back(jobs.cluster.scheduler);
    schedulers.back().policy = policy == "fifo" ? models::SchedulerPolicy::fifo : models::SchedulerPolicy::backfill;
  }
  if (schedulers.empty()) schedulers.push_back(jobs.cluster.scheduler);
  std::vector<models::ClusterRunResult> results;
  try {
    results = models::simulate_cluster(jobs, schedulers, threads);
  } catch (const std::invalid_argument& e) {
    // "job[i] (NAME): its token budget takes ..." is found only by simulating the job: positioned
    // at its budget in the file, as the loader positions every other job error (session 36).
    const std::string what = e.what();
    std::size_t i = 0;
    if (std::sscanf(what.c_str(), "job[%zu] (", &i) != 1 || i >= jobs.cluster.jobs.size()) throw;
    const std::string field =
        "job[" + std::to_string(i) + "]." + (jobs.cluster.jobs[i].tokens > 0.0 ? "tokens" : "alone_duration_s");
    throw io::ScenarioError({io::field_position(path, field) + ": " + what});
  }

  warn_nic_overrides_of_one_node_jobs(jobs, results, path, overrides, err);

  std::ostringstream p;
  const models::ClusterSpec& c = jobs.cluster.cluster;
  const int per_node = models::cluster_node_template(c).gpus_per_node;
  const int in_service = models::nodes_in_service(c);
  p << "Cluster    " << in_service << " x " << c.node_template << " = " << in_service * per_node << " GPUs, "
    << (in_service < c.num_nodes
            ? std::to_string(c.num_nodes - in_service) +
                  (c.num_nodes - in_service == 1 ? " more node" : " more nodes") + " drained for a missing GPU, "
            : std::string())
    << fabric_text(c) << "\nJobs       " << jobs.cluster.jobs.size() << " (" << path << ")\n"
    << "Slowdown   run time / alone on an empty cluster of healthy nodes = placement (its run alone on the nodes "
       "it got: leaves spanned, cluster.overrides) x co-runners (other jobs on shared oversubscribed leaf "
       "up-links, from the flow model; docs/cluster.md)\n";
  std::vector<PolicyRun> runs;
  for (std::size_t k = 0; k < results.size(); ++k) {
    runs.push_back({schedulers[k], results[k]});
    p << "\n";
    print_run(p, runs.back());
  }
  out << p.str();
  if (!csv.empty()) write_output_file(csv, csv_text(runs));
  if (!json.empty()) write_output_file(json, json_text(runs));
  if (!trace_path.empty()) {
    sim::TraceRecorder trace;
    std::int32_t pid = 0;
    for (const PolicyRun& run : runs)
      pid = models::record_cluster_trace(run.result, policy_name(run.scheduler.policy), pid, trace);
    std::ostringstream t;
    io::write_chrome_trace(trace, t);
    write_output_file(trace_path, t.str());
  }
  return 0;
}

}  // namespace

int cluster_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description opts = cluster_options();
  po::positional_options_description pos;
  pos.add("scenario", 1);
  return guarded(err, [&]() -> int { return run_cluster(parse_options(args, opts, pos), opts, out, err); });
}

}  // namespace traincast::cli
