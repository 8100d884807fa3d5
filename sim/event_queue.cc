// EventQueue: a 4-ary min-heap of Events keyed by (at, seq), stored in one vector, and a FIFO
// of the events pushed at the time of the last pop (see simulator.h).
//
// push() sifts a hole up from the new leaf; pop() uses Floyd's "bottom-up" variant: the hole left
// at the root walks down to a leaf along the earliest children, then the last element is sifted
// up from there (sim/dary_heap.h). Both move each Event once per level and never allocate beyond
// amortised vector growth.
//
// Measured choices (tests/benchmarks/event_queue_bench.cc, "hold" model): a branch-free
// 128-bit key compare is ~1.6x faster than a branchy (at, seq) compare for 1k-64k pending
// events; for 1M pending events it serialises the cache misses of the descent, which the
// prefetch of the next level mostly recovers. 4-ary instead of binary (2026-12-06, same run,
// ns per hold): 1k 47 -> 40, 64k 93 -> 82, 1M 665 -> 370 (with dary_heap.h's prefetch).

#include <cstddef>
#include <utility>
#include <vector>

#include "sim/dary_heap.h"
#include "sim/heap_key.h"
#include "sim/simulator.h"

namespace traincast::sim {
namespace {

inline HeapKey key(const Event& e) { return heap_key(e.at.ns(), e.seq); }

/// Strict (at, seq) order. seq is unique, so this is a total order and the heap is deterministic.
/// A lambda (not a function) so that the sifts' calls inline.
constexpr auto kBefore = [](const Event& a, const Event& b) { return key(a) < key(b); };

/// Writes an event at a heap position (the sifts' callback; the queue keeps no positions).
inline auto place_fn_of(std::vector<Event>& heap) {
  return [&heap](std::size_t pos, const Event& e) { heap[pos] = e; };
}

}  // namespace

void EventQueue::push(Time at, EventHandler* handler, std::uint64_t tag) {
  const Event ev{at, next_seq_++, handler, tag};
  // At the time of the last pop (and of the FIFO's events, if any): after every queued event of
  // that time, so the FIFO's order is kept.
  if (at == last_pop_at_ && (fifo_head_ == fifo_.size() || fifo_.back().at == at)) {
    fifo_.push_back(ev);
    return;
  }
  heap_.push_back(ev);
  dary::sift_up(heap_.data(), heap_.size() - 1, ev, kBefore, place_fn_of(heap_));
}

Event EventQueue::pop() {
  if (fifo_first()) {
    const Event ev = fifo_[fifo_head_++];
    if (fifo_head_ == fifo_.size()) {
      fifo_.clear();
      fifo_head_ = 0;
    }
    last_pop_at_ = ev.at;
    return ev;
  }
  const Event ev = pop_heap();
  last_pop_at_ = ev.at;
  return ev;
}

Event EventQueue::pop_heap() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  dary::pop_root(heap_.data(), heap_.size(), last, kBefore, place_fn_of(heap_));
  return top;
}

}  // namespace traincast::sim
