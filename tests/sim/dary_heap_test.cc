// Tests for sim/dary_heap.h: the 4-ary sifts pop the same sequence as std::priority_queue on
// random keys with ties (a total order by (time, seq)), keep recorded positions right through
// updates and removals, and Floyd's construction makes a heap.

#include "sim/dary_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <random>
#include <set>
#include <tuple>
#include <vector>

namespace traincast::sim {
namespace {

struct Entry {
  std::int64_t time;
  std::uint64_t seq;  // unique: (time, seq) is a total order
  std::uint32_t id;
};

constexpr auto kBefore = [](const Entry& a, const Entry& b) {
  return a.time < b.time || (a.time == b.time && a.seq < b.seq);
};

/// "later" first, so std::priority_queue's top is the earliest
struct Later {
  bool operator()(const Entry& a, const Entry& b) const { return kBefore(b, a); }
};

/// A heap of Entries that records each entry's position (as the flow network's completion heap).
struct IndexedHeap {
  std::vector<Entry> heap;
  std::vector<std::size_t> pos;  // per id; kAbsent when not in the heap
  static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

  auto place() {
    return [this](std::size_t p, const Entry& e) {
      heap[p] = e;
      pos[e.id] = p;
    };
  }
  void insert(const Entry& e) {
    heap.push_back(e);
    dary::sift_up(heap.data(), heap.size() - 1, e, kBefore, place());
  }
  void update(std::uint32_t id, std::int64_t time) {  // sift up, then down, as FlowNetwork does
    Entry e = heap[pos[id]];
    e.time = time;
    dary::sift_up(heap.data(), pos[id], e, kBefore, place());
    const Entry moved = heap[pos[id]];
    dary::sift_down(heap.data(), heap.size(), pos[id], moved, kBefore, place());
  }
  Entry pop() {
    const Entry top = heap.front();
    pos[top.id] = kAbsent;
    const Entry last = heap.back();
    heap.pop_back();
    dary::pop_root(heap.data(), heap.size(), last, kBefore, place());
    return top;
  }
  void check_positions() const {
    for (std::size_t p = 0; p < heap.size(); ++p) ASSERT_EQ(pos[heap[p].id], p);
    for (std::size_t p = 1; p < heap.size(); ++p) ASSERT_FALSE(kBefore(heap[p], heap[dary::parent(p)])) << p;
  }
};

TEST(DaryHeapTest, PopsTheSameSequenceAsPriorityQueueWithTies) {
  std::mt19937_64 rng(18);
  for (const std::int64_t range : {1, 4, 50, 1000000}) {  // range 1: every key ties on time
    std::vector<Entry> heap;
    std::priority_queue<Entry, std::vector<Entry>, Later> ref;
    std::uint64_t seq = 0;
    std::vector<std::tuple<std::int64_t, std::uint64_t>> got, want;
    const auto place = [&heap](std::size_t p, const Entry& e) { heap[p] = e; };
    const auto pop_both = [&] {  // the heap's root and the reference's top, then both popped
      got.emplace_back(heap.front().time, heap.front().seq);
      want.emplace_back(ref.top().time, ref.top().seq);
      ref.pop();
      const Entry last = heap.back();
      heap.pop_back();
      dary::pop_root(heap.data(), heap.size(), last, kBefore, place);
    };
    for (int step = 0; step < 20000; ++step) {
      if (heap.empty() || rng() % 5 < 3) {  // grow on average, with pops throughout
        const Entry e{static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range)), seq++, 0};
        heap.push_back(e);
        dary::sift_up(heap.data(), heap.size() - 1, e, kBefore, place);
        ref.push(e);
      } else {
        pop_both();
      }
    }
    while (!heap.empty()) pop_both();
    EXPECT_EQ(got, want) << "range " << range;
  }
}

TEST(DaryHeapTest, IndexedHeapKeepsPositionsThroughUpdatesAndRemovals) {
  std::mt19937_64 rng(32);
  constexpr std::uint32_t kIds = 600;
  IndexedHeap h;
  h.pos.assign(kIds, IndexedHeap::kAbsent);
  std::set<std::tuple<std::int64_t, std::uint64_t, std::uint32_t>> ref;  // (time, seq, id)
  std::vector<std::uint64_t> seq_of(kIds, 0);
  std::uint64_t seq = 0;
  for (int step = 0; step < 50000; ++step) {
    const auto id = static_cast<std::uint32_t>(rng() % kIds);
    const auto time = static_cast<std::int64_t>(rng() % 64);  // many ties on time
    const unsigned op = rng() % 4;
    if (h.pos[id] == IndexedHeap::kAbsent) {
      seq_of[id] = seq++;
      h.insert(Entry{time, seq_of[id], id});
      ref.emplace(time, seq_of[id], id);
    } else if (op < 2) {  // a new key (earlier or later): the key the flow network updates
      ref.erase({h.heap[h.pos[id]].time, seq_of[id], id});
      h.update(id, time);
      ref.emplace(time, seq_of[id], id);
    } else {  // removal of the earliest
      const Entry e = h.pop();
      ASSERT_FALSE(ref.empty());
      EXPECT_EQ(std::make_tuple(e.time, e.seq, e.id), *ref.begin());
      ref.erase(ref.begin());
    }
    if (step % 997 == 0) h.check_positions();
  }
  h.check_positions();
  while (!h.heap.empty()) {
    const Entry e = h.pop();
    EXPECT_EQ(std::make_tuple(e.time, e.seq, e.id), *ref.begin());
    ref.erase(ref.begin());
  }
  EXPECT_TRUE(ref.empty());
}

TEST(DaryHeapTest, MakeHeapThenPopsInOrderAndRecordsPositions) {
  std::mt19937_64 rng(7);
  for (const std::size_t n : {0u, 1u, 2u, 4u, 5u, 6u, 21u, 22u, 333u, 4096u}) {
    IndexedHeap h;
    h.pos.assign(n, IndexedHeap::kAbsent);
    for (std::size_t i = 0; i < n; ++i) {
      h.heap.push_back(Entry{static_cast<std::int64_t>(rng() % 10), rng(), static_cast<std::uint32_t>(i)});
      h.pos[i] = i;
    }
    std::vector<Entry> sorted = h.heap;
    std::sort(sorted.begin(), sorted.end(), kBefore);
    dary::make_heap(h.heap.data(), h.heap.size(), kBefore, h.place());
    h.check_positions();
    for (const Entry& want : sorted) {
      const Entry e = h.pop();
      EXPECT_EQ(std::make_tuple(e.time, e.seq, e.id), std::make_tuple(want.time, want.seq, want.id)) << "n " << n;
    }
  }
}

TEST(DaryHeapTest, EarliestChildOfPartialAndFullGroups) {
  const std::vector<Entry> v = {{5, 0, 0}, {3, 1, 1}, {3, 0, 2}, {4, 0, 3}, {1, 9, 4}, {1, 8, 5}};
  EXPECT_EQ(dary::earliest_child(v.data(), 0, 4, kBefore), 2u);  // full group: ties broken by seq
  EXPECT_EQ(dary::earliest_child(v.data(), 0, 2, kBefore), 1u);  // partial group
  EXPECT_EQ(dary::earliest_child(v.data(), 3, 6, kBefore), 5u);
  EXPECT_EQ(dary::earliest_child(v.data(), 2, 6, kBefore), 5u);  // full group, winner in the second pair
}

}  // namespace
}  // namespace traincast::sim
