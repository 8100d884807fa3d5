#!/bin/bash
# One prepared device run: traincast-bench --budget-s 300 on the lent H200, measurement file to $OUT.
set -u
cd "$(dirname "$0")/.."
exec > >(tee "$OUT/run.log") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu --format=csv
CUB=$(find /usr/local /opt /usr/lib -name 'libcublasLt.so.13' 2>/dev/null | head -1)
NCL=$(find /usr/local /opt /usr/lib -name 'libnccl.so.2' 2>/dev/null | head -1)
echo "cublasLt: $CUB"; echo "nccl: $NCL"
export LD_LIBRARY_PATH="$(dirname "$CUB"):$(dirname "$NCL"):${LD_LIBRARY_PATH:-}"
B=.devrun/traincast-bench
if [ -n "${FORCE_BUILD:-}" ] || ! $B --version; then
  echo "carried binary does not run here; building with this machine's nvcc"
  CUDA=$(dirname "$(dirname "$(command -v nvcc)")")
  NINC=$(dirname "$(find /usr/local /opt /usr/include -name nccl.h 2>/dev/null | head -1)")
  T=/tmp/tb; mkdir -p $T; pids=()
  for f in bench_main bench_util burn_part gemm gemm_part memory_parts nccl_part nvml bench_options; do
    g++ -std=c++20 -O2 -I. -I"$CUDA/include" -I"$NINC" -DTRAINCAST_VERSION=\"0.1.0\" -DTRAINCAST_BENCH_HAVE_NCCL=1 \
      -c calibrate/bench/$f.cc -o $T/$f.o &
    pids+=($!)
  done
  nvcc -std=c++17 -O2 -gencode arch=compute_90,code=sm_90 -I. -c calibrate/bench/kernels.cu -o $T/kernels.o
  for p in "${pids[@]}"; do wait "$p" || exit 3; done
  g++ -o $T/traincast-bench $T/*.o -L"$CUDA/lib64" -L"$(dirname "$CUB")" -L"$(dirname "$NCL")" \
    -lcudart_static -l:libcublasLt.so.13 -l:libnccl.so.2 -ldl -lpthread -lrt || exit 3
  B=$T/traincast-bench; $B --version || exit 3
fi
timeout 420 $B --budget-s "${BUDGET:-300}" \
  --describe "NVIDIA H200 SXM, one GPU in a Firecracker microVM (device lease, 2026-12-04); air/liquid cooling not stated" \
  --out "$OUT/h200_sxm_1gpu_20261204.textproto" 2> >(tee "$OUT/bench_stderr.log" >&2)
echo "traincast-bench exit status $?"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
date -u
