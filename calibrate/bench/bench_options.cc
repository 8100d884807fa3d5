#include "calibrate/bench/bench_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string_view>

namespace traincast::bench {

namespace {

std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  out.append(s);
  out += '"';
  return out;
}

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    out.emplace_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

}  // namespace

std::string bench_usage() {
  return "Usage: traincast-bench [--budget-s S] [--parts LIST] [--out FILE] [--force] [--describe TEXT]\n"
         "                       [--gpus LIST]\n"
         "\n"
         "Measures this machine's GPUs and writes one measurement file (protobuf text format, message\n"
         "Measurements of models/io/traincast.proto) for `traincast calibrate fit`.\n"
         "\n"
         "Parts (run in this order):\n"
         "  launch  empty-kernel launch latency and back-to-back kernel rate (first GPU)\n"
         "  hbm     HBM copy (cudaMemcpy), read and write kernels, 4 KiB .. 8 GiB (first GPU)\n"
         "  pcie    H2D/D2H over pinned memory (first GPU); D2D peer copies between every GPU pair\n"
         "  gemm    cuBLASLt GEMM per dtype (fp32, tf32, fp16, bf16; fp8 e4m3 on compute capability\n"
         "          >= 8.9) over M, N, K = 128 .. 16384, coarse grid first (first GPU)\n"
         "  nccl    NCCL all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv over all\n"
         "          selected GPUs (one process, ncclCommInitAll), 8 B .. 8 GiB, nccl-tests' algbw/busbw\n"
         "  burn    NVML power, temperature, SM clock and throttle reasons: idle baseline, sustained\n"
         "          GEMM on every selected GPU, cool-down (NVML loaded at run time)\n"
         "\n"
         "Options:\n"
         "  --budget-s S     wall-clock limit for all parts together, seconds (default 600); parts scale\n"
         "                   their grids and repeats to fit and stop cleanly when their share is spent\n"
         "  --parts LIST     comma-separated subset of: launch,hbm,pcie,gemm,nccl,burn (default: all)\n"
         "  --out FILE       measurement file (default: measurements-HOST-YYYYMMDDTHHMMSSZ.textproto);\n"
         "                   written atomically at the end; an existing file is refused without --force\n"
         "  --force          overwrite an existing --out file\n"
         "  --describe TEXT  free text stored in the file (machine.description), e.g. rack and cooling\n"
         "  --gpus LIST      comma-separated CUDA device indices (default: all visible); the first one\n"
         "                   runs launch, hbm, pcie and gemm\n"
         "  --version        print the version and exit\n"
         "  -h, --help       print this help and exit\n"
         "\n"
         "Progress goes to stderr. Exit status: 0 done; 1 no usable GPU or a part failed (the file still\n"
         "holds every part that finished); 2 bad options; 130 interrupted (file written with what was\n"
         "measured). NCCL_ALGO / NCCL_PROTO in the environment are recorded with each collective.\n";
}

ParsedOptions parse_bench_options(int argc, const char* const* argv) {
  ParsedOptions result;
  BenchOptions& o = result.options;
  for (int i = 0; i < argc; ++i) {
    if (i) o.command_line += ' ';
    o.command_line += argv[i];
  }
  auto fail = [&](std::string message) {
    result.error = std::move(message);
    return result;
  };
  bool parts_given = false;
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string name(arg);
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0) {
      const size_t eq = arg.find('=');
      if (eq != std::string_view::npos) {
        name = std::string(arg.substr(0, eq));
        inline_value = std::string(arg.substr(eq + 1));
      }
    }
    const bool takes_value =
        name == "--budget-s" || name == "--parts" || name == "--out" || name == "--describe" || name == "--gpus";
    const bool is_flag = name == "--force" || name == "--help" || name == "-h" || name == "--version";
    if (!takes_value && !is_flag) {
      if (arg.rfind("-", 0) == 0) {
        return fail("unknown option " + quoted(name) +
                    " (expected one of --budget-s, --parts, --out, --force, --describe, --gpus, --version, --help)");
      }
      return fail("unexpected argument " + quoted(arg) + " (traincast-bench takes options only; see --help)");
    }
    if (!seen.insert(name == "-h" ? "--help" : name).second) return fail(name + ": given twice");
    if (is_flag) {
      if (inline_value) return fail(name + ": takes no value, got " + quoted(*inline_value));
      if (name == "--force") o.force = true;
      if (name == "--help" || name == "-h") o.help = true;
      if (name == "--version") o.version = true;
      continue;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= argc) return fail(name + ": missing value");
      value = argv[++i];
    }
    if (name == "--budget-s") {
      double v = 0;
      const char* end = value.data() + value.size();
      auto [ptr, ec] = std::from_chars(value.data(), end, v);
      if (value.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v <= 0) {
        return fail("--budget-s: expected a number of seconds > 0, got " + quoted(value));
      }
      o.budget_s = v;
    } else if (name == "--parts") {
      parts_given = true;
      std::set<std::string> wanted;
      for (const std::string& p : split_commas(value)) {
        if (std::find(all_parts().begin(), all_parts().end(), p) == all_parts().end()) {
          return fail("--parts: unknown part " + quoted(p) + " (expected a comma-separated subset of " +
                      join(all_parts(), ",") + ")");
        }
        wanted.insert(p);
      }
      for (const std::string& p : all_parts()) {
        if (wanted.count(p)) o.parts.push_back(p);
      }
    } else if (name == "--out") {
      if (value.empty()) return fail("--out: expected a file name, got an empty string");
      o.out = value;
    } else if (name == "--describe") {
      o.describe = value;
    } else if (name == "--gpus") {
      std::set<int> distinct;
      for (const std::string& g : split_commas(value)) {
        int v = -1;
        const char* end = g.data() + g.size();
        auto [ptr, ec] = std::from_chars(g.data(), end, v);
        if (g.empty() || ec != std::errc() || ptr != end || v < 0) {
          return fail("--gpus: expected comma-separated CUDA device indices >= 0, got " + quoted(g) + " in " +
                      quoted(value));
        }
        if (!distinct.insert(v).second) return fail("--gpus: device " + std::to_string(v) + " listed twice");
        o.gpus.push_back(v);
      }
    }
  }
  if (!parts_given) o.parts = all_parts();
  return result;
}

}  // namespace traincast::bench
