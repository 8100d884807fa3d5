// Notes on `traincast compare`'s inputs (tools/cli/compare_notes.h).
#include "tools/cli/compare_notes.h"

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/spec/scenario.h"
#include "tools/cli/summary.h"

namespace traincast::cli {
namespace {

/// "dgx_b200: 8 x B200 a node" (a partition as written, "gb200_nvl72/36: 36 x GB200 a node, priced
/// as the 72-GPU product"); a mixed cluster's groups joined by " + ".
std::string node_text(const models::ClusterSpec& c) {
  const auto one = [&c](const std::string& name, const std::string& gpu) {
    const models::NodeTemplate& t = models::find_node_template(name, c);
    std::string s = name + ": " + std::to_string(t.gpus_per_node) + " x " + (gpu.empty() ? t.gpu : gpu) + " a node";
    if (t.physical_gpus() != t.gpus_per_node)
      s += ", priced as the " + std::to_string(t.physical_gpus()) + "-GPU product";
    return s;
  };
  if (c.node_groups.empty()) return one(c.node_template, c.gpu);
  std::string s;
  for (const models::NodeGroupSpec& g : c.node_groups) s += (s.empty() ? "" : " + ") + one(g.node_template, g.gpu);
  return s;
}

/// The GPUs of a cluster: "B200", a mixed one's "A100-SXM4-80GB + H100-SXM5-80GB".
std::string gpu_text(const models::ClusterSpec& c) {
  if (c.node_groups.empty()) return !c.gpu.empty() ? c.gpu : models::cluster_node_template(c).gpu;
  std::string s;
  for (const models::NodeGroupSpec& g : c.node_groups) {
    const std::string gpu = !g.gpu.empty() ? g.gpu : models::find_node_template(g.node_template, c).gpu;
    if (s.find(gpu) == std::string::npos) s += (s.empty() ? "" : " + ") + gpu;
  }
  return s;
}

std::string trimmed(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  const std::size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

/// "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return s;
}

}  // namespace

void warn_prices_set_for_unlike_columns(const std::vector<CompareInput>& in, const std::vector<std::string>& sets,
                                        std::ostream& err) {
  struct Price {
    const char* field;
    const char* what;  ///< what one price is for
    std::string (*hardware)(const models::ClusterSpec&);
  };
  const Price prices[] = {{"cost.node_price_usd", "a node", node_text},
                          {"cost.cloud_price_per_gpu_hour_usd", "a GPU-hour", gpu_text}};
  for (const std::string& a : sets) {
    const std::string field = trimmed(a.substr(0, a.find('=')));
    for (const Price& p : prices) {
      if (field != p.field) continue;
      std::vector<std::string> kinds, columns;
      for (const CompareInput& x : in) {
        const std::string h = p.hardware(x.scenario.cluster);
        if (std::find(kinds.begin(), kinds.end(), h) == kinds.end()) kinds.push_back(h);
        columns.push_back(x.label + " (" + h + ")");
      }
      if (kinds.size() < 2) continue;
      err << "warning: --set: " << field << ": " << trimmed(a.substr(a.find('=') + 1)) << " is one price of " << p.what
          << " for every column, but their hardware differs: " << and_list(columns)
          << "; each column is charged it as its own (expected a price for each column's hardware: give cost { "
          << field.substr(5) << ": ... } in each scenario file instead of --set)\n";
    }
  }
}

std::vector<std::string> cooling_pue_row_notes(const std::vector<CompareInput>& in) {
  const double default_pue = models::PowerSpec{}.pue;
  std::vector<std::string> liquid, air;
  std::vector<bool> named(in.size(), false);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const models::Scenario& s = in[i].scenario;
    // A PUE the scenario (or a --set) wrote is the user's, even at the default's value.
    if (s.power.given.pue || s.power.pue != default_pue) continue;
    (s.thermal.cooling == models::Cooling::liquid ? liquid : air).push_back(in[i].label);
    named[i] = true;
  }
  std::vector<std::string> notes(in.size());
  if (liquid.empty() || air.empty()) return notes;
  const std::string note =
      and_list(liquid) + (liquid.size() == 1 ? " is" : " are") + " liquid-cooled and " + and_list(air) +
      " air-cooled, yet " + (liquid.size() + air.size() == 2 ? "both use" : "all use") + " power.pue " +
      format_fixed(default_pue, 2) + ", its default (" + std::string(kDefaultPueSource) +
      "): cooling does not change PUE, so their facility power and energy differ by IT power alone. "
      "Give each scenario its facility's PUE: power { pue: ... } in its file (--set power.pue=X sets every "
      "column alike).";
  for (std::size_t i = 0; i < in.size(); ++i)
    if (named[i]) notes[i] = note;
  return notes;
}

std::string cooling_pue_note(const std::vector<CompareInput>& in) {
  for (const std::string& note : cooling_pue_row_notes(in))
    if (!note.empty()) return "\nPUE: " + note + "\n";
  return "";
}

}  // namespace traincast::cli
