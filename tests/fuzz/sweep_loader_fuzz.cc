// libFuzzer target: arbitrary bytes as a sweep file (models/io/sweep_loader.h), with scenario_file
// resolved against scenarios/sweeps (run from the repository root). The only acceptable outcomes are
// a Sweep, whose first and last points build (a scenario or an io::ScenarioError), or an
// io::ScenarioError with at least one message; anything else (crash, sanitizer report, other
// exception, hang) is a bug. Format by the first byte (fuzz_input.h). Seeds: scenarios/sweeps,
// tests/tools/data.

#include <cstddef>
#include <cstdint>

#include "models/io/sweep_loader.h"
#include "models/io/sweep_point.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

/// Builds point `p` of `sweep`; a point a scenario check refuses is an acceptable outcome.
void build_point(const traincast::models::Sweep& sweep, std::size_t p) {
  try {
    traincast::io::sweep_point_scenario(sweep, p);
  } catch (const traincast::io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = traincast::fuzz::input_text(data, size);
  try {
    const traincast::models::Sweep sweep =
        traincast::io::load_sweep_text(text, "fuzz.sweep", traincast::fuzz::input_format(text), "scenarios/sweeps");
    if (sweep.num_points() == 0 || sweep.hash.size() != 16) __builtin_trap();  // documented: >= 1 point, 16 hex digits
    build_point(sweep, 0);
    build_point(sweep, sweep.num_points() - 1);
  } catch (const traincast::io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();
  }
  return 0;
}
