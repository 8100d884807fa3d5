#pragma once
// The discrete-event core: a deterministic event queue and the clock that drains it.

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace traincast::sim {

/// Anything that receives events. The engine stores a raw pointer: the handler must outlive
/// every event scheduled for it. `tag` is the caller's own 64-bit payload (an op index, a flow
/// handle plus generation, ...); the engine never interprets it.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(std::uint64_t tag) = 0;
};

/// One queued event: fires `handler->on_event(tag)` at `at`.
struct Event {
  Time at;
  std::uint64_t seq;  ///< insertion sequence: ties at equal `at` fire in insertion order
  EventHandler* handler;
  std::uint64_t tag;
};

/// Binary min-heap of Events keyed by (at, seq). No allocation per event beyond amortised
/// vector growth; no std::function. Deterministic: equal times pop in insertion order.
class EventQueue {
 public:
  void push(Time at, EventHandler* handler, std::uint64_t tag);
  /// Precondition: !empty().
  Event pop();
  const Event& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

/// The clock and the queue. Single-threaded; one Simulator per simulation.
class Simulator {
 public:
  Time now() const { return now_; }
  /// at >= now(); throws std::invalid_argument for an event in the past.
  void schedule_at(Time at, EventHandler* handler, std::uint64_t tag);
  void schedule_in(Time delay, EventHandler* handler, std::uint64_t tag) { schedule_at(now_ + delay, handler, tag); }
  /// Runs events until the queue is empty or the next event is after `until`.
  void run(Time until = Time::max());
  /// Fires one event; returns false when the queue is empty.
  bool step();
  std::uint64_t events_processed() const { return events_processed_; }
  std::size_t pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  Time now_;
  std::uint64_t events_processed_ = 0;
};

}  // namespace traincast::sim
