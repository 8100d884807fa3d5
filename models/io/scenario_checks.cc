// check_scenario (scenario_checks.h) and its sections in the order it runs them: text fields,
// cluster, model, parallelism, GPU count, training, options; and the enum and override errors.

#include "models/io/scenario_checks.h"
#include "models/io/message_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/collectives/nccl_versions.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/leaf_ports.h"
#include "models/hardware/network_size.h"
#include "models/hardware/switch_count.h"
#include "models/io/suggest.h"
#include "traincast.pb.h"

namespace traincast::io::detail {
namespace {

namespace pb = google::protobuf;
namespace tp = traincast::proto;

/// Checks of the cluster fields added for issue 3 (collectives, NICs, fabric shapes).
void check_cluster_extras(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::FabricSpec& f = s.cluster.fabric;
  k.int_field("cluster.fabric.tiers", f.tiers);
  k.int_field("cluster.fabric.leaves_per_pod", f.leaves_per_pod);
  k.int_field("cluster.fabric.leaf_up_ports", f.leaf_up_ports);
  // At most 120 km: the longest reach of data-center interconnect optics (OIF 400ZR
  // implementation agreement OIF-400ZR-01.0: 80-120 km); 0.6 ms of propagation per cable at 5 ns/m.
  constexpr double kMaxCableLengthM = 1.2e5;
  if (k.finite_at_least("cluster.fabric.cable_length_m", f.cable_length_m, 0.0, false) &&
      f.cable_length_m > kMaxCableLengthM)
    k.error("cluster.fabric.cable_length_m",
            "got " + Checker::number(f.cable_length_m) +
                " (expected at most 1.2e+05 m: 120 km, the longest reach of 400ZR data-center interconnect optics)");
  k.int_field("cluster.collectives.min_channels", s.cluster.collectives.min_channels);
  k.int_field("cluster.collectives.max_channels", s.cluster.collectives.max_channels);
  if (!s.cluster.collectives.nccl_version.empty()) {
    models::NcclVersion v;
    std::string why;
    if (!models::parse_nccl_version(s.cluster.collectives.nccl_version, v, why)) {
      k.error("cluster.collectives.nccl_version", why);
    }
  }
  if (f.kind == models::FabricKind::torus && !f.torus_dims.empty()) {
    long long product = 1;
    bool extents_ok = true;
    for (std::size_t i = 0; i < f.torus_dims.size(); ++i) {
      extents_ok = k.int_field("cluster.fabric.torus_dims[" + to_string(i) + "]", f.torus_dims[i]) && extents_ok;
      // Past 2^31 the product cannot be num_nodes (an int32); stopping there keeps it from overflowing.
      if (product <= (1LL << 31)) product *= std::max(f.torus_dims[i], 1);
    }
    if (extents_ok && (f.torus_dims.size() > 3 || product != s.cluster.num_nodes)) {
      k.error("cluster.fabric.torus_dims",
              "extents of product " + to_string(product) + " in " + to_string(f.torus_dims.size()) +
                  " dimension(s) (expected 1 to 3 extents >= 1 whose product is num_nodes = " +
                  to_string(s.cluster.num_nodes) + ")");
    } else if (extents_ok && f.torus_dims.size() > 1) {
      // Each dimension takes two of the node's NIC ports (to its - and + neighbour); in a dimension
      // of extent 1 there is no neighbour, so its ports would carry nothing and the ring's
      // bandwidth would be a fraction of the node's (session 35: [16, 1] ran at half of [16]).
      for (std::size_t i = 0; i < f.torus_dims.size(); ++i)
        if (f.torus_dims[i] == 1) {
          k.error("cluster.fabric.torus_dims[" + to_string(i) + "]",
                  "got 1 beside other dimensions: a dimension of extent 1 has no neighbour, and the NIC ports "
                  "it would take carry nothing (expected extents >= 2, or leave it out, e.g. [" +
                      to_string(s.cluster.num_nodes) + "] for one ring)");
          break;
        }
    }
  } else if (!f.torus_dims.empty()) {
    k.error("cluster.fabric.torus_dims", "set with fabric kind other than torus (expected kind: torus, or no extents)");
  }
  if (!s.cluster.nic.empty()) {
    try {
      models::find_nic(s.cluster.nic);
    } catch (const std::exception&) {
      k.error("cluster.nic",
              "unknown NIC \"" + detail::clip(s.cluster.nic) + "\"" +
                  detail::did_you_mean(s.cluster.nic, models::nic_names()) +
                  " (expected \"\" for the node template's NIC, or one of: " + names_list(models::nic_names()) + ")");
    }
  }
  if (s.cluster.nics_per_node) {
    const int q = *s.cluster.nics_per_node;
    if (k.int_field("cluster.nics_per_node", q) && q == 0 && s.cluster.num_nodes > 1) {
      k.error("cluster.nics_per_node", "got 0 (expected an integer >= 1 with num_nodes > 1)");
    }
  }
}

/// The free-text fields (names, description, catalog names) are valid UTF-8.
void check_text_fields(const models::Scenario& s, Checker& k) {
  for (const auto& [path, text] : {std::pair<const char*, const std::string*>{"name", &s.name},
                                   {"description", &s.description},
                                   {"cluster.node_template", &s.cluster.node_template},
                                   {"cluster.gpu", &s.cluster.gpu},
                                   {"workload.model.name", &s.model.name}}) {
    if (!valid_utf8(*text)) {
      k.error(path, "is not valid UTF-8 (expected UTF-8 text)");
      continue;
    }
    // A name written empty would print as nothing ("Model      : 32 layers").
    const std::string_view p(path);
    if ((p == "name" || p == "workload.model.name") && text->empty() && k.present(path)) {
      k.error(path, "is empty (expected a name to print, or no such line)");
      continue;
    }
    // Printed to the terminal by every command: an escape sequence ("\033[2J") would act there.
    const bool multi_line = std::string_view(path) == "description";
    for (const char ch : *text) {
      const auto c = static_cast<unsigned char>(ch);
      if ((c < 0x20 || c == 0x7F) && !(multi_line && (c == '\n' || c == '\t'))) {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02X", c);
        k.error(path, std::string("contains the control character ") + code +
                          " (expected printable text; a terminal would act on it" +
                          (multi_line ? "; newlines and tabs are kept)" : ")"));
        break;
      }
    }
  }
}

/// A leaf switch holds what its leaf needs (models/hardware/leaf_ports.h): down ports to its nodes
/// plus up-links, within fabric.leaf_ports (default: the NIC's switch). Impossible hardware is
/// refused: a fat_tree of 72-NIC racks would need 2,304-port leaves.
void check_leaf_ports(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  using std::to_string;
  const models::FabricSpec& f = s.cluster.fabric;
  k.int_field("cluster.fabric.leaf_ports", f.leaf_ports);
  const int nodes = s.cluster.num_nodes;
  if (node == nullptr || nodes <= 1 || f.nodes_per_leaf < 1 || f.leaf_ports < 0 || !(f.oversubscription >= 1)) return;
  const models::NicSpec* nic = nullptr;
  try {
    nic = &models::find_nic(node->nic);
  } catch (const std::exception&) {
    return;  // the node template's checks name it
  }
  const int nics = s.cluster.nics_per_node.value_or(node->nics);
  const int ports = models::leaf_ports(f, *nic);
  const models::LeafPortsUsed used = models::leaf_ports_used(f, nodes, nics, f.nodes_per_leaf);
  if (used.total() <= ports) {
    // The tree above the leaves reaches them (models/hardware/switch_count.h): 3 tiers of k-port
    // switches reach k pods; more would need a fourth tier, which no fabric kind builds. (A GPU
    // count beyond the simulator's range is check_gpu_count's to name.)
    if (static_cast<std::int64_t>(nodes) * node->gpus_per_node > kMaxGpus) return;
    const models::SwitchCount switches = models::count_switches(f, nodes, nics, ports);
    if (!switches.refusal.empty()) k.error(switches.refused_field, switches.refusal);
    return;
  }
  const int fits = models::default_nodes_per_leaf(f, nodes, nics, ports);
  const std::string radix = f.leaf_ports > 0 ? "fabric.leaf_ports " + to_string(ports)
                                             : to_string(ports) + " ports, the default for " + nic->name;
  // What would fit: fewer nodes per leaf; else one leaf per NIC rail (a fat_tree of many-NIC
  // nodes) when such a leaf fits; else a switch with the ports of one node's leaf.
  models::FabricSpec rail = f;
  rail.kind = models::FabricKind::rail_optimized;
  const bool rail_fits =
      f.kind != models::FabricKind::rail_optimized && models::leaf_ports_used(rail, nodes, nics, 1).total() <= ports;
  const long long one_node = models::leaf_ports_used(f, nodes, nics, 1).total();
  std::string expected;
  if (fits > 0)
    expected = "nodes_per_leaf <= " + to_string(fits) + ", or fabric.leaf_ports >= " + to_string(used.total());
  else if (rail_fits)
    expected = "fabric.kind: rail_optimized, one leaf per NIC rail, for nodes of " + to_string(nics) +
               " NICs, or fabric.leaf_ports >= " + to_string(one_node) + " for one node per leaf";
  else
    expected = "fabric.leaf_ports >= " + to_string(one_node) + ": one node per leaf needs that many";
  const bool written = k.present("cluster.fabric.nodes_per_leaf");
  k.error(written || fits > 0 ? "cluster.fabric.nodes_per_leaf" : "cluster.fabric.kind",
          (written ? "got " : "the default ") + to_string(f.nodes_per_leaf) + " nodes per leaf: a " +
              models::fabric_kind_name(f.kind) + " leaf then needs " + to_string(used.down) + " down + " +
              to_string(used.up) + " up-link ports, over its switch's " + radix + " (expected " + expected + ")");
}

/// A torus's neighbour directions each take the same whole number of NIC ports, at least one
/// (models::Cluster::torus_ports_problem): 1 NIC on a 4 x 4 torus cannot cable its 32 links.
void check_torus_ports(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  const models::FabricSpec& f = s.cluster.fabric;
  const int nodes = s.cluster.num_nodes;
  if (f.kind != models::FabricKind::torus || node == nullptr || nodes <= 1) return;
  const std::vector<int> dims = f.torus_dims.empty() ? std::vector<int>{nodes} : f.torus_dims;
  long long product = 1;
  for (const int d : dims) product = d >= 2 && product <= nodes ? product * d : -1;
  const int nics = s.cluster.nics_per_node.value_or(node->nics);
  if (dims.size() > 3 || product != nodes || nics <= 0) return;  // the extents' and NICs' own checks name these
  const std::string problem = models::Cluster::torus_ports_problem(dims, nics);
  if (problem.empty()) return;
  if (s.cluster.nics_per_node) {
    k.error("cluster.nics_per_node", problem);
  } else {
    k.error(f.torus_dims.empty() ? "cluster.fabric.kind" : "cluster.fabric.torus_dims",
            "the node template \"" + detail::clip(node->name) + "\"'s " + problem);
  }
}

/// What the cluster section found, for the sections after it.
struct ClusterChecks {
  const models::NodeTemplate* node = nullptr;  ///< null for an unknown node template
  const models::GpuSpec* gpu = nullptr;        ///< null for an unknown GPU
  std::string gpu_name;                        ///< cluster.gpu, else the node template's GPU
  bool nodes_ok = false;                       ///< cluster.num_nodes within its range
  /// Every GPU the cluster's nodes hold, each once: `gpu`, or each node group's (its gpu, else its
  /// template's), in group order (node_group_gpus); unknown ones left out (their groups' checks name them).
  std::vector<const models::GpuSpec*> gpus;
  /// Positioned warnings of the cluster's checks (check_element_overrides), for Scenario::input_warnings.
  std::vector<std::string> notes;
};

/// Cluster fields: a known node template and GPU, num_nodes and the fabric within range, then
/// check_cluster_extras.
ClusterChecks check_cluster(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::NodeTemplate* node = nullptr;
  try {
    node = &models::cluster_node_template(s.cluster);
  } catch (const std::exception& e) {
    // Reported elsewhere: taken from node_group[0], whose own check (check_node_groups) names the
    // unknown template, or the scenario's own block of that name failed checks that say why.
    const bool reported =
        (!s.cluster.node_groups.empty() && s.cluster.node_template == s.cluster.node_groups.front().node_template) ||
        k.refused_node_templates.count(s.cluster.node_template) > 0 ||
        k.refused_node_templates.count(s.cluster.node_template.substr(0, s.cluster.node_template.find('/'))) > 0;
    if (reported) {
      // nothing more to say here
    } else if (s.cluster.node_template.find('/') != std::string::npos) {
      // "base/N" (NVLink domains of N GPUs, models/hardware/nvlink_domains.h): the partition's own reason.
      k.error("cluster.node_template", e.what());
    } else {
      k.error("cluster.node_template",
              "unknown node template \"" + detail::clip(s.cluster.node_template) + "\"" +
                  detail::did_you_mean(s.cluster.node_template,
                                       models::node_template_names(s.cluster.described_node_templates)) +
                  " (expected one of: " + names_list(models::node_template_names(s.cluster.described_node_templates)) +
                  ")");
    }
  }
  const models::GpuSpec* gpu = nullptr;
  const std::string gpu_name = !s.cluster.gpu.empty() ? s.cluster.gpu : (node != nullptr ? node->gpu : std::string());
  if (!s.cluster.gpu.empty()) {
    try {
      gpu = &models::find_gpu(s.cluster.gpu);
    } catch (const std::exception&) {
      k.error("cluster.gpu",
              "unknown GPU \"" + detail::clip(s.cluster.gpu) + "\"" +
                  detail::did_you_mean(s.cluster.gpu, models::gpu_names()) +
                  " (expected \"\" for the node template's GPU, or one of: " + names_list(models::gpu_names()) + ")");
    }
  } else if (node != nullptr) {
    try {
      gpu = &models::find_gpu(node->gpu);
    } catch (const std::exception&) {
      gpu = nullptr;  // a catalog inconsistency, not the user's error; the catalog's own tests catch it
    }
  }
  const bool nodes_ok = k.int_field("cluster.num_nodes", s.cluster.num_nodes);
  const models::FabricSpec& fabric = s.cluster.fabric;
  if (k.finite_at_least("cluster.fabric.oversubscription", fabric.oversubscription, 1.0, false) &&
      fabric.oversubscription > 1000.0) {
    k.error("cluster.fabric.oversubscription",
            "got " + Checker::number(fabric.oversubscription) + " (expected 1 to 1000: the simulator's range)");
  }
  k.int_field("cluster.fabric.switch_latency_ns", fabric.switch_latency_ns);
  k.int_field("cluster.fabric.nodes_per_leaf", fabric.nodes_per_leaf);
  if (fabric.kind == models::FabricKind::none && s.cluster.num_nodes > 1) {
    k.error("cluster.fabric.kind", "none cannot connect " + to_string(s.cluster.num_nodes) +
                                       " nodes (expected rail_optimized or fat_tree when num_nodes > 1)");
  }
  // A node without compute NICs reaches no other node (models::Cluster refuses it too, without a
  // position). Drained nodes run no job, so a cluster left with one node in service needs none.
  if (node != nullptr && nodes_ok && !s.cluster.nics_per_node && node->nics <= 0 &&
      models::nodes_in_service(s.cluster) > 1) {
    const std::string at =
        s.cluster.node_groups.empty() ? "cluster.node_template" : "cluster.node_group[0].node_template";
    k.error(at, "\"" + detail::clip(node->name) + "\" has no compute NICs (nics: 0) for a cluster of " +
                    to_string(models::nodes_in_service(s.cluster)) +
                    " nodes (expected a node template with NICs, cluster.nics_per_node >= 1, or num_nodes: 1)");
  }
  check_cluster_extras(s, k);
  check_sharp(s, node, k);
  check_leaf_ports(s, node, k);
  check_torus_ports(s, node, k);
  check_nvlink_bridge(s, node, gpu, k);
  if (!s.cluster.node_groups.empty()) check_node_groups(s, k);
  std::vector<std::string> notes;
  if (!s.cluster.overrides.empty()) notes = check_element_overrides(s, node, k);
  if (!s.jobs.empty()) check_jobs(s, node, k);
  std::vector<const models::GpuSpec*> gpus = node_group_gpus(s);
  if (gpus.empty() && gpu != nullptr) gpus.push_back(gpu);
  return {node, gpu, gpu_name, nodes_ok, std::move(gpus), std::move(notes)};
}

/// What the model section found, for the parallelism checks.
struct ModelChecks {
  bool layers_ok = false;  ///< a transformer's num_layers within its range
  bool heads_ok = false;   ///< a transformer's num_attention_heads within its range
  bool groups_ok = false;  ///< num_query_groups within its range and dividing the heads
};

/// Model fields: a ResNet's (check_resnet), or a transformer's shape and its divisibility.
ModelChecks check_model(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  if (m.family == models::ModelFamily::resnet) {
    check_resnet(s, k);
  } else {
    for (const char* f : {"workload.model.image_size", "workload.model.num_classes"})
      if (k.present(f)) k.error(f, "is set but family is transformer (expected family: resnet for a ResNet)");
  }
  const bool transformer = m.family == models::ModelFamily::transformer;
  const bool layers_ok = transformer && k.int_field("workload.model.num_layers", m.num_layers);
  const bool hidden_ok = transformer && k.int_field("workload.model.hidden_size", m.hidden_size);
  const bool heads_ok = transformer && k.int_field("workload.model.num_attention_heads", m.num_attention_heads);
  // With an explicit head dim (Qwen3) or MLA the heads' width need not be hidden_size.
  const bool own_head_width = m.head_dim > 0 || m.multi_latent_attention;
  if (hidden_ok && heads_ok && !own_head_width && m.hidden_size % m.num_attention_heads != 0) {
    k.error("workload.model.num_attention_heads", to_string(m.num_attention_heads) + " does not divide hidden_size " +
                                                      to_string(m.hidden_size) + " (expected a divisor of " +
                                                      to_string(m.hidden_size) + ")");
  }
  bool groups_ok = true;
  if (!k.int_field("workload.model.num_query_groups", m.num_query_groups)) {
    groups_ok = false;
  } else if (heads_ok && m.num_query_groups > 0 && m.num_attention_heads % m.num_query_groups != 0) {
    k.error("workload.model.num_query_groups", to_string(m.num_query_groups) + " does not divide num_attention_heads " +
                                                   to_string(m.num_attention_heads) + " (expected a divisor of " +
                                                   to_string(m.num_attention_heads) + ")");
    groups_ok = false;
  }
  k.int_field("workload.model.ffn_hidden_size", m.ffn_hidden_size);
  if (transformer) {
    k.int_field("workload.model.vocab_size", m.vocab_size);
    k.int_field("workload.model.make_vocab_size_divisible_by", m.make_vocab_size_divisible_by);
    k.int_field("workload.model.seq_length", m.seq_length);
  }
  return {layers_ok, heads_ok, groups_ok};
}

/// What the parallelism section found, for the GPU-count and training checks.
struct ParallelChecks {
  bool tp_ok = false;        ///< workload.parallel.tp within its range
  bool pp_ok = false;        ///< workload.parallel.pp within its range
  bool dp_ok = false;        ///< workload.parallel.dp within its range
  bool interleaved = false;  ///< schedule interleaved_one_f_one_b
};

/// The ZeRO-3 / FSDP fields (reshard_after_forward, reshard_after_backward, param_gather_bytes,
/// grad_sync_every_microbatch): each only with zero_stage 3 (the last with 2 or 3),
/// reshard_after_backward false only with reshard_after_forward false, param_gather_bytes 0, 2 or 4.
void check_fsdp_fields(Checker& k, const models::ParallelSpec& p) {
  using std::to_string;
  if (!p.reshard_after_forward && p.zero_stage != 3) {
    k.layout_error("workload.parallel.reshard_after_forward",
                   "false with zero_stage " + to_string(p.zero_stage) +
                       ": only ZeRO-3 / FSDP gathers parameters per layer (expected zero_stage: 3, or "
                       "reshard_after_forward: true)");
  }
  if (!p.reshard_after_backward && p.reshard_after_forward) {
    k.layout_error("workload.parallel.reshard_after_backward",
                   "false needs the parameters kept after forward (expected reshard_after_forward: false, or "
                   "reshard_after_backward: true)");
  }
  if (!p.grad_sync_every_microbatch && p.zero_stage < 2) {
    k.layout_error("workload.parallel.grad_sync_every_microbatch",
                   "false with zero_stage " + to_string(p.zero_stage) +
                       ": gradients are reduced once per iteration already (expected zero_stage: 2 or 3, or "
                       "grad_sync_every_microbatch: true)");
  }
  if (p.param_gather_bytes != 0 && p.param_gather_bytes != 2 && p.param_gather_bytes != 4) {
    k.error("workload.parallel.param_gather_bytes",
            "got " + to_string(p.param_gather_bytes) + " (expected 0 for the weights' width, 2 or 4)");
  } else if (p.param_gather_bytes != 0 && p.zero_stage != 3) {
    k.layout_error("workload.parallel.param_gather_bytes",
                   "got " + to_string(p.param_gather_bytes) + " with zero_stage " + to_string(p.zero_stage) +
                       ": only ZeRO-3 / FSDP gathers parameters per layer (expected zero_stage: 3, or "
                       "param_gather_bytes: 0)");
  }
}

/// Parallelism fields: tp, pp and the pipeline schedule against the model's shape; ZeRO, bucket
/// and overlap options.
ParallelChecks check_parallel(const models::Scenario& s, const ModelChecks& model, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const bool layers_ok = model.layers_ok;
  const bool heads_ok = model.heads_ok;
  const bool groups_ok = model.groups_ok;
  const models::ParallelSpec& p = s.parallel;
  const bool tp_ok = k.int_field("workload.parallel.tp", p.tp);
  const bool pp_ok = k.int_field("workload.parallel.pp", p.pp);
  const bool dp_ok = k.int_field("workload.parallel.dp", p.dp);
  // Megatron-Core transformer_config.py __post_init__: "num_attention_heads (..) must be a multiple
  // of tensor_model_parallel_size", and the same for num_query_groups.
  if (tp_ok && heads_ok && m.num_attention_heads % p.tp != 0) {
    k.layout_error("workload.parallel.tp", to_string(p.tp) + " does not divide num_attention_heads " +
                                               to_string(m.num_attention_heads) + " (expected a divisor of " +
                                               to_string(m.num_attention_heads) + ")");
  } else if (tp_ok && groups_ok && m.num_query_groups > 0 && m.num_query_groups % p.tp != 0) {
    k.layout_error("workload.parallel.tp", to_string(p.tp) + " does not divide num_query_groups " +
                                               to_string(m.num_query_groups) + " (expected a divisor of " +
                                               to_string(m.num_query_groups) + ")");
  }
  const bool interleaved = p.schedule == models::PipelineSchedule::interleaved_one_f_one_b;
  const bool vs_ok = k.int_field("workload.parallel.virtual_stages", p.virtual_stages);
  if (pp_ok && layers_ok) {
    if (p.pp > m.num_layers) {
      k.layout_error("workload.parallel.pp", to_string(p.pp) + " stages for " + to_string(m.num_layers) +
                                                 " layers (expected at most num_layers = " + to_string(m.num_layers) +
                                                 ")");
    } else if (!p.pipeline_stage_layers.empty()) {
      check_pipeline_stage_layers(s, k);
    } else if (!interleaved && !p.uneven_stages && m.num_layers % p.pp != 0) {
      // megatron/training/arguments.py validate_args: num_layers divisible by the pipeline size
      // (and, interleaved, by pp x layers per virtual stage) unless uneven first/last stages.
      k.layout_error("workload.parallel.pp", to_string(p.pp) + " does not divide num_layers " +
                                                 to_string(m.num_layers) + " (expected a divisor of " +
                                                 to_string(m.num_layers) + ", or uneven_stages: true)");
    }
  }
  if (interleaved) {
    if (pp_ok && p.pp < 2) {
      k.layout_error("workload.parallel.pp",
                     "got 1 with schedule interleaved_one_f_one_b (expected pp >= 2, or schedule: one_f_one_b)");
    }
    if (vs_ok && p.virtual_stages < 2) {
      k.layout_error("workload.parallel.virtual_stages",
                     "got 1 with schedule interleaved_one_f_one_b (expected virtual_stages >= 2)");
    } else if (vs_ok && pp_ok && layers_ok) {
      const std::int64_t chunks = static_cast<std::int64_t>(p.pp) * p.virtual_stages;
      if (p.uneven_stages && m.num_layers < chunks) {
        // Uneven interleaving (Llama 3's 126 layers on 16 stages): every model chunk needs a layer.
        k.layout_error("workload.parallel.virtual_stages",
                       "num_layers " + to_string(m.num_layers) + " is fewer than pp * virtual_stages = " +
                           to_string(p.pp) + " * " + to_string(p.virtual_stages) + " = " + to_string(chunks) +
                           " (expected at least one layer per model chunk)");
      } else if (!p.uneven_stages && m.num_layers % chunks != 0) {
        k.layout_error("workload.parallel.virtual_stages",
                       "num_layers " + to_string(m.num_layers) + " is not divisible by pp * virtual_stages = " +
                           to_string(p.pp) + " * " + to_string(p.virtual_stages) + " = " + to_string(chunks) +
                           " (expected pp * virtual_stages to divide num_layers, or uneven_stages: true)");
      }
    }
  } else if (vs_ok && p.virtual_stages > 1) {
    k.layout_error("workload.parallel.virtual_stages",
                   "got " + to_string(p.virtual_stages) +
                       " with schedule one_f_one_b (expected 1, or schedule: interleaved_one_f_one_b)");
  }
  if (tp_ok && m.ffn_hidden_size > 0 && m.ffn_hidden_size % p.tp != 0) {
    k.layout_error("workload.parallel.tp", to_string(p.tp) + " does not divide ffn_hidden_size " +
                                               to_string(m.ffn_hidden_size) + " (expected a divisor of " +
                                               to_string(m.ffn_hidden_size) + ")");
  }
  if (p.overlap_param_gather && p.zero_stage == 0) {
    k.layout_error("workload.parallel.overlap_param_gather",
                   "needs the distributed optimizer, which gathers parameters (expected zero_stage: 1 or 2, or "
                   "overlap_param_gather: false)");
  } else if (p.overlap_param_gather && p.zero_stage == 3) {
    k.layout_error("workload.parallel.overlap_param_gather",
                   "ZeRO-3 gathers each layer's parameters right before use, with prefetch, not after the step "
                   "(expected overlap_param_gather: false with zero_stage: 3)");
  }
  if (!k.int_field("workload.parallel.zero_stage", p.zero_stage)) {
  } else if (p.zero_stage >= 2 && m.num_experts > 0) {
    k.layout_error("workload.parallel.zero_stage",
                   "got " + to_string(p.zero_stage) +
                       " with num_experts > 0: ZeRO-2/3 are not modelled for MoE experts (expected 0 or 1)");
  }
  check_fsdp_fields(k, p);
  k.finite_at_least("workload.parallel.dp_bucket_bytes", p.dp_bucket_bytes, 0.0, true);
  k.finite_at_least("workload.parallel.reduce_bucket_elements", p.reduce_bucket_elements, 0.0, true);
  if (tp_ok && p.tp > 1 && p.tp_comm_overlap && !p.sequence_parallel)
    k.layout_error("workload.parallel.tp_comm_overlap",
                   "needs sequence parallelism (expected sequence_parallel: true, or tp_comm_overlap: false)");
  return {tp_ok, pp_ok, dp_ok, interleaved};
}

/// Training fields: the batch sizes against dp, micro-batch size and the interleaved schedule; a
/// precision the GPU supports; the token budget.
void check_training(const models::Scenario& s, const ClusterChecks& cluster, const ParallelChecks& parallel,
                    Checker& k) {
  using std::to_string;
  const models::ParallelSpec& p = s.parallel;
  const bool pp_ok = parallel.pp_ok;
  const bool dp_ok = parallel.dp_ok;
  const bool interleaved = parallel.interleaved;
  const models::TrainingSpec& t = s.training;
  const bool gbs_ok = k.int_field("workload.training.global_batch_size", t.global_batch_size);
  const bool mbs_ok = k.int_field("workload.training.micro_batch_size", t.micro_batch_size);
  if (gbs_ok && mbs_ok && dp_ok) {
    const std::int64_t step = static_cast<std::int64_t>(p.dp) * t.micro_batch_size;
    // Megatron-Core num_microbatches_calculator.py: "global batch size (..) is not divisible by
    // micro batch size (..) times data parallel size (..)".
    if (t.global_batch_size % step != 0) {
      k.layout_error("workload.training.global_batch_size",
                     to_string(t.global_batch_size) + " is not divisible by dp * micro_batch_size = " +
                         to_string(p.dp) + " * " + to_string(t.micro_batch_size) + " = " + to_string(step) +
                         " (expected a multiple of " + to_string(step) + ")",
                     {"workload.training.micro_batch_size", "workload.parallel.dp"});
    } else if (interleaved && pp_ok && p.pp > 1 && (t.global_batch_size / step) % p.pp != 0) {
      // Megatron-LM's interleaved schedule runs micro-batches in groups of pp.
      const std::int64_t micro_batches = t.global_batch_size / step;
      k.layout_error("workload.training.global_batch_size",
                     to_string(t.global_batch_size) + " gives " + to_string(micro_batches) +
                         " micro-batches per pipeline, not a multiple of pp = " + to_string(p.pp) +
                         " as interleaved_one_f_one_b needs (expected a multiple of " + to_string(step * p.pp) + ")",
                     {"workload.training.micro_batch_size", "workload.parallel.dp", "workload.parallel.pp"});
    }
  }
  // Every GPU of the cluster runs the precision (a mixed cluster's groups each run a stage).
  for (const models::GpuSpec* gpu : cluster.gpus) {
    const std::string& gpu_name = gpu->name;
    const std::pair<models::Precision, double> peaks[] = {{models::Precision::fp32, gpu->peak_fp32_flops},
                                                          {models::Precision::tf32, gpu->peak_tf32_flops},
                                                          {models::Precision::fp16, gpu->peak_fp16_flops},
                                                          {models::Precision::bf16, gpu->peak_bf16_flops},
                                                          {models::Precision::fp8, gpu->peak_fp8_flops}};
    std::string supported;
    double peak = 0.0;
    for (const auto& [precision, flops] : peaks) {
      if (precision == t.precision) peak = flops;
      if (flops > 0) supported += (supported.empty() ? "" : ", ") + std::string(models::precision_name(precision));
    }
    if (peak <= 0) {
      std::string why = models::precision_name(t.precision);
      why.append(" is not supported by ").append(gpu_name).append(" (expected one of: ").append(supported) += ")";
      k.error("workload.training.precision", why);
    }
    // MXFP8's block scales are a Blackwell (sm100) tensor-core feature (NVIDIA Blackwell
    // architecture technical brief, 2024; Transformer Engine MXFP8BlockScaling needs sm100).
    if (t.precision == models::Precision::fp8 && t.fp8_recipe == models::Fp8Recipe::mx_blockwise &&
        gpu->compute_capability < 100)
      k.error("workload.training.fp8_recipe", "mx_blockwise needs sm100+ (Blackwell); " + gpu_name +
                                                  " is not (expected delayed_tensorwise, current_tensorwise or "
                                                  "rowwise)");
  }
  // One message for every refused value (negative, NaN, inf, between 0 and 1, beyond 1e15, a
  // fraction of a token: 1e9 + 0.5 was taken and printed as 1.0B).
  if (!(t.train_tokens == 0 ||
        (t.train_tokens >= 1 && t.train_tokens <= kMaxTrainTokens && t.train_tokens == std::floor(t.train_tokens)))) {
    k.error("workload.training.train_tokens",
            "got " + Checker::number(t.train_tokens) +
                " (expected 0 for no token budget, or a whole number of tokens from 1 to 1e15: " +
                std::string(kTrainTokensWhy) + ")");
  }
}

/// Options fields (iterations, threads) within their ranges.
void check_options(const models::Scenario& s, Checker& k) {
  k.int_field("options.iterations", s.options.iterations);
  k.int_field("options.threads", s.options.threads);
}

}  // namespace

void check_scenario(models::Scenario& s, Checker& k, bool check_workload, bool check_sections) {
  check_text_fields(s, k);
  ClusterChecks cluster = check_cluster(s, k);
  s.input_warnings.insert(s.input_warnings.end(), cluster.notes.begin(), cluster.notes.end());
  check_gpu_fits_node(s, cluster.node, cluster.gpu, k);
  check_power_thermal(s, k, cluster.node, cluster.gpu);
  if (!check_workload) {
    // Cluster-only use (nccl-tests, explain): the workload may be absent and is not checked.
    check_cluster_only_precision(s, cluster.gpu, k);
    check_options(s, k);
    if (check_sections)
      check_storage_reliability_cost(s, cluster.gpu_name, cluster.node != nullptr ? cluster.node->physical_gpus() : 0,
                                     k);
    return;
  }
  const ModelChecks model = check_model(s, k);
  const ParallelChecks parallel = check_parallel(s, model, k);
  check_moe(s, k);
  check_ep_all_to_all(s, cluster.node, k);
  check_attention(s, k);
  check_encoder(s, k);
  check_elementwise_ops(s, k);
  check_activation_layout(s, k);
  resolve_kernels(s, cluster.gpu, k);
  check_context_parallel(s, k);
  check_data_loader(s, k);
  models::ParallelSpec& p = s.parallel;
  if (p.tp == 1) p.sequence_parallel = false;  // a no-op with one TP rank; Megatron-LM turns it off too
  check_megatron_divisibility(s, k);
  if (cluster.node != nullptr && cluster.nodes_ok && parallel.tp_ok && parallel.pp_ok && parallel.dp_ok)
    check_gpu_count(s, cluster.node, k);
  check_training(s, cluster, parallel, k);
  check_lora(s, k);
  check_offload(s, cluster.node, k);
  check_options(s, k);
  // A mixed cluster is priced as the report names its GPUs ("A + B"), which has no catalog price.
  std::string priced_gpu;
  for (const models::GpuSpec* g : cluster.gpus) priced_gpu += (priced_gpu.empty() ? "" : " + ") + g->name;
  check_storage_reliability_cost(s, cluster.gpus.size() > 1 ? priced_gpu : cluster.gpu_name,
                                 cluster.node != nullptr ? cluster.node->physical_gpus() : 0, k);
}

void enum_errors(const std::vector<std::string>& bad_enums, const tp::Scenario& message, Checker& k) {
  for (const std::string& path : bad_enums) {
    std::vector<PathStep> steps;
    detail::resolve_path(message.GetDescriptor(), path, steps, nullptr);
    const pb::FieldDescriptor* field = steps.back().field;
    const pb::Message* m = &message;
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) m = &m->GetReflection()->GetMessage(*m, steps[i].field);
    const int number = m->GetReflection()->GetEnumValue(*m, field);
    k.error(path, "invalid value " + std::to_string(number) + " (expected " +
                      detail::expected_value(field, Format::text) + ")");
  }
}

void unused_override_errors(const std::map<std::string, std::string>& override_origins, const ClusterUse& use,
                            Checker& k) {
  std::string reads = "the scenario's cluster", expected = "a cluster.* field";
  for (const std::string& f : use.also_reads) {
    reads += " and " + f;
    expected += " or " + f;
  }
  for (auto entry = override_origins.begin(); entry != override_origins.end(); ++entry) {
    const std::string& path = entry->first;
    if (path.rfind("cluster.", 0) == 0 || path == "name" || path == "description" || path == "profile") continue;
    // A message entry an override added ("job[0]") is followed by the field it set ("job[0].name"):
    // that field's error says it.
    if (const auto next = std::next(entry);
        next != override_origins.end() && next->first.rfind(path + ".", 0) == 0 && path.back() == ']')
      continue;
    if (std::find(use.also_reads.begin(), use.also_reads.end(), path) != use.also_reads.end()) continue;
    std::string msg = "has no effect: ";
    msg.append(use.command).append(" uses only ").append(reads).append(" (expected ").append(expected).append(")");
    k.error(path, msg);
  }
}

}  // namespace traincast::io::detail
