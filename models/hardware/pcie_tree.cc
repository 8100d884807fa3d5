// The PCIe tree of a node template (pcie_tree.h): the regular layout, the checks of a written
// tree, and the per-device lookups.

#include "models/hardware/pcie_tree.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace traincast::models {
namespace {

using std::to_string;

std::size_t at(int i) { return static_cast<std::size_t>(i); }

/// The default service: NIC i serves GPUs [i*G/N, (i+1)*G/N) when N <= G, GPU i*G/N otherwise.
std::vector<std::vector<int>> regular_service(int gpus, int nics) {
  std::vector<std::vector<int>> out(at(std::max(nics, 0)));
  if (nics <= 0 || gpus <= 0) return out;
  if (nics <= gpus) {
    for (int g = 0; g < gpus; ++g) out[at(g * nics / gpus)].push_back(g);
  } else {
    for (int i = 0; i < nics; ++i) out[at(i)].push_back(i * gpus / nics);
  }
  return out;
}

/// The text form's name of a field of entry i of a list, e.g. "pcie_switch[2].gpus".
std::string where(const char* list, std::size_t i, const char* field) {
  return std::string(list) + "[" + to_string(i) + "]." + field;
}

/// Each of `count` devices (GPUs or NICs) attached exactly once over the switches and root ports.
void check_attached(const NodeTemplate& t, bool gpus, std::vector<NodeTemplateProblem>& out) {
  const int count = gpus ? t.gpus_per_node : t.nics;
  const char* kind = gpus ? "GPU" : "NIC";
  const char* field = gpus ? "gpus" : "nics";
  std::vector<std::string> seen(at(std::max(count, 0)));
  const auto visit = [&](const std::vector<int>& devices, const std::string& place) {
    for (int d : devices) {
      if (d < 0 || d >= count) {
        out.push_back({place, std::string(kind) + " " + to_string(d) + " out of range (expected " +
                                  (count > 0 ? "0 to " + to_string(count - 1)
                                             : std::string("none: the node has no ") + kind + "s") +
                                  ")"});
        continue;
      }
      std::string& first = seen[at(d)];
      if (!first.empty()) {
        out.push_back({place, std::string(kind) + " " + to_string(d) + " attached twice (first in " + first +
                                  "; expected each " + kind + " on one switch or root port)"});
        continue;
      }
      first = place;
    }
  };
  for (std::size_t s = 0; s < t.pcie_tree.size(); ++s)
    visit(gpus ? t.pcie_tree[s].gpus : t.pcie_tree[s].nics, where("pcie_switch", s, field));
  for (std::size_t r = 0; r < t.root_ports.size(); ++r)
    visit(gpus ? t.root_ports[r].gpus : t.root_ports[r].nics, where("root_ports", r, field));
  for (int d = 0; d < count; ++d) {
    if (seen[at(d)].empty()) {
      out.push_back({t.pcie_tree.empty() ? "root_ports" : "pcie_switch",
                     std::string(kind) + " " + to_string(d) + " not attached (expected it in the " + field +
                         " of one pcie_switch or root_ports entry)"});
    }
  }
}

void check_switches(const NodeTemplate& t, std::vector<NodeTemplateProblem>& out) {
  const int n = static_cast<int>(t.pcie_tree.size());
  const int sockets = std::max(1, t.sockets);
  const int most = 2 * (std::max(t.gpus_per_node, 0) + std::max(t.nics, 0));
  if (t.pcie_switches != n) {
    out.push_back({"pcie_switches", "got " + to_string(t.pcie_switches) + " with " + to_string(n) +
                                        " pcie_switch entries (expected their count, or no pcie_switches)"});
  }
  if (n > most) {
    out.push_back({"pcie_switch", to_string(n) + " switches for " + to_string(t.gpus_per_node) + " GPUs and " +
                                      to_string(t.nics) + " NICs (expected at most " + to_string(most) +
                                      ", twice the devices: a tree whose switches each fan out)"});
    return;
  }
  bool links_ok = true;
  for (int s = 0; s < n; ++s) {
    const PcieSwitch& w = t.pcie_tree[at(s)];
    const bool on_socket = w.socket >= 0, on_switch = w.upstream_switch >= 0;
    if (on_socket == on_switch) {
      out.push_back({where("pcie_switch", at(s), on_socket ? "upstream_switch" : "socket"),
                     on_socket
                         ? "set with socket (expected one uplink: a socket's root complex or an upstream switch)"
                         : "not set, nor upstream_switch (expected the socket or the switch its uplink reaches)"});
      links_ok = false;
      continue;
    }
    if (on_socket && w.socket >= sockets) {
      out.push_back({where("pcie_switch", at(s), "socket"), "got " + to_string(w.socket) + " (expected 0 to " +
                                                                to_string(sockets - 1) + ", a socket of the node)"});
      links_ok = false;
    }
    if (on_switch && (w.upstream_switch >= n || w.upstream_switch == s)) {
      out.push_back({where("pcie_switch", at(s), "upstream_switch"),
                     w.upstream_switch == s
                         ? "switch " + to_string(s) + " is its own upstream (expected another switch)"
                         : "got " + to_string(w.upstream_switch) + " (expected 0 to " + to_string(n - 1) +
                               ", the index of a pcie_switch entry)"});
      links_ok = false;
    }
    if (w.uplink_generation != 0 && (w.uplink_generation < 1 || w.uplink_generation > 6)) {
      out.push_back({where("pcie_switch", at(s), "uplink_generation"),
                     "got " + to_string(w.uplink_generation) + " (expected 1 to 6)"});
    }
    const int l = w.uplink_lanes;
    if (l != 0 && l != 1 && l != 2 && l != 4 && l != 8 && l != 16) {
      out.push_back(
          {where("pcie_switch", at(s), "uplink_lanes"), "got " + to_string(l) + " (expected 1, 2, 4, 8 or 16)"});
    }
  }
  if (!links_ok) return;
  // Every chain of upstream switches ends on a socket: a walk longer than n switches is a cycle.
  for (int s = 0; s < n; ++s) {
    int cur = s;
    int steps = 0;
    while (t.pcie_tree[at(cur)].upstream_switch >= 0 && steps <= n) {
      cur = t.pcie_tree[at(cur)].upstream_switch;
      ++steps;
    }
    if (steps > n) {
      out.push_back({where("pcie_switch", at(s), "upstream_switch"),
                     "switch " + to_string(s) +
                         " is in a cycle of upstream switches (expected a tree: every chain of upstream_switch ends "
                         "at a switch on a socket)"});
      return;
    }
  }
  // A leaf switch (no switch below it) carries GPUs or NICs: one with nothing on its downstream
  // ports moves no traffic and is a slip (a GPU list left out, a switch written twice).
  std::vector<bool> has_child(at(n), false);
  for (int s = 0; s < n; ++s)
    if (t.pcie_tree[at(s)].upstream_switch >= 0) has_child[at(t.pcie_tree[at(s)].upstream_switch)] = true;
  for (int s = 0; s < n; ++s) {
    const PcieSwitch& w = t.pcie_tree[at(s)];
    if (!has_child[at(s)] && w.gpus.empty() && w.nics.empty()) {
      out.push_back({"pcie_switch[" + to_string(s) + "]",
                     "switch " + to_string(s) +
                         " has no GPU, NIC or switch below it (expected gpus or nics on a leaf switch, or no entry "
                         "for a switch that carries nothing)"});
    }
  }
}

void check_root_ports(const NodeTemplate& t, std::vector<NodeTemplateProblem>& out) {
  const int sockets = std::max(1, t.sockets);
  for (std::size_t r = 0; r < t.root_ports.size(); ++r) {
    const int k = t.root_ports[r].socket;
    if (k < 0 || k >= sockets) {
      out.push_back({where("root_ports", r, "socket"),
                     "got " + to_string(k) + " (expected 0 to " + to_string(sockets - 1) + ", a socket of the node)"});
    }
  }
}

void check_nic_gpus(const NodeTemplate& t, std::vector<NodeTemplateProblem>& out) {
  if (t.nic_gpus.empty()) return;
  if (t.nics <= 0) {
    out.push_back({"nic_gpus", "set on a node without NICs (expected no nic_gpus entries)"});
    return;
  }
  std::vector<int> listed(at(t.nics), 0);
  std::vector<int> served(at(std::max(t.gpus_per_node, 0)), 0);
  for (std::size_t e = 0; e < t.nic_gpus.size(); ++e) {
    const NicGpus& x = t.nic_gpus[e];
    if (x.nic < 0 || x.nic >= t.nics) {
      out.push_back({where("nic_gpus", e, "nic"),
                     "got " + to_string(x.nic) + " (expected 0 to " + to_string(t.nics - 1) + ", a NIC of the node)"});
      continue;
    }
    if (listed[at(x.nic)]++ > 0) {
      out.push_back({where("nic_gpus", e, "nic"),
                     "NIC " + to_string(x.nic) + " listed twice (expected one entry per NIC, with all its GPUs)"});
    }
    if (x.gpus.empty()) {
      out.push_back(
          {where("nic_gpus", e, "gpus"), "none for NIC " + to_string(x.nic) + " (expected the GPUs it serves)"});
    }
    std::set<int> once;
    for (int g : x.gpus) {
      if (g < 0 || g >= t.gpus_per_node) {
        out.push_back({where("nic_gpus", e, "gpus"),
                       "GPU " + to_string(g) + " out of range (expected 0 to " + to_string(t.gpus_per_node - 1) + ")"});
      } else if (!once.insert(g).second) {
        out.push_back({where("nic_gpus", e, "gpus"), "GPU " + to_string(g) + " listed twice"});
      } else {
        ++served[at(g)];
      }
    }
  }
  for (int i = 0; i < t.nics; ++i) {
    if (listed[at(i)] == 0) {
      out.push_back({"nic_gpus", "NIC " + to_string(i) + " serves no GPU (expected an entry for every NIC)"});
      return;
    }
  }
  for (int g = 0; g < t.gpus_per_node; ++g) {
    if (served[at(g)] == 0) {
      out.push_back(
          {"nic_gpus", "GPU " + to_string(g) + " served by no NIC (expected every GPU in some entry's gpus)"});
      return;
    }
  }
}

std::vector<std::vector<int>> written_service(const NodeTemplate& t);

/// The lists of the regular layout: each NIC beside the first GPU it serves (nic_gpus, or the
/// default service).
void regular_lists(const NodeTemplate& t, std::vector<PcieSwitch>& tree, std::vector<PcieRootPorts>& ports) {
  tree.clear();
  ports.clear();
  const int gpus = std::max(t.gpus_per_node, 0);
  const int sockets = std::max(1, t.sockets);
  const int switches = std::max(t.pcie_switches, 0);
  if (gpus == 0) return;
  const std::vector<std::vector<int>> service = t.nic_gpus.empty() ? regular_service(gpus, t.nics) : written_service(t);
  std::vector<int> nic_gpu(service.size(), 0);
  for (std::size_t i = 0; i < service.size(); ++i) nic_gpu[i] = service[i].empty() ? 0 : service[i].front();
  if (switches > 0) {
    const int per = t.gpus_per_pcie_switch();
    tree.resize(at(switches));
    for (int s = 0; s < switches; ++s) {
      tree[at(s)].socket = s * sockets / switches;
      tree[at(s)].uplink_bytes_per_s = t.pcie_uplink_bytes_per_s;
    }
    for (int g = 0; g < gpus; ++g) tree[at(g / per)].gpus.push_back(g);
    for (std::size_t i = 0; i < nic_gpu.size(); ++i) tree[at(nic_gpu[i] / per)].nics.push_back(static_cast<int>(i));
    return;
  }
  std::vector<PcieRootPorts> by_socket(at(sockets));
  for (int k = 0; k < sockets; ++k) by_socket[at(k)].socket = k;
  for (int g = 0; g < gpus; ++g) by_socket[at(g * sockets / gpus)].gpus.push_back(g);
  for (std::size_t i = 0; i < nic_gpu.size(); ++i)
    by_socket[at(nic_gpu[i] * sockets / gpus)].nics.push_back(static_cast<int>(i));
  for (PcieRootPorts& p : by_socket)
    if (!p.gpus.empty() || !p.nics.empty()) ports.push_back(std::move(p));
}

std::vector<NicGpus> service_entries(const std::vector<std::vector<int>>& service) {
  std::vector<NicGpus> out;
  for (std::size_t i = 0; i < service.size(); ++i) out.push_back({static_cast<int>(i), service[i]});
  return out;
}

/// Each NIC's GPUs, sorted, from nic_gpus (empty lists when it is empty).
std::vector<std::vector<int>> written_service(const NodeTemplate& t) {
  std::vector<std::vector<int>> out(at(std::max(t.nics, 0)));
  for (const NicGpus& x : t.nic_gpus) {
    if (x.nic < 0 || x.nic >= t.nics) continue;
    std::vector<int>& v = out[at(x.nic)];
    v.insert(v.end(), x.gpus.begin(), x.gpus.end());
    std::sort(v.begin(), v.end());
  }
  return out;
}

}  // namespace

bool has_written_pcie_tree(const NodeTemplate& t) { return !t.pcie_tree.empty() || !t.root_ports.empty(); }

void check_pcie_tree(const NodeTemplate& t, std::vector<NodeTemplateProblem>& out) {
  if (has_written_pcie_tree(t)) {
    const std::size_t before = out.size();
    check_switches(t, out);
    check_root_ports(t, out);
    if (out.size() == before) {
      check_attached(t, true, out);
      check_attached(t, false, out);
    }
  }
  check_nic_gpus(t, out);
}

void complete_pcie_tree(NodeTemplate& t) {
  if (!has_written_pcie_tree(t)) regular_lists(t, t.pcie_tree, t.root_ports);  // nic_gpus as written
  for (PcieSwitch& w : t.pcie_tree) {
    if (w.uplink_bytes_per_s != 0) continue;
    if (w.uplink_generation != 0 || w.uplink_lanes != 0) {
      w.uplink_bytes_per_s = pcie_bytes_per_s(w.uplink_generation != 0 ? w.uplink_generation : t.pcie_generation,
                                              w.uplink_lanes != 0 ? w.uplink_lanes : t.pcie_lanes);
    } else {
      w.uplink_bytes_per_s = t.pcie_uplink_bytes_per_s > 0 ? t.pcie_uplink_bytes_per_s : t.pcie_bytes_per_s;
    }
  }
  if (t.nic_gpus.empty()) t.nic_gpus = service_entries(regular_service(t.gpus_per_node, t.nics));
}

void set_regular_pcie_tree(NodeTemplate& t) {
  t.nic_gpus = service_entries(regular_service(t.gpus_per_node, t.nics));
  regular_lists(t, t.pcie_tree, t.root_ports);
}

bool pcie_tree_is_regular(const NodeTemplate& t) {
  if (!has_written_pcie_tree(t)) return true;
  NodeTemplate r = t;  // the same nic_gpus: the regular layout puts each NIC beside its first GPU
  r.pcie_tree.clear();
  r.root_ports.clear();
  if (pcie_layout(t, t.nics) != pcie_layout(r, t.nics)) return false;
  for (std::size_t s = 0; s < t.pcie_tree.size(); ++s) {
    if (switch_uplink_bytes_per_s(t, static_cast<int>(s)) != switch_uplink_bytes_per_s(r, static_cast<int>(s)))
      return false;
  }
  return true;
}

bool nic_gpus_are_regular(const NodeTemplate& t) {
  return t.nic_gpus.empty() || written_service(t) == regular_service(t.gpus_per_node, t.nics);
}

double switch_uplink_bytes_per_s(const NodeTemplate& t, int pcie_switch) {
  if (pcie_switch >= 0 && at(pcie_switch) < t.pcie_tree.size() && t.pcie_tree[at(pcie_switch)].uplink_bytes_per_s > 0)
    return t.pcie_tree[at(pcie_switch)].uplink_bytes_per_s;
  return t.pcie_uplink_bytes_per_s > 0 ? t.pcie_uplink_bytes_per_s : t.pcie_bytes_per_s;
}

PcieLayout pcie_layout(const NodeTemplate& t, int nics) {
  const bool written = has_written_pcie_tree(t);
  if (written || !t.nic_gpus.empty()) {
    std::vector<NodeTemplateProblem> problems;
    check_pcie_tree(t, problems);
    if (!problems.empty()) {
      throw std::invalid_argument("PCIe tree of '" + t.name + "': " + problems.front().field + ": " +
                                  problems.front().what);
    }
  }
  std::vector<PcieSwitch> tree;
  std::vector<PcieRootPorts> ports;
  if (written) {
    tree = t.pcie_tree;
    ports = t.root_ports;
  } else {
    regular_lists(t, tree, ports);
  }
  const int gpus = std::max(t.gpus_per_node, 0);
  const int n = std::max(nics, 0);
  PcieLayout L;
  const int switches = static_cast<int>(tree.size());
  L.switch_up.assign(at(switches), -1);
  L.switch_socket.assign(at(switches), 0);
  for (int s = 0; s < switches; ++s) {
    L.switch_up[at(s)] = tree[at(s)].upstream_switch;
    int top = s;
    while (tree[at(top)].upstream_switch >= 0) top = tree[at(top)].upstream_switch;
    L.switch_socket[at(s)] = tree[at(top)].socket;
  }
  L.gpu_switch.assign(at(gpus), -1);
  L.gpu_socket.assign(at(gpus), 0);
  const bool own_nics = nics == t.nics;
  std::vector<int> nic_switch(at(std::max(t.nics, 0)), -1), nic_socket(at(std::max(t.nics, 0)), 0);
  for (int s = 0; s < switches; ++s) {
    for (int g : tree[at(s)].gpus) {
      L.gpu_switch[at(g)] = s;
      L.gpu_socket[at(g)] = L.switch_socket[at(s)];
    }
    for (int i : tree[at(s)].nics) {
      nic_switch[at(i)] = s;
      nic_socket[at(i)] = L.switch_socket[at(s)];
    }
  }
  for (const PcieRootPorts& p : ports) {
    for (int g : p.gpus) L.gpu_socket[at(g)] = p.socket;
    for (int i : p.nics) nic_socket[at(i)] = p.socket;
  }
  const std::vector<std::vector<int>> service =
      own_nics && !t.nic_gpus.empty() ? written_service(t) : regular_service(gpus, n);
  L.gpu_nic.assign(at(gpus), 0);
  L.nic_gpu.assign(at(n), 0);
  std::vector<bool> has_nic(at(gpus), false);
  for (int i = 0; i < n; ++i) {
    const std::vector<int>& served = service[at(i)];
    L.nic_gpu[at(i)] = served.empty() ? 0 : *std::min_element(served.begin(), served.end());
    for (int g : served) {
      if (has_nic[at(g)]) continue;
      has_nic[at(g)] = true;
      L.gpu_nic[at(g)] = i;
    }
  }
  if (own_nics && written) {
    L.nic_switch = std::move(nic_switch);
    L.nic_socket = std::move(nic_socket);
  } else {
    L.nic_switch.assign(at(n), -1);
    L.nic_socket.assign(at(n), 0);
    for (int i = 0; i < n; ++i) {
      const int g = L.nic_gpu[at(i)];
      if (g < gpus) {
        L.nic_switch[at(i)] = L.gpu_switch[at(g)];
        L.nic_socket[at(i)] = L.gpu_socket[at(g)];
      }
    }
  }
  return L;
}

NicSpread nic_spread(const PcieLayout& layout) {
  // A device's group: its switch, or -1 - socket for a socket's root ports.
  const auto group = [](int sw, int socket) { return sw >= 0 ? sw : -1 - socket; };
  NicSpread out;
  std::vector<int> keys;  // the groups holding GPUs, in order of their lowest GPU
  for (std::size_t g = 0; g < layout.gpu_switch.size(); ++g) {
    const int k = group(layout.gpu_switch[g], layout.gpu_socket[g]);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  out.gpu_groups = static_cast<int>(keys.size());
  out.group_nics.assign(keys.size(), 0);
  out.group_gpus.assign(keys.size(), 0);
  for (std::size_t g = 0; g < layout.gpu_switch.size(); ++g) {
    const auto it = std::find(keys.begin(), keys.end(), group(layout.gpu_switch[g], layout.gpu_socket[g]));
    ++out.group_gpus[static_cast<std::size_t>(it - keys.begin())];
  }
  for (std::size_t i = 0; i < layout.nic_switch.size(); ++i) {
    const auto it = std::find(keys.begin(), keys.end(), group(layout.nic_switch[i], layout.nic_socket[i]));
    if (it != keys.end()) ++out.group_nics[static_cast<std::size_t>(it - keys.begin())];
  }
  for (std::size_t g = 0; g < layout.gpu_switch.size(); ++g) {
    const auto it = std::find(keys.begin(), keys.end(), group(layout.gpu_switch[g], layout.gpu_socket[g]));
    if (out.group_nics[static_cast<std::size_t>(it - keys.begin())] == 0)
      out.gpus_without_nic.push_back(static_cast<int>(g));
  }
  const int most = out.group_nics.empty() ? 0 : *std::max_element(out.group_nics.begin(), out.group_nics.end());
  if (most == 0) return out;  // no NIC in a GPU's group: every GPU alike
  int holding = 0;
  for (const int n : out.group_nics) {
    if (n != 0 && n != most) out.even = false;
    if (n != 0) ++holding;
  }
  if (out.gpu_groups % holding != 0) out.even = false;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const int n = out.group_nics[k], gpus = out.group_gpus[k];
    if (n > 0 && gpus > 0 && n % gpus != 0 && gpus % n != 0) {
      out.even = false;
      if (out.unshared_group < 0) out.unshared_group = static_cast<int>(k);
    }
  }
  return out;
}

}  // namespace traincast::models
