// `traincast chakra run SCENARIO TRACE...` and `traincast chakra export SCENARIO --out DIR`:
// MLCommons Chakra execution traces on a scenario's cluster, and a scenario's generated training
// job written as Chakra traces (models/executor/chakra_executor.h, chakra_export.h, models/io/chakra_io.h).

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "models/executor/chakra_executor.h"
#include "models/executor/chakra_export.h"
#include "models/executor/training_executor.h"
#include "models/hardware/cluster.h"
#include "models/io/chakra_io.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "models/io/trace_writer.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/interrupt.h"
#include "tools/cli/summary.h"

namespace traincast::cli {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "traincast chakra run SCENARIO TRACE... [options]\n"
    "traincast chakra export SCENARIO --out DIR [options]\n\n"
    "run: simulates an MLCommons Chakra execution trace (one .et file per rank: protobuf\n"
    "GlobalMetadata, then nodes) on SCENARIO's cluster, rank r on GPU r: compute nodes take the\n"
    "trace's measured durations (else the compute model from num_ops/tensor_size), collectives\n"
    "and send/recv run on the simulated network. TRACE is a prefix DIR/NAME (files NAME.<r>.et),\n"
    "a directory of .et files, or the files themselves. Prints the step time, where it went on\n"
    "the rank that finishes last (its collectives' wait for a later rank as \"waiting for slower\n"
    "GPUs\", naming that rank), collectives by kind and the busiest links.\n"
    "export: writes SCENARIO's generated training job as Chakra traces, DIR/NAME.<gpu>.et, one\n"
    "per GPU (DP replicas unfolded), for other Chakra tools; `chakra run` reproduces its timing.\n\n"
    "Options";

std::string trace_name(const std::vector<models::ChakraRankTrace>& ranks) {
  const std::string& p = ranks.front().path;
  if (ranks.size() == 1) return p;
  const std::string name = fs::path(p).filename().string();
  const std::string stem = name.substr(0, name.size() - 3);
  return (fs::path(p).parent_path() / stem.substr(0, stem.rfind('.'))).string();
}

std::string format_run(const models::ChakraRunReport& r, const std::string& trace, const std::string& scenario,
                       double wall_s) {
  std::ostringstream o;
  auto pct = [](double f) { return format_fixed(100.0 * f, 1) + "%"; };
  o << "Trace      " << trace << " (" << r.ranks << " ranks, " << with_thousands(static_cast<double>(r.nodes))
    << " nodes)\n";
  o << "           " << r.comp_nodes << " GPU compute, " << r.cpu_nodes << " CPU, " << r.comm_coll_nodes
    << " collective, " << r.comm_p2p_nodes << " send/recv, " << r.mem_nodes << " memory, " << r.metadata_nodes
    << " metadata\n";
  if (r.modelled_nodes > 0)
    o << "           " << r.modelled_nodes << " compute/memory nodes without a measured duration: compute model\n";
  if (r.zero_time_nodes > 0)
    o << "           " << r.zero_time_nodes
      << " compute/memory nodes with neither a duration nor num_ops/tensor_size: no time\n";
  if (r.dropped_deps > 0)
    o << "           " << r.dropped_deps
      << " dependencies ignored (ctrl_deps on nodes absent from the file, self-dependencies)\n";
  o << "Cluster    " << scenario << ": " << r.num_gpus << " x " << r.gpu << " (ranks on GPUs 0-" << r.ranks - 1
    << ")\n";
  o << "Step time  " << format_duration(r.iteration_time_s) << "\n";
  o << "\nWhere the step goes (rank " << r.reference_rank << ", the last to finish):\n";
  std::vector<std::pair<std::string, double>> rows = {{"GPU compute", r.compute_s}, {"memory nodes", r.memory_s}};
  for (const auto& c : r.comm) rows.emplace_back("exposed " + c.kind, c.exposed_s);
  rows.emplace_back("waiting for slower GPUs", r.straggler_wait_s);
  rows.emplace_back("CPU only", r.cpu_s);
  rows.emplace_back("idle / waiting", r.idle_s);
  for (const auto& [name, v] : rows) {
    if (v == 0 && (name == "memory nodes" || name == "CPU only" || name == "waiting for slower GPUs")) continue;
    o << "  " << pad(name, 26) << lpad(format_duration(v), 12)
      << lpad(pct(r.iteration_time_s > 0 ? v / r.iteration_time_s : 0), 9) << "\n";
  }
  if (const models::StragglerReport& st = r.straggler; st.found)
    o << "    slowest: rank " << st.gpu << " (node" << st.node << " gpu" << st.local_gpu
      << "), arrived last; its GPU compute " << format_duration(st.slowest_kernel_s) << " vs "
      << format_duration(st.breakdown_kernel_s) << " on rank " << st.breakdown_replica << "\n";
  if (!r.comm.empty()) {
    o << "\nCommunication (each collective or transfer once, all ranks):\n";
    for (const auto& c : r.comm)
      o << "  " << pad(c.kind, 16) << lpad(with_thousands(c.calls), 8) << " calls  "
        << lpad(format_fixed(c.bytes / 1e6, 3), 12) << " MB\n";
  }
  if (!r.busiest_links.empty()) {
    o << "\nBusiest links (average over the step):\n";
    for (const auto& l : r.busiest_links)
      o << "  " << pad(l.name, 40) << lpad(pct(l.utilization), 9) << " of "
        << format_fixed(l.capacity_bytes_per_s / 1e9, 1) << " GB/s, " << format_fixed(l.bytes / 1e9, 3) << " GB\n";
  }
  o << "\nSimulated " << with_thousands(static_cast<double>(r.events)) << " events in " << format_fixed(wall_s, 2)
    << " s wall\n";
  return o.str();
}

/// What the exporter cannot write, refused at the field that asked for it (or its --set): throws
/// io::ScenarioError.
void refuse_unexportable(const models::Scenario& sc, const std::string& scenario_path,
                         const std::vector<std::string>& overrides) {
  if (sc.parallel.cp > 1) {
    throw io::ScenarioError(
        {scenario_field_origin(scenario_path, "workload.parallel.cp", overrides) +
         ": workload.parallel.cp: chakra export: context parallelism (cp = " + std::to_string(sc.parallel.cp) +
         ") is not exported: its ring send/recvs are shared by several workers (expected cp: 1)"});
  }
  if (sc.parallel.tp_comm_overlap && sc.parallel.tp > 1 &&
      sc.parallel.tp_overlap_implementation == models::TpOverlapImplementation::async_tp) {
    throw io::ScenarioError(
        {scenario_field_origin(scenario_path, "workload.parallel.tp_overlap_implementation", overrides) +
         ": workload.parallel.tp_overlap_implementation: chakra export: async TP's chunk copies between TP ranks "
         "are not exported (expected userbuffers)"});
  }
  if (sc.data_loader) {
    throw io::ScenarioError({scenario_field_origin(scenario_path, "workload.data_loader", overrides) +
                             ": workload.data_loader: chakra export: host-to-device input copies have no Chakra "
                             "form here (expected a scenario without data_loader)"});
  }
}

/// The chakra run command that replays an export: the same cluster, i.e. the export's --set values
/// that chakra run reads (cluster.*, workload.training.precision; the layout is in the traces, and
/// chakra run refuses the rest) and its profile; words quoted for a POSIX shell where needed.
std::string replay_command(const std::string& scenario_path, const std::string& prefix,
                           const std::vector<std::string>& overrides, const std::string& profile) {
  const auto shell_word = [](const std::string& w) {
    if (!w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=,:+-") ==
                          std::string::npos)
      return w;
    std::string q = "'";
    for (const char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string out = "traincast chakra run " + shell_word(scenario_path) + " " + shell_word(prefix);
  for (const std::string& o : overrides)
    if (o.rfind("cluster.", 0) == 0 || o.rfind("workload.training.precision=", 0) == 0)
      out += " --set " + shell_word(o);
  if (!profile.empty()) out += " --profile " + shell_word(profile);
  return out;
}

/// The positional arguments (run or export, the scenario, the traces), parsed as options but not
/// listed by --help (kUsage names them).
po::options_description positional_options() {
  po::options_description positional;
  positional.add_options()("action", po::value<std::string>(), "run or export")(
      "scenario", po::value<std::string>(), "scenario file")("inputs", po::value<std::vector<std::string>>(),
                                                             "trace prefix, directory or files");
  return positional;
}

}  // namespace

int chakra_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(kUsage);
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field, e.g. --set cluster.num_nodes=2 (repeatable; run reads only cluster.* and\n"
      "workload.training.precision, and refuses a --set of any other field)")(
      "profile", po::value<std::string>(),
      "calibration profile (traincast calibrate fit); overrides the scenario's (run and export)")(
      "replicate", po::value<int>(), "run: one rank's file on N ranks (a data-parallel step traced on rank 0 only)")(
      "trace", po::value<std::string>(), "run: write a Chrome/Perfetto trace (ui.perfetto.dev) to this file")(
      "ctrl-deps",
      "run: wait on ctrl_deps too (default: data_deps only, as ASTRA-sim's feeder; PyTorch traces "
      "record the calling op there)")("out", po::value<std::string>(),
                                      "export: directory for the .et files (created if missing)")(
      "name", po::value<std::string>(), "export: file name stem (default: the scenario's name)")(
      "force", "overwrite existing output files");
  po::options_description all;
  all.add(opts).add(positional_options());
  po::positional_options_description pos;
  pos.add("action", 1).add("scenario", 1).add("inputs", -1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, all, pos);
    if (vm.count("help") || !vm.count("action")) {
      if (!vm.count("help")) throw UsageError(std::string("chakra: expected run or export\n\n") + kUsage);
      out << opts << "\n";
      return 0;
    }
    const std::string action = vm["action"].as<std::string>();
    if (action != "run" && action != "export")
      throw UsageError("chakra: unknown action '" + action + "' (expected run or export)");
    if (!vm.count("scenario")) throw UsageError("chakra " + action + ": no scenario given");
    const std::string scenario_path = vm["scenario"].as<std::string>();
    std::vector<std::string> overrides;
    if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
    const bool force = vm.count("force") > 0;

    if (action == "run") {
      if (vm.count("out") || vm.count("name")) throw UsageError("chakra run: --out and --name are for export");
      if (!vm.count("inputs")) throw UsageError("chakra run: no trace given (DIR/NAME, a directory or .et files)");
      const auto inputs = vm["inputs"].as<std::vector<std::string>>();
      int replicate = 0;
      if (vm.count("replicate")) {
        replicate = vm["replicate"].as<int>();
        check_at_least("--replicate", replicate, 1, "the ranks that run the one trace");
      }
      // The workload part of the scenario is not used: only its cluster (and training.precision
      // for nodes timed by the compute model).
      const auto load = [&](const std::vector<std::string>& o) {
        return io::load_cluster_scenario_file(scenario_path, o,
                                              {"traincast chakra run", {"workload.training.precision"}});
      };
      models::Scenario sc = load(overrides);
      use_profile(sc, profile_option(vm), overrides, load, err);
      // The .et files a directory or DIR/NAME prefix stands for, not only the prefix: --trace
      // DIR/NAME.0.et --force overwrote rank 0's trace (fresh user, session 35).
      std::vector<std::string> all_inputs = io::chakra_trace_files(inputs);
      for (const std::string& f : scenario_input_files(sc, scenario_path)) all_inputs.push_back(f);
      if (vm.count("trace")) check_output_path(vm["trace"].as<std::string>(), force, all_inputs);
      if (replicate > 0) {
        // Refused before N copies of the trace are made (1,000,000 copies held 19.5 GB for minutes).
        const int gpus = models::Cluster(sc.cluster).num_gpus();
        if (replicate > gpus)
          throw UsageError("--replicate: " + std::to_string(replicate) + " ranks but scenario " + sc.name + " has " +
                           std::to_string(gpus) + " GPUs (expected 1 to " + std::to_string(gpus) +
                           "; rank r runs on GPU r)");
      }
      std::vector<models::ChakraRankTrace> ranks = io::load_chakra_traces(inputs);
      if (replicate > 0) {
        if (ranks.size() != 1)
          throw UsageError("--replicate: needs a single-rank trace (got " + std::to_string(ranks.size()) + " ranks)");
        for (int k = 1; k < replicate; ++k) {
          ranks.push_back(ranks.front());
          ranks.back().rank = k;
        }
      }
      sim::TraceRecorder trace;
      const InterruptScope interrupts;  // Ctrl-C stops the simulation (exit 130, no --trace written)
      const auto t0 = std::chrono::steady_clock::now();
      models::ChakraRunOptions options;
      options.wait_on_ctrl_deps = vm.count("ctrl-deps") > 0;
      const models::ChakraRunReport r =
          models::simulate_chakra(sc, ranks, vm.count("trace") ? &trace : nullptr, options);
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      out << format_run(r, trace_name(ranks) + (replicate > 0 ? " x" + std::to_string(replicate) : ""), scenario_path,
                        wall_s);
      if (vm.count("trace")) {
        std::ostringstream s;
        io::write_chrome_trace(trace, s);
        write_output_file(vm["trace"].as<std::string>(), s.str());
      }
      return 0;
    }

    // export
    if (vm.count("inputs") || vm.count("replicate") || vm.count("trace") || vm.count("ctrl-deps"))
      throw UsageError("chakra export: takes SCENARIO --out DIR (traces and --replicate/--trace are for run)");
    if (!vm.count("out")) throw UsageError("chakra export: --out DIR is required");
    models::Scenario sc = io::load_scenario_file(scenario_path, overrides);
    use_profile(
        sc, profile_option(vm), overrides,
        [&](const std::vector<std::string>& o) { return io::load_scenario_file(scenario_path, o); }, err);
    // Every GPU needs its own ops. Set here, not as a --set of the user's: an error in the file
    // would otherwise note "the file as changed by --set options.fold_symmetric=false".
    sc.options.fold_symmetric = false;
    refuse_unexportable(sc, scenario_path, overrides);
    if (vm.count("name") && vm["name"].as<std::string>().empty())
      throw UsageError("--name: got \"\" (expected a file name stem, e.g. --name gpt3)");
    std::string name = vm.count("name") ? vm["name"].as<std::string>() : sc.name;
    if (name.empty()) name = fs::path(scenario_path).stem().string();
    if (name.find('/') != std::string::npos) throw UsageError("--name: must be a file name stem (got " + name + ")");
    const fs::path dir = vm["out"].as<std::string>();
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw UsageError("--out: " + dir.string() + " exists and is not a directory");
    if (!fs::exists(dir, ec) && !fs::create_directories(dir, ec))
      throw UsageError("--out: cannot create " + dir.string() + " (" + ec.message() + ")");
    const models::Cluster cluster(sc.cluster);
    const models::TrainingGraph job = models::build_training_graph(sc, cluster);
    const std::vector<models::ChakraRankTrace> traces = models::export_training_chakra(job, cluster.num_gpus());
    std::vector<std::string> paths;
    paths.reserve(traces.size());
    for (const auto& t : traces) paths.push_back((dir / (name + "." + std::to_string(t.rank) + ".et")).string());
    for (std::size_t i = 0; i < paths.size(); ++i) {
      std::vector<std::string> others(paths.begin(), paths.begin() + static_cast<std::ptrdiff_t>(i));
      check_output_path(paths[i], force, scenario_input_files(sc, scenario_path), others);
    }
    // Nodes as `chakra run` counts them in the files: the job's operations, and per rank with
    // process groups the "## process_group:init ##" metadata node write_chakra_trace puts first.
    std::size_t bytes = 0, operations = 0, metadata = 0;
    for (std::size_t i = 0; i < traces.size(); ++i) {
      const std::string data = io::write_chakra_trace(traces[i]);
      bytes += data.size();
      operations += traces[i].nodes.size();
      metadata += traces[i].process_groups.empty() ? 0 : 1;
      write_output_file(paths[i], data);
    }
    out << "Wrote " << traces.size() << " Chakra traces " << (dir / name).string() << ".<0-" << traces.size() - 1
        << ">.et: " << with_thousands(static_cast<double>(operations + metadata)) << " nodes ("
        << with_thousands(static_cast<double>(operations)) << " operations, " << metadata
        << " process_group:init metadata), " << format_fixed(static_cast<double>(bytes) / 1e6, 2) << " MB\n";
    out << "Job        tp " << job.tp << " x pp " << job.pp << " x dp " << job.dp << ", " << job.micro_batches
        << " micro-batches, " << job.iterations << " iteration" << (job.iterations > 1 ? "s" : "")
        << " (replicas unfolded)\n";
    out << "Replay     " << replay_command(scenario_path, (dir / name).string(), overrides, profile_option(vm)) << "\n";
    return 0;
  });
}

}  // namespace traincast::cli
