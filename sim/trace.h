#pragma once
// A trace recorder: spans on named tracks, collected during a run and written out by the io
// layer (Chrome/Perfetto JSON). The engine and models only append; names are interned.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/time.h"

namespace traincast::sim {

class TraceRecorder {
 public:
  struct Span {
    std::uint32_t track;  ///< index into tracks()
    std::uint32_t name;   ///< index into names()
    Time start;
    Time end;
    std::int32_t arg = -1;  ///< e.g. micro-batch index, -1 = none
  };
  struct Track {
    std::string process;  ///< a GPU or a group of GPUs ("stage 0 / replica 0 (GPU 0-1)")
    std::string thread;   ///< a stream ("compute", "tp comm", ...)
    std::int32_t process_id = 0;
    std::int32_t thread_id = 0;
  };

  /// Returns the id of the track, creating it on first use.
  std::uint32_t track(std::int32_t process_id, std::string_view process, std::int32_t thread_id,
                      std::string_view thread);
  std::uint32_t name(std::string_view n);
  void span(std::uint32_t track, std::uint32_t name, Time start, Time end, std::int32_t arg = -1) {
    spans_.push_back(Span{track, name, start, end, arg});
  }
  /// A counter sample: `value` holds on `track` from `at` until the track's next sample
  /// (Perfetto counter track, e.g. a GPU's power in W or temperature in C).
  struct Counter {
    std::uint32_t track;
    std::uint32_t name;
    Time at;
    double value;
  };
  void counter(std::uint32_t track, std::uint32_t name, Time at, double value) {
    counters_.push_back(Counter{track, name, at, value});
  }
  const std::vector<Counter>& counters() const { return counters_; }
  const std::vector<Span>& spans() const { return spans_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<Span> spans_;
  std::vector<Counter> counters_;
  std::vector<Track> tracks_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::unordered_map<std::int64_t, std::uint32_t> track_ids_;
};

inline std::uint32_t TraceRecorder::track(std::int32_t process_id, std::string_view process, std::int32_t thread_id,
                                          std::string_view thread) {
  const std::int64_t key = (static_cast<std::int64_t>(process_id) << 32) | static_cast<std::uint32_t>(thread_id);
  auto it = track_ids_.find(key);
  if (it != track_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(tracks_.size());
  tracks_.push_back(Track{std::string(process), std::string(thread), process_id, thread_id});
  track_ids_.emplace(key, id);
  return id;
}

inline std::uint32_t TraceRecorder::name(std::string_view n) {
  auto it = name_ids_.find(std::string(n));
  if (it != name_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(n);
  name_ids_.emplace(std::string(n), id);
  return id;
}

}  // namespace traincast::sim
