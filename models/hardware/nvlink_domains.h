#pragma once
// NVLink domains smaller than a node template: "gb200_nvl72/36" is the GB200 NVL72 rack partitioned
// into NVLink domains of 36 GPUs (NVLink partitions: GPUs of different domains share no NVLink and
// talk over their NICs). The simulator's node is an NVLink domain, so a partitioned template is the
// base template cut into gpus_per_node / N (rounded down) parts, each a node of N GPUs with its
// share of the NICs, CPU sockets, PCIe (or C2C) hubs and NVSwitch chips; cluster.num_nodes then
// counts domains (2 per rack for /36). A size that does not divide the rack leaves its remainder in
// no domain: "gb200_nvl72/64" is one domain of 64 GPUs (16 of 18 compute trays) per rack and 8
// spare GPUs, the way a power-of-two TP group fits inside the rack. find_node_template (catalog.h)
// resolves such names through this.

#include <string_view>

#include "models/hardware/catalog.h"

namespace traincast::models {

/// The template `base` cut into NVLink domains of `domain_text` GPUs (a decimal integer), named
/// `name` ("base/N"). Throws std::invalid_argument "node template 'gb200_nvl72/7': ... (expected
/// ...)" when N is not an integer >= 1 below base.gpus_per_node, when the base has no NVSwitch (a
/// mesh or bridges are wired for their own GPU count), or when a domain's share of the NICs,
/// sockets or PCIe hubs (N / gpus_per_node of each) is not whole.
NodeTemplate partition_node_template(const NodeTemplate& base, std::string_view name, std::string_view domain_text);

}  // namespace traincast::models
