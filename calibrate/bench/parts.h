#pragma once
// The measurement parts of traincast-bench. Each appends to ctx.results, reports progress on
// stderr, stops cleanly (keeping what it measured) when `deadline` passes or a stop signal
// arrives, and throws BenchError when a CUDA/cuBLAS/NCCL call fails.

#include "calibrate/bench/bench_util.h"
#include "calibrate/bench/nvml.h"

namespace traincast::bench {

/// Empty-kernel launch + synchronize latency (median of host-timed runs) and the per-kernel time of
/// back-to-back empty kernels (CUDA events around a batch), on ctx.gpus[0].
void run_launch_part(BenchContext& ctx, const Deadline& deadline);

/// HBM copy (cudaMemcpyAsync device to device), read and write kernels at sizes 4 KiB .. 8 GiB
/// (doubling, capped by free memory), on ctx.gpus[0]. Small sizes measure the L2 cache, not HBM.
void run_hbm_part(BenchContext& ctx, const Deadline& deadline);

/// H2D and D2H over pinned host memory, 4 KiB .. 1 GiB, on ctx.gpus[0]; D2D peer copies
/// (cudaMemcpyPeerAsync) for every ordered GPU pair at 256 MiB and a size sweep for the first pair.
void run_pcie_part(BenchContext& ctx, const Deadline& deadline);

/// cuBLASLt GEMM grid per dtype on ctx.gpus[0] (see README).
void run_gemm_part(BenchContext& ctx, const Deadline& deadline);

/// NCCL collectives over every GPU in ctx.gpus (ncclCommInitAll), nccl-tests conventions.
void run_nccl_part(BenchContext& ctx, const Deadline& deadline);

/// Idle baseline, sustained GEMM on every GPU in ctx.gpus, cool-down; NVML samples every 250 ms.
void run_burn_part(BenchContext& ctx, const Deadline& deadline, const Nvml& nvml);

}  // namespace traincast::bench
