// Overrides naming one element with the same field (override_overlaps.h).
#include "models/hardware/override_overlaps.h"

#include <algorithm>
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

/// Every override applied in order: who acts on each element, and each pair that names one.
struct Assignment {
  Names names;
  std::vector<Entry> entries;
  std::map<Field, std::unordered_map<int, int>> owner;   // per field, element -> override acting there
  std::unordered_map<int, int> failed_by;                // link element -> override failing it
  std::vector<int> acting;                               // elements each override acts on
  std::map<std::pair<int, int>, OverrideOverlap> pairs;  // (later, earlier) -> their overlap
  std::map<std::pair<int, int>, int> first_of;           // (later, earlier) -> the first element both name
};

Assignment assign(const Cluster& cluster, const std::vector<ElementOverride>& overrides) {
  using Outcome = OverrideOverlap::Outcome;
  Assignment a;
  a.entries.reserve(overrides.size());
  for (const ElementOverride& o : overrides) a.entries.push_back(entry_of(cluster, o, a.names));
  a.acting.assign(overrides.size(), 0);
  const std::vector<Entry>& entries = a.entries;
  std::unordered_map<int, int>& failed_by = a.failed_by;
  std::vector<int>& acting = a.acting;
  const auto note = [&](int i, int j, Outcome outcome, int element) {
    OverrideOverlap& p = a.pairs[{j, i}];
    if (p.count++ > 0) return;
    p.earlier = i;
    p.later = j;
    p.outcome = outcome;
    a.first_of[{j, i}] = element;
  };
  for (std::size_t jj = 0; jj < a.entries.size(); ++jj) {
    const int j = static_cast<int>(jj);
    const Entry& e = a.entries[jj];
    std::unordered_map<int, int>& own = a.owner[e.field];
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
  return a;
}

}  // namespace

std::vector<OverrideOverlap> override_overlaps(const Cluster& cluster, const std::vector<ElementOverride>& overrides) {
  using Outcome = OverrideOverlap::Outcome;
  if (overrides.size() < 2) return {};
  Assignment a = assign(cluster, overrides);
  const std::vector<Entry>& entries = a.entries;
  const std::vector<int>& acting = a.acting;
  Names& names = a.names;
  std::map<std::pair<int, int>, OverrideOverlap>& pairs = a.pairs;
  std::map<std::pair<int, int>, int>& first_of = a.first_of;
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

std::vector<ActingElements> override_acting_elements(const Cluster& cluster,
                                                     const std::vector<ElementOverride>& overrides) {
  // Missing GPUs act on nothing here, and their drained nodes resolve on no built cluster: left
  // out (they overlap only each other), the others kept at their places through `index`.
  std::vector<ElementOverride> present;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < overrides.size(); ++i)
    if (!overrides[i].missing) {
      present.push_back(overrides[i]);
      index.push_back(i);
    }
  const Assignment a = assign(cluster, present);
  std::vector<ActingElements> out(overrides.size());
  for (const auto& [field, own] : a.owner) {
    for (const auto& [element, i] : own) {
      ActingElements& x = out[index[static_cast<std::size_t>(i)]];
      if (field == Field::link)
        x.links.push_back(a.names.name(element));
      else
        x.ids.push_back(element);
    }
  }
  for (const auto& [element, i] : a.failed_by)
    out[index[static_cast<std::size_t>(i)]].links.push_back(a.names.name(element));
  for (ActingElements& x : out) {  // hash-map order is not the same on every library: sort
    std::sort(x.ids.begin(), x.ids.end());
    std::sort(x.links.begin(), x.links.end());
  }
  return out;
}

}  // namespace traincast::models
