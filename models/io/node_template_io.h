#pragma once
// A scenario's own node templates (message NodeTemplate, docs/hardware.md "User-described
// nodes"): read from the message, checked by the checks the built-in catalog goes through
// (models/hardware/node_template_text.h) and made findable by name (catalog.h,
// register_node_template); and written back for the templates a scenario names.

#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/io/scenario_io_internal.h"
#include "models/spec/scenario.h"

namespace traincast::proto {
class NodeTemplate;  // traincast.pb.h
}  // namespace traincast::proto

namespace traincast::io::detail {

/// The template a NodeTemplate message describes, before complete_node_template (fields left
/// unset keep NodeTemplate's defaults; scale_up unset is nvswitch).
models::NodeTemplate node_template_from_message(const proto::NodeTemplate& m);

/// Checks and registers every node_template block of `m`; problems are positioned at
/// node_template[i].<field> through `k`. Runs before the scenario's other checks, which look the
/// templates up by name.
void register_scenario_node_templates(const proto::Scenario& m, Checker& k);

/// One "origin:line:col: node_template[i].name: ..." note per node_template block of `m` that no
/// node of `s` uses (cluster.node_template, a node group's, or their base of "base/N"): a library
/// of templates is legitimate, so the commands warn (Scenario::input_warnings), they do not refuse.
std::vector<std::string> unused_node_template_notes(const proto::Scenario& m, const models::Scenario& s,
                                                    const Checker& k);

/// Adds to `m` a node_template block for each described (not built-in) template `s` names, so
/// that the scenario's text reads back on its own.
void add_described_node_templates(const models::Scenario& s, proto::Scenario& m);

}  // namespace traincast::io::detail
