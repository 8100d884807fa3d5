// traincast-bench: measures this machine's GPUs (GEMM, HBM, PCIe, launch, NCCL, power/thermal) and
// writes one measurement file (message Measurements of models/io/traincast.proto, text format) for
// `traincast calibrate fit`. Usage: calibrate/bench/bench_options.cc (--help).

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "calibrate/bench/bench_options.h"
#include "calibrate/bench/bench_util.h"
#include "calibrate/bench/measurement_text.h"
#include "calibrate/bench/nvml.h"
#include "calibrate/bench/parts.h"

#ifndef TRAINCAST_VERSION
#define TRAINCAST_VERSION "unknown"
#endif

namespace traincast::bench {
std::string nccl_version_text();  // nccl_part.cc
}

namespace {

using namespace traincast::bench;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

/// First SIGINT/SIGTERM: stop after the current point and write the file; a second one ends the
/// program at once (default action).
extern "C" void on_stop_signal(int sig) {
  g_stop_signal = 1;
  std::signal(sig, SIG_DFL);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

/// Writes `text` to `path` atomically: a temporary file beside it, fsync, rename. Returns "" or
/// the reason it failed.
std::string write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return "cannot create " + tmp + ": " + std::strerror(errno);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = "cannot write " + tmp + ": " + std::strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return why;
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const std::string why = "cannot flush " + tmp + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return why;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return why;
  }
  return "";
}

/// Checks before measuring that --out can be written (so minutes of measurement are not lost).
std::string probe_output(const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return "cannot create a file beside " + path + " (" + tmp + "): " + std::strerror(errno);
  close(fd);
  unlink(tmp.c_str());
  return "";
}

std::string version_text(int v) {  // CUDA's 1000 * major + 10 * minor
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

MeasuredMachine describe_machine(const std::vector<int>& gpus, const Nvml& nvml, const BenchOptions& options,
                                 std::vector<std::string>& notes) {
  MeasuredMachine m;
  m.hostname = host_name();
  m.gpu_count = static_cast<int>(gpus.size());
  cudaDeviceProp prop{};
  TC_CUDA(cudaGetDeviceProperties(&prop, gpus.front()));
  m.gpu_name = std::string(prop.name);
  for (size_t i = 1; i < gpus.size(); ++i) {
    cudaDeviceProp other{};
    TC_CUDA(cudaGetDeviceProperties(&other, gpus[i]));
    if (std::string(other.name) != *m.gpu_name) {
      notes.push_back("mixed GPUs: GPU " + std::to_string(gpus[i]) + " is " + other.name + ", machine describes GPU " +
                      std::to_string(gpus.front()));
    }
  }
  m.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  m.sm_count = prop.multiProcessorCount;
  m.hbm_capacity_bytes = static_cast<double>(prop.totalGlobalMem);
  int runtime = 0, driver = 0;
  TC_CUDA(cudaRuntimeGetVersion(&runtime));
  TC_CUDA(cudaDriverGetVersion(&driver));
  m.cuda_runtime_version = version_text(runtime);
  m.nccl_version = nccl_version_text();
  char bus_id[32] = {};
  TC_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, gpus.front()));
  void* dev = nvml.device_by_pci_bus_id(bus_id);
  const auto nvml_driver = nvml.driver_version();
  m.driver_version = nvml_driver ? *nvml_driver : "CUDA driver API " + version_text(driver);
  m.sm_clock_max_mhz = nvml.max_sm_clock_mhz(dev);
  m.memory_clock_max_mhz = nvml.max_memory_clock_mhz(dev);
  int khz = 0;
  if (!m.sm_clock_max_mhz && cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, gpus.front()) == cudaSuccess) {
    m.sm_clock_max_mhz = khz / 1000.0;
  }
  if (!m.memory_clock_max_mhz &&
      cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, gpus.front()) == cudaSuccess) {
    m.memory_clock_max_mhz = khz / 1000.0;
  }
  m.power_limit_w = nvml.enforced_power_limit_w(dev);
  m.started_utc = utc_now("%Y-%m-%dT%H:%M:%SZ");
  m.bench_version = std::string("traincast-bench ") + TRAINCAST_VERSION + " (built with CUDA " +
                    version_text(CUDART_VERSION) + "); " + options.command_line;
  if (!options.describe.empty()) m.description = options.describe;
  return m;
}

/// Share of the budget per part (of what is left when the part starts, among the parts still to
/// run): chosen so that a 300 s budget gives the GEMM grid its coarse passes, NCCL all sizes up to
/// a few GiB on 8 GPUs, and the burn about a minute of load.
double part_weight(const std::string& part) {
  if (part == "launch") return 0.02;
  if (part == "hbm") return 0.06;
  if (part == "pcie") return 0.07;
  if (part == "gemm") return 0.30;
  if (part == "nccl") return 0.30;
  return 0.25;  // burn
}

}  // namespace

int main(int argc, char** argv) {
  const ParsedOptions parsed = parse_bench_options(argc, argv);
  if (parsed.error) {
    std::fprintf(stderr, "traincast-bench: %s\n", parsed.error->c_str());
    return kExitUsage;
  }
  const BenchOptions& options = parsed.options;
  if (options.help) {
    std::fputs(bench_usage().c_str(), stdout);
    return 0;
  }
  if (options.version) {
    std::printf("traincast-bench %s (built with CUDA %s)\n", TRAINCAST_VERSION, version_text(CUDART_VERSION).c_str());
    return 0;
  }
  const std::string out = options.out.empty()
                              ? "measurements-" + host_name() + "-" + utc_now("%Y%m%dT%H%M%SZ") + ".textproto"
                              : options.out;
  if (file_exists(out) && !options.force) {
    std::fprintf(stderr, "traincast-bench: --out: %s exists (use --force to overwrite it)\n", out.c_str());
    return kExitUsage;
  }
  if (const std::string why = probe_output(out); !why.empty()) {
    std::fprintf(stderr, "traincast-bench: --out: %s\n", why.c_str());
    return kExitUsage;
  }

  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr,
                 "traincast-bench: no usable NVIDIA GPU: cudaGetDeviceCount %s%s%s. traincast-bench measures "
                 "real GPUs; it needs the NVIDIA driver and at least one visible GPU (check nvidia-smi and "
                 "CUDA_VISIBLE_DEVICES).\n",
                 e != cudaSuccess ? "failed with " : "found 0 devices", e != cudaSuccess ? cudaGetErrorName(e) : "",
                 e != cudaSuccess ? (std::string(" (") + cudaGetErrorString(e) + ")").c_str() : "");
    return kExitFailure;
  }
  std::vector<int> gpus = options.gpus;
  if (gpus.empty()) {
    for (int i = 0; i < count; ++i) gpus.push_back(i);
  }
  for (int g : gpus) {
    if (g >= count) {
      std::fprintf(stderr, "traincast-bench: --gpus: device %d does not exist (%d visible: 0..%d)\n", g, count,
                   count - 1);
      return kExitUsage;
    }
  }

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.budget_s));
  const Nvml nvml;
  if (!nvml.available()) progress("NVML unavailable: %s", nvml.why_unavailable().c_str());

  Measurements results;
  BenchContext ctx{gpus, &results, {}};
  bool failed = false;
  try {
    results.machine = describe_machine(gpus, nvml, options, ctx.notes);
    const MeasuredMachine& m = *results.machine;
    progress("%s: %d x %s (compute capability %s, %d SMs, %.0f GiB), driver %s, CUDA runtime %s, NCCL %s",
             m.hostname->c_str(), *m.gpu_count, m.gpu_name->c_str(), m.compute_capability->c_str(), *m.sm_count,
             *m.hbm_capacity_bytes / 1073741824.0, m.driver_version->c_str(), m.cuda_runtime_version->c_str(),
             m.nccl_version->empty() ? "none" : m.nccl_version->c_str());
  } catch (const std::exception& err) {
    std::fprintf(stderr, "traincast-bench: cannot describe the GPUs: %s\n", err.what());
    return kExitFailure;
  }
  const double reserve_s = std::min(2.0, 0.02 * options.budget_s);  // writing the file, teardown
  for (size_t i = 0; i < options.parts.size() && g_stop_signal == 0; ++i) {
    const std::string& part = options.parts[i];
    double weight_left = 0;
    for (size_t j = i; j < options.parts.size(); ++j) weight_left += part_weight(options.parts[j]);
    const double left_s = seconds_between(Clock::now(), end) - reserve_s;
    if (left_s <= 0) {
      ctx.notes.push_back(part + ": not run, budget spent");
      progress("%s: not run, budget spent", part.c_str());
      continue;
    }
    const double share_s = left_s * part_weight(part) / weight_left;
    const Deadline deadline(Clock::now() +
                            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(share_s)));
    progress("%s: starting (%.0f s of budget)", part.c_str(), share_s);
    try {
      if (part == "launch") run_launch_part(ctx, deadline);
      if (part == "hbm") run_hbm_part(ctx, deadline);
      if (part == "pcie") run_pcie_part(ctx, deadline);
      if (part == "gemm") run_gemm_part(ctx, deadline);
      if (part == "nccl") run_nccl_part(ctx, deadline);
      if (part == "burn") run_burn_part(ctx, deadline, nvml);
    } catch (const std::exception& err) {
      failed = true;
      ctx.notes.push_back(part + ": FAILED: " + err.what());
      progress("%s: FAILED: %s", part.c_str(), err.what());
    }
  }
  if (g_stop_signal) ctx.notes.push_back("interrupted by a signal; parts after it were not run");

  std::vector<std::string> comment = {
      "traincast-bench measurement file: protobuf text format, message traincast.proto.Measurements",
      "(models/io/traincast.proto). Fit with: traincast calibrate fit " + out + " --base GPU --out PROFILE",
  };
  for (const std::string& note : ctx.notes) comment.push_back(note);
  const std::string text = measurements_text(results, comment);
  if (const std::string why = write_atomically(out, text); !why.empty()) {
    std::fprintf(stderr, "traincast-bench: %s\n", why.c_str());
    return kExitFailure;
  }
  progress("wrote %s: %zu GEMM, %zu bandwidth, %zu collective points, %zu power samples%s", out.c_str(),
           results.gemm.size(), results.bandwidth.size(), results.collective.size(), results.power.size(),
           failed ? " (some parts FAILED, see above)" : "");
  if (g_stop_signal) return kExitInterrupted;
  return failed ? kExitFailure : 0;
}
