// The scenario of one sweep point (sweep_point.h): a copy of the base message, the point's axis
// values applied as overrides, then the scenario checks.

#include "models/io/sweep_point.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "models/io/scenario_io_internal.h"

namespace traincast::io {

models::Scenario sweep_point_scenario(const models::Sweep& sweep, std::size_t point) {
  if (point >= sweep.num_points()) {
    throw std::out_of_range("sweep_point_scenario: point " + std::to_string(point) + " of " +
                            std::to_string(sweep.num_points()));
  }
  std::vector<std::string> overrides;
  overrides.reserve(sweep.axes.size() + 1);
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    overrides.push_back(sweep.axes[a].path + "=" + sweep.value(point, a));
  overrides.push_back("options.threads=1");
  return detail::load_scenario_message(*sweep.base, kSweepPointOrigin, overrides);
}

}  // namespace traincast::io
