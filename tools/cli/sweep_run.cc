// Running one sweep point (sweep_run.h): the point's scenario through the training executor, and
// every way that can fail mapped to an outcome.

#include "tools/cli/sweep_run.h"

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "models/executor/training_executor.h"
#include "models/io/scenario_io.h"
#include "models/io/sweep_point.h"
#include "models/spec/run_control.h"

namespace traincast::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// A scenario error line as an invalid point's reason gives it: a loaded sweep's lines as they are,
/// positioned at the axis value, `set` entry or base field that wrote the field ("s.sweep:4:40:
/// a.b: what"); a sweep without positions (made in code) drops its "<sweep point>:1:1: " and
/// "--set: " origins, which point nowhere.
std::string without_origin(const std::string& line) {
  if (line.rfind("--set: ", 0) == 0) return line.substr(7);
  if (line.rfind(io::kSweepPointOrigin, 0) == 0) {
    // Skip "<origin>:line:col: ".
    std::size_t i = io::kSweepPointOrigin.size();
    for (int colons = 0; colons < 2 && i < line.size(); ++i) {
      if (line[i] == ':') ++colons;
    }
    const std::size_t sep = line.find(": ", i);
    if (sep != std::string::npos) return line.substr(sep + 2);
  }
  return line;
}

std::string gib_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / kGiB);
  return buf;
}

}  // namespace

io::SweepOutcome run_sweep_point(const models::Sweep& sweep, std::size_t point) {
  io::SweepOutcome out;
  try {
    const models::Scenario scenario = io::sweep_point_scenario(sweep, point);
    out.report = models::simulate_training(scenario);
    const models::MemoryBreakdown& m = out.report.memory;
    if (m.oom) {
      out.status = io::SweepStatus::oom;
      out.reason = "peak " + gib_text(m.peak_bytes_per_gpu) + " GiB per GPU exceeds " + gib_text(m.capacity_bytes) +
                   " GiB of HBM (pipeline stage " + std::to_string(m.worst_stage) + ")";
      if (!m.advice.empty()) out.reason += "; " + m.advice;
    }
  } catch (const models::Interrupted&) {
    throw;  // Ctrl-C: the sweep stops; this point gets no row
  } catch (const io::ScenarioError& e) {
    out.status = io::SweepStatus::invalid;
    // The sweep file's reasons (axis values, `set` entries), then the base file's, by line:column.
    for (const std::string& line : io::by_file_and_position(e.errors(), sweep.path))
      out.reason += (out.reason.empty() ? "" : "; ") + without_origin(line);
  } catch (const std::invalid_argument& e) {
    out.status = io::SweepStatus::invalid;
    out.reason = e.what();
  } catch (const std::overflow_error& e) {
    out.status = io::SweepStatus::invalid;
    out.reason = std::string("beyond the simulator's range: ") + e.what();
  } catch (const std::exception& e) {
    out.status = io::SweepStatus::error;
    out.reason = std::string("internal error: ") + e.what();
  }
  // A row that is not ok always says why (the CSV reader refuses one that does not).
  if (out.status != io::SweepStatus::ok && out.reason.empty()) out.reason = "refused without a message (a bug)";
  return out;
}

}  // namespace traincast::cli
