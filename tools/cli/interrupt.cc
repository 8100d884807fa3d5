// InterruptScope and TerminalProgress (interrupt.h): the signal handler and the progress line.

#include "tools/cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <utility>

namespace traincast::cli {

namespace {
extern "C" void on_interrupt_signal(int signo) { models::request_interrupt(signo); }
}  // namespace

struct InterruptScope::Saved {
  struct sigaction old_int {};
  struct sigaction old_term {};
};

InterruptScope::InterruptScope() : saved_(new Saved) {
  models::clear_interrupt();
  struct sigaction sa {};
  sa.sa_handler = on_interrupt_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, &saved_->old_int);
  sigaction(SIGTERM, &sa, &saved_->old_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &saved_->old_int, nullptr);
  sigaction(SIGTERM, &saved_->old_term, nullptr);
  delete saved_;
}

bool progress_terminal(const std::ostream& err) { return &err == &std::cerr && isatty(STDERR_FILENO) == 1; }

TerminalProgress::TerminalProgress(bool enabled, std::string only) : enabled_(enabled), only_(std::move(only)) {
  if (enabled_) models::set_progress_sink(this);
}

TerminalProgress::~TerminalProgress() { finish(); }

void TerminalProgress::finish() noexcept {
  if (!enabled_) return;
  models::set_progress_sink(nullptr);
  const std::lock_guard lock(mutex_);
  // The line is erased, not ended: a search that stops before its budget (plan's "22/120") would
  // otherwise leave a count that reads as if it had been cut short above the result.
  if (drawn_) std::fprintf(stderr, "\r%*s\r", drawn_width_, "");
  std::fflush(stderr);
  drawn_ = false;
  enabled_ = false;
}

void TerminalProgress::progress(std::string_view what, std::uint64_t done, std::uint64_t total) noexcept {
  if (!enabled_ || (!only_.empty() && what != only_)) return;
  const auto now = std::chrono::steady_clock::now();
  const std::lock_guard lock(mutex_);
  if (done < total && now - last_ < kProgressRedraw) return;
  last_ = now;
  const double pct = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  const int width = std::fprintf(stderr, "\r%.*s: %llu/%llu (%.0f%%) ", static_cast<int>(what.size()), what.data(),
                                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), pct);
  drawn_width_ = std::max(drawn_width_, width - 1);  // without the leading '\r'

  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace traincast::cli
