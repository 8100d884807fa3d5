#pragma once
// Node templates as data: the form a scenario's `node_template { ... }` block and the built-in
// catalog (models/hardware/node_templates.textproto, compiled in) share, and the one set of checks
// both go through. The scenario loader (models/io) reads its blocks with protobuf and calls
// complete_node_template; the built-ins are read here by read_node_templates, whose small reader
// takes exactly the protobuf text form of message NodeTemplate (models/io/traincast.proto), and
// tests/models/io/node_template_io_test.cc holds the two readers to the same result.

#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/catalog.h"

namespace traincast::models {

/// One problem of a node template: the field as the text form names it ("gpu", "nvlink[2].gpus")
/// and "what is wrong (expected ...)".
struct NodeTemplateProblem {
  std::string field;
  std::string what;
};

/// Checks a template as written and, when it has no problem, fills what the form derives: each
/// GPU's and NIC's PCIe rate from pcie_generation x pcie_lanes when pcie_bytes_per_s is 0, a
/// PCIe switch's uplink from that rate when pcie_uplink_bytes_per_s is 0 (0 without switches),
/// and the PCIe tree (models/hardware/pcie_tree.h: the regular layout of pcie_switches written
/// out when no pcie_switch or root_ports entry is, each switch's uplink rate, nic_gpus's default).
/// Refused: unknown GPU, NIC; counts out of range; a scale-up the GPU cannot do (NVSwitch or a
/// mesh without NVLink/xGMI links, or a PCIe card on them; bridges on a baseboard GPU); NVLink
/// graph entries with a GPU index out of range, a GPU paired with itself, a pair twice, or more
/// links at a GPU than it has; a missing source; a PCIe tree check_pcie_tree refuses. The name
/// is not checked against the catalog.
std::vector<NodeTemplateProblem> complete_node_template(NodeTemplate& t);

/// Reads `node_template { ... }` blocks (protobuf text form; comments, adjacent string literals,
/// `nvlink { gpus: [a, b] links: n }`, `pcie_switch { ... }`, `root_ports { ... }` and
/// `nic_gpus { ... }` entries) and completes each. Throws
/// std::invalid_argument "origin:line:col: field: what (expected ...)" on the first problem.
std::vector<NodeTemplate> read_node_templates(std::string_view text, std::string_view origin);

/// The text form's name of a scale-up ("none", "nvswitch", "mesh", "bridges", "graph").
const char* scale_up_name(ScaleUp s);

}  // namespace traincast::models
