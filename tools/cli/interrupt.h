#pragma once
// Ctrl-C and progress for the long commands (run, plan, sweep): SIGINT/SIGTERM set the models'
// interrupt flag (models/spec/run_control.h) that the loops poll, and a progress line on stderr
// when, and only when, stderr is a terminal.

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>

#include "models/spec/run_control.h"

namespace traincast::cli {

/// While alive: the first SIGINT or SIGTERM calls models::request_interrupt (loops stop at their
/// next poll); the handler then resets itself, so a second one ends the process at once. Clears
/// any earlier request on construction; restores the previous handlers on destruction.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  /// True once a signal asked to stop.
  static bool stopped() { return models::interrupt_requested(); }
  /// 128 + the signal number, the shell's convention (130 for SIGINT).
  static int exit_status() { return 128 + models::interrupt_signal(); }

 private:
  struct Saved;
  Saved* saved_;
};

/// True when progress may be drawn on `err`: it is std::cerr and standard error is a terminal.
/// Piped or captured output (tests, golden files, notebooks) never gets progress text.
bool progress_terminal(const std::ostream& err);

/// Rate limit of every progress line: at most one redraw per 100 ms (and always the last unit).
inline constexpr std::chrono::milliseconds kProgressRedraw{100};

/// A models::ProgressSink drawing "\r<what>: <done>/<total> (<pct>%)" on stderr, at most every
/// kProgressRedraw, installed (set_progress_sink) while alive when `enabled`; the line is erased
/// by finish() and on destruction. `only` not empty: only progress of that `what` is drawn (compare's columns,
/// not the Monte-Carlo draws inside each). Thread-safe.
class TerminalProgress : public models::ProgressSink {
 public:
  explicit TerminalProgress(bool enabled, std::string only = {});
  ~TerminalProgress() override;
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;
  void progress(std::string_view what, std::uint64_t done, std::uint64_t total) noexcept override;
  /// Uninstalls the sink and erases the progress line (before the command prints its result).
  void finish() noexcept;

 private:
  bool enabled_;
  std::string only_;
  std::mutex mutex_;
  bool drawn_ = false;
  int drawn_width_ = 0;  ///< characters of the widest line drawn, erased by finish()
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace traincast::cli
