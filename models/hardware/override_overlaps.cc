// Overrides naming one element with the same field (override_overlaps.h).
#include "models/hardware/override_overlaps.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"

namespace traincast::models {
namespace {

enum class Field { clock, power_cap, supply, missing, link };

/// One override as the overlap search sees it: its field, value and elements (GPU ids; node ids
/// for supply_c; for links, indices into the search's names).
struct Entry {
  Field field = Field::link;
  double value = 0.0;
  bool failed = false;
  std::vector<int> elements;
};

/// The other direction of a NIC port or a cable between switches, which `failed` fails as well.
std::optional<std::string> other_direction(const std::string& name) {
  if (name.rfind("node", 0) == 0) {
    if (name.ends_with(".tx")) return name.substr(0, name.size() - 3) + ".rx";
    if (name.ends_with(".rx")) return name.substr(0, name.size() - 3) + ".tx";
    return std::nullopt;
  }
  const std::size_t arrow = name.find("->");
  if (arrow == std::string::npos) return std::nullopt;
  return name.substr(arrow + 2) + "->" + name.substr(0, arrow);
}

/// Link names as small integers, and back.
class Names {
 public:
  int id(const std::string& name) {
    const auto [it, fresh] = ids_.try_emplace(name, static_cast<int>(names_.size()));
    if (fresh) names_.push_back(name);
    return it->second;
  }
  const std::string& name(int id) const { return names_[static_cast<std::size_t>(id)]; }

 private:
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
};

Entry entry_of(const Cluster& cluster, const ElementOverride& o, Names& names) {
  Entry e;
  if (o.missing) {
    e.field = Field::missing;
    e.value = 1.0;
  } else if (o.supply_c) {
    e.field = Field::supply;
    e.value = *o.supply_c;
  } else if (o.power_cap_w != 0.0) {
    e.field = Field::power_cap;
    e.value = o.power_cap_w;
  } else if (o.clock_factor != 0.0) {
    e.field = Field::clock;
    e.value = o.clock_factor;
  } else {
    e.failed = o.failed;
    e.value = o.failed ? 1.0 : o.bandwidth_factor;
  }
  if (e.field != Field::link) {
    for (int g : resolve_selector(cluster, o.select).gpus) {
      if (e.field != Field::supply)
        e.elements.push_back(g);
      else if (cluster.local_rank(g) == 0)
        e.elements.push_back(cluster.node_of(g));
    }
    return e;
  }
  // Links by name: a resource name is its own, node<N>/nic<K> its two directions.
  const std::optional<SelectorNodes> n = selector_nodes(o.select);
  if (n && n->rest.rfind("/nic", 0) == 0) {
    const std::string nic = "node" + std::to_string(n->first) + ".nic" + n->rest.substr(4);
    e.elements = {names.id(nic + ".tx"), names.id(nic + ".rx")};
    return e;
  }
  e.elements = {names.id(o.select)};
  if (e.failed)
    if (std::optional<std::string> other = other_direction(o.select)) e.elements.push_back(names.id(*other));
  return e;
}

}  // namespace

std::vector<OverrideOverlap> override_overlaps(const Cluster& cluster, const std::vector<ElementOverride>& overrides) {
  using Outcome = OverrideOverlap::Outcome;
  if (overrides.size() < 2) return {};
  Names names;
  std::vector<Entry> entries;
  entries.reserve(overrides.size());
  for (const ElementOverride& o : overrides) entries.push_back(entry_of(cluster, o, names));
  // Per field, the override acting on each element; links: the factor's and the failure's apart.
  std::map<Field, std::unordered_map<int, int>> owner;
  std::unordered_map<int, int> failed_by;
  std::vector<int> acting(overrides.size(), 0);          // elements each override acts on
  std::map<std::pair<int, int>, OverrideOverlap> pairs;  // (later, earlier) -> their overlap
  std::map<std::pair<int, int>, int> first_of;           // (later, earlier) -> the first element both name
  const auto note = [&](int i, int j, Outcome outcome, int element) {
    OverrideOverlap& p = pairs[{j, i}];
    if (p.count++ > 0) return;
    p.earlier = i;
    p.later = j;
    p.outcome = outcome;
    first_of[{j, i}] = element;
  };
  for (std::size_t jj = 0; jj < entries.size(); ++jj) {
    const int j = static_cast<int>(jj);
    const Entry& e = entries[jj];
    std::unordered_map<int, int>& own = owner[e.field];
    for (const int element : e.elements) {
      if (e.field == Field::link && e.failed) {
        if (const auto it = failed_by.find(element); it != failed_by.end()) {
          note(it->second, j, Outcome::same_value, element);
          continue;
        }
        failed_by.emplace(element, j);
        ++acting[jj];
        if (const auto it = own.find(element); it != own.end()) {  // a factor it overrules
          note(it->second, j, Outcome::failed_later, element);
          --acting[static_cast<std::size_t>(it->second)];
          own.erase(it);
        }
        continue;
      }
      if (e.field == Field::link)
        if (const auto it = failed_by.find(element); it != failed_by.end()) {
          note(it->second, j, Outcome::failed_earlier, element);
          continue;
        }
      const auto [it, fresh] = own.try_emplace(element, j);
      if (fresh) {
        ++acting[jj];
        continue;
      }
      const int i = it->second;
      if (entries[static_cast<std::size_t>(i)].value == e.value) {
        note(i, j, Outcome::same_value, element);  // the earlier one keeps acting there
        continue;
      }
      note(i, j, Outcome::later_acts, element);
      --acting[static_cast<std::size_t>(i)];
      ++acting[jj];
      it->second = j;
    }
  }
  std::vector<OverrideOverlap> out;
  out.reserve(pairs.size());
  for (auto& [key, p] : pairs) {
    const auto i = static_cast<std::size_t>(p.earlier), j = static_cast<std::size_t>(p.later);
    const int first = first_of[key];
    switch (entries[j].field) {
      case Field::link:
        p.first = names.name(first);
        break;
      case Field::supply:
        p.first = "node" + std::to_string(cluster.fabric_slot(first));
        break;
      default:
        p.first = gpu_selector_name(cluster, first);
    }
    p.repeated = p.outcome == Outcome::same_value && overrides[i].select == overrides[j].select &&
                 entries[i].field == entries[j].field && entries[i].failed == entries[j].failed;
    p.earlier_acts_nowhere = acting[i] == 0;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace traincast::models
