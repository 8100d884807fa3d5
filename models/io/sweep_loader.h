#pragma once
// Reading a sweep file (message Sweep in models/io/traincast.proto; format: scenarios/README.md,
// "Sweeps") into a models::Sweep: its base scenario, `set` overrides, axes, constraints and
// metrics checked, and the points that pass the constraints expanded.
//
// Error discipline as for scenarios (models/io/scenario_io.h): every problem in a sweep file is
// collected into one ScenarioError whose messages read
//     file:line:col: field.path: what is wrong (expected ...)
// e.g. "sweeps/a.sweep.textproto:7:3: axis[1].path: unknown field "tpp" in workload.parallel.tpp,
// did you mean "tp"? (expected one of: tp, pp, dp, ...)".

#include <string>
#include <string_view>

#include "models/io/scenario_io.h"
#include "models/io/sweep.h"

namespace traincast::io {

/// Reads a sweep file (text format or JSON by extension, as for scenarios), reads its base
/// scenario (scenario_file, relative to the sweep file's directory, or the inline scenario),
/// applies its `set` overrides, checks the axes, constraints and metrics, and expands the points.
/// Names usable in constraints: axis names; `gpus` (num_nodes x GPUs per node of the node
/// template) and `gpus_per_node`; any scalar scenario field by its path or, when unambiguous, by
/// its last segment (num_attention_heads, global_batch_size, ...), with the point's value.
/// Throws ScenarioError with every problem found: unreadable files, syntax, unknown fields,
/// unknown axis path, axis without values, a value the field cannot take, duplicate values or
/// names, constraint syntax, unknown names and type errors, constraints that no point satisfies,
/// unknown metrics, more than 10,000,000 points before constraints.
models::Sweep load_sweep_file(const std::string& path);

/// As load_sweep_file, for text in memory. origin names the text in messages; a scenario_file is
/// resolved relative to base_dir.
models::Sweep load_sweep_text(std::string_view text, std::string_view origin, Format format,
                              const std::string& base_dir);

}  // namespace traincast::io
