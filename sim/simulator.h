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
  /// A hint that on_event(tag) comes next, called while the event before it runs: a handler may
  /// start loading what that event reads (e.g. __builtin_prefetch), so its cache misses overlap
  /// the other event's work. It must not change anything the simulation computes. Default: none.
  virtual void prefetch(std::uint64_t /*tag*/) const {}
};

/// One queued event: fires `handler->on_event(tag)` at `at`.
struct Event {
  Time at;
  std::uint64_t seq;  ///< insertion sequence: ties at equal `at` fire in insertion order
  EventHandler* handler;
  std::uint64_t tag;
};

/// 4-ary min-heap (sim/dary_heap.h) of Events keyed by (at, seq), plus a FIFO for the events pushed at the time
/// of the last pop (half the events of a large training run are scheduled "now": zero-delay
/// flushes, callbacks at the same instant). Such an event has the largest seq of its time, so the
/// FIFO stays in (at, seq) order and each pop takes the smaller of its front and the heap's top:
/// the same order as one heap, without a sift for those events. No allocation per event beyond
/// amortised vector growth; no std::function. Deterministic: equal times pop in insertion order.
class EventQueue {
 public:
  /// Inserts an event; its seq is the number of events pushed before it. O(log n); O(1) at the
  /// time of the last pop.
  void push(Time at, EventHandler* handler, std::uint64_t tag);
  /// Removes and returns the earliest event by (at, seq). Precondition: !empty(). O(log n).
  Event pop();
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return fifo_first() ? fifo_[fifo_head_] : heap_.front(); }
  /// True when no event is queued.
  bool empty() const { return heap_.empty() && fifo_head_ == fifo_.size(); }
  /// Number of queued events.
  std::size_t size() const { return heap_.size() + (fifo_.size() - fifo_head_); }
  /// Pre-allocates room for n events (avoids growth on the hot path).
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  /// Whether the earliest event is the FIFO's front (the FIFO is not empty and its front comes
  /// before the heap's top by (at, seq)).
  bool fifo_first() const {
    if (fifo_head_ == fifo_.size()) return false;
    if (heap_.empty()) return true;
    const Event& f = fifo_[fifo_head_];
    const Event& h = heap_.front();
    return f.at < h.at || (f.at == h.at && f.seq < h.seq);
  }
  Event pop_heap();

  std::vector<Event> heap_;
  std::vector<Event> fifo_;    ///< events at one time, in seq order; [fifo_head_, end) are queued
  std::size_t fifo_head_ = 0;  ///< first queued FIFO event
  Time last_pop_at_;           ///< time of the last popped event (zero before the first)
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
