#pragma once
// NVLink domains smaller than a node template: "gb200_nvl72/36" is the GB200 NVL72 rack partitioned
// into NVLink domains of 36 GPUs (NVLink partitions: GPUs of different domains share no NVLink and
// talk over their NICs). The simulator's node is an NVLink domain, so a partitioned template is the
// base template cut into gpus_per_node / N equal parts, each a node of N GPUs with its share of the
// NICs, CPU sockets, PCIe (or C2C) hubs and NVSwitch chips; cluster.num_nodes then counts domains
// (2 per rack for /36). find_node_template (catalog.h) resolves such names through this.

#include <string_view>

#include "models/hardware/catalog.h"

namespace traincast::models {

/// The template `base` cut into NVLink domains of `domain_text` GPUs (a decimal integer), named
/// `name` ("base/N"). Throws std::invalid_argument "node template 'gb200_nvl72/7': ... (expected
/// ...)" when N is not an integer >= 1 that divides base.gpus_per_node and is below it, when the
/// base has no NVSwitch (a mesh or bridges are wired for their own GPU count), or when its NICs,
/// sockets or PCIe hubs do not split evenly over the domains.
NodeTemplate partition_node_template(const NodeTemplate& base, std::string_view name, std::string_view domain_text);

}  // namespace traincast::models
