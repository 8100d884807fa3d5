#pragma once
// Fluid flow model: directed resources (links) with capacity and latency, flows with paths,
// rates by max-min fairness (progressive filling), recomputed only on the component of
// resources and flows that an arrival or departure touches.
// Source: Bertsekas & Gallager, Data Networks (1992), §6.5.2 progressive filling;
// SimGrid's LMM "selective update" (Velho et al., TOMACS 2013) for the incremental scheme.

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "sim/time.h"

namespace traincast::sim {

using ResourceId = std::uint32_t;
using FlowId = std::uint32_t;

/// Told when a flow has delivered its last byte (drain time + path latency).
class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual void on_flow_complete(FlowId flow, std::uint64_t tag) = 0;
};

/// Per-resource counters accumulated over the run.
struct ResourceStats {
  double bytes_carried = 0.0;  ///< total bytes that crossed the resource
  double busy_ns = 0.0;        ///< time with at least one active flow [ns]
  std::uint64_t flows = 0;     ///< flows that crossed it
};

class FlowNetwork : public EventHandler {
 public:
  explicit FlowNetwork(Simulator& sim);

  /// capacity_bytes_per_s > 0 and finite; latency >= 0 is charged once per flow crossing it.
  /// Throws std::invalid_argument otherwise. Returns dense ids 0, 1, 2, ...
  ResourceId add_resource(double capacity_bytes_per_s, Time latency, std::string name);

  /// Starts a flow now. path: resource ids (may be empty: then only rate_cap bounds it);
  /// bytes >= 0; rate_cap_bytes_per_s > 0 (infinity = uncapped; an empty path needs a finite cap
  /// or completes after latency only when bytes == 0). The listener is told at
  /// now + drain time + sum of path latencies. A zero-byte flow completes after the latencies.
  /// Throws std::invalid_argument for an unknown resource id or bad numbers.
  FlowId start_flow(std::span<const ResourceId> path, double bytes, FlowListener* listener, std::uint64_t tag,
                    double rate_cap_bytes_per_s = std::numeric_limits<double>::infinity());

  /// Current rate of an active flow [bytes/s]; 0 once drained.
  double rate(FlowId flow) const;
  std::size_t active_flows() const;
  std::size_t num_resources() const;
  const std::string& resource_name(ResourceId r) const;
  double capacity(ResourceId r) const;
  Time latency(ResourceId r) const;
  /// Sum of current rates on r [bytes/s]; <= capacity(r) (invariant).
  double load(ResourceId r) const;
  /// Stats up to now() (busy time of active resources included up to now()).
  ResourceStats stats(ResourceId r) const;

  void on_event(std::uint64_t tag) override;

 private:
  struct Impl;
  // Implementation detail left to flow_network.cc (see there).
  Simulator& sim_;
  // state declared in the .cc through a pimpl would cost an indirection on the hot path;
  // the implementation may replace this comment with concrete members.
};

}  // namespace traincast::sim
