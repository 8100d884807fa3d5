// A sweep's system warnings (sweep_warnings.h).
#include "tools/cli/sweep_warnings.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/io/sweep_point.h"
#include "tools/cli/cli_util.h"

namespace traincast::cli {
namespace {

/// `line` ("warning: <sweep point>:L:C: storage.local: ...") with the point's origin replaced by
/// the file that wrote the field: the base scenario's file, or the sweep file's inline
/// `scenario.`. Only for a sweep without base_source (made in code): a loaded sweep's point
/// warnings are positioned at the field already ("base.textproto:7:11: storage.local: ...").
std::string with_sweep_origin(const models::Sweep& sweep, const std::string& line) {
  const std::string prefix = "warning: " + std::string(io::kSweepPointOrigin) + ":";
  if (line.rfind(prefix, 0) != 0) return line;
  std::size_t i = prefix.size();
  for (int colons = 0; colons < 2 && i < line.size(); ++i)
    if (line[i] == ':') ++colons;  // past "L:C:"
  if (i >= line.size() || line[i] != ' ') return line;
  const std::string rest = line.substr(i + 1);
  return sweep.base_path.empty() ? "warning: " + sweep.path + ": scenario." + rest
                                 : "warning: " + sweep.base_path + ": " + rest;
}

}  // namespace

void warn_sweep_systems(const models::Sweep& sweep, std::ostream& err) {
  std::vector<std::size_t> system_axes;
  bool template_axis = false;
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    const std::string& path = sweep.axes[a].path;
    template_axis = template_axis || path == "cluster.node_template" || path.rfind("cluster.node_group", 0) == 0;
    if (path.rfind("cluster.", 0) == 0 || path.rfind("storage.", 0) == 0 || path.rfind("thermal.", 0) == 0 ||
        path == "profile")
      system_axes.push_back(a);
  }
  std::set<std::vector<std::uint32_t>> seen, systems;         // loaded; all of the sweep's
  std::vector<std::string> order;                             // distinct lines, first raised first
  std::map<std::string, std::vector<std::string>> raised_at;  // line -> the systems raising it, by axis values
  for (std::size_t p = 0; p < sweep.num_points(); ++p) {
    std::vector<std::uint32_t> key;
    key.reserve(system_axes.size());
    for (std::size_t a : system_axes) key.push_back(sweep.value_index(p, a));
    systems.insert(key);
    if (seen.count(key)) continue;
    std::ostringstream lines;
    try {
      const models::Scenario point = io::sweep_point_scenario(sweep, p);
      warn_profile_hardware(point.cluster, lines);
      warn_settings_without_effect(point, lines);
    } catch (const std::exception&) {
      continue;  // the next point of the same system is tried
    }
    seen.insert(key);
    std::string system;  // "cluster.num_nodes=1, thermal.cooling=liquid"
    for (std::size_t k = 0; k < system_axes.size(); ++k)
      system +=
          (k == 0 ? "" : ", ") + sweep.axes[system_axes[k]].path + "=" + sweep.axes[system_axes[k]].values[key[k]];
    std::istringstream in(lines.str());
    for (std::string line; std::getline(in, line);) {
      line = with_sweep_origin(sweep, line);
      // A node template one point leaves unused may be another point's (an axis over
      // cluster.node_template or the node groups): such notes speak of one point, not the sweep.
      if (template_axis && (line.find("is described but no node uses it") != std::string::npos ||
                            line.find("are described but no node uses them") != std::string::npos))
        continue;
      std::vector<std::string>& at = raised_at[line];
      if (at.empty()) order.push_back(line);
      if (at.empty() || at.back() != system) at.push_back(system);
    }
  }
  constexpr std::size_t kNamed = 3;  // systems named before "and N more"
  for (const std::string& line : order) {
    const std::vector<std::string>& at = raised_at[line];
    err << line;
    if (at.size() < systems.size()) {  // not every system (or one failed its checks): say which
      err << " (at ";
      for (std::size_t k = 0; k < at.size() && k < kNamed; ++k) err << (k == 0 ? "" : "; ") << at[k];
      if (at.size() > kNamed) err << "; and " << at.size() - kNamed << " more";
      err << ")";
    }
    err << "\n";
  }
}

}  // namespace traincast::cli
