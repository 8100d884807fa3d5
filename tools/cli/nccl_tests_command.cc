// `traincast nccl-tests SCENARIO --op OP -b MIN -e MAX -f FACTOR [--gpus LIST] [--csv FILE]`:
// nccl-tests simulated on a scenario's cluster, printed in nccl-tests' own layout so that a user
// can put it beside (or diff it against) a real log. Column formats are those of
// NVIDIA/nccl-tests src/common.cu: "%12li  %12li  %8s  %6s  %6i" then, out-of-place and
// in-place, "  %7s  %6.2f  %6.2f  %5s" with the time as %7.2f below 100 us, %7.1f below 10 ms,
// %7.0f above.

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/collectives/nccl_tests.h"
#include "models/hardware/cluster.h"
#include "models/io/int_ranges.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/interrupt.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  // va_start above initializes args; clang-analyzer 14 reports it uninitialized (false positive).
  std::vsnprintf(buffer, sizeof buffer, format, args);  // NOLINT(clang-analyzer-valist.Uninitialized)
  va_end(args);
  return buffer;
}

/// nccl-tests' time column: %7.2f below 100 us, %7.1f below 10,000 us, %7.0f above.
std::string time_column(double us) {
  if (us >= 10000.0) return printf_string("%7.0f", us);
  if (us >= 100.0) return printf_string("%7.1f", us);
  return printf_string("%7.2f", us);
}

std::string format_nccl_tests_table(const std::vector<models::NcclTestsResult>& rows, models::NcclTestsOp op,
                                    const std::string& type_name, bool show_algorithm) {
  std::ostringstream o;
  o << printf_string("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
                     "", "", "", "", "");
  o << printf_string("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s", "size", "count", "type",
                     "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  if (show_algorithm) o << "  algorithm/protocol/channels";
  o << "\n";
  o << printf_string("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "",
                     "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  const std::string redop(models::nccl_tests_redop(op));
  const int root = models::nccl_tests_root(op);
  double busbw_sum = 0;
  for (const models::NcclTestsResult& r : rows) {
    o << printf_string("%12lli  %12lli  %8s  %6s  %6i", static_cast<long long>(r.bytes), r.count, type_name.c_str(),
                       redop.c_str(), root);
    const std::string t = time_column(r.time_s * 1e6);
    for (int pass = 0; pass < 2; ++pass) {
      o << printf_string("  %7s  %6.2f  %6.2f  %5s", t.c_str(), r.algbw_gbps, r.busbw_gbps, "N/A");
    }
    if (show_algorithm) {
      // A discarded collective (count 0) runs no algorithm, protocol or channel.
      o << "  " << (r.discarded ? "none" : models::choice_algorithm_name(r.choice)) << "/"
        << (r.discarded ? "none" : models::protocol_name(r.choice.protocol)) << "/" << r.choice.channels;
    }
    o << "\n";
    busbw_sum += r.busbw_gbps;
  }
  o << "# Out of bounds values : 0 OK\n";
  o << "# Avg bus bandwidth    : " << printf_string("%g", rows.empty() ? 0.0 : busbw_sum / rows.size()) << " \n";
  o << "#\n";
  return o.str();
}

/// Warns once per cluster.overrides entry whose field the nccl-tests model does not read (fresh
/// user 41: they were taken silently): clock_factor, power_cap_w and supply_c act on a GPU's
/// compute, power and temperature (traincast run), while a row's time is its collective's
/// transfers over NVLink, PCIe and the network (models/collectives/nccl_tests.h), which none of
/// them changes. bandwidth_factor, failed and missing act here. Positioned at the field.
void warn_gpu_overrides_unused(const models::Scenario& sc, std::ostream& err, const std::string& scenario_path,
                               const std::vector<std::string>& overrides) {
  for (std::size_t i = 0; i < sc.cluster.overrides.size(); ++i) {
    const models::ElementOverride& o = sc.cluster.overrides[i];
    const char* field = o.clock_factor != 0.0  ? "clock_factor"
                        : o.power_cap_w != 0.0 ? "power_cap_w"
                        : o.supply_c           ? "supply_c"
                                               : nullptr;
    if (field == nullptr || o.missing) continue;
    const char* what = o.clock_factor != 0.0  ? "a GPU's clock"
                       : o.power_cap_w != 0.0 ? "a GPU's power limit"
                                              : "a node's supply temperature";
    const std::string note = "cluster.overrides[" + std::to_string(i) + "]." + field +
                             " has no effect in traincast nccl-tests: its model times each collective by its " +
                             "transfers over NVLink, PCIe and the network, which " + what +
                             " does not change (expected bandwidth_factor or failed on a link or NIC, or missing: " +
                             "true on a GPU, for nccl-tests; traincast run models " + field + ")";
    err << "warning: " << note_at_field(note, scenario_path, overrides) << "\n";
  }
}

/// Warns on -b 0 with a factor (fresh user, session 32: the rows stopped unexplained).
void warn_zero_with_factor(double min_bytes, double max_bytes, double factor, std::ostream& err) {
  if (min_bytes == 0 && factor > 1 && max_bytes > 0)
    err << "warning: -b 0 with -f " << printf_string("%g", factor)
        << ": 0 x factor stays 0, so only the size-0 row is simulated (nccl-tests would repeat it forever; "
           "expected -b 1 or more for rows up to -e)\n";
}

/// Warns where nccl-tests' rounding to whole elements changes the size -b or -e asks for (fresh
/// user 39: `-b 6 -e 6 -d double` ran 0 bytes without a word). nccl-tests does the same (src/common.cu
/// setupArgs: count = size / wordSize, per rank for all_gather, reduce_scatter and alltoall), and
/// prints the rounded size in its table.
void warn_rounded_sizes(models::NcclTestsOp op, const std::vector<double>& sizes, double max_bytes, int nranks,
                        int word_bytes, const std::string& type, std::ostream& err) {
  const bool per_rank = op == models::NcclTestsOp::all_gather || op == models::NcclTestsOp::reduce_scatter ||
                        op == models::NcclTestsOp::alltoall;
  if (sizes.empty()) return;
  const bool one = sizes.size() == 1 && sizes.front() == max_bytes;
  for (int which = 0; which < (one ? 1 : 2); ++which) {
    const double asked = which == 0 ? sizes.front() : sizes.back();
    if (which == 1 && asked != max_bytes) break;  // the sizes stopped below -e: -e is not run
    const models::NcclTestsSize s = models::nccl_tests_size(op, asked, nranks, word_bytes);
    if (s.bytes == asked) continue;
    const int unit = word_bytes * (per_rank ? nranks : 1);
    err << "warning: " << (which == 0 ? (one ? "-b/-e " : "-b ") : "-e ") << printf_string("%.0f", asked)
        << " is not a whole number of " << word_bytes << "-byte " << type << " elements"
        << (per_rank ? " per rank on " + std::to_string(nranks) + " ranks (" + std::to_string(unit) + " bytes)"
                     : std::string())
        << ": nccl-tests rounds a size down to whole elements (count " << s.count << (per_rank ? " per rank" : "")
        << "), so its row runs " << printf_string("%.0f", s.bytes) << " bytes, as printed (expected a multiple of "
        << unit << " bytes for the size asked)\n";
  }
}

/// Warns when cluster.collectives.min_channels changed no row's time: the rows simulated again
/// without it give the same times. NCCL copies its first channels up to the minimum
/// (NVIDIA/nccl src/graph/connect.cc ncclTopoPostset, copyChannels; ncclMinNchannels clamps it
/// to MAXCHANNELS, 64, the field's range), and the model gives a copy its channel's links, so a
/// minimum changes the time only where a ring or tree across nodes then splits its data unevenly
/// over its search channels (docs/scenarios.md, `min_channels`).
void warn_min_channels_without_effect(const models::ClusterSpec& cluster, const models::NcclTestsOptions& options,
                                      const std::vector<double>& sizes,
                                      const std::vector<models::NcclTestsResult>& rows, std::ostream& err,
                                      const std::string& scenario_path, const std::vector<std::string>& overrides) {
  const int min_channels = cluster.collectives.min_channels;
  if (min_channels <= 0) return;
  models::ClusterSpec without = cluster;
  without.collectives.min_channels = 0;
  const std::vector<models::NcclTestsResult> plain = models::simulate_nccl_tests(without, options, sizes);
  std::vector<std::string> ran;  // the algorithms of the rows that ran, each once
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].time_s != plain[i].time_s) return;
    if (rows[i].discarded) continue;
    const std::string a = std::string(models::choice_algorithm_name(rows[i].choice)) + "/" +
                          models::protocol_name(rows[i].choice.protocol) + "/" +
                          std::to_string(plain[i].choice.channels);
    if (std::find(ran.begin(), ran.end(), a) == ran.end()) ran.push_back(a);
  }
  std::string algorithms;
  for (const std::string& a : ran) algorithms += (algorithms.empty() ? "" : ", ") + a;
  // Positioned as the other settings warnings (fresh user 39): FILE:LINE:COL: or --set:.
  std::ostringstream note;
  note << "cluster.collectives.min_channels " << min_channels
       << " changed no row's time: NCCL copies its channels up to the minimum (src/graph/connect.cc ncclTopoPostset; "
          "at most MAXCHANNELS, 64), and a copy shares its channel's links and NICs, so more channels change the "
          "model's time only where they change how the data splits over the links (a ring or tree across nodes at a "
          "count that is not a multiple of NCCL's own channels; docs/scenarios.md, min_channels)"
       << (algorithms.empty() ? std::string() : " (these rows ran " + algorithms + " without it)")
       << " (expected cluster.collectives.algorithm ring or tree on more than one node, and a count that is not a "
          "multiple of the channels --show-algorithm gives)";
  err << "warning: " << note_at_field(note.str(), scenario_path, overrides) << "\n";
}

/// Largest size accepted by -b, -e and -i, in bytes: 2^53 = 8388608G (8 PiB). Sizes are held as
/// double, which holds every whole byte count exactly only up to 2^53 (IEEE 754 binary64: 53-bit
/// significand); nccl-tests' own size_t goes to 2^64 - 1, but above 2^53 a size would be rounded and
/// its element count (int64) can overflow.
constexpr double kMaxSizeBytes = 9007199254740992.0;
/// An all-to-all call moves one flow per ordered pair of GPUs: n x (n - 1). Beyond 4,096 GPUs'
/// 16,773,120 pairs a call is refused rather than left running for what looks like a hang (the
/// cost grows as n^2.2: 512 GPUs take 2.4 s here, 2,048 GPUs 50 s; session 22's new-user check).
constexpr double kMaxAlltoallPairs = 4096.0 * 4095.0;

/// nccl-tests bounds -e by the smallest GPU's memory before it allocates anything (NVIDIA/nccl-tests
/// src/common.cu, run(): "We need sendbuff, recvbuff, expected (when datacheck enabled), plus 1G for
/// the rest"): memMaxBytes = (memory - reserve - 1 GiB) / 3 with its data check on (-c 1, its
/// default; this command has no -c), reserve = 1 GiB per 16 GiB of memory (rounded up), at most
/// 4 GiB (nccl-tests master; releases before it held back the 1 GiB alone). A larger -e is reduced
/// to it ("# Reducing maxBytes to N due to memory limitation"), so no row above it is ever printed:
/// it is refused here, with the largest -e in whole elements (per rank for the ops whose size counts
/// every rank's part), as nccl-tests rounds a size down to them. `memory` is the catalog's HBM
/// capacity (nvidia-smi's total: H100-SXM5-80GB 81,559 MiB), so the bound is an upper one: where
/// CUDA reports less, the real run reduces -e further. Fresh-user findings, sessions 39 and 40: a
/// 64 GiB all_reduce on 80 GB H100s printed a row; then every byte of HBM counted as buffer space.
void check_buffers_fit(models::NcclTestsOp op, const std::vector<double>& sizes, int nranks, double word_bytes,
                       const models::Cluster& cluster, const std::vector<int>& gpus, const std::string& e_text) {
  if (sizes.empty()) return;
  const double max_bytes = sizes.back();  // the largest row
  double hbm = 0;
  std::string gpu_name;
  const int count = gpus.empty() ? cluster.num_gpus() : static_cast<int>(gpus.size());
  for (int i = 0; i < count; ++i) {
    const models::GpuSpec& g = cluster.gpu_spec(gpus.empty() ? i : gpus[static_cast<std::size_t>(i)]);
    if (gpu_name.empty() || g.hbm_capacity_bytes < hbm) hbm = g.hbm_capacity_bytes, gpu_name = g.name;
  }
  constexpr double kGiB = 1073741824.0;
  const double reserve = std::min(std::ceil(hbm / (16 * kGiB)) * kGiB, 4 * kGiB);
  const double limit = std::floor((hbm - reserve - kGiB) / 3);
  if (!(hbm > 0) || max_bytes <= limit) return;
  const bool per_rank = op == models::NcclTestsOp::all_gather || op == models::NcclTestsOp::reduce_scatter ||
                        op == models::NcclTestsOp::alltoall;
  const double element = std::max(1.0, word_bytes) * (per_rank ? std::max(1, nranks) : 1);
  const double fits = std::floor(limit / element) * element;
  throw UsageError(printf_string(
      "-e %s: %s at %.0f bytes is more than nccl-tests runs on %s: it reduces -e to at most %.0f bytes (\"Reducing "
      "maxBytes to ... due to memory limitation\"; src/common.cu: (HBM - %.0f GiB reserve - 1 GiB) / 3 for its "
      "send, receive and data-check buffers, of the %.0f bytes of HBM) (expected -e %.0f or less; an upper bound: "
      "CUDA reports somewhat less memory than the HBM, so a real run's limit is a little lower)",
      e_text.c_str(), std::string(models::nccl_tests_op_name(op)).c_str(), max_bytes, gpu_name.c_str(), limit,
      reserve / kGiB, hbm, fits));
}

/// The size option `name` (shown as `flag`) in bytes, or a UsageError naming the flag and the range.
double size_option(const po::variables_map& vm, const char* name, const char* flag) {
  const std::string text = vm[name].as<std::string>();
  // 1e400 (or 1e-400K) is past what a double holds: said as the other numeric options say it.
  const bool suffix = !text.empty() && std::string_view("KkMmGg").find(text.back()) != std::string_view::npos;
  const std::string number = suffix ? text.substr(0, text.size() - 1) : text;
  if (io::detail::double_out_of_range(number)) {
    throw UsageError(std::string(flag) + ": got \"" + text + "\": out of range as written (expected " +
                     std::string(io::detail::kDoubleRangeExpected) + ")");
  }
  double bytes = 0;
  try {
    bytes = models::parse_nccl_tests_size(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(flag) + ": " + e.what());
  }
  if (bytes > kMaxSizeBytes) {
    throw UsageError(std::string(flag) + ": size " + text +
                     " is too large (expected 0 to 9007199254740992 bytes = 2^53 = 8388608G, the largest "
                     "size the model holds exactly)");
  }
  return bytes;
}

/// The --csv file: one row per size, the table's columns with units in their names.
std::string nccl_tests_csv(const std::vector<models::NcclTestsResult>& rows, models::NcclTestsOp op,
                           const std::string& type) {
  std::ostringstream csv;
  csv << "size_bytes,count,type,redop,root,time_us,algbw_gb_per_s,busbw_gb_per_s,algorithm,protocol,channels\n";
  for (const models::NcclTestsResult& r : rows) {
    csv << printf_string("%.0f,%lld,%s,%s,%d,%.6g,%.6g,%.6g,%s,%s,%d\n", r.bytes, r.count, type.c_str(),
                         std::string(models::nccl_tests_redop(op)).c_str(), models::nccl_tests_root(op), r.time_s * 1e6,
                         r.algbw_gbps, r.busbw_gbps, r.discarded ? "none" : models::choice_algorithm_name(r.choice),
                         r.discarded ? "none" : models::protocol_name(r.choice.protocol), r.choice.channels);
  }
  return csv.str();
}

/// A header line per drained node: it is not in the run (fresh user 40: 2 nodes with one GPU
/// missing ran on node0 alone, "8 of 8 GPUs", busbw above the healthy 16 GPUs' with nothing said).
void print_drained_nodes(const models::Cluster& cluster, std::ostream& out) {
  for (const models::Cluster::DrainedNode& d : cluster.drained_nodes())
    out << "# drained node" << d.slot << ": " << d.reason() << "; no rank runs on it\n";
}

/// --gpus names only GPUs of the cluster (issue 21: "--gpus 0-99" on 16 GPUs said "16 outside [0,
/// 16)", which read as a count). Throws UsageError naming the GPUs the cluster lacks and the range.
void check_gpu_list(const std::vector<int>& gpus, int num_gpus, const std::string& text) {
  std::vector<int> missing;
  for (int g : gpus)
    if (g < 0 || g >= num_gpus) missing.push_back(g);
  if (missing.empty()) return;
  const std::string names = missing.size() == 1
                                ? "GPU " + std::to_string(missing[0])
                                : std::to_string(missing.size()) + " GPUs (" + std::to_string(missing.front()) +
                                      " ... " + std::to_string(missing.back()) + ")";
  throw UsageError("--gpus: " + text + " names " + names + " that the cluster does not have: it has " +
                   std::to_string(num_gpus) + (num_gpus == 1 ? " GPU" : " GPUs") + " (expected GPU indices 0 to " +
                   std::to_string(num_gpus - 1) + ")");
}

}  // namespace

int nccl_tests_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast nccl-tests SCENARIO [options]\n\n"
      "Simulates nccl-tests (NVIDIA/nccl-tests) on the GPUs of SCENARIO's cluster and prints its table:\n"
      "size, count, type, redop, root, then out-of-place and in-place time [us], algbw and busbw\n"
      "[GB/s = 1e9 B/s] (busbw factors of nccl-tests; the model does not distinguish in-place, so both\n"
      "halves agree; #wrong is N/A as with validation off). Sizes as nccl-tests: -b, -e with K/M/G\n"
      "suffixes (binary), -f factor or -i increment. The scenario needs only its cluster (a --set of\n"
      "any other field is refused: it would have no effect); its cluster.collectives forces the\n"
      "algorithm/protocol as NCCL_ALGO/NCCL_PROTO do (one that cannot run the op is refused, as\n"
      "NCCL refuses it), its nccl_version picks the NCCL release's constants (e.g. --set\n"
      "cluster.collectives.nccl_version=2.18.3), and its min_channels/max_channels the channel\n"
      "count as NCCL_MIN_NCHANNELS (NCCL_MIN_CTAS) / NCCL_MAX_NCHANNELS (NCCL_MAX_CTAS) do, e.g.\n"
      "--set cluster.collectives.min_channels=24. Of cluster.overrides, bandwidth_factor, failed and\n"
      "missing act; clock_factor, power_cap_w and supply_c are warned of (the model times transfers).\n\nOptions");
  opts.add_options()("help,h", "show this help")(
      "op", po::value<std::string>()->default_value("all_reduce"),
      "all_reduce | all_gather | reduce_scatter | alltoall | broadcast | reduce | sendrecv (exactly these: the "
      "binaries' names without _perf)")(
      "minbytes,b", po::value<std::string>()->default_value("32M"),
      "smallest size (nccl-tests default 32M); sizes 0 to 8388608G (2^53 bytes), whole bytes (1.5K, not 0.5)")(
      "maxbytes,e", po::value<std::string>()->default_value("32M"), "largest size (nccl-tests default 32M)")(
      "stepfactor,f", po::value<double>(), "multiply the size by this integer factor between rows")(
      "stepbytes,i", po::value<std::string>(), "add this many bytes between rows (default 1M when no -f)")(
      "datatype,d", po::value<std::string>()->default_value("float"), "element type (float, half, bfloat16, ...)")(
      "gpus", po::value<std::string>(),
      "GPUs taking part, in rank order, e.g. 0-7 or 0,8 (default: all); at least 2 (one GPU's local copy is not "
      "modelled)")("set", po::value<std::vector<std::string>>()->composing(),
                   "override a cluster field, e.g. --set cluster.num_nodes=2")(
      "csv", po::value<std::string>(), "also write the rows as CSV to this file")("force",
                                                                                  "overwrite an existing --csv file")(
      "profile", po::value<std::string>(), "calibration profile (traincast calibrate fit); overrides the scenario's")(
      "show-algorithm", "append the algorithm/protocol/channels the model chose to each row")(
      "scenario", po::value<std::string>(), "scenario file (positional)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    if (!vm.count("scenario")) throw UsageError("nccl-tests: no scenario given (usage: traincast nccl-tests SCENARIO)");
    const models::NcclTestsOp op = nccl_op_option("--op", vm["op"].as<std::string>());
    const double min_bytes = size_option(vm, "minbytes", "-b");
    const double max_bytes = size_option(vm, "maxbytes", "-e");
    if (min_bytes > max_bytes) {
      throw UsageError("-b " + vm["minbytes"].as<std::string>() + " is above -e " + vm["maxbytes"].as<std::string>() +
                       " (expected -b <= -e)");
    }
    double factor = 1;
    if (vm.count("stepfactor")) {
      factor = vm["stepfactor"].as<double>();
      if (!(factor >= 1 && factor <= kMaxSizeBytes)) {
        throw UsageError("-f: step factor " + printf_string("%g", factor) + " is outside [1, 2^53 = " +
                         printf_string("%.0f", kMaxSizeBytes) + "] (a larger factor cannot give a second row)");
      }
      if (factor != std::floor(factor)) {
        // nccl-tests reads -f with strtol into an integer (src/common.cu), so 1.5 runs as 1.
        throw UsageError("-f: step factor " + printf_string("%g", factor) +
                         " is not an integer (expected a whole factor such as 2, as nccl-tests reads -f as an "
                         "integer)");
      }
    }
    double step = 1024.0 * 1024.0;
    if (vm.count("stepbytes")) {
      step = size_option(vm, "stepbytes", "-i");
      if (step < 1 && !(factor > 1)) {
        throw UsageError("-i: step of 0 bytes would repeat -b forever (expected 1 to 8388608G, or -f above 1)");
      }
    }
    const std::string type = vm["datatype"].as<std::string>();
    std::vector<std::string> overrides;
    if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
    const std::string scenario_path = vm["scenario"].as<std::string>();
    models::Scenario sc = io::load_cluster_scenario_file(scenario_path, overrides, {"traincast nccl-tests", {}});
    use_profile(
        sc, profile_option(vm), overrides,
        [&](const std::vector<std::string>& o) {
          return io::load_cluster_scenario_file(scenario_path, o, {"traincast nccl-tests", {}});
        },
        err);
    std::string csv_path;
    if (vm.count("csv")) {
      csv_path = vm["csv"].as<std::string>();
      check_output_path(csv_path, vm.count("force") > 0, scenario_input_files(sc, scenario_path));
    }

    models::NcclTestsOptions options;
    options.op = op;
    options.word_bytes = models::nccl_tests_type_bytes(type);
    options.fp8 = models::nccl_tests_type_is_fp8(type);
    if (vm.count("gpus")) {
      try {
        options.gpus = models::parse_gpu_list(vm["gpus"].as<std::string>());
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--gpus: ") + e.what());
      }
    }
    warn_settings_without_effect(sc, err, scenario_path, overrides, false);
    warn_gpu_overrides_unused(sc, err, scenario_path, overrides);
    const models::Cluster cluster(sc.cluster);
    check_gpu_list(options.gpus, cluster.num_gpus(), vm.count("gpus") ? vm["gpus"].as<std::string>() : "");
    const std::vector<double> sizes = models::nccl_tests_sizes(min_bytes, max_bytes, factor, step);
    const int nranks = options.gpus.empty() ? cluster.num_gpus() : static_cast<int>(options.gpus.size());
    check_buffers_fit(op, sizes, nranks, options.word_bytes, cluster, options.gpus, vm["maxbytes"].as<std::string>());
    warn_zero_with_factor(min_bytes, max_bytes, factor, err);
    warn_rounded_sizes(op, sizes, max_bytes, nranks, options.word_bytes, type, err);
    {
      const double n = nranks;
      if (op == models::NcclTestsOp::alltoall && n * (n - 1) > kMaxAlltoallPairs)
        throw UsageError(printf_string(
            "--op alltoall on %.0f GPUs: one call is %.0f x %.0f = %.1f million GPU pairs, one flow each (limit "
            "%.1f million, 4,096 GPUs; expected --gpus with at most 4096 GPUs, or fewer cluster.num_nodes)",
            n, n, n - 1, n * (n - 1) / 1e6, kMaxAlltoallPairs / 1e6));
    }
    const InterruptScope interrupts;  // Ctrl-C stops the simulation (exit 130, nothing printed or written)
    const std::vector<models::NcclTestsResult> rows = models::simulate_nccl_tests(sc.cluster, options, sizes);
    warn_min_channels_without_effect(sc.cluster, options, sizes, rows, err, scenario_path, overrides);

    // Header in nccl-tests' style, with what was simulated.
    out << "# traincast nccl-tests (simulated): " << models::nccl_tests_op_name(op) << " on " << nranks << " of "
        << cluster.num_gpus() << " GPUs of " << scenario_path << "\n";
    print_drained_nodes(cluster, out);
    out << printf_string("# nThread 1 nGpus %d minBytes %.0f maxBytes %.0f step: ", nranks, min_bytes, max_bytes);
    if (factor > 1) {
      out << printf_string("%g(factor)", factor);
    } else {
      out << printf_string("%.0f(bytes)", step);
    }
    out << " warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0\n#\n# Using devices\n";
    for (int r = 0; r < nranks; ++r) {
      const int g = options.gpus.empty() ? r : options.gpus[r];
      out << printf_string("#  Rank %2d Group  0 Pid %6d on %10s device %2d [sim] %s\n", r, 0,
                           ("node" + std::to_string(cluster.fabric_slot(cluster.node_of(g)))).c_str(),
                           cluster.local_rank(g), cluster.gpu_spec(g).name.c_str());
    }
    out << "#\n";
    out << format_nccl_tests_table(rows, op, type, vm.count("show-algorithm") > 0);

    if (!csv_path.empty()) write_output_file(csv_path, nccl_tests_csv(rows, op, type));
    return 0;
  });
}

}  // namespace traincast::cli
