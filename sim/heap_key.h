#pragma once
// The branch-free order key of the engine's heaps (the event queue, the flow network's
// completion heap): (time in ns, seq) as one unsigned 128-bit integer.

#include <cstdint>

namespace traincast::sim {

/// Unsigned 128-bit order key (GCC/Clang extension; __extension__ keeps -Wpedantic quiet).
__extension__ using HeapKey = unsigned __int128;

/// (time_ns, seq) as a HeapKey: the sign bit of time_ns is flipped so that signed order becomes
/// unsigned order, seq in the low half. key(a) < key(b) exactly when (time, seq) of a comes first.
/// Comparing two keys is branch-free (cmp + sbb), which matters because heap comparisons on
/// unpredictable times mispredict as branches (sim/event_queue.cc's measurement).
inline HeapKey heap_key(std::int64_t time_ns, std::uint64_t seq) {
  const std::uint64_t at = static_cast<std::uint64_t>(time_ns) ^ (std::uint64_t{1} << 63);
  return (static_cast<HeapKey>(at) << 64) | seq;
}

}  // namespace traincast::sim
