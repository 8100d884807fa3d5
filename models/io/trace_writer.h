#pragma once
// Chrome / Perfetto trace JSON (the "Trace Event Format": complete events "ph":"X" with µs
// timestamps, process and thread name metadata). ui.perfetto.dev and chrome://tracing open it.

#include <iosfwd>

#include "sim/trace.h"

namespace traincast::io {

/// Writes every span of `trace` as a complete event; one process per simulated GPU group, one
/// thread per stream. Deterministic: spans in recording order, fixed number formatting.
void write_chrome_trace(const sim::TraceRecorder& trace, std::ostream& out);

}  // namespace traincast::io
