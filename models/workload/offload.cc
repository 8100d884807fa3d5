#include "models/workload/offload.h"

#include <algorithm>
#include <array>
#include <utility>

namespace traincast::models {

double socket_memory_bytes_per_s(std::string_view cpu) {
  // (family name fragment, channels x MT/s x 8 bytes); first match wins.
  static constexpr std::array<std::pair<std::string_view, double>, 14> kTable{{
      {"Rome", 8 * 3200e6 * 8},
      {"Milan", 8 * 3200e6 * 8},
      {"EPYC 7", 8 * 3200e6 * 8},
      {"Genoa", 12 * 4800e6 * 8},
      {"EPYC 9", 12 * 4800e6 * 8},
      {"Skylake", 6 * 2666e6 * 8},
      {"Cascade Lake", 6 * 2933e6 * 8},
      {"8168", 6 * 2666e6 * 8},
      {"Ice Lake", 8 * 3200e6 * 8},
      {"Sapphire Rapids", 8 * 4800e6 * 8},
      {"Emerald Rapids", 8 * 5600e6 * 8},
      {"Granite Rapids", 12 * 6400e6 * 8},
      {"Broadwell", 4 * 2400e6 * 8},
      {"Grace", 512e9},
  }};
  for (const auto& [name, bytes_per_s] : kTable)
    if (cpu.find(name) != std::string_view::npos) return bytes_per_s;
  return 0.0;
}

double offload_host_memory_bytes_per_s(const Scenario& sc, const NodeTemplate& node) {
  if (sc.offload.host_memory_bytes_per_s > 0) return sc.offload.host_memory_bytes_per_s;
  return socket_memory_bytes_per_s(node.cpu);
}

double cpu_adam_seconds(double params, double socket_bytes_per_s, double efficiency, int gpus_per_socket) {
  const double per_gpu = socket_bytes_per_s * efficiency / std::max(1, gpus_per_socket);
  return params * kCpuAdamBytesPerParam / per_gpu;
}

}  // namespace traincast::models
