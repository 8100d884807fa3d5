// `traincast sweep`: runs every point of a sweep file on TBB (or over MPI ranks), writing one CSV
// row per point in point order. The sweep itself is models/io (file and expansion:
// sweep_loader.h; a point's scenario: sweep_point.h; CSV rows: sweep_csv.h), running one point is
// tools/cli/sweep_run.h; this file is scheduling, files, signals and the progress bar.

#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "models/io/sweep.h"
#include "models/io/sweep_csv.h"
#include "models/io/sweep_loader.h"
#include "models/io/sweep_point.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/interrupt.h"
#include "tools/cli/output_lock.h"
#include "tools/cli/sweep_run.h"
#include "tools/cli/sweep_warnings.h"

#ifdef TRAINCAST_HAVE_MPI
#include <mpi.h>
#endif

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

// ------------------------------------------------------------------------------------------------
// Progress bar (stderr, only when it is a terminal)
// ------------------------------------------------------------------------------------------------

std::string clock_text(double s) {
  if (!(s >= 0) || s > 359999) return "--:--";
  const auto t = static_cast<long>(std::floor(s + 0.5));  // s + 0.5 > 0: floor is the truncation the cast did
  char buf[32];
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  }
  return buf;
}

class Progress {
 public:
  Progress(bool enabled, std::size_t total) : enabled_(enabled), total_(total) {}
  /// Redraws at most 10 times a second (and always for the last point).
  void update(std::size_t done) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
    const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : -1.0;
    constexpr int kWidth = 30;
    const int filled = total_ == 0 ? kWidth : static_cast<int>(kWidth * done / total_);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu points  %.1f points/s  ETA %s ", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), done, total_, rate, clock_text(eta).c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  /// Ends the bar's line.
  void finish() {
    if (enabled_ && drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  bool enabled_;
  std::size_t total_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// ------------------------------------------------------------------------------------------------
// Output: rows written in point order as soon as every earlier point is done
// ------------------------------------------------------------------------------------------------

/// Takes rows in any order (keyed by their position in the to-do list) and appends them to the
/// file in order, flushing each run of consecutive rows, so that the file always holds whole
/// rows of a prefix of the to-do list. Thread-safe.
class RowWriter {
 public:
  RowWriter(AppendFile& file, Progress& progress, std::size_t already_done)
      : file_(file), progress_(progress), done_(already_done) {}

  /// Each run of consecutive rows goes to the file in one write(2): rows are never torn.
  void put(std::size_t position, std::string row, io::SweepStatus status) {
    const std::lock_guard lock(mutex_);
    ++status_count_[static_cast<int>(status)];
    pending_.emplace(position, std::move(row));
    std::string batch;
    for (auto it = pending_.begin(); it != pending_.end() && it->first == next_; it = pending_.erase(it)) {
      batch += it->second;
      ++next_;
    }
    if (!batch.empty()) file_.write(batch);
    progress_.update(done_ + next_);
  }

  /// Rows written (consecutive from the first position).
  std::size_t written() const {
    const std::lock_guard lock(mutex_);
    return next_;
  }
  /// Points finished per status (written or still waiting for an earlier one).
  std::size_t count(io::SweepStatus s) const {
    const std::lock_guard lock(mutex_);
    return status_count_[static_cast<int>(s)];
  }

 private:
  AppendFile& file_;
  Progress& progress_;
  std::size_t done_;
  mutable std::mutex mutex_;
  std::map<std::size_t, std::string> pending_;
  std::size_t next_ = 0;
  std::size_t status_count_[4] = {0, 0, 0, 0};
};

models::SweepShard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  auto number = [&](std::string_view s, std::size_t& out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
    out = std::stoul(std::string(s));
    return true;
  };
  models::SweepShard shard;
  // "00/2" names shard 0 by another spelling: refused, as a number with a leading zero is in a
  // scenario file, --set and every numeric option.
  auto plain = [](std::string_view s) {
    const bool zeros = s.size() > 1 && s.front() == '0' && s.find_first_not_of("0123456789") == std::string_view::npos;
    return std::string(zeros ? s.substr(std::min(s.find_first_not_of('0'), s.size() - 1)) : s);
  };
  if (slash != std::string::npos) {
    const std::string_view i = std::string_view(text).substr(0, slash), n = std::string_view(text).substr(slash + 1);
    if (plain(i) != i || plain(n) != n)
      throw UsageError("--shard: \"" + text + "\": " + std::string(plain(i) != i ? i : n) +
                       " has a leading zero (expected i/N in decimal without leading zeros, e.g. " + plain(i) + "/" +
                       plain(n) + ")");
  }
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), shard.index) ||
      !number(std::string_view(text).substr(slash + 1), shard.count) || shard.count < 1 || shard.index >= shard.count) {
    throw UsageError("--shard: \"" + text + "\" is not a shard (expected i/N with 0 <= i < N, e.g. 0/4)");
  }
  return shard;
}

/// Everything decided before the first point runs.
struct SweepPlan {
  models::Sweep sweep;
  models::SweepShard shard;
  std::string out_path;
  std::vector<std::size_t> todo;  ///< point indices still to run, in point order
  std::size_t shard_points = 0;   ///< points in the shard
  std::size_t already_done = 0;   ///< rows found by --resume
};

/// Checks the output file (exists? resumable?), prepares it (header written, or a partial last
/// row cut) and fills plan.todo. Returns the file to append rows to. Call with the OutputLock held.
AppendFile open_output(SweepPlan& plan, bool resume, bool force, const std::string& sweep_path) {
  namespace fs = std::filesystem;
  const std::string& path = plan.out_path;
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (exists && !resume && !force) {
    throw UsageError(path + ": file exists (pass --resume to continue it, or --force to overwrite it)");
  }
  // A regular file in a writable directory, neither the sweep nor its base scenario.
  std::vector<std::string> inputs{sweep_path};
  if (!plan.sweep.base_path.empty()) inputs.push_back(plan.sweep.base_path);
  check_output_path(path, exists, inputs);
  const std::string comment = io::sweep_csv_comment(plan.sweep, plan.shard);
  const std::string header = io::sweep_csv_header(plan.sweep);
  std::unordered_set<std::size_t> done;
  if (exists && resume) {
    const io::SweepCsv csv = io::read_sweep_csv(path);
    if (csv.hash != plan.sweep.hash || csv.points != plan.sweep.num_points()) {
      throw UsageError(path + ": was written by a different sweep (hash " + csv.hash + ", " +
                       std::to_string(csv.points) + " points; this sweep: hash " + plan.sweep.hash + ", " +
                       std::to_string(plan.sweep.num_points()) +
                       " points) (expected the CSV of this sweep file, or --force to start over)");
    }
    if (csv.shard.index != plan.shard.index || csv.shard.count != plan.shard.count) {
      auto name = [](models::SweepShard s) {
        return s.count == 1 ? std::string("the whole sweep")
                            : "shard " + std::to_string(s.index) + "/" + std::to_string(s.count);
      };
      throw UsageError(path + ": holds " + name(csv.shard) + ", not " + name(plan.shard) +
                       " (expected the same --shard as the run that wrote it)");
    }
    if (csv.header != header) {
      throw UsageError(path + ":2: header differs from this sweep's (expected " + header.substr(0, header.size() - 1) +
                       ")");
    }
    io::check_sweep_csv_axes(csv, path, plan.sweep);                       // each row is its point
    if (csv.partial_last_line) fs::resize_file(path, csv.complete_bytes);  // drop the cut row
    for (const io::SweepCsv::Row& r : csv.rows) done.insert(r.point);
  }
  for (std::size_t p = plan.shard.index; p < plan.sweep.num_points(); p += plan.shard.count) {
    ++plan.shard_points;
    if (done.count(p) == 0) plan.todo.push_back(p);
  }
  plan.already_done = plan.shard_points - plan.todo.size();
  const bool append = exists && resume;
  AppendFile file(path, !append);
  if (!append) file.write(comment + header);
  return file;
}

std::string summary_line(const SweepPlan& plan, const RowWriter& w, double wall_s) {
  std::ostringstream s;
  const std::size_t ran = w.written();
  s << "traincast sweep: " << ran << " point" << (ran == 1 ? "" : "s") << " (" << w.count(io::SweepStatus::ok)
    << " ok, " << w.count(io::SweepStatus::oom) << " oom, " << w.count(io::SweepStatus::invalid) << " invalid";
  if (w.count(io::SweepStatus::error) > 0) s << ", " << w.count(io::SweepStatus::error) << " error";
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f s, %.1f points/s", wall_s,
                wall_s > 0 ? static_cast<double>(ran) / wall_s : 0.0);
  s << ") in " << rate;
  if (plan.already_done > 0) s << "; " << plan.already_done << " already in the file";
  s << " -> " << plan.out_path << "\n";
  return s.str();
}

/// Exit status after a finished sweep: 2 when every point this run wrote is invalid (a base
/// `set` or an axis that no point survives is bad input; the CSV keeps each point's reason), else
/// 0. A shard of several is exempt: its share of the points may all be invalid while others run.
int finished_status(const SweepPlan& plan, const RowWriter& w, std::ostream& err) {
  const std::size_t ran = w.written();
  if (plan.shard.count > 1 || ran == 0 || w.count(io::SweepStatus::invalid) != ran) return 0;
  err << "traincast sweep: every point is invalid, nothing was simulated (the reason column of " << plan.out_path
      << " says why for each; expected at least one valid point)\n";
  return 2;
}

/// One process, `jobs` threads (at most one per point left to run): each thread takes the next
/// point in order, so rows finish nearly in order and the reorder buffer stays small.
int run_local(SweepPlan& plan, AppendFile& file, int jobs, bool show_progress, std::ostream& out, std::ostream& err) {
  jobs = static_cast<int>(std::clamp<std::size_t>(plan.todo.size(), 1, static_cast<std::size_t>(jobs)));
  Progress progress(show_progress, plan.shard_points);
  RowWriter writer(file, progress, plan.already_done);
  std::atomic<std::size_t> cursor{0};
  std::atomic<bool> failed{false};
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    while (!InterruptScope::stopped() && !failed.load(std::memory_order_relaxed)) {
      const std::size_t k = cursor.fetch_add(1);
      if (k >= plan.todo.size()) return;
      try {
        const io::SweepOutcome outcome = run_sweep_point(plan.sweep, plan.todo[k]);
        writer.put(k, io::sweep_csv_row(plan.sweep, plan.todo[k], outcome), outcome.status);
      } catch (const models::Interrupted&) {
        return;  // Ctrl-C inside a point (its Monte-Carlo draws): no row; the summary says so
      } catch (...) {
        failed.store(true);
        throw;
      }
    }
  };
  {
    // Allow more threads than cores when asked (the default market stops at the core count).
    const tbb::global_control allow(
        tbb::global_control::max_allowed_parallelism,
        std::max<std::size_t>(static_cast<std::size_t>(jobs),
                              tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
    tbb::task_arena arena(jobs);
    arena.execute([&] {
      tbb::task_group group;
      for (int j = 1; j < jobs; ++j) group.run(worker);
      try {
        worker();
      } catch (...) {
        group.wait();
        throw;
      }
      group.wait();
    });
  }
  progress.finish();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (InterruptScope::stopped()) {
    err << "traincast: interrupted: " << plan.already_done + writer.written() << " of " << plan.shard_points
        << " points are in " << plan.out_path << " (continue with --resume)\n";
    return InterruptScope::exit_status();
  }
  out << summary_line(plan, writer, wall_s);
  return finished_status(plan, writer, err);
}

// ------------------------------------------------------------------------------------------------
// MPI: rank 0 hands out points one at a time (a worker asks for the next when it sends a result)
// and writes the CSV; it also runs points on a thread of its own.
// ------------------------------------------------------------------------------------------------

/// Ranks in the job when launched by an MPI launcher (mpirun sets OMPI_COMM_WORLD_SIZE; MPICH
/// and Slurm's PMI set PMI_SIZE); 1 otherwise. Read before MPI_Init so that a plain run never
/// touches MPI.
int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 1;
}

#ifdef TRAINCAST_HAVE_MPI

constexpr int kTagResult = 1;  // worker -> 0: [int64 position][row bytes]; position -1 = first request
constexpr int kTagWork = 2;    // 0 -> worker: [int64 position, int64 point]; position -1 = no more work

/// MPI_Init_thread on construction, MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

/// True on every rank when every rank passes true.
bool all_ranks(bool ok) {
  int mine = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

int broadcast_status(int status) {
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

void run_worker_rank(const models::Sweep& sweep) {
  std::vector<char> message(sizeof(std::int64_t));
  std::int64_t position = -1;
  std::memcpy(message.data(), &position, sizeof position);
  while (true) {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kTagResult, MPI_COMM_WORLD);
    std::int64_t work[2] = {-1, -1};
    MPI_Recv(work, 2, MPI_INT64_T, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (work[0] < 0) return;
    const auto point = static_cast<std::size_t>(work[1]);
    const io::SweepOutcome outcome = run_sweep_point(sweep, point);
    const std::string row = io::sweep_csv_row(sweep, point, outcome);
    const std::int8_t status = static_cast<std::int8_t>(outcome.status);
    message.resize(sizeof(std::int64_t) + 1 + row.size());
    std::memcpy(message.data(), &work[0], sizeof(std::int64_t));
    message[sizeof(std::int64_t)] = static_cast<char>(status);
    std::memcpy(message.data() + sizeof(std::int64_t) + 1, row.data(), row.size());
  }
}

int run_coordinator_rank(SweepPlan& plan, AppendFile& file, int ranks, bool show_progress, std::ostream& out,
                         std::ostream& err) {
  Progress progress(show_progress, plan.shard_points);
  RowWriter writer(file, progress, plan.already_done);
  std::atomic<std::size_t> cursor{0};
  std::atomic<bool> local_done{false};
  std::atomic<bool> failed{false};
  const auto t0 = std::chrono::steady_clock::now();
  auto next_position = [&]() -> std::int64_t {
    if (InterruptScope::stopped() || failed.load()) return -1;
    const std::size_t k = cursor.fetch_add(1);
    return k < plan.todo.size() ? static_cast<std::int64_t>(k) : -1;
  };
  std::exception_ptr local_error;
  std::thread local([&] {
    try {
      for (std::int64_t k = next_position(); k >= 0; k = next_position()) {
        const std::size_t point = plan.todo[static_cast<std::size_t>(k)];
        const io::SweepOutcome outcome = run_sweep_point(plan.sweep, point);
        writer.put(static_cast<std::size_t>(k), io::sweep_csv_row(plan.sweep, point, outcome), outcome.status);
      }
    } catch (const models::Interrupted&) {
      // Ctrl-C inside a point: no row; the summary says so
    } catch (...) {
      local_error = std::current_exception();
      failed.store(true);
    }
    local_done.store(true);
  });
  int active = ranks - 1;
  std::vector<char> buffer;
  while (active > 0) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &flag, &status);
    if (flag == 0) {
      // Polling with a pause keeps rank 0's core for its own worker thread.
      std::this_thread::sleep_for(std::chrono::microseconds(500));
      continue;
    }
    int bytes = 0;
    MPI_Get_count(&status, MPI_CHAR, &bytes);
    buffer.resize(static_cast<std::size_t>(std::max(bytes, 1)));
    MPI_Recv(buffer.data(), bytes, MPI_CHAR, status.MPI_SOURCE, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::int64_t position = -1;
    std::memcpy(&position, buffer.data(), sizeof position);
    if (position >= 0) {
      const auto st = static_cast<io::SweepStatus>(buffer[sizeof(std::int64_t)]);
      const std::size_t head = sizeof(std::int64_t) + 1;
      try {
        writer.put(static_cast<std::size_t>(position),
                   std::string(buffer.data() + head, static_cast<std::size_t>(bytes) - head), st);
      } catch (const std::exception& e) {
        err << "traincast: " << e.what() << "\n";
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    std::int64_t work[2] = {next_position(), -1};
    if (work[0] >= 0) work[1] = static_cast<std::int64_t>(plan.todo[static_cast<std::size_t>(work[0])]);
    MPI_Send(work, 2, MPI_INT64_T, status.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
    if (work[0] < 0) --active;
  }
  local.join();
  progress.finish();
  if (local_error) std::rethrow_exception(local_error);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (InterruptScope::stopped()) {
    err << "traincast: interrupted: " << plan.already_done + writer.written() << " of " << plan.shard_points
        << " points are in " << plan.out_path << " (continue with --resume)\n";
    return InterruptScope::exit_status();
  }
  out << summary_line(plan, writer, wall_s) << "traincast sweep: " << ranks << " MPI ranks\n";
  return finished_status(plan, writer, err);
}

/// The whole sweep under MPI. Every rank loads the sweep file; rank 0 checks the output and
/// coordinates; all ranks return rank 0's exit status.
int run_mpi(const std::string& sweep_path, models::SweepShard shard, const std::string& out_path, bool resume,
            bool force, bool show_progress, const std::string& command, std::ostream& out, std::ostream& err) {
  const MpiSession mpi;
  const bool root = mpi.rank() == 0;
  SweepPlan plan;
  plan.shard = shard;
  plan.out_path = out_path;
  int status = 0;
  std::ostringstream local_err;
  status = guarded(local_err, [&]() -> int {
    plan.sweep = io::load_sweep_file(sweep_path);
    return 0;
  });
  if (!all_ranks(status == 0)) {
    // Rank 0 reports its own problem; a worker reports only what rank 0 did not see.
    const bool root_ok = broadcast_status(status) == 0;
    if (root || root_ok) err << local_err.str() << (root ? "" : "(on MPI rank " + std::to_string(mpi.rank()) + ")\n");
    return status != 0 ? status : 2;
  }
  // Same file everywhere? (A node with another copy of the sweep or its base would differ.)
  char hash[17] = {};
  std::snprintf(hash, sizeof hash, "%s", plan.sweep.hash.c_str());
  MPI_Bcast(hash, 17, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!all_ranks(plan.sweep.hash == hash)) {
    if (root) err << "traincast: the MPI ranks read different sweeps from " << sweep_path << " (hashes differ)\n";
    return 2;
  }
  AppendFile file;
  std::optional<OutputLock> lock;
  if (root) {
    status = guarded(err, [&]() -> int {
      lock.emplace(out_path, command, err);
      file = open_output(plan, resume, force, sweep_path);
      return 0;
    });
  }
  if (broadcast_status(status) != 0) return status;
  if (root) warn_sweep_systems(plan.sweep, err);
  const InterruptScope signals;
  if (root) {
    status = guarded(err, [&] { return run_coordinator_rank(plan, file, mpi.size(), show_progress, out, err); });
  } else {
    run_worker_rank(plan.sweep);
  }
  return broadcast_status(status);
}

#endif  // TRAINCAST_HAVE_MPI

}  // namespace

int sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast sweep SWEEP --out results.csv [options]\n\n"
      "Runs every point of the sweep file SWEEP (axes x constraints over a base scenario; format in\n"
      "docs/scenarios.md) and writes one CSV row per point, in point order: the point index, the\n"
      "axis values, status (ok, oom, invalid, error), the metrics, and the reason for oom/invalid.\n"
      "The CSV's bytes do not depend on --jobs, --shard + merge or MPI. Ctrl-C stops cleanly (rows\n"
      "written stay; exit status 130); --resume continues. Under `mpirun -n N` (built with MPI),\n"
      "rank 0 hands out points to all ranks and writes the CSV. One writer per file: a lock on\n"
      "OUT.lock names its holder, and a second sweep on the same --out is refused (exit status 2).\n"
      "When every point is invalid the CSV keeps the reasons and the exit status is 2.\n\nOptions");
  opts.add_options()("help,h", "show this help")("out,o", po::value<std::string>(), "CSV file to write (required)")(
      "jobs,j", po::value<int>(),
      "simulations at once, one thread each, 1 to 1024, 0 for all hardware threads (the default; at most one per "
      "point)")("resume", "continue an interrupted --out file of the same sweep: skip the points it has")(
      "shard", po::value<std::string>(), "run only points p with p % N == i (i/N, for job arrays; join with merge)")(
      "force", "overwrite an existing --out file")(
      "progress", po::value<std::string>()->default_value("auto"),
      "progress bar on stderr: auto (when stderr is a terminal), always, never")("sweep", po::value<std::string>(),
                                                                                 "sweep file (positional)");
  po::positional_options_description pos;
  pos.add("sweep", 1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    if (!vm.count("sweep")) throw UsageError("sweep: no sweep file given (usage: traincast sweep SWEEP --out F)");
    if (!vm.count("out")) throw UsageError("sweep: --out is required (the CSV file to write)");
    const bool resume = vm.count("resume") > 0;
    const bool force = vm.count("force") > 0;
    if (resume && force) throw UsageError("--resume and --force exclude each other (continue, or start over)");
    const int jobs = thread_count_option("--jobs", vm.count("jobs") ? vm["jobs"].as<int>() : 0, kSimulationsWhy);
    const models::SweepShard shard =
        vm.count("shard") ? parse_shard(vm["shard"].as<std::string>()) : models::SweepShard{};
    const std::string progress_mode = vm["progress"].as<std::string>();
    if (progress_mode != "auto" && progress_mode != "always" && progress_mode != "never") {
      throw UsageError("--progress: \"" + progress_mode + "\" (expected auto, always or never)");
    }
    const bool show_progress =
        progress_mode == "always" || (progress_mode == "auto" && &err == &std::cerr && isatty(STDERR_FILENO) == 1);
    const std::string sweep_path = vm["sweep"].as<std::string>();
    const std::string out_path = vm["out"].as<std::string>();
    std::string command = "traincast sweep";
    for (const std::string& a : args) command += " " + a;

    keep_freed_memory();
    if (const int ranks = launcher_world_size(); ranks > 1) {
#ifdef TRAINCAST_HAVE_MPI
      return run_mpi(sweep_path, shard, out_path, resume, force, show_progress, command, out, err);
#else
      throw UsageError("launched with " + std::to_string(ranks) +
                            " MPI ranks, but this traincast was built without MPI (expected a build that found "
                            "MPI, or --shard i/N per process and traincast merge)");
#endif
    }
    SweepPlan plan;
    plan.sweep = io::load_sweep_file(sweep_path);
    plan.shard = shard;
    plan.out_path = out_path;
    // One writer per file: a second sweep (or --resume) on the same --out is refused, holder named.
    const OutputLock lock(out_path, command, err);
    AppendFile file = open_output(plan, resume, force, sweep_path);
    warn_sweep_systems(plan.sweep, err);  // after the output is known good: a refusal comes alone
    const InterruptScope signals;
    return run_local(plan, file, jobs, show_progress, out, err);
  });
}

}  // namespace traincast::cli
