#pragma once
// Command-line options of traincast-bench (no CUDA here, so they are unit-tested on any machine).

#include <optional>
#include <string>
#include <vector>

namespace traincast::bench {

/// The measurement parts, in the order they run: cheap ones first; the burn last, after an idle
/// baseline that lets the GPUs cool from the parts before it.
inline const std::vector<std::string>& all_parts() {
  static const std::vector<std::string> parts = {"launch", "hbm", "pcie", "gemm", "nccl", "burn"};
  return parts;
}

/// Parsed options.
struct BenchOptions {
  double budget_s = 600;           ///< --budget-s: wall-clock limit for all parts together [s], > 0
  std::vector<std::string> parts;  ///< --parts: subset of all_parts(), in all_parts() order
  std::string out;                 ///< --out: measurement file; "" = default name (main decides)
  bool force = false;              ///< --force: overwrite an existing --out
  std::string describe;            ///< --describe: free text stored in machine.description
  std::vector<int> gpus;           ///< --gpus: CUDA device indices, distinct; empty = all visible
  bool help = false;               ///< --help / -h
  bool version = false;            ///< --version
  std::string command_line;        ///< argv joined by spaces (recorded in the file)
};

/// Outcome of parse_bench_options: options, or an error message (the caller prints it after
/// "traincast-bench: " and exits with status 2).
struct ParsedOptions {
  BenchOptions options;
  std::optional<std::string> error;
};

/// Parses argv[1..argc). Accepts "--name value" and "--name=value". Errors name the option and
/// what was expected, e.g. `--budget-s: expected a number of seconds > 0, got "x"`.
ParsedOptions parse_bench_options(int argc, const char* const* argv);

/// The --help text.
std::string bench_usage();

}  // namespace traincast::bench
