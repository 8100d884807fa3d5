// nccl part of traincast-bench: NCCL collectives over every selected GPU in one process
// (ncclCommInitAll, one communicator per GPU, calls grouped), with nccl-tests' conventions
// (NVIDIA/nccl-tests, doc/PERFORMANCE.md): size = bytes of the per-rank buffer nccl-tests prints,
// algbw = size / time, busbw = algbw x factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter,
// alltoall (n-1)/n; broadcast, sendrecv 1), time = mean over a batch of back-to-back iterations
// (host clock, as nccl-tests), here the median over several batches. dtype float, op sum.

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/bench/cuda_raii.h"
#include "calibrate/bench/parts.h"

#if TRAINCAST_BENCH_HAVE_NCCL
#include <nccl.h>
#endif

namespace traincast::bench {

#if TRAINCAST_BENCH_HAVE_NCCL

std::string nccl_version_text() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "";
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before).
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

namespace {

void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r == ncclSuccess) return;
  const char* last = ncclGetLastError(nullptr);
  throw BenchError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + ncclGetErrorString(r) +
                   (last && *last ? std::string(" (") + last + ")" : std::string()));
}

#define TC_NCCL(call) check_nccl((call), #call, __FILE__, __LINE__)

enum class Op { all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv };

struct OpInfo {
  Op op;
  const char* name;  // traincast nccl-tests --op names
  bool split;        // the per-rank count is size / n
  bool has_in_place;
};

const OpInfo kOps[] = {
    {Op::all_reduce, "all_reduce", false, true},        {Op::all_gather, "all_gather", true, true},
    {Op::reduce_scatter, "reduce_scatter", true, true}, {Op::alltoall, "alltoall", true, false},
    {Op::broadcast, "broadcast", false, true},          {Op::sendrecv, "sendrecv", false, false},
};

double busbw_factor(Op op, int n) {
  switch (op) {
    case Op::all_reduce:
      return 2.0 * (n - 1) / n;
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::alltoall:
      return static_cast<double>(n - 1) / n;
    case Op::broadcast:
    case Op::sendrecv:
      return 1.0;
  }
  return 1.0;
}

struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  std::unique_ptr<Stream> stream;  // created on `device`
  DeviceBuffer send, recv;
};

char* at(const DeviceBuffer& b, size_t offset_bytes) { return static_cast<char*>(b.get()) + offset_bytes; }

/// Enqueues one `op` of `count` floats per rank (per peer for alltoall, per rank share for the split
/// ops) on rank i. Must be called inside ncclGroupStart/End.
void enqueue(Op op, std::vector<Rank>& ranks, size_t i, size_t count, bool in_place) {
  Rank& r = ranks[i];
  const int n = static_cast<int>(ranks.size());
  const int rank = static_cast<int>(i);
  const cudaStream_t s = r.stream->get();
  const size_t bytes = count * sizeof(float);
  switch (op) {
    case Op::all_reduce:
      TC_NCCL(
          ncclAllReduce(in_place ? r.recv.get() : r.send.get(), r.recv.get(), count, ncclFloat, ncclSum, r.comm, s));
      break;
    case Op::all_gather:  // count = per-rank send count
      TC_NCCL(
          ncclAllGather(in_place ? at(r.recv, i * bytes) : r.send.get(), r.recv.get(), count, ncclFloat, r.comm, s));
      break;
    case Op::reduce_scatter:  // count = per-rank receive count
      if (in_place) {
        TC_NCCL(ncclReduceScatter(r.recv.get(), at(r.recv, i * bytes), count, ncclFloat, ncclSum, r.comm, s));
      } else {
        TC_NCCL(ncclReduceScatter(r.send.get(), r.recv.get(), count, ncclFloat, ncclSum, r.comm, s));
      }
      break;
    case Op::alltoall:  // count = per-peer count; send/recv pairs as nccl-tests' alltoall does
      for (int p = 0; p < n; ++p) {
        TC_NCCL(ncclSend(at(r.send, static_cast<size_t>(p) * bytes), count, ncclFloat, p, r.comm, s));
        TC_NCCL(ncclRecv(at(r.recv, static_cast<size_t>(p) * bytes), count, ncclFloat, p, r.comm, s));
      }
      break;
    case Op::broadcast:
      TC_NCCL(ncclBroadcast(in_place ? r.recv.get() : r.send.get(), r.recv.get(), count, ncclFloat, 0, r.comm, s));
      break;
    case Op::sendrecv:  // ring neighbours, as nccl-tests' sendrecv
      TC_NCCL(ncclSend(r.send.get(), count, ncclFloat, (rank + 1) % n, r.comm, s));
      TC_NCCL(ncclRecv(r.recv.get(), count, ncclFloat, (rank + n - 1) % n, r.comm, s));
      break;
  }
}

/// Runs `iters` iterations of one collective on every rank and waits; returns host seconds.
double run_batch(Op op, std::vector<Rank>& ranks, size_t count, bool in_place, int iters) {
  const auto t0 = Clock::now();
  for (int it = 0; it < iters; ++it) {
    TC_NCCL(ncclGroupStart());
    for (size_t i = 0; i < ranks.size(); ++i) enqueue(op, ranks, i, count, in_place);
    TC_NCCL(ncclGroupEnd());
  }
  for (Rank& r : ranks) TC_CUDA(cudaStreamSynchronize(r.stream->get()));
  return seconds_between(t0, Clock::now());
}

/// Timed result of one (op, size, placement): mean per iteration, median over batches [s].
struct Timing {
  double time_s = 0;
  int batches = 0;
};

/// nullopt (nothing run) when `expected_single_s` (the previous size's time, doubled) or the
/// measured warm-up says the deadline cannot afford the point.
std::optional<Timing> time_collective(Op op, std::vector<Rank>& ranks, size_t count, bool in_place,
                                      double expected_single_s, const Deadline& deadline) {
  if (!deadline.affords(3 * expected_single_s)) return std::nullopt;
  run_batch(op, ranks, count, in_place, 1);  // warm-up: connection setup for this size's algorithm
  double single = run_batch(op, ranks, count, in_place, 1);
  if (single < 1e-3) {
    run_batch(op, ranks, count, in_place, 4);  // nccl-tests warms up with 5 iterations by default
    single = run_batch(op, ranks, count, in_place, 1);
  }
  const int iters = static_cast<int>(std::fmin(50, std::fmax(1, std::ceil(10e-3 / single))));
  const int batches = single * iters > 0.05 ? 3 : 5;
  if (!deadline.affords(batches * iters * single)) return std::nullopt;
  std::vector<double> per_iter;
  for (int b = 0; b < batches; ++b) per_iter.push_back(run_batch(op, ranks, count, in_place, iters) / iters);
  return Timing{median(per_iter), batches};
}

/// One all_reduce of rank-valued data (rank i sends i + 1 everywhere) must give n(n+1)/2.
void check_all_reduce(std::vector<Rank>& ranks) {
  const size_t count = 1 << 18;  // 1 MiB of floats
  for (size_t i = 0; i < ranks.size(); ++i) {
    DeviceScope scope(ranks[i].device);
    TC_CUDA(
        fill_value(static_cast<float*>(ranks[i].send.get()), count, static_cast<float>(i + 1), ranks[i].stream->get()));
  }
  run_batch(Op::all_reduce, ranks, count, false, 1);
  const float n = static_cast<float>(ranks.size());
  const float expected = n * (n + 1) / 2;
  for (size_t i = 0; i < ranks.size(); ++i) {
    float got[2] = {0, 0};
    TC_CUDA(cudaMemcpy(&got[0], ranks[i].recv.get(), sizeof(float), cudaMemcpyDeviceToHost));
    TC_CUDA(cudaMemcpy(&got[1], at(ranks[i].recv, (count - 1) * sizeof(float)), sizeof(float), cudaMemcpyDeviceToHost));
    if (got[0] != expected || got[1] != expected) {
      throw BenchError("NCCL all_reduce check failed on GPU " + std::to_string(ranks[i].device) + ": got " +
                       std::to_string(got[0]) + " and " + std::to_string(got[1]) + ", expected " +
                       std::to_string(expected));
    }
  }
}

}  // namespace

void run_nccl_part(BenchContext& ctx, const Deadline& deadline) {
  const int n = static_cast<int>(ctx.gpus.size());
  if (n < 2) {
    progress("nccl: one GPU selected, no collectives (they need 2 or more)");
    ctx.notes.push_back("nccl: skipped, one GPU");
    return;
  }
  std::vector<ncclComm_t> comms(static_cast<size_t>(n));
  TC_NCCL(ncclCommInitAll(comms.data(), n, ctx.gpus.data()));
  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<size_t>(i)].comm = comms[static_cast<size_t>(i)];
  struct CommGuard {
    std::vector<Rank>& ranks;
    ~CommGuard() {
      for (Rank& r : ranks) {
        if (r.comm) ncclCommDestroy(r.comm);
      }
    }
  } guard{ranks};
  // Largest size: a power of two with send + recv within 70% of the least free memory, <= 8 GiB.
  size_t min_free = SIZE_MAX;
  for (int i = 0; i < n; ++i) {
    ranks[static_cast<size_t>(i)].device = ctx.gpus[static_cast<size_t>(i)];
    min_free = std::min(min_free, free_device_bytes(ctx.gpus[static_cast<size_t>(i)]));
  }
  size_t max_size = size_t{8} << 30;
  while (max_size > 1024 && 2 * max_size > min_free / 10 * 7) max_size /= 2;
  if (max_size < (size_t{1} << 20)) throw BenchError("nccl: less than 3 MiB of free memory on some GPU");
  for (Rank& r : ranks) {
    DeviceScope scope(r.device);
    r.stream = std::make_unique<Stream>();
    r.send = DeviceBuffer(max_size);
    r.recv = DeviceBuffer(max_size);
    TC_CUDA(cudaMemsetAsync(r.send.get(), 0, max_size, r.stream->get()));
    TC_CUDA(cudaMemsetAsync(r.recv.get(), 0, max_size, r.stream->get()));
  }
  check_all_reduce(ranks);
  progress("nccl: %d GPUs, NCCL %s, sizes 8 B .. %.0f MiB, all_reduce check passed", n, nccl_version_text().c_str(),
           static_cast<double>(max_size) / 1048576.0);
  const char* algo = std::getenv("NCCL_ALGO");
  const char* proto = std::getenv("NCCL_PROTO");
  std::vector<double> last_time_s(std::size(kOps), 0.0);  // per op, previous size's time
  for (size_t size = 8; size <= max_size; size *= 2) {
    for (const OpInfo& info : kOps) {
      if (deadline.passed()) {
        const std::string note = std::string("nccl: stopped before ") + info.name + " at " + std::to_string(size) +
                                 " B (" + (g_stop_signal ? "signal" : "budget") + ")";
        progress("%s", note.c_str());
        ctx.notes.push_back(note);
        return;
      }
      const size_t per = info.split ? size / sizeof(float) / static_cast<size_t>(n) : size / sizeof(float);
      if (per == 0) continue;  // fewer floats than ranks
      const size_t effective = info.split ? per * static_cast<size_t>(n) * sizeof(float) : per * sizeof(float);
      double& last = last_time_s[static_cast<size_t>(info.op)];
      const auto out = time_collective(info.op, ranks, per, false, 2 * last, deadline);
      if (!out) {
        const std::string note =
            std::string("nccl: stopped before ") + info.name + " at " + std::to_string(size) + " B (budget)";
        progress("%s", note.c_str());
        ctx.notes.push_back(note);
        return;
      }
      std::optional<Timing> in;
      last = out->time_s;
      if (info.has_in_place) in = time_collective(info.op, ranks, per, true, last, deadline);
      CollectiveMeasurement c;
      c.op = info.name;
      c.num_ranks = n;
      c.size_bytes = static_cast<double>(effective);
      c.dtype = "float";
      c.time_us = out->time_s * 1e6;
      c.algbw_gb_per_s = static_cast<double>(effective) / out->time_s / 1e9;
      c.busbw_gb_per_s = *c.algbw_gb_per_s * busbw_factor(info.op, n);
      if (in) c.in_place_time_us = in->time_s * 1e6;
      c.repeats = out->batches;
      if (algo && *algo) c.algorithm = algo;
      if (proto && *proto) c.protocol = proto;
      ctx.results->collective.push_back(c);
      progress("nccl %-14s %12zu B: %10.2f us  algbw %7.2f  busbw %7.2f GB/s", info.name, effective, *c.time_us,
               *c.algbw_gb_per_s, *c.busbw_gb_per_s);
    }
  }
}

#else  // built without NCCL

std::string nccl_version_text() { return ""; }

void run_nccl_part(BenchContext& ctx, const Deadline&) {
  progress("nccl: traincast-bench was built without NCCL (nccl.h / libnccl not found at configure time)");
  ctx.notes.push_back("nccl: not measured, built without NCCL");
}

#endif

}  // namespace traincast::bench
