// libFuzzer target: arbitrary bytes as one rank's Chakra .et file. The only acceptable outcomes
// are a parsed trace (then run on one DGX H100, where std::invalid_argument for a trace that
// cannot run, e.g. a cycle, and std::overflow_error beyond the engine's range are fine) or an
// io::ChakraError; anything else (crash, sanitizer report, other exception, hang) is a bug.
// Seeds: the public traces, e.g.
//   chakra_trace_fuzz -max_total_time=60 CORPUS ../shared/data/chakra/astra-sim-microbenchmarks/all_reduce/4npus_1MB

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "models/executor/chakra_executor.h"
#include "models/io/chakra_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  traincast::models::ChakraRankTrace trace;
  try {
    trace =
        traincast::io::parse_chakra_trace(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.0.et", 0);
  } catch (const traincast::io::ChakraError&) {
    return 0;
  }
  if (trace.nodes.size() > 2000) return 0;  // keep each run short
  traincast::models::Scenario sc;
  sc.cluster.node_template = "dgx_h100";
  try {
    traincast::models::simulate_chakra(sc, {trace});
  } catch (const std::invalid_argument&) {
  } catch (const std::overflow_error&) {
  }
  return 0;
}
