// EventQueue: a binary min-heap of Events keyed by (at, seq), stored in one vector, and a FIFO
// of the events pushed at the time of the last pop (see simulator.h).
//
// push() sifts a hole up from the new leaf; pop() uses Floyd's "bottom-up" variant: the hole left
// at the root walks down to a leaf along the smaller children (one comparison per level instead
// of two), then the last element is sifted up from there. Both move each Event once per level
// and never allocate beyond amortised vector growth.
//
// Measured choices (tests/benchmarks/event_queue_bench.cc, "hold" model): a branch-free
// 128-bit key compare is ~1.6x faster than a branchy (at, seq) compare for 1k-64k pending
// events; for 1M pending events it serialises the cache misses of the descent, which the
// prefetch of the next level mostly recovers.

#include <cstddef>
#include <utility>

#include "sim/heap_key.h"
#include "sim/simulator.h"

namespace traincast::sim {
namespace {

inline HeapKey key(const Event& e) { return heap_key(e.at.ns(), e.seq); }

/// Strict (at, seq) order. seq is unique, so this is a total order and the heap is deterministic.
inline bool before(const Event& a, const Event& b) { return key(a) < key(b); }

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
  std::size_t hole = heap_.size() - 1;
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / 2;
    if (!before(ev, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = ev;
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
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  // Walk the hole from the root down to a leaf, always promoting the smaller child.
  std::size_t hole = 0;
  std::size_t child = 1;
  while (child < n) {
    // The next level's candidates (children of child and child + 1) are 4 adjacent events:
    // fetch them while this level is compared, so that cache misses overlap in big heaps
    // (the branch-free choice below would otherwise serialise them).
    const std::size_t grandchild = 2 * child + 1;
    if (grandchild < n) {
      __builtin_prefetch(&heap_[grandchild]);
      __builtin_prefetch(&heap_[grandchild] + 3);
    }
    if (child + 1 < n) child += static_cast<std::size_t>(before(heap_[child + 1], heap_[child]));
    heap_[hole] = heap_[child];
    hole = child;
    child = 2 * hole + 1;
  }
  // Sift the former last element up from the leaf hole.
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / 2;
    if (!before(last, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = last;
  return top;
}

}  // namespace traincast::sim
