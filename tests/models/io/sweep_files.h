#pragma once
// For sweep tests: a one-line inline base scenario and loading sweep text in memory (file name
// "t.sweep.textproto" or "t.sweep.json"; a scenario_file resolves in tests/models/io/data).

#include <string>

#include "models/io/sweep.h"
#include "models/io/sweep_loader.h"

namespace traincast::io::test_support {

/// tests/models/io/data, where the test sweeps' scenario files are.
inline const std::string kSweepDataDir = std::string(TRAINCAST_SOURCE_DIR) + "/tests/models/io/data";

/// A one-line inline base: 1 DGX H100 (8 GPUs), 8 layers, 16 heads, batch 16; line 1 of every test sweep.
inline const std::string kBase =
    "scenario { cluster { node_template: \"dgx_h100\" num_nodes: 1 } workload { model { num_layers: 8 hidden_size: "
    "1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 } training { global_batch_size: 16 } } }\n";

/// load_sweep_text of `text` as "t.sweep.textproto" (or "t.sweep.json" for JSON) in kSweepDataDir.
inline models::Sweep load(const std::string& text, Format format = Format::text) {
  return load_sweep_text(text, format == Format::text ? "t.sweep.textproto" : "t.sweep.json", format, kSweepDataDir);
}

}  // namespace traincast::io::test_support
