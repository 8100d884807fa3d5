#pragma once
// Long loops (Monte-Carlo draws, the layout search, sweeps) and the command line: a process-wide
// interrupt request a signal handler sets and loops poll, and a progress sink loops report to.
// Header only, standard library only; the CLI installs the handler and the sink (tools/cli).

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace traincast::models {

/// Thrown by a long loop that saw interrupt_requested(): the work was abandoned, nothing partial
/// is returned. The CLI prints its message on one line and exits with 128 + the signal (130).
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace run_control_detail {
/// The signal number that asked to stop (0: none). Lock-free, so a signal handler may store it.
inline std::atomic<int> interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler stores the interrupt flag");
}  // namespace run_control_detail

/// Asks every long loop to stop (async-signal-safe: one lock-free store). signo: the signal, > 0.
inline void request_interrupt(int signo) noexcept {
  run_control_detail::interrupt_signal.store(signo, std::memory_order_relaxed);
}
/// Forgets an earlier request (a command starts with none).
inline void clear_interrupt() noexcept { run_control_detail::interrupt_signal.store(0, std::memory_order_relaxed); }
/// True once request_interrupt was called (and not cleared). Cheap: one relaxed atomic load.
inline bool interrupt_requested() noexcept {
  return run_control_detail::interrupt_signal.load(std::memory_order_relaxed) != 0;
}
/// The signal that asked to stop, 0 when none.
inline int interrupt_signal() noexcept { return run_control_detail::interrupt_signal.load(std::memory_order_relaxed); }

/// Throws Interrupted("`what`: interrupted") when an interrupt was requested.
inline void throw_if_interrupted(std::string_view what) {
  if (interrupt_requested()) throw Interrupted(std::string(what) + ": interrupted");
}

/// Where loops report how far they are: `what` names the loop ("Monte-Carlo draws"), done of
/// total units finished. Called from any thread; the sink rate-limits and draws (the CLI's draws
/// on stderr only when it is a terminal). Must not throw.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void progress(std::string_view what, std::uint64_t done, std::uint64_t total) noexcept = 0;
};

namespace run_control_detail {
inline std::atomic<ProgressSink*> progress_sink{nullptr};
}  // namespace run_control_detail

/// Installs `sink` (null: none) for report_progress; the caller keeps it alive while installed.
inline void set_progress_sink(ProgressSink* sink) noexcept {
  run_control_detail::progress_sink.store(sink, std::memory_order_release);
}
/// True when a sink is installed (a loop may skip counting otherwise).
inline bool progress_wanted() noexcept {
  return run_control_detail::progress_sink.load(std::memory_order_relaxed) != nullptr;
}
/// Forwards to the installed sink, if any.
inline void report_progress(std::string_view what, std::uint64_t done, std::uint64_t total) noexcept {
  if (ProgressSink* s = run_control_detail::progress_sink.load(std::memory_order_acquire))
    s->progress(what, done, total);
}

}  // namespace traincast::models
