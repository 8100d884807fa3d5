#pragma once
// The sift operations of a 4-ary min-heap stored in an array (children of i at 4i + 1 .. 4i + 4),
// shared by the engine's two heaps: the event queue (sim/event_queue.cc) and the flow network's
// completion heap (sim/flow_network.cc), which also keeps each entry's position (the `place`
// callback writes an entry at a position, and may record it).
//
// Why 4-ary: a pop walks log4(n) levels instead of log2(n), half the moves (and, in the flow
// network, half the position updates, each a write to a flow record elsewhere in memory), for
// 3 compares per level instead of 1 (a tournament: two independent pairs, then their winners,
// so the dependency chain per level is two compares). The four children of a node are adjacent
// (one or two cache lines). Both heaps order by a strict total order (time, then a unique
// sequence number), so which entry is popped next does not depend on the heap's shape: any
// correct heap pops the same sequence, and outputs are unchanged bit for bit.
// Source: Johnson, "Priority queues with update and finding minimum spanning trees", IPL 4
// (1975) for d-ary heaps; Floyd's bottom-up pop (Knuth, TAOCP vol. 3, 5.2.3, exercise 18).

#include <cstddef>

namespace traincast::sim::dary {

inline constexpr std::size_t kArity = 4;

inline constexpr std::size_t parent(std::size_t i) { return (i - 1) / kArity; }
inline constexpr std::size_t first_child(std::size_t i) { return kArity * i + 1; }

/// Index of the earliest of heap[c .. min(c + kArity, n)) (c < n) by `before` (a strict order).
template <typename T, typename Before>
inline std::size_t earliest_child(const T* heap, std::size_t c, std::size_t n, Before before) {
  if (c + kArity <= n) {  // a full group: a branch-free tournament
    const std::size_t a = c + static_cast<std::size_t>(before(heap[c + 1], heap[c]));
    const std::size_t b = c + 2 + static_cast<std::size_t>(before(heap[c + 3], heap[c + 2]));
    return before(heap[b], heap[a]) ? b : a;
  }
  std::size_t best = c;
  for (std::size_t k = c + 1; k < n; ++k) best = before(heap[k], heap[best]) ? k : best;
  return best;
}

/// Moves `e` (meant for position `hole`, which is free) up past every ancestor it comes before,
/// placing each ancestor moved and then `e` with place(pos, value).
template <typename T, typename Before, typename Place>
inline void sift_up(T* heap, std::size_t hole, const T& e, Before before, Place place) {
  while (hole > 0) {
    const std::size_t up = parent(hole);
    if (!before(e, heap[up])) break;
    place(hole, heap[up]);
    hole = up;
  }
  place(hole, e);
}

/// Moves `e` (meant for position `hole`, which is free, in a heap of n entries) down past every
/// child that comes before it, placing each child moved and then `e`.
template <typename T, typename Before, typename Place>
inline void sift_down(T* heap, std::size_t n, std::size_t hole, const T& e, Before before, Place place) {
  for (;;) {
    const std::size_t c = first_child(hole);
    if (c >= n) break;
    const std::size_t best = earliest_child(heap, c, n, before);
    if (!before(heap[best], e)) break;
    place(hole, heap[best]);
    hole = best;
  }
  place(hole, e);
}

/// Heaps of at least this many entries (beyond the first-level caches, for the event queue's
/// 32-byte entries) prefetch in pop_root (event_queue_bench, Hold/1048576).
inline constexpr std::size_t kPrefetchFrom = std::size_t{1} << 14;

/// Removes the root of a heap whose last entry has already been taken off: `last` (the former
/// entry at position n) goes back in, and heap[0 .. n) is a heap again. Floyd's bottom-up
/// variant: the hole at the root walks down to a leaf along the earliest children (no compare
/// with `last`, which came from the bottom), then `last` sifts up from there. From kPrefetchFrom
/// entries each level first fetches the 16 entries the next level may compare (the children of
/// all four candidates, contiguous), so that their cache misses overlap this level's compares
/// instead of following them.
template <typename T, typename Before, typename Place>
inline void pop_root(T* heap, std::size_t n, const T& last, Before before, Place place) {
  if (n == 0) return;
  std::size_t hole = 0;
  for (std::size_t c = first_child(0); c < n; c = first_child(hole)) {
    if (n >= kPrefetchFrom) {
      const std::size_t g = first_child(c);
      constexpr std::size_t kPerLine = sizeof(T) >= 64 ? 1 : 64 / sizeof(T);
      for (std::size_t k = 0; k < kArity * kArity && g + k < n; k += kPerLine) {
        __builtin_prefetch(heap + g + k);
      }
    }
    const std::size_t best = earliest_child(heap, c, n, before);
    place(hole, heap[best]);
    hole = best;
  }
  sift_up(heap, hole, last, before, place);
}

/// Makes heap[0 .. n) a heap (Floyd's construction: sift down every parent, last first).
template <typename T, typename Before, typename Place>
inline void make_heap(T* heap, std::size_t n, Before before, Place place) {
  if (n < 2) return;
  for (std::size_t i = parent(n - 1) + 1; i-- > 0;) {
    const T e = heap[i];
    sift_down(heap, n, i, e, before, place);
  }
}

}  // namespace traincast::sim::dary
