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
  /// Called by the Simulator at the event's time (now() == that time) with the tag given at scheduling.
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
  /// Inserts an event; its seq is the number of events pushed before it. O(log n).
  void push(Time at, EventHandler* handler, std::uint64_t tag);
  /// Removes and returns the earliest event by (at, seq). Precondition: !empty(). O(log n).
  Event pop();
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return heap_.front(); }
  /// True when no event is queued.
  bool empty() const { return heap_.empty(); }
  /// Number of queued events.
  std::size_t size() const { return heap_.size(); }
  /// Pre-allocates room for n events (avoids growth on the hot path).
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

/// The clock and the queue. Single-threaded; one Simulator per simulation.
class Simulator {
 public:
  /// Current simulated time: the time of the event being fired (zero before the first).
  Time now() const { return now_; }
  /// Queues `handler->on_event(tag)` at `at`. Equal times fire in scheduling order.
  /// Throws std::invalid_argument for an event in the past (at < now()) or a null handler.
  void schedule_at(Time at, EventHandler* handler, std::uint64_t tag);
  /// schedule_at(now() + delay, ...). Throws std::invalid_argument for delay < 0 or a null
  /// handler, std::overflow_error when now() + delay is past Time::max().
  void schedule_in(Time delay, EventHandler* handler, std::uint64_t tag);
  /// Runs every event with time <= `until`, in (time, insertion) order, including events
  /// scheduled meanwhile. Afterwards, when `until` is finite (not Time::max()), the clock
  /// stands at `until` (now() == max(now(), until)), so statistics can be read "at until".
  void run(Time until = Time::max());
  /// Fires the earliest event (advancing now() to its time); returns false when the queue is empty.
  bool step();
  /// Events fired so far.
  std::uint64_t events_processed() const { return events_processed_; }
  /// Events queued and not yet fired (stale events that their handler will ignore included).
  std::size_t pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  Time now_;
  std::uint64_t events_processed_ = 0;
};

}  // namespace traincast::sim
