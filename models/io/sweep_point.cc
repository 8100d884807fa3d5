// The scenario of one sweep point (sweep_point.h): a copy of the base message, the point's axis
// values applied as overrides, then the scenario checks.

#include "models/io/sweep_point.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/io/message_reader.h"
#include "models/io/overrides.h"
#include "models/io/scenario_io_internal.h"
#include "traincast.pb.h"

namespace traincast::io {

models::Scenario sweep_point_scenario(const models::Sweep& sweep, std::size_t point) {
  if (point >= sweep.num_points()) {
    throw std::out_of_range("sweep_point_scenario: point " + std::to_string(point) + " of " +
                            std::to_string(sweep.num_points()));
  }
  const models::SweepBaseSource* source = sweep.base_source.get();
  if (source == nullptr || source->map == nullptr) {
    std::vector<std::string> overrides;
    overrides.reserve(sweep.axes.size() + 1);
    for (std::size_t a = 0; a < sweep.axes.size(); ++a)
      overrides.push_back(sweep.axes[a].path + "=" + sweep.value(point, a));
    overrides.push_back("options.threads=1");
    return detail::load_scenario_message(*sweep.base, kSweepPointOrigin, overrides);
  }
  // Each message names the place that wrote its field: the base file (or the sweep file's inline
  // scenario), a `set` entry or the axis value of this point, each as FILE:LINE:COL.
  std::vector<detail::Override> overrides;
  overrides.reserve(source->sets.size() + sweep.axes.size() + 1);
  for (std::size_t j = 0; j < source->sets.size(); ++j) {
    overrides.push_back({source->sets[j], j < source->set_origins.size() ? source->set_origins[j] : sweep.path});
  }
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    const models::SweepAxis& axis = sweep.axes[a];
    const std::size_t v = sweep.value_index(point, a);
    overrides.push_back({axis.path + "=" + axis.values[v],
                         v < axis.value_origins.size() ? axis.value_origins[v] : std::string("--set")});
  }
  overrides.push_back({"options.threads=1", "--set"});
  proto::Scenario copy = *sweep.base;
  return detail::load_parsed(copy, *source->map, {}, source->origin, source->json ? Format::json : Format::text,
                             overrides, nullptr, nullptr, source->text);
}

std::vector<std::string> by_file_and_position(std::vector<std::string> errors, std::string_view sweep_file) {
  std::vector<std::optional<detail::MessagePosition>> at(errors.size());
  std::transform(errors.begin(), errors.end(), at.begin(), detail::message_position);
  // (no position, not the sweep file, file, line, column): the sweep file's first, unpositioned last.
  const auto key = [&at, sweep_file](std::size_t i) {
    static const detail::MessagePosition kNone;
    const detail::MessagePosition& p = at[i] ? *at[i] : kNone;
    return std::tuple(!at[i], p.file != sweep_file, std::string_view(p.file), p.line, p.column);
  };
  std::vector<std::size_t> order(errors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&key](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<std::string> out;
  out.reserve(errors.size());
  for (const std::size_t i : order) out.push_back(std::move(errors[i]));
  return out;
}

}  // namespace traincast::io
