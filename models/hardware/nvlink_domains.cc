// NVLink domains smaller than a node template (nvlink_domains.h).

#include "models/hardware/nvlink_domains.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>
#include <system_error>

#include "models/hardware/pcie_tree.h"

namespace traincast::models {

NodeTemplate partition_node_template(const NodeTemplate& base, std::string_view name, std::string_view domain_text) {
  const std::string what = "node template '" + std::string(name) + "': ";
  int n = 0;
  const auto [ptr, ec] = std::from_chars(domain_text.data(), domain_text.data() + domain_text.size(), n);
  // Digits only, no leading zero: "/08" would name the same domains as "/8" under another name
  // (two partitions, two report labels), as the override selectors refuse "gpu03".
  if (domain_text.empty() || domain_text.front() == '0' || ec != std::errc() ||
      ptr != domain_text.data() + domain_text.size() || n < 1) {
    throw std::invalid_argument(what + "'" + std::string(domain_text) +
                                "' is not a GPU count (expected base/N with N GPUs per NVLink domain, e.g. " +
                                base.name + "/" + std::to_string(base.gpus_per_node / 2) + ")");
  }
  const int gpn = base.gpus_per_node;
  if (base.scale_up != ScaleUp::nvswitch) {
    throw std::invalid_argument(what + base.name +
                                " has no NVSwitch to partition (expected a template whose GPUs reach each other "
                                "through NVSwitch, e.g. gb200_nvl72)");
  }
  if (n >= gpn) {
    throw std::invalid_argument(what + std::to_string(n) + " GPUs per NVLink domain does not split " + base.name +
                                "'s " + std::to_string(gpn) + " GPUs (expected a GPU count below " +
                                std::to_string(gpn) + ")");
  }
  // gpn / n domains per base node; the gpn % n GPUs left over (e.g. 8 of 72 for "/64": two
  // compute trays) are in no domain: spares the job does not use. Each domain takes n / gpn of the
  // NICs, sockets and hubs, which must come out whole (for a divisor n: count % (gpn / n) == 0).
  const int parts = gpn / n;
  auto share = [&](int count, const char* field) {
    if ((static_cast<long long>(count) * n) % gpn != 0) {
      throw std::invalid_argument(what + base.name + "'s " + std::to_string(count) + " " + field +
                                  " do not split over NVLink domains of " + std::to_string(n) +
                                  " GPUs (expected a domain size whose GPUs take a whole share of them: n x " +
                                  std::to_string(count) + " / " + std::to_string(gpn) + " an integer)");
    }
    return static_cast<int>(static_cast<long long>(count) * n / gpn);
  };
  if (!pcie_tree_is_regular(base) || !nic_gpus_are_regular(base)) {
    throw std::invalid_argument(what + base.name +
                                " has a PCIe tree or NIC service of its own (pcie_switch, root_ports or nic_gpus "
                                "entries), which does not split into NVLink domains (expected a template in the "
                                "regular layout of pcie_switches)");
  }
  NodeTemplate t = base;
  t.name = std::string(name);
  t.gpus_per_node = n;
  t.partition_of_gpus = base.physical_gpus();  // bought as whole racks (servers): the priced unit
  t.nics = share(base.nics, "NICs");
  t.sockets = share(std::max(1, base.sockets), "CPU sockets");
  t.pcie_switches = share(base.pcie_switches, "PCIe (or C2C) hubs");
  set_regular_pcie_tree(t);  // the domain's own share of the regular layout
  // The switch chips serve every domain (NVLink partitions are switch routing tables): each
  // domain is charged its share, for power only (the NVSwitch plane is non-blocking).
  t.nvswitches = (base.nvswitches + parts - 1) / parts;
  const int spare = gpn - parts * n;
  t.source =
      base.source + "; partitioned into NVLink domains of " + std::to_string(n) +
      " GPUs (GPUs of different domains talk over the NICs)" +
      (spare > 0 ? "; " + std::to_string(spare) + " GPUs per " + base.name + " in no domain (spares, not simulated)"
                 : std::string());
  return t;
}

}  // namespace traincast::models
