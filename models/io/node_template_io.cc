// A scenario's own node templates (node_template_io.h).

#include "models/io/node_template_io.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/node_template_text.h"
#include "models/hardware/pcie_tree.h"
#include "traincast.pb.h"

namespace traincast::io::detail {
namespace {

namespace tp = traincast::proto;

models::ScaleUp scale_up_of(tp::NodeTemplate::ScaleUp s) {
  switch (s) {
    case tp::NodeTemplate::none:
      return models::ScaleUp::none;
    case tp::NodeTemplate::nvswitch:
      return models::ScaleUp::nvswitch;
    case tp::NodeTemplate::mesh:
      return models::ScaleUp::mesh;
    case tp::NodeTemplate::bridges:
      return models::ScaleUp::bridges;
    case tp::NodeTemplate::graph:
      return models::ScaleUp::graph;
    default:
      return models::ScaleUp::none;
  }
}

tp::NodeTemplate::ScaleUp scale_up_message(models::ScaleUp s) {
  switch (s) {
    case models::ScaleUp::none:
      return tp::NodeTemplate::none;
    case models::ScaleUp::nvswitch:
      return tp::NodeTemplate::nvswitch;
    case models::ScaleUp::mesh:
      return tp::NodeTemplate::mesh;
    case models::ScaleUp::bridges:
      return tp::NodeTemplate::bridges;
    case models::ScaleUp::graph:
      return tp::NodeTemplate::graph;
  }
  return tp::NodeTemplate::none;
}

}  // namespace

models::NodeTemplate node_template_from_message(const tp::NodeTemplate& m) {
  models::NodeTemplate t;
  t.name = m.name();
  t.gpu = m.gpu();
  if (m.has_gpus_per_node()) t.gpus_per_node = m.gpus_per_node();
  if (m.has_scale_up()) t.scale_up = scale_up_of(m.scale_up());
  if (m.has_bridge_gpus()) t.bridge_gpus = m.bridge_gpus();
  t.nvswitches = m.nvswitches();
  t.nic = m.nic();
  if (m.has_nics()) t.nics = m.nics();
  if (m.has_sockets()) t.sockets = m.sockets();
  if (m.has_pcie_switches()) t.pcie_switches = m.pcie_switches();
  t.pcie_generation = m.pcie_generation();
  if (m.has_pcie_lanes()) t.pcie_lanes = m.pcie_lanes();
  t.pcie_bytes_per_s = m.pcie_bytes_per_s();
  t.pcie_uplink_bytes_per_s = m.pcie_uplink_bytes_per_s();
  t.nic_pcie_bytes_per_s = m.nic_pcie_bytes_per_s();
  t.socket_link_bytes_per_s = m.socket_link_bytes_per_s();
  t.cpu = m.cpu();
  if (m.has_pcie_p2p()) t.pcie_p2p = m.pcie_p2p();
  t.liquid_cooled = m.liquid_cooled();
  t.gpus_per_rack = m.gpus_per_rack();
  t.source = m.source();
  for (const tp::NodeTemplate::Nvlink& e : m.nvlink()) {
    // Two GPUs are required: a wrong count is reported by read_scenario_node_templates.
    t.nvlinks.push_back(
        {e.gpus_size() > 0 ? e.gpus(0) : -1, e.gpus_size() > 1 ? e.gpus(1) : -1, e.has_links() ? e.links() : 1});
  }
  for (const tp::NodeTemplate::PcieSwitch& e : m.pcie_switch()) {
    models::PcieSwitch w;
    if (e.has_socket()) w.socket = e.socket();
    if (e.has_upstream_switch()) w.upstream_switch = e.upstream_switch();
    w.uplink_generation = e.uplink_generation();
    w.uplink_lanes = e.uplink_lanes();
    w.uplink_bytes_per_s = e.uplink_bytes_per_s();
    w.gpus.assign(e.gpus().begin(), e.gpus().end());
    w.nics.assign(e.nics().begin(), e.nics().end());
    t.pcie_tree.push_back(std::move(w));
  }
  for (const tp::NodeTemplate::RootPorts& e : m.root_ports()) {
    t.root_ports.push_back({e.socket(), {e.gpus().begin(), e.gpus().end()}, {e.nics().begin(), e.nics().end()}});
  }
  for (const tp::NodeTemplate::NicGpus& e : m.nic_gpus())
    t.nic_gpus.push_back({e.has_nic() ? e.nic() : -1, {e.gpus().begin(), e.gpus().end()}});
  // A written tree's switch count is its entries' unless pcie_switches is written too.
  if (models::has_written_pcie_tree(t) && !m.has_pcie_switches()) t.pcie_switches = m.pcie_switch_size();
  return t;
}

models::DescribedNodeTemplates read_scenario_node_templates(const tp::Scenario& m, Checker& k) {
  std::vector<models::NodeTemplate> described;
  std::set<std::string> names;
  for (int i = 0; i < m.node_template_size(); ++i) {
    const tp::NodeTemplate& block = m.node_template(i);
    const std::string at = "node_template[" + std::to_string(i) + "].";
    bool clean = true;
    for (const char* required : {"name", "gpu", "nic", "pcie_generation", "source"}) {
      if (!k.present(at + required)) {
        k.error(at + required, "not set (expected it in every node template)");
        clean = false;
      }
    }
    for (int e = 0; e < block.nvlink_size(); ++e) {
      if (block.nvlink(e).gpus_size() != 2) {
        k.error(at + "nvlink[" + std::to_string(e) + "].gpus",
                std::to_string(block.nvlink(e).gpus_size()) + " GPUs (expected two: gpus: [a, b])");
        clean = false;
      }
    }
    // A written negative socket or upstream switch: the model's -1 means "not this kind of
    // uplink", so a negative value is refused here, with its own value, before it would read as unset.
    for (int e = 0; e < block.pcie_switch_size(); ++e) {
      const tp::NodeTemplate::PcieSwitch& w = block.pcie_switch(e);
      const std::string sw = at + "pcie_switch[" + std::to_string(e) + "].";
      if (w.has_socket() && w.socket() < 0) {
        k.error(sw + "socket",
                "got " + std::to_string(w.socket()) + " (expected 0 to sockets - 1, a socket of the node)");
        clean = false;
      }
      if (w.has_upstream_switch() && w.upstream_switch() < 0) {
        k.error(sw + "upstream_switch",
                "got " + std::to_string(w.upstream_switch()) + " (expected the index of a pcie_switch entry, from 0)");
        clean = false;
      }
    }
    for (int e = 0; e < block.nic_gpus_size(); ++e) {
      if (!block.nic_gpus(e).has_nic()) {
        k.error(at + "nic_gpus[" + std::to_string(e) + "].nic", "not set (expected the NIC whose GPUs these are)");
        clean = false;
      }
    }
    if (!clean) {
      if (!block.name().empty()) k.refused_node_templates.insert(block.name());
      continue;
    }
    models::NodeTemplate t = node_template_from_message(block);
    if (!names.insert(t.name).second) {
      std::string what = "\"";
      what += clip(t.name);
      what += "\" described twice (expected one block per name)";
      k.error(at + "name", what);
      continue;
    }
    if (models::is_builtin_node_template(t.name)) {
      std::string what = "\"";
      what += clip(t.name);
      what += "\" is a built-in node template (expected a name of its own; `traincast catalog` lists the built-ins)";
      k.error(at + "name", what);
      continue;
    }
    // "DGX_H100" would read as the built-in dgx_h100 in every report: refused as a clash too.
    const auto lower = [](std::string v) {
      for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return v;
    };
    const std::vector<std::string> builtins = models::node_template_names();
    if (const auto same = std::find_if(builtins.begin(), builtins.end(),
                                       [&](const std::string& b) { return lower(b) == lower(t.name); });
        same != builtins.end()) {
      k.error(at + "name", "\"" + clip(t.name) + "\" differs from the built-in node template \"" + *same +
                               "\" only in case (expected a name of its own: reports would read it as the built-in)");
      k.refused_node_templates.insert(t.name);
      continue;
    }
    const std::vector<models::NodeTemplateProblem> problems = models::complete_node_template(t);
    for (const models::NodeTemplateProblem& p : problems) k.error(at + p.field, p.what);
    if (!problems.empty()) {
      k.refused_node_templates.insert(t.name);
      continue;
    }
    described.push_back(std::move(t));
  }
  return models::DescribedNodeTemplates(std::move(described));
}

models::DescribedNodeTemplates described_node_templates_of(const tp::Scenario& m) {
  std::vector<models::NodeTemplate> described;
  std::set<std::string> names;
  for (const tp::NodeTemplate& block : m.node_template()) {
    models::NodeTemplate t = node_template_from_message(block);
    if (t.name.empty() || models::is_builtin_node_template(t.name) || !names.insert(t.name).second) continue;
    if (models::complete_node_template(t).empty()) described.push_back(std::move(t));
  }
  return models::DescribedNodeTemplates(std::move(described));
}

std::vector<std::string> unused_node_template_notes(const tp::Scenario& m, const models::Scenario& s,
                                                    const Checker& k) {
  // A partition "base/N" uses its base's block.
  const auto base = [](const std::string& name) { return name.substr(0, name.find('/')); };
  std::set<std::string> used{base(s.cluster.node_template)};
  for (const models::NodeGroupSpec& g : s.cluster.node_groups) used.insert(base(g.node_template));
  std::string named;
  const auto name_one = [&](const std::string& t) {
    named.append(named.empty() ? "\"" : ", \"").append(clip(t)).append("\"");
  };
  if (s.cluster.node_groups.empty()) name_one(s.cluster.node_template);
  for (const models::NodeGroupSpec& g : s.cluster.node_groups) name_one(g.node_template);
  std::vector<std::string> out;
  std::vector<int> unused;
  for (int i = 0; i < m.node_template_size(); ++i) {
    const std::string& name = m.node_template(i).name();
    if (!name.empty() && used.count(name) == 0) unused.push_back(i);
  }
  // A library of many templates gets one line, not one per template (session 36: 200,000 lines).
  constexpr std::size_t kNamedUnused = 3;
  if (unused.size() > kNamedUnused) {
    const std::string path = "node_template[" + std::to_string(unused.front()) + "].name";
    std::string note = k.where(path) + ": " + path + ": " + std::to_string(unused.size()) +
                       " node templates are described but no node uses them (";
    for (std::size_t j = 0; j < kNamedUnused; ++j)
      note.append(j == 0 ? "\"" : ", \"").append(clip(m.node_template(unused[j]).name())).append("\"");
    note.append(" and ").append(std::to_string(unused.size() - kNamedUnused)).append(" more; the ");
    note.append(s.cluster.node_groups.empty() ? "cluster names " : "node groups name ").append(named);
    note.append(
        "); they are checked, not simulated (expected cluster.node_template or a node group's node_template to name "
        "one for it to run)");
    out.push_back(std::move(note));
    unused.clear();
  }
  for (const int i : unused) {
    const std::string& name = m.node_template(i).name();
    const std::string path = "node_template[" + std::to_string(i) + "].name";
    std::string note = k.where(path);
    note.append(": ")
        .append(path)
        .append(": \"")
        .append(clip(name))
        .append("\" is described but no node uses it (the ");
    note.append(s.cluster.node_groups.empty() ? "cluster names " : "node groups name ").append(named);
    note.append(
        "); it is checked, not simulated (expected cluster.node_template or a node group's node_template to name it "
        "for it to run)");
    out.push_back(std::move(note));
  }
  // bridge_gpus belongs to NVLink bridges: on another scale-up nothing uses it (a copy of a
  // built-in written out field by field carries it; --print-scenario writes it for bridges only).
  for (int i = 0; i < m.node_template_size(); ++i) {
    const tp::NodeTemplate& block = m.node_template(i);
    if (!block.has_bridge_gpus() || (block.has_scale_up() && block.scale_up() == tp::NodeTemplate::bridges)) continue;
    const std::string path = "node_template[" + std::to_string(i) + "].bridge_gpus";
    const std::string kind =
        block.has_scale_up() ? models::scale_up_name(scale_up_of(block.scale_up())) : "nvswitch (the default)";
    std::string note = k.where(path);
    note.append(": ").append(path).append(": ").append(std::to_string(block.bridge_gpus()));
    note.append(" with scale_up ").append(kind);
    note.append(" has no effect (expected it only with scale_up: bridges, PCIe cards joined by NVLink bridges)");
    out.push_back(std::move(note));
  }
  // socket_link_bytes_per_s joins sockets: one socket has no such link.
  for (int i = 0; i < m.node_template_size(); ++i) {
    const tp::NodeTemplate& block = m.node_template(i);
    if (!block.has_socket_link_bytes_per_s() || !block.has_sockets() || block.sockets() != 1) continue;
    const std::string path = "node_template[" + std::to_string(i) + "].socket_link_bytes_per_s";
    std::string note = k.where(path);
    note.append(": ").append(path).append(": set on a node of 1 socket, where it has no effect (expected it only ");
    note.append("with sockets >= 2: the link between sockets)");
    out.push_back(std::move(note));
  }
  return out;
}

void add_described_node_templates(const models::Scenario& s, tp::Scenario& m) {
  for (const models::NodeTemplate& t : s.cluster.described_node_templates.all()) {
    tp::NodeTemplate& x = *m.add_node_template();
    x.set_name(t.name);
    x.set_gpu(t.gpu);
    x.set_gpus_per_node(t.gpus_per_node);
    x.set_scale_up(scale_up_message(t.scale_up));
    if (t.scale_up == models::ScaleUp::bridges) x.set_bridge_gpus(t.bridge_gpus);  // used by bridges only
    x.set_nvswitches(t.nvswitches);
    x.set_nic(t.nic);
    x.set_nics(t.nics);
    x.set_sockets(t.sockets);
    x.set_pcie_switches(t.pcie_switches);
    x.set_pcie_generation(t.pcie_generation);
    x.set_pcie_lanes(t.pcie_lanes);
    x.set_pcie_bytes_per_s(t.pcie_bytes_per_s);
    x.set_pcie_uplink_bytes_per_s(t.pcie_uplink_bytes_per_s);
    if (t.nic_pcie_bytes_per_s > 0) x.set_nic_pcie_bytes_per_s(t.nic_pcie_bytes_per_s);
    x.set_socket_link_bytes_per_s(t.socket_link_bytes_per_s);
    x.set_cpu(t.cpu);
    x.set_pcie_p2p(t.pcie_p2p);
    x.set_liquid_cooled(t.liquid_cooled);
    x.set_gpus_per_rack(t.gpus_per_rack);
    x.set_source(t.source);
    for (const models::NvlinkEdge& e : t.nvlinks) {
      tp::NodeTemplate::Nvlink& n = *x.add_nvlink();
      n.add_gpus(e.gpu_a);
      n.add_gpus(e.gpu_b);
      n.set_links(e.links);
    }
    // The regular layout stays its count (pcie_switches above); another tree is written out.
    if (!models::pcie_tree_is_regular(t)) {
      for (const models::PcieSwitch& w : t.pcie_tree) {
        tp::NodeTemplate::PcieSwitch& e = *x.add_pcie_switch();
        if (w.upstream_switch >= 0) {
          e.set_upstream_switch(w.upstream_switch);
        } else {
          e.set_socket(w.socket);
        }
        if (w.uplink_generation != 0) e.set_uplink_generation(w.uplink_generation);
        if (w.uplink_lanes != 0) e.set_uplink_lanes(w.uplink_lanes);
        e.set_uplink_bytes_per_s(w.uplink_bytes_per_s);
        for (int g : w.gpus) e.add_gpus(g);
        for (int i : w.nics) e.add_nics(i);
      }
      for (const models::PcieRootPorts& p : t.root_ports) {
        tp::NodeTemplate::RootPorts& e = *x.add_root_ports();
        e.set_socket(p.socket);
        for (int g : p.gpus) e.add_gpus(g);
        for (int i : p.nics) e.add_nics(i);
      }
    }
    if (!models::nic_gpus_are_regular(t)) {
      for (const models::NicGpus& n : t.nic_gpus) {
        tp::NodeTemplate::NicGpus& e = *x.add_nic_gpus();
        e.set_nic(n.nic);
        for (int g : n.gpus) e.add_gpus(g);
      }
    }
  }
}

}  // namespace traincast::io::detail
