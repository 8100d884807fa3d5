#pragma once
// The hook through which an op-graph runner (models/executor/op_graph.h) tells a power and
// thermal model what each worker's streams are doing, and hears back the worker's compute speed.

#include <cstdint>

#include "models/power/gpu_activity.h"

namespace traincast::models {

/// Stream numbering of WorkerActivityModel::stream_changed: index kComputeStream is the worker's
/// compute stream; every other index below kMaxWorkerStreams is a communication or copy stream
/// (one bit each in a model's busy mask). The runner's Stream enum (models/executor/op_graph.h)
/// follows this numbering.
constexpr unsigned kComputeStream = 0;
constexpr unsigned kMaxWorkerStreams = 32;

/// Told by a WorkerActivityModel that a worker's compute speed changed (e.g. a GPU of it reached
/// its slowdown temperature); the runner stretches or shrinks the running compute op.
class WorkerSpeedListener {
 public:
  virtual ~WorkerSpeedListener() = default;
  /// speed in (0, 1]: progress of the running compute op per ns, relative to the full clock.
  virtual void speed_changed(std::uint32_t worker, double speed) = 0;
};

/// The runner's hook for power and thermal models (models/power/power_thermal.h). A worker is a
/// TP group of GPUs in lockstep; its speed is that of its slowest GPU. The runner reports every
/// op start and end per stream; for compute ops it uses the returned speed. Without a model the
/// runner behaves as if every speed were 1.
class WorkerActivityModel {
 public:
  virtual ~WorkerActivityModel() = default;
  /// Stream `stream` (< kMaxWorkerStreams; kComputeStream or a communication stream) of `worker`
  /// starts (busy) an op of activity `a` whose compute-bound fraction at full clock is
  /// `compute_fraction` (0 for collectives), or goes idle (!busy). A start on a stream that is
  /// still busy replaces its op (the previous one ended at this instant). Returns the worker's
  /// speed for that op (1 = full clock; meaningful for compute).
  virtual double stream_changed(std::uint32_t worker, unsigned stream, bool busy, Activity a,
                                double compute_fraction) = 0;
  /// The iteration barrier `iteration` completed (all workers reached the end of that step).
  virtual void barrier_done(int iteration) = 0;
  /// The last compute-stream op of `iteration` (over all workers) ended now: the iteration
  /// boundary the training report measures its iteration time between (training_report).
  virtual void compute_done(int /*iteration*/) {}
  /// Where to report speed changes; set by the runner before the run.
  virtual void set_listener(WorkerSpeedListener* listener) = 0;
};

}  // namespace traincast::models
