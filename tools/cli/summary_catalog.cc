// `traincast catalog`'s text tables (summary.h format_catalog, format_prices): the built-in GPUs
// and node templates with their sources, and the default prices (models/cost/prices.h); the run
// report's note on the spare GPUs of a rack cut into NVLink domains (spare_gpus_note).
#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "models/cost/prices.h"
#include "models/hardware/catalog.h"
#include "tools/cli/summary.h"

namespace traincast::cli {

std::string format_catalog() {
  // Columns sized to their longest entry (plus two spaces), so that long names never run together.
  std::ostringstream o;
  o << "GPUs (dense fp16/bf16 tensor peak, memory, HBM bandwidth, TDP; cluster.gpu):\n";
  std::size_t wgpu = 0;
  for (const std::string& n : models::gpu_names()) wgpu = std::max(wgpu, n.size());
  for (const std::string& n : models::gpu_names()) {
    const models::GpuSpec& g = models::find_gpu(n);
    o << "  " << pad(n, wgpu) << lpad(format_fixed(std::max(g.peak_bf16_flops, g.peak_fp16_flops) / 1e12, 1), 8)
      << " TFLOP/s " << lpad(format_fixed(g.hbm_capacity_bytes / 1073741824.0, 1), 6) << " GiB "
      << lpad(format_fixed(g.hbm_bandwidth_bytes_per_s / 1e12, 2), 5) << " TB/s " << lpad(format_fixed(g.tdp_w, 0), 5)
      << " W   " << g.source << "\n";
  }
  o << "\nNode templates (cluster.node_template):\n";
  std::vector<std::pair<std::string, std::string>> rows;  // name, hardware
  std::size_t wname = 0, whw = 0;
  for (const std::string& n : models::node_template_names()) {
    const models::NodeTemplate& t = models::find_builtin_node_template(n);
    rows.emplace_back(n, std::to_string(t.gpus_per_node) + " x " + t.gpu + ", " + std::to_string(t.nics) + " x " +
                             t.nic + (t.scale_up == models::ScaleUp::nvswitch ? ", NVSwitch" : ""));
    wname = std::max(wname, n.size());
    whw = std::max(whw, rows.back().second.size());
  }
  for (const auto& [n, hw] : rows)
    o << "  " << pad(n, wname + 2) << pad(hw, whw + 3) << models::find_builtin_node_template(n).source << "\n";
  return o.str();
}

std::string format_prices() {
  std::ostringstream o;
  o << "Default prices (USD; cost.node_price_usd per physical server or rack, also for its \"base/N\" NVLink\n"
       "partitions; cost.cloud_price_per_gpu_hour_usd per GPU-hour).\n"
       "Each: value, kind (list, street, analyst estimate, cloud on-demand), vendor, date, region, item, page.\n"
       "A GPU without a public price needs the field in the scenario's cost section; rent alone prices a\n"
       "rent-only comparison.\n";
  for (const std::string& gpu : models::gpu_names()) {
    const models::GpuPrices* p = models::find_prices(gpu);
    o << "\n" << gpu << "\n";
    if (p == nullptr) {
      o << "  no price row (give both cost fields)\n";
      continue;
    }
    o << "  node  " << (p->node ? models::describe_price(*p->node, false) : p->node_missing) << "\n";
    o << "  rent  " << (p->rent ? models::describe_price(*p->rent, true) : p->rent_missing) << "\n";
  }
  return o.str();
}

std::string spare_gpus_note(const models::ClusterSpec& cluster) {
  std::vector<models::NodeGroupSpec> groups = cluster.node_groups;
  if (groups.empty()) groups.push_back({cluster.node_template, cluster.num_nodes, cluster.gpu});
  std::ostringstream o;
  for (const models::NodeGroupSpec& group : groups) {
    const models::NodeTemplate& t = models::find_node_template(group.node_template, cluster);
    const int per = t.nodes_per_physical();
    const int spare = t.physical_gpus() - per * t.gpus_per_node;
    if (t.partition_of_gpus <= 0 || spare <= 0) continue;
    // Whole racks are bought (docs/hardware.md, partitioned racks): ceil(nodes / domains per rack).
    const int racks = (group.num_nodes + per - 1) / per;
    const models::GpuSpec& gpu = models::find_gpu(group.gpu.empty() ? t.gpu : group.gpu);
    const std::string base = t.name.substr(0, t.name.find('/'));
    const int gpus = spare * racks;
    o << "  Spare GPUs: " << t.name << " leaves " << spare << " GPUs of each " << base << " rack in no NVLink domain"
      << (racks > 1 ? " (" + std::to_string(gpus) + " in " + std::to_string(racks) + " racks)" : std::string())
      << "; the model counts them at 0 W, with their trays' share of CPUs, NICs and switch chips; installed and "
         "idle, the GPUs alone would draw "
      << gpus << " x " << format_fixed(gpu.idle_w, 0) << " W = " << format_power(gpus * gpu.idle_w)
      << " more before PUE (" << gpu.name << " idle power, an estimate)\n";
  }
  return o.str();
}

}  // namespace traincast::cli
