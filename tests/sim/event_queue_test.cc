// Tests for sim::EventQueue: (time, insertion) order, ties, heap behaviour under random load.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "sim/simulator.h"

namespace traincast::sim {
namespace {

TEST(EventQueueTest, EmptyInitially) {
  EventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
}

TEST(EventQueueTest, PopsInTimeOrder) {
  EventQueue q;
  for (std::int64_t t : {50, 10, 40, 20, 30}) q.push(Time::from_ns(t), nullptr, static_cast<std::uint64_t>(t));
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.top().at.ns(), 10);
  std::vector<std::uint64_t> tags;
  while (!q.empty()) tags.push_back(q.pop().tag);
  EXPECT_EQ(tags, (std::vector<std::uint64_t>{10, 20, 30, 40, 50}));
}

TEST(EventQueueTest, TiesPopInInsertionOrder) {
  EventQueue q;
  // Five events at t = 7 interleaved with events at t = 3 and t = 9: the t = 7 ones keep their order.
  q.push(Time::from_ns(7), nullptr, 0);
  q.push(Time::from_ns(9), nullptr, 100);
  q.push(Time::from_ns(7), nullptr, 1);
  q.push(Time::from_ns(3), nullptr, 200);
  q.push(Time::from_ns(7), nullptr, 2);
  q.push(Time::from_ns(7), nullptr, 3);
  q.push(Time::from_ns(7), nullptr, 4);
  std::vector<std::uint64_t> tags;
  std::vector<std::uint64_t> seqs;
  while (!q.empty()) {
    const Event e = q.pop();
    tags.push_back(e.tag);
    seqs.push_back(e.seq);
  }
  EXPECT_EQ(tags, (std::vector<std::uint64_t>{200, 0, 1, 2, 3, 4, 100}));
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{3, 0, 2, 4, 5, 6, 1}));
}

TEST(EventQueueTest, CarriesHandlerAndTag) {
  struct Dummy : EventHandler {
    void on_event(std::uint64_t) override {}
  } h;
  EventQueue q;
  q.push(Time::from_ns(1), &h, 0xDEADBEEFull);
  const Event e = q.pop();
  EXPECT_EQ(e.handler, &h);
  EXPECT_EQ(e.tag, 0xDEADBEEFull);
  EXPECT_EQ(e.at.ns(), 1);
}

TEST(EventQueueTest, RandomInterleavedPushPopMatchesSortedReference) {
  // Reference: a sorted multiset of (time, seq). Many duplicate times to exercise ties.
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<std::int64_t> dt(0, 20);
  EventQueue q;
  std::vector<std::tuple<std::int64_t, std::uint64_t>> ref;
  std::uint64_t seq = 0;
  std::int64_t now = 0;
  for (int round = 0; round < 20000; ++round) {
    const bool do_push = ref.empty() || (rng() % 3 != 0);
    if (do_push) {
      const std::int64_t t = now + dt(rng);
      q.push(Time::from_ns(t), nullptr, seq);
      ref.emplace_back(t, seq);
      ++seq;
    } else {
      const auto it = std::min_element(ref.begin(), ref.end());
      const Event e = q.pop();
      ASSERT_EQ(e.at.ns(), std::get<0>(*it));
      ASSERT_EQ(e.seq, std::get<1>(*it));
      ASSERT_EQ(e.tag, std::get<1>(*it));
      now = e.at.ns();
      ref.erase(it);
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

TEST(EventQueueTest, PushesAtTheLastPopTimeKeepTheOrder) {
  // Half the pushes at the time of the last pop (the queue's FIFO), the rest around it, earlier
  // ones included (a raw queue allows them): pops and top() follow (time, seq) as one heap would.
  std::mt19937_64 rng(2026);
  EventQueue q;
  std::vector<std::tuple<std::int64_t, std::uint64_t>> ref;
  std::uint64_t seq = 0;
  std::int64_t last = 0;
  for (int round = 0; round < 20000; ++round) {
    if (ref.empty() || rng() % 5 < 3) {
      const std::int64_t t = rng() % 2 == 0 ? last : last + static_cast<std::int64_t>(rng() % 7) - 2;
      q.push(Time::from_ns(t), nullptr, seq);
      ref.emplace_back(t, seq++);
    } else {
      const auto it = std::min_element(ref.begin(), ref.end());
      ASSERT_EQ(q.top().seq, std::get<1>(*it));
      const Event e = q.pop();
      ASSERT_EQ(e.at.ns(), std::get<0>(*it));
      ASSERT_EQ(e.seq, std::get<1>(*it));
      last = e.at.ns();
      ref.erase(it);
    }
    ASSERT_EQ(q.size(), ref.size());
    ASSERT_EQ(q.empty(), ref.empty());
  }
}

}  // namespace
}  // namespace traincast::sim
