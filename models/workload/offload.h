#pragma once
// CPU offload of the optimizer (ZeRO-Offload: Ren et al. 2021, arXiv:2101.06840): host-memory
// bandwidth of the node's CPU sockets and the time of the CPU-Adam step. The copies themselves
// are flows on the GPUs' PCIe paths (Cluster::host_route, CollectiveEngine::start_host_copy).

#include <string_view>

#include "models/hardware/catalog.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Bytes CPU-Adam streams per parameter: reads the fp32 gradient, master weight, m and v
/// (16 B), writes the master weight, m and v (12 B) and the 16-bit copy sent back (2 B) = 30 B.
/// (DeepSpeed csrc/adam/cpu_adam_impl.cpp Step_8 and csrc/includes/cpu_adam.h Step_AVX: one pass
/// that loads grads, exp_avg, exp_avg_sq and params and stores params, exp_avg, exp_avg_sq and,
/// when copying to the GPU, the tile buffer sent back.) The fraction of peak bandwidth this pass
/// reaches (OffloadSpec::cpu_adam_efficiency) is an unsourced assumption; see models/spec/scenario.h.
/// Its ~10 FLOPs per parameter are a few ms per billion parameters on a 64-core AVX2/AVX-512
/// socket against ~0.2 s of memory traffic, so the step is memory bound.
inline constexpr double kCpuAdamBytesPerParam = 30.0;

/// Peak DRAM bandwidth of one socket [bytes/s] of a catalog CPU family (NodeTemplate::cpu):
/// memory channels x transfer rate x 8 bytes, from the vendors' datasheets:
///   AMD EPYC 7002/7003 (Rome, Milan): 8 x DDR4-3200 = 204.8e9
///   AMD EPYC 9004 (Genoa): 12 x DDR5-4800 = 460.8e9
///   Intel Xeon Skylake SP (e.g. 8168): 6 x DDR4-2666 = 128.0e9
///   Intel Xeon Cascade Lake SP: 6 x DDR4-2933 = 140.8e9
///   Intel Xeon Ice Lake SP: 8 x DDR4-3200 = 204.8e9
///   Intel Xeon Sapphire Rapids (e.g. 8480C): 8 x DDR5-4800 = 307.2e9
///   Intel Xeon Emerald Rapids (e.g. 8570): 8 x DDR5-5600 = 358.4e9
///   Intel Xeon Granite Rapids (6900P): 12 x DDR5-6400 = 614.4e9
///   Intel Xeon E5 v4 (Broadwell, e.g. DGX-1's E5-2698 v4): 4 x DDR4-2400 = 76.8e9 (Intel ARK:
///     "Max Memory Bandwidth 76.8 GB/s")
///   NVIDIA Grace (GH200, GB200, GB300 superchips): 512e9, the datasheet's LPDDR5X figure (NVIDIA
///     GH200 Grace Hopper Superchip datasheet: "up to 480 GB LPDDR5X ... up to 512 GB/s"), one
///     Grace per socket; its GPUs copy to it over NVLink-C2C (the node's PCIe figures)
/// Matched by family name in `cpu`; 0 when the family is not in the table.
double socket_memory_bytes_per_s(std::string_view cpu);

/// DRAM bandwidth per socket a scenario's CPU-Adam uses [bytes/s]: offload.host_memory_bytes_per_s
/// when > 0, else socket_memory_bytes_per_s(node.cpu); 0 when neither is known.
double offload_host_memory_bytes_per_s(const Scenario& scenario, const NodeTemplate& node);

/// Seconds of one CPU-Adam step over `params` parameters (one GPU's shard) when every GPU of the
/// socket steps at once: params x kCpuAdamBytesPerParam / (socket bandwidth x efficiency /
/// GPUs per socket). gpus_per_socket >= 1; socket bandwidth and efficiency > 0.
double cpu_adam_seconds(double params, double socket_bytes_per_s, double efficiency, int gpus_per_socket);

}  // namespace traincast::models
