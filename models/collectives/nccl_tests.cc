// nccl-tests, simulated. See nccl_tests.h.

#include "models/collectives/nccl_tests.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/hardware/cluster.h"
#include "models/spec/run_control.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

constexpr std::array<std::string_view, 7> kOpNames = {"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                                      "broadcast",  "reduce",     "sendrecv"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Counts collectives finishing; records the time of the last one.
struct DoneCounter : CollectiveListener {
  void on_collective_done(std::uint64_t /*tag*/) override { ++done; }
  int done = 0;
};

}  // namespace

std::string_view nccl_tests_op_name(NcclTestsOp op) { return kOpNames[static_cast<int>(op)]; }

NcclTestsOp parse_nccl_tests_op(std::string_view name) {
  std::string n = lower(name);
  if (n.size() > 5 && n.ends_with("_perf")) n.resize(n.size() - 5);
  for (std::size_t i = 0; i < kOpNames.size(); ++i) {
    if (n == kOpNames[i]) return static_cast<NcclTestsOp>(i);
  }
  if (n == "allreduce") return NcclTestsOp::all_reduce;
  if (n == "allgather") return NcclTestsOp::all_gather;
  if (n == "reducescatter") return NcclTestsOp::reduce_scatter;
  if (n == "all_to_all") return NcclTestsOp::alltoall;
  if (n == "send_recv") return NcclTestsOp::sendrecv;
  std::string known;
  for (auto k : kOpNames) known += (known.empty() ? "" : ", ") + std::string(k);
  throw std::invalid_argument("unknown nccl-tests operation '" + std::string(name) + "' (expected one of: " + known +
                              ")");
}

CollectiveOp collective_op_of(NcclTestsOp op) {
  switch (op) {
    case NcclTestsOp::all_reduce:
      return CollectiveOp::all_reduce;
    case NcclTestsOp::all_gather:
      return CollectiveOp::all_gather;
    case NcclTestsOp::reduce_scatter:
      return CollectiveOp::reduce_scatter;
    case NcclTestsOp::alltoall:
      return CollectiveOp::all_to_all;
    case NcclTestsOp::broadcast:
      return CollectiveOp::broadcast;
    case NcclTestsOp::reduce:
      return CollectiveOp::reduce;
    case NcclTestsOp::sendrecv:
      return CollectiveOp::send_recv;
  }
  return CollectiveOp::all_reduce;
}

std::string_view nccl_tests_redop(NcclTestsOp op) {
  // sendrecv reduces nothing but prints its run's default op, sum (raw logs r02 and r03 in
  // ../shared/data/nccl-tests/raw, n09): the column is as nccl-tests prints it, not as it reads.
  return (op == NcclTestsOp::all_gather || op == NcclTestsOp::alltoall || op == NcclTestsOp::broadcast) ? "none"
                                                                                                        : "sum";
}

int nccl_tests_root(NcclTestsOp op) { return (op == NcclTestsOp::broadcast || op == NcclTestsOp::reduce) ? 0 : -1; }

double parse_nccl_tests_size(std::string_view text) {
  const auto bad = [&]() {
    return std::invalid_argument("bad size '" + std::string(text) +
                                 "' (expected a number with an optional K, M or G suffix, e.g. 8, 64K, 8G)");
  };
  std::string_view t = text;
  double unit = 1;
  if (!t.empty()) {
    switch (t.back()) {
      case 'K':
      case 'k':
        unit = 1024.0;
        break;
      case 'M':
      case 'm':
        unit = 1024.0 * 1024.0;
        break;
      case 'G':
      case 'g':
        unit = 1024.0 * 1024.0 * 1024.0;
        break;
      default:
        break;
    }
    if (unit != 1) t.remove_suffix(1);
  }
  double value = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value) || value < 0) throw bad();
  // nccl-tests' parsesize (src/common.cu) returns size * units as a size_t, so "0.5" runs as 0 bytes
  // without a word: a size that is not whole is refused here instead.
  if (value * unit != std::floor(value * unit)) {
    throw std::invalid_argument(
        "size '" + std::string(text) +
        "' is not a whole number of bytes (expected a whole size, e.g. 8, 64K, or 1.5K = 1536)");
  }
  return value * unit;
}

std::vector<double> nccl_tests_sizes(double min_bytes, double max_bytes, double factor, double step_bytes) {
  if (!(min_bytes >= 0) || !(max_bytes >= min_bytes)) {
    throw std::invalid_argument("sizes: need 0 <= minbytes <= maxbytes (got " + std::to_string(min_bytes) + " and " +
                                std::to_string(max_bytes) + ")");
  }
  if (!(factor > 1) && !(step_bytes > 0)) {
    throw std::invalid_argument("sizes: need a step factor > 1 or a step size > 0");
  }
  std::vector<double> out;
  // nccl-tests: for (size = min; size <= max; size = factor > 1 ? size * factor : size + step).
  // NOLINTNEXTLINE(clang-analyzer-security.FloatLoopCounter): nccl-tests' own double loop, same sizes
  for (double size = min_bytes; size <= max_bytes; size = factor > 1 ? size * factor : size + step_bytes) {
    out.push_back(size);
    if (size == 0 && factor > 1) break;  // 0 * factor would never end (nccl-tests loops forever)
    if (out.size() > 100000)
      throw std::invalid_argument(
          "sizes: more than 100000 sizes from -b to -e (expected a larger -f factor or -i step, or a narrower range)");
  }
  return out;
}

int nccl_tests_type_bytes(std::string_view type) {
  const std::string t = lower(type);
  // f8e4m3, f8e5m2: the names nccl-tests prints in its type column (src/common.cu test_typenames).
  if (t == "int8" || t == "uint8" || t == "char" || t == "fp8_e4m3" || t == "fp8_e5m2" || t == "f8e4m3" ||
      t == "f8e5m2")
    return 1;
  if (t == "half" || t == "fp16" || t == "bfloat16" || t == "bf16") return 2;
  if (t == "int32" || t == "uint32" || t == "int" || t == "float" || t == "fp32") return 4;
  if (t == "int64" || t == "uint64" || t == "double" || t == "fp64") return 8;
  throw std::invalid_argument("unknown data type '" + std::string(type) +
                              "' (expected one of: int8, uint8, int32, uint32, int64, uint64, half, float, double, "
                              "bfloat16, f8e4m3, f8e5m2)");
}

bool nccl_tests_type_is_fp8(std::string_view type) {
  const std::string t = lower(type);
  return t == "f8e4m3" || t == "f8e5m2" || t == "fp8_e4m3" || t == "fp8_e5m2";
}

NcclTestsSize nccl_tests_size(NcclTestsOp op, double requested_bytes, int nranks, int word_bytes) {
  const long long elements = static_cast<long long>(requested_bytes / word_bytes);
  NcclTestsSize s;
  switch (op) {
    case NcclTestsOp::all_gather:
    case NcclTestsOp::reduce_scatter:
    case NcclTestsOp::alltoall:
      // src/all_gather.cu etc.: count = size / wordSize / nranks (per rank); size = count * nranks * wordSize.
      s.count = elements / nranks;
      s.bytes = static_cast<double>(s.count) * nranks * word_bytes;
      break;
    default:
      s.count = elements;
      s.bytes = static_cast<double>(elements) * word_bytes;
      break;
  }
  return s;
}

std::vector<int> parse_gpu_list(std::string_view text) {
  const auto bad = [&]() {
    return std::invalid_argument("bad GPU list '" + std::string(text) + "' (expected ids and ranges such as 0,1,8-15)");
  };
  std::vector<int> out;
  std::size_t pos = 0;
  if (text.empty()) throw bad();
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    std::string_view item = text.substr(pos, comma - pos);
    const std::size_t dash = item.find('-');
    auto number = [&](std::string_view v) {
      int x = 0;
      const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || x < 0) throw bad();
      // "01" names GPU 1 by another spelling: refused, as a selector's and an option's numbers are.
      if (v.size() > 1 && v.front() == '0')
        throw std::invalid_argument("bad GPU list '" + std::string(text) + "': " + std::string(v) +
                                    " has a leading zero (expected ids and ranges in decimal without leading zeros, "
                                    "e.g. " +
                                    std::to_string(x) + ")");
      return x;
    };
    if (dash == std::string_view::npos) {
      out.push_back(number(item));
    } else {
      const int a = number(item.substr(0, dash)), b = number(item.substr(dash + 1));
      if (b < a || b - a > 1000000) throw bad();
      for (int g = a; g <= b; ++g) out.push_back(g);
    }
    pos = comma + 1;
  }
  return out;
}

std::vector<NcclTestsResult> simulate_nccl_tests(const ClusterSpec& cluster_spec, const NcclTestsOptions& options,
                                                 const std::vector<double>& requested_bytes) {
  if (options.word_bytes < 1) throw std::invalid_argument("word_bytes must be >= 1");
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster cluster(cluster_spec, net);
  CollectiveEngine engine(sim, net, cluster);

  std::vector<int> ranks = options.gpus;
  if (ranks.empty()) {
    ranks.resize(static_cast<std::size_t>(cluster.num_gpus()));
    for (int i = 0; i < cluster.num_gpus(); ++i) ranks[i] = i;
  }
  std::vector<char> seen(static_cast<std::size_t>(cluster.num_gpus()), 0);
  for (int g : ranks) {
    if (g < 0 || g >= cluster.num_gpus()) {
      throw std::invalid_argument("gpus: " + std::to_string(g) + " outside [0, " + std::to_string(cluster.num_gpus()) +
                                  ")");
    }
    if (seen[g]++) throw std::invalid_argument("gpus: " + std::to_string(g) + " listed twice (expected each GPU once)");
  }
  const int n = static_cast<int>(ranks.size());
  if (options.op == NcclTestsOp::sendrecv && n < 2) {
    throw std::invalid_argument("gpus: sendrecv needs at least 2 GPUs (got " + std::to_string(n) + ")");
  }
  if (n < 2) {
    // On one GPU nccl-tests times NCCL's device-local copy kernel (launch latency plus an HBM copy),
    // not a collective over links; that kernel is not modelled, so one rank is refused, not shown as 0 us.
    throw std::invalid_argument("gpus: " + std::string(nccl_tests_op_name(options.op)) +
                                " on 1 GPU is not simulated: nccl-tests times a device-local copy kernel there, "
                                "which traincast does not model (expected at least 2 GPUs, e.g. --gpus 0,1)");
  }
  const CollectiveOp op = collective_op_of(options.op);
  const double factor = CollectiveEngine::busbw_factor(op, n);
  // NVIDIA/nccl src/enqueue.cc taskAppend (stored commit 01e6dd91): "if (comm->minCompCap < 90 &&
  // info->coll != ncclFuncAllGather && ... Broadcast, AlltoAll, Scatter, Gather) { WARN("FP8
  // reduction support begins with sm90 capable devices."); return ncclInvalidArgument; }" for
  // ncclFloat8e4m3 / ncclFloat8e5m2, after the count-0 return below. AMD GPUs (RCCL) not checked.
  const bool reduces = options.op == NcclTestsOp::all_reduce || options.op == NcclTestsOp::reduce_scatter ||
                       options.op == NcclTestsOp::reduce;
  int oldest = -1;  // the rank of the lowest NVIDIA compute capability
  for (int i = 0; i < n; ++i) {
    const GpuSpec& gpu = cluster.gpu_spec(ranks[i]);
    if (gpu.vendor == GpuVendor::nvidia &&
        (oldest < 0 || gpu.compute_capability < cluster.gpu_spec(ranks[oldest]).compute_capability))
      oldest = i;
  }
  const GpuSpec* below_sm90 = nullptr;
  if (options.fp8 && reduces && oldest >= 0 && cluster.gpu_spec(ranks[oldest]).compute_capability < 90)
    below_sm90 = &cluster.gpu_spec(ranks[oldest]);

  std::vector<NcclTestsResult> out;
  out.reserve(requested_bytes.size());
  DoneCounter counter;
  for (double requested : requested_bytes) {
    const NcclTestsSize size = nccl_tests_size(options.op, requested, n, options.word_bytes);
    NcclTestsResult r;
    r.bytes = size.bytes;
    r.count = size.count;
    // NVIDIA/nccl src/enqueue.cc taskAppend (stored commit 01e6dd91; the same in the 2.2x
    // sources): "// Empty collectives can be discarded. if (info->count == 0) return ncclSuccess;",
    // before any algorithm choice or kernel launch, so nccl-tests times nothing (0.06 us at 0 B in
    // ../shared/data/nccl-tests/n08, B200 all_gather). Send and receive go through
    // p2pTaskAppend, which has no such return: sendrecv and alltoall (grouped ncclSend/ncclRecv in
    // nccl-tests) still launch (n11e alltoall: 12.97 us at 0 B).
    if (size.count == 0 && options.op != NcclTestsOp::sendrecv && options.op != NcclTestsOp::alltoall) {
      r.discarded = true;
      r.choice.channels = 0;
      out.push_back(r);
      continue;
    }
    if (below_sm90 != nullptr) {
      throw std::invalid_argument(
          "fp8 " + std::string(nccl_tests_op_name(options.op)) + ": NCCL reduces fp8 only on sm_90 or newer, and GPU " +
          std::to_string(ranks[oldest]) + " is " + below_sm90->name + ", sm_" +
          std::to_string(below_sm90->compute_capability) +
          " (NCCL returns ncclInvalidArgument, \"FP8 reduction support begins with sm90 capable devices\"; expected "
          "-d half or bfloat16, an H100 or newer, or all_gather, broadcast, alltoall or sendrecv, which move fp8 "
          "without reducing it)");
    }
    const sim::Time t0 = sim.now();
    counter.done = 0;
    int expected = 0;
    if (options.op == NcclTestsOp::sendrecv) {
      // sendrecv_perf: rank r sends to r+1 and receives from r-1, all at once.
      for (int i = 0; i < n; ++i) {
        CollectiveCall call;
        call.op = op;
        call.ranks = {ranks[i], ranks[(i + 1) % n]};
        call.bytes = size.bytes;
        if (i == 0) {
          r.choice = engine.choose(call);
          r.choice.channels = engine.kernel_ctas(call);
        }
        engine.start(call, &counter, static_cast<std::uint64_t>(i));
        ++expected;
      }
    } else {
      CollectiveCall call;
      call.op = op;
      call.ranks = ranks;
      call.bytes = size.bytes;
      r.choice = engine.choose(call);
      r.choice.channels = engine.kernel_ctas(call);
      engine.start(call, &counter, 0);
      expected = 1;
    }
    while (sim.step()) throw_if_interrupted("nccl-tests: simulation");  // Ctrl-C (models/spec/run_control.h)
    if (counter.done != expected) throw std::logic_error("simulate_nccl_tests: a collective did not complete");
    r.time_s = (sim.now() - t0).seconds();
    r.algbw_gbps = r.time_s > 0 ? r.bytes / r.time_s / 1e9 : 0.0;
    r.busbw_gbps = r.algbw_gbps * factor;
    out.push_back(r);
  }
  return out;
}

double geometric_mean_error(std::span<const double> ratios) {
  if (ratios.empty()) return 0.0;
  double sum = 0;
  for (double r : ratios) sum += std::fabs(std::log(r));
  return std::exp(sum / ratios.size()) - 1.0;
}

NcclTestsComparison compare_nccl_tests(const ClusterSpec& cluster, const NcclTestsOptions& options,
                                       const std::vector<NcclTestsMeasurement>& measured) {
  NcclTestsComparison out;
  std::vector<double> sizes;
  std::vector<const NcclTestsMeasurement*> kept;
  for (const NcclTestsMeasurement& m : measured) {
    if (m.bytes > 0 && m.time_us > 0) {
      sizes.push_back(m.bytes);
      kept.push_back(&m);
    }
  }
  const std::vector<NcclTestsResult> predicted = simulate_nccl_tests(cluster, options, sizes);
  int nranks = static_cast<int>(options.gpus.size());
  if (nranks == 0) {
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    nranks = Cluster(cluster, net).num_gpus();
  }
  const double factor = CollectiveEngine::busbw_factor(collective_op_of(options.op), nranks);
  std::vector<double> large, small;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    NcclTestsComparison::Row row;
    row.bytes = kept[i]->bytes;
    row.line = kept[i]->line;
    row.measured_busbw_gbps = kept[i]->bytes / (kept[i]->time_us * 1e-6) / 1e9 * factor;
    row.predicted = predicted[i];
    // Busbw from the simulated time of the measured byte count (nccl-tests' rounding is idempotent).
    row.predicted_busbw_gbps = predicted[i].time_s > 0 ? row.bytes / predicted[i].time_s / 1e9 * factor : 0.0;
    row.error = row.measured_busbw_gbps > 0 ? row.predicted_busbw_gbps / row.measured_busbw_gbps - 1.0 : 0.0;
    if (factor > 0 && row.predicted_busbw_gbps > 0 && row.measured_busbw_gbps > 0) {
      const double ratio = row.predicted_busbw_gbps / row.measured_busbw_gbps;
      if (row.bytes >= NcclTestsComparison::kLargeBytes) large.push_back(ratio);
      if (row.bytes <= NcclTestsComparison::kSmallBytes) small.push_back(ratio);
    }
    out.rows.push_back(row);
  }
  out.large_rows = static_cast<int>(large.size());
  out.small_rows = static_cast<int>(small.size());
  out.large_error = geometric_mean_error(large);
  out.small_error = geometric_mean_error(small);
  return out;
}

}  // namespace traincast::models
