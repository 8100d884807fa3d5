#pragma once
// What a GPU is doing at a moment (tensor-core-bound, memory-bound, communicating, idle): the
// activity the workload builders set per op and the power model prices (power_model.h).

#include <cstdint>

namespace traincast::models {

/// What a GPU does at a moment, for its power draw. Set per op by the workload builders from the
/// kernel kinds (compute-bound if the compute roofline term dominates the op's time).
enum class Activity : std::uint8_t { idle = 0, comm = 1, memory_bound = 2, compute_bound = 3 };
constexpr int kNumActivities = 4;

}  // namespace traincast::models
