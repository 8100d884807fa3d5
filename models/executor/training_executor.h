#pragma once
// Runs one training job on the engine: builds every simulated GPU group's op graph (compute
// stream + TP/PP/DP communication streams with their dependencies) and executes it, so overlap,
// pipeline bubbles and exposed communication come out of the simulation (DESIGN.md §1, §3).

#include "models/report.h"
#include "models/scenario.h"
#include "sim/trace.h"

namespace traincast::models {

/// Simulates `scenario` and returns its report. `trace`, when given, receives one span per
/// executed op (per stage/replica group, per stream). Deterministic: same scenario, same report,
/// whatever options.threads. Throws std::invalid_argument for scenarios the models cannot run
/// (e.g. a precision the GPU lacks, interleaving with micro-batches not divisible by PP).
Report simulate_training(const Scenario& scenario, sim::TraceRecorder* trace = nullptr);

}  // namespace traincast::models
