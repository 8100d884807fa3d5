#include "models/reliability/reliability_model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "models/reliability/worker_threads.h"
#include "models/spec/run_control.h"

namespace traincast::models {
namespace {

/// Interruptions per draw beyond which a job is reported as never finishing (keeps a Monte-Carlo
/// run of the default 200 draws to about a second).
constexpr double kMaxInterruptions = 1e5;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014): decorrelates the per-draw seeds derived from (seed, draw index).
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// For windows of at most window_s: uniforms u >= u_beyond give -log1p(-u) / rate >= window_s
/// for sure. u_beyond is -expm1(-rate * window_s) for a window 1e-6 longer, so that the
/// logarithm's and the exponential's rounding (a few ulp) cannot let a variate the exact code
/// finds inside the window past the screen. The caller gives the longest window a draw can ask
/// about (simulate_failures: interval_s plus the rounding of the work clock; checkpoint_stall_s).
struct Screen {
  double u_beyond = 2.0;  ///< > 1: never screens (rate 0 or a window that always sees failures)
  Screen(double rate, double window_s) {
    if (rate > 0 && window_s >= 0 && std::isfinite(window_s)) u_beyond = -std::expm1(-rate * window_s * (1 + 1e-6));
  }
};

/// Uniform and exponential variates from std::mt19937_64 bits only (its output sequence is fixed
/// by the C++ standard; the standard library's distributions are not), so draws are the same on
/// every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double exponential(double rate) { return rate > 0 ? -std::log1p(-uniform()) / rate : kInf; }
  /// exponential(rate) when it is below the window that `screen` was made for, else +inf: the
  /// same uniform is drawn (the sequence is unchanged), but the logarithm is skipped when the
  /// uniform alone shows the variate lies beyond the window.
  double exponential_within(double rate, const Screen& screen);

 private:
  std::mt19937_64 gen_;
};

double Rng::exponential_within(double rate, const Screen& screen) {
  const double u = uniform();
  if (u >= screen.u_beyond) return kInf;
  return rate > 0 ? -std::log1p(-u) / rate : kInf;
}

struct Draw {
  double interruptions = 0, wall = 0, done = 0, lost = 0, restart = 0, checkpoint = 0;
  std::vector<double> per_cause;
};

Draw run_draw(const FailureSimInputs& in, double total_rate, std::uint64_t seed, const Screen& work_screen,
              const Screen& stall_screen) {
  Rng rng(seed);
  Draw d;
  d.per_cause.assign(in.causes.size(), 0.0);
  const double work_end = in.work_s > 0 ? in.work_s : kInf;
  const double limit = in.horizon_s > 0 ? in.horizon_s : kInf;
  double t = 0, done = 0, durable = 0, last_ckpt = 0;
  double pending_work = -1, pending_at = kInf;  // asynchronous checkpoint not yet restorable
  auto pick_cause = [&] {
    double u = rng.uniform() * total_rate;
    for (std::size_t c = 0; c < in.rate_per_s.size(); ++c) {
      if (u < in.rate_per_s[c]) return c;
      u -= in.rate_per_s[c];
    }
    return in.rate_per_s.size() - 1;
  };
  // A failure at time `at`: roll back to the last restorable checkpoint, then restart (a failure
  // during the restart starts it again). Returns false when the horizon ends the draw.
  auto fail = [&](double at) {
    if (pending_work >= 0 && pending_at <= at) durable = pending_work;
    pending_work = -1, pending_at = kInf;
    t = at;
    d.lost += done - durable;
    done = durable, last_ckpt = durable;
    d.interruptions += 1;
    d.per_cause[pick_cause()] += 1;
    if (d.interruptions > kMaxInterruptions)
      throw std::overflow_error(
          "reliability: more than 100,000 interruptions in one Monte-Carlo draw, so the job would never finish: "
          "lower the failure rates, reliability.restart_overhead_s, reliability.horizon_s, or the stalls that "
          "lengthen each step");
    for (;;) {
      const double next = t + rng.exponential(total_rate);
      const double end = t + in.restart_s;
      if (limit <= std::min(next, end)) {
        d.restart += limit - t;
        t = limit;
        return false;
      }
      if (next < end) {
        d.restart += next - t;
        t = next;
        d.interruptions += 1;
        d.per_cause[pick_cause()] += 1;
        if (d.interruptions > kMaxInterruptions)
          throw std::overflow_error(
              "reliability: more than 100,000 interruptions in one Monte-Carlo draw, so the job would never finish: "
              "lower the failure rates, reliability.restart_overhead_s, reliability.horizon_s, or the stalls that "
              "lengthen each step");
        continue;
      }
      d.restart += in.restart_s;
      t = end;
      return true;
    }
  };
  for (;;) {
    if (done >= work_end) break;
    // Work until the next checkpoint (or the end of the work).
    const double target = std::min(last_ckpt + in.interval_s, work_end);
    const double seg_end = t + (target - done);
    // A failure beyond the segment (most draws) is never used: screened without its logarithm.
    const double failure = t + rng.exponential_within(total_rate, work_screen);
    if (failure < std::min(seg_end, limit)) {
      done += failure - t;
      if (!fail(failure)) break;
      continue;
    }
    if (limit <= seg_end) {
      done += limit - t;
      t = limit;
      break;
    }
    done = target;
    t = seg_end;
    if (done >= work_end) break;
    // Checkpoint stall.
    const double ckpt_end = t + in.checkpoint_stall_s;
    const double failure2 = t + rng.exponential_within(total_rate, stall_screen);
    if (failure2 < std::min(ckpt_end, limit)) {
      d.checkpoint += failure2 - t;
      if (!fail(failure2)) break;
      continue;
    }
    if (limit <= ckpt_end) {
      d.checkpoint += limit - t;
      t = limit;
      break;
    }
    d.checkpoint += in.checkpoint_stall_s;
    t = ckpt_end;
    last_ckpt = done;
    if (in.durable_lag_s <= 0) {
      durable = done;
    } else {
      if (pending_work >= 0) durable = pending_work;  // the stall waited for the previous write
      pending_work = done, pending_at = t + in.durable_lag_s;
    }
  }
  d.wall = t;
  d.done = std::min(done, work_end);
  return d;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}
/// Nearest-rank percentile p in (0, 100].
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

const std::vector<Table5Row>& llama3_table5() {
  static const std::vector<Table5Row> rows = {
      {"Faulty GPU", "GPU", 148},
      {"GPU HBM3 Memory", "GPU", 72},
      {"Software Bug", "Dependency", 54},
      {"Network Switch/Cable", "Network", 35},
      {"Host Maintenance", "Unplanned Maintenance", 32},
      {"GPU SRAM Memory", "GPU", 19},
      {"GPU System Processor", "GPU", 17},
      {"NIC", "Host", 7},
      {"NCCL Watchdog Timeouts", "Unknown", 7},
      {"Silent Data Corruption", "GPU", 6},
      {"GPU Thermal Interface + Sensor", "GPU", 6},
      {"SSD", "Host", 3},
      {"Power Supply", "Host", 3},
      {"Server Chassis", "Host", 2},
      {"IO Expansion Board", "Host", 2},
      {"Dependency", "Dependency", 2},
      {"CPU", "Host", 2},
      {"System Memory", "Host", 2},
  };
  return rows;
}

std::vector<FailureRate> llama3_failure_rates() {
  std::vector<FailureRate> out;
  for (const Table5Row& row : llama3_table5()) {
    FailureRate f;
    f.cause = row.component;
    if (std::string(row.category) == "GPU") {
      f.per_gpu_hour = row.interruptions / (kLlama3Gpus * kLlama3Hours);
    } else {
      f.per_node_hour = row.interruptions / (kLlama3Nodes * kLlama3Hours);
    }
    out.push_back(std::move(f));
  }
  return out;
}

double job_failure_rate_per_hour(const std::vector<FailureRate>& rates, int gpus, int nodes) {
  double r = 0;
  for (const FailureRate& f : rates) r += f.per_gpu_hour * gpus + f.per_node_hour * nodes;
  return r;
}

double young_interval_s(double checkpoint_s, double mtbf_s) { return std::sqrt(2.0 * checkpoint_s * mtbf_s); }

double daly_interval_s(double checkpoint_s, double mtbf_s) {
  if (!(mtbf_s < kInf)) return kInf;
  if (checkpoint_s >= 2.0 * mtbf_s) return mtbf_s;
  const double x = checkpoint_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * checkpoint_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - checkpoint_s;
}

ReliabilityReport simulate_failures(const FailureSimInputs& in) {
  if (in.work_s <= 0 && in.horizon_s <= 0)
    throw std::invalid_argument("reliability: neither a token budget nor a horizon bounds the run");
  if (!(in.interval_s > 0)) throw std::invalid_argument("reliability: checkpoint interval must be > 0");
  if (in.causes.size() != in.rate_per_s.size() || in.causes.empty())
    throw std::invalid_argument("reliability: one rate per cause expected");
  double total = 0;
  for (double r : in.rate_per_s) total += r;
  const int draws = std::max(1, in.draws);
  std::vector<Draw> results(static_cast<std::size_t>(draws));
  // A work segment is fl(last_ckpt + interval_s) - last_ckpt long: interval_s plus at most an ulp
  // of the work clock, which never passes max(work_s, horizon_s); 4 ulp of that bound it.
  const double clock_bound_s = std::max(in.work_s, in.horizon_s);
  const Screen work_screen(total, in.interval_s + 4 * clock_bound_s * 0x1.0p-52);
  const Screen stall_screen(total, in.checkpoint_stall_s);
  std::atomic<std::uint64_t> finished{0};
  auto one = [&](int i) {
    // Ctrl-C: every draw polls the flag (one relaxed load); progress every 4,096 draws.
    throw_if_interrupted("reliability: Monte-Carlo draws");
    results[static_cast<std::size_t>(i)] =
        run_draw(in, total, splitmix64(in.seed ^ splitmix64(static_cast<std::uint64_t>(i))), work_screen, stall_screen);
    if (progress_wanted()) {
      const std::uint64_t n = finished.fetch_add(1, std::memory_order_relaxed) + 1;
      if (n % 4096 == 0 || n == static_cast<std::uint64_t>(draws))
        report_progress("Monte-Carlo draws", n, static_cast<std::uint64_t>(draws));
    }
  };
  with_worker_threads(in.threads, [&] { for_each_index(in.threads, draws, one); });

  ReliabilityReport r;
  r.modelled = true;
  r.failure_rate_per_hour = total * 3600.0;
  r.job_mtbf_h = total > 0 ? 1.0 / r.failure_rate_per_hour : 0.0;
  r.checkpoint_interval_s = in.interval_s;
  r.checkpoint_stall_s = in.checkpoint_stall_s;
  r.restart_s = in.restart_s;
  r.draws = draws;
  r.seed = in.seed;
  std::vector<double> inter, wall, good, lost, restart, ckpt, done;
  for (const Draw& d : results) {
    inter.push_back(d.interruptions);
    wall.push_back(d.wall);
    good.push_back(d.wall > 0 ? d.done / d.wall : 1.0);
    lost.push_back(d.lost);
    restart.push_back(d.restart);
    ckpt.push_back(d.checkpoint);
    done.push_back(d.done);
  }
  // Work done, not work asked for: a horizon may end a draw before train_tokens are trained.
  r.useful_work_s = mean(done);
  r.work_requested_s = in.work_s;
  r.interruptions_mean = mean(inter);
  r.interruptions_stddev = stddev(inter);
  r.interruptions_p5 = percentile(inter, 5);
  r.interruptions_p95 = percentile(inter, 95);
  r.wall_clock_s_mean = mean(wall);
  r.wall_clock_s_p5 = percentile(wall, 5);
  r.wall_clock_s_p95 = percentile(wall, 95);
  r.lost_work_s_mean = mean(lost);
  r.restart_time_s_mean = mean(restart);
  r.checkpoint_time_s_mean = mean(ckpt);
  r.goodput_mean = mean(good);
  r.goodput_p5 = percentile(good, 5);
  r.goodput_p95 = percentile(good, 95);
  r.expected_interruptions_analytic = total * r.wall_clock_s_mean;
  for (std::size_t c = 0; c < in.causes.size(); ++c) {
    CauseReport cr;
    cr.cause = in.causes[c];
    cr.rate_per_hour = in.rate_per_s[c] * 3600.0;
    double s = 0;
    for (const Draw& d : results) s += d.per_cause[c];
    cr.mean_interruptions = s / draws;
    r.causes.push_back(std::move(cr));
  }
  return r;
}

}  // namespace traincast::models
