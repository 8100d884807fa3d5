// Simulator: the clock and the event queue. See simulator.h.

#include "sim/simulator.h"

#include <stdexcept>
#include <string>

namespace traincast::sim {

void Simulator::schedule_at(Time at, EventHandler* handler, std::uint64_t tag) {
  if (at < now_) {
    throw std::invalid_argument("Simulator::schedule_at: event at " + std::to_string(at.ns()) +
                                " ns is before now() = " + std::to_string(now_.ns()) + " ns");
  }
  if (handler == nullptr) throw std::invalid_argument("Simulator::schedule_at: null handler");
  queue_.push(at, handler, tag);
}

void Simulator::schedule_in(Time delay, EventHandler* handler, std::uint64_t tag) {
  if (delay < Time::zero()) {
    throw std::invalid_argument("Simulator::schedule_in: negative delay " + std::to_string(delay.ns()) + " ns");
  }
  if (delay > Time::max() - now_)
    throw std::overflow_error("Simulator::schedule_in: now() + delay is past Time::max()");
  schedule_at(now_ + delay, handler, tag);
}

bool Simulator::step() {
  if (queue_.empty()) return false;
  const Event ev = queue_.pop();
  // The next event as of now (this one may queue an earlier one: then the hint is wasted, and
  // harmless).
  if (!queue_.empty()) queue_.top().handler->prefetch(queue_.top().tag);
  now_ = ev.at;
  ++events_processed_;
  ev.handler->on_event(ev.tag);
  return true;
}

void Simulator::run(Time until) {
  while (!queue_.empty() && queue_.top().at <= until) step();
  if (until != Time::max() && until > now_) now_ = until;
}

}  // namespace traincast::sim
