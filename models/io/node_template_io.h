#pragma once
// A scenario's own node templates (message NodeTemplate, docs/hardware.md "User-described
// nodes"): read from the message and checked by the checks the built-in catalog goes through
// (models/hardware/node_template_text.h) into the scenario's ClusterSpec::described_node_templates
// (they belong to that scenario alone); and written back with the scenario.

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

/// Reads and checks every node_template block of `m` into the scenario's own templates (those
/// without problems, in block order); problems are positioned at node_template[i].<field> through
/// `k`, and a block with problems is named in k.refused_node_templates. Runs before the
/// scenario's other checks, which look the templates up by name in what it returns.
models::DescribedNodeTemplates read_scenario_node_templates(const proto::Scenario& m, Checker& k);

/// The node_template blocks of `m` that read and check cleanly (what read_scenario_node_templates
/// returns for them), without reporting the others: for a message the loader checked before (a
/// scenario written back, a sweep's base).
models::DescribedNodeTemplates described_node_templates_of(const proto::Scenario& m);

/// One "origin:line:col: node_template[i].name: ..." note per node_template block of `m` that no
/// node of `s` uses (cluster.node_template, a node group's, or their base of "base/N"), or, for
/// more than 3 such blocks, one note with their count and the first 3 names: a library of
/// templates is legitimate, so the commands warn (Scenario::input_warnings), they do not refuse.
std::vector<std::string> unused_node_template_notes(const proto::Scenario& m, const models::Scenario& s,
                                                    const Checker& k);

/// Adds to `m` a node_template block for each template `s` describes
/// (ClusterSpec::described_node_templates, in block order), so that the scenario's text reads
/// back on its own, to the same scenario.
void add_described_node_templates(const models::Scenario& s, proto::Scenario& m);

}  // namespace traincast::io::detail
