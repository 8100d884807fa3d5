// protobuf <-> models::Scenario conversion (scenario_convert.h): every scalar through the field
// table (scenario_fields.h) by reflection, the lists and the few special cases by hand below; and
// the static_asserts that pin the enum orders of models/spec/ to those of traincast.proto.

#include "models/io/scenario_convert.h"

#include <exception>
#include <filesystem>
#include <system_error>

#include "models/calibration/calibration_profile.h"
#include "models/hardware/catalog.h"
#include "models/hardware/leaf_ports.h"
#include "models/io/field_reflection.h"
#include "models/io/node_template_io.h"
#include "models/io/scenario_fields.h"
#include "traincast.pb.h"

namespace traincast::io::detail {
namespace {

namespace tp = traincast::proto;

/// A table row with its descriptors, looked up once.
struct ResolvedField {
  const ScenarioField* row;
  FieldChain chain;
};

struct ResolvedSection {
  const ScenarioSection* row;
  FieldChain chain;
};

const std::vector<ResolvedField>& resolved_fields() {
  static const std::vector<ResolvedField> fields = [] {
    std::vector<ResolvedField> out;
    for (const ScenarioField& row : scenario_fields())
      out.push_back({&row, scalar_chain(tp::Scenario::descriptor(), row.path, row.kind, CopyDirection::read)});
    return out;
  }();
  return fields;
}

const std::vector<ResolvedSection>& resolved_sections() {
  static const std::vector<ResolvedSection> sections = [] {
    std::vector<ResolvedSection> out;
    for (const ScenarioSection& row : scenario_sections())
      out.push_back({&row, message_chain(tp::Scenario::descriptor(), row.path)});
    return out;
  }();
  return sections;
}

}  // namespace

void to_struct(const tp::Scenario& m, models::Scenario& s, std::vector<std::string>& bad_enums) {
  // Issue 4 sections and the data loader: present in the file = modelled, even when empty.
  for (const ResolvedSection& section : resolved_sections()) {
    if (chain_present(m, section.chain)) section.row->create(s);
  }
  for (const ResolvedField& f : resolved_fields()) {
    if (!chain_present(m, f.chain)) continue;
    const FieldValue value = get_field(parent_of(m, f.chain), f.chain.back());
    if (const auto* e = std::get_if<EnumNumber>(&value); e != nullptr && !names_enum_value(f.chain.back(), e->number)) {
      bad_enums.emplace_back(f.row->path);
      continue;
    }
    f.row->set(s, value);
  }

  // Lists, and the one default that depends on another field.
  const tp::FabricSpec& fabric = m.cluster().fabric();
  if (fabric.torus_dims_size() > 0)
    s.cluster.fabric.torus_dims.assign(fabric.torus_dims().begin(), fabric.torus_dims().end());
  for (const tp::ClusterSpec::Override& o : m.cluster().overrides())
    s.cluster.overrides.push_back({o.select(), o.clock_factor(), o.bandwidth_factor(), o.failed(), o.power_cap_w(),
                                   o.has_supply_c() ? std::optional<double>(o.supply_c()) : std::nullopt,
                                   o.has_missing() ? std::optional<bool>(o.missing()) : std::nullopt});
  // Node groups (issue 20): node_template and num_nodes become the first group's template and
  // the groups' sum unless written (check_node_groups refuses them when they disagree).
  for (const tp::ClusterSpec::NodeGroup& g : m.cluster().node_group())
    s.cluster.node_groups.push_back({g.node_template(), g.has_num_nodes() ? g.num_nodes() : 1, g.gpu()});
  if (!s.cluster.node_groups.empty()) {
    if (!m.cluster().has_node_template()) s.cluster.node_template = s.cluster.node_groups.front().node_template;
    if (!m.cluster().has_num_nodes()) {
      long long sum = 0;
      for (const models::NodeGroupSpec& g : s.cluster.node_groups) sum += g.num_nodes;
      // A group of no nodes is refused at its own num_nodes, a sum above 2^30 at the groups
      // (check_node_groups); 1 keeps the cluster's checks from adding a derived "not set".
      s.cluster.num_nodes = sum <= 0 || sum > (1LL << 30) ? 1 : static_cast<int>(sum);
    }
  }
  const auto& stage_layers = m.workload().parallel().pipeline_stage_layers();
  s.parallel.pipeline_stage_layers.assign(stage_layers.begin(), stage_layers.end());
  if (!m.workload().parallel().has_dp_bucket_bytes() && s.model.family == models::ModelFamily::resnet) {
    // PyTorch DDP's default bucket_cap_mb = 25 (torch.nn.parallel.DistributedDataParallel docs).
    s.parallel.dp_bucket_bytes = 25.0 * 1048576.0;
  }
  if (m.has_reliability()) {
    for (const tp::ReliabilitySpec::Failure& f : m.reliability().failure())
      s.reliability->failures.push_back({f.cause(), f.per_gpu_hour(), f.per_node_hour()});
  }
  const tp::ThermalSpec& th = m.thermal();
  // A rack-scale product (models/hardware/catalog.h NodeTemplate::liquid_cooled, gpus_per_rack)
  // sets the cooling and the nodes per rack it is built with; an unknown template is left to the
  // checks, which name it.
  if (!th.has_cooling() || !th.has_nodes_per_rack()) {
    const models::NodeTemplate* node = nullptr;
    try {
      node = &models::cluster_node_template(s.cluster);
    } catch (const std::exception&) {
      node = nullptr;
    }
    if (node != nullptr && node->liquid_cooled && !th.has_cooling()) s.thermal.cooling = models::Cooling::liquid;
    if (node != nullptr && node->gpus_per_rack > 0 && !th.has_nodes_per_rack())
      s.thermal.nodes_per_rack = node->gpus_per_rack / node->gpus_per_node;
  }
  // The default nodes per leaf fits the leaf switch (models/hardware/leaf_ports.h): 32, or the
  // most that fit where 32 nodes' ports do not; none fits is left to the checks, which name it.
  if (!m.cluster().fabric().has_nodes_per_leaf()) {
    try {
      const models::NodeTemplate& node = models::cluster_node_template(s.cluster);
      const models::FabricSpec& f = s.cluster.fabric;
      const int fits =
          models::default_nodes_per_leaf(f, s.cluster.num_nodes, s.cluster.nics_per_node.value_or(node.nics),
                                         models::leaf_ports(f, models::find_nic(node.nic)));
      if (fits > 0) s.cluster.fabric.nodes_per_leaf = fits;
    } catch (const std::exception&) {
      // an unknown template or NIC: the checks name it
    }
  }
  s.thermal.gpu_airflow_fraction.assign(th.gpu_airflow_fraction().begin(), th.gpu_airflow_fraction().end());
  for (const tp::JobSpec& j : m.job())
    s.jobs.push_back({j.name(), j.workload(), j.gpus(), j.arrival_s(), j.priority(), j.tokens(), j.duration_s(),
                      j.alone_duration_s()});
}

tp::Scenario to_proto(const models::Scenario& s) {
  tp::Scenario m;
  for (const ResolvedSection& section : resolved_sections()) {
    if (section.row->present(s)) mutable_message(m, section.chain);
  }
  for (const ResolvedField& f : resolved_fields()) {
    if (const std::optional<FieldValue> value = f.row->written_value(s))
      set_field(mutable_parent_of(m, f.chain), f.chain.back(), *value);
  }
  // An unnamed scenario or model is written without the line: the loader refuses a name written
  // empty (it would print as nothing).
  if (s.name.empty()) m.clear_name();
  if (s.model.name.empty() && m.has_workload() && m.workload().has_model())
    m.mutable_workload()->mutable_model()->clear_name();
  // A price of 0 stands for "not given: the GPU's default", which the loader refuses written out.
  if (m.has_cost() && m.cost().node_price_usd() == 0) m.mutable_cost()->clear_node_price_usd();
  if (m.has_cost() && m.cost().switch_price_usd() == 0) m.mutable_cost()->clear_switch_price_usd();
  if (m.has_cost() && m.cost().cloud_price_per_gpu_hour_usd() == 0)
    m.mutable_cost()->clear_cloud_price_per_gpu_hour_usd();
  // Local drives nothing reads or writes, at their defaults: left out, so that the printed scenario
  // does not warn that a block the user never wrote has no effect (unused_local_storage_notes). A
  // block that differs from the defaults is the user's, and is kept.
  if (s.storage && s.storage->data_source != models::StorageTarget::local &&
      s.storage->checkpoint_target != models::StorageTarget::local && s.storage->local == models::LocalStorageSpec{})
    m.mutable_storage()->clear_local();

  // The profile and the lists.
  if (s.cluster.profile != nullptr && !s.cluster.profile->origin.empty()) {
    // The file the profile was read from, absolute: the text may be saved anywhere.
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(s.cluster.profile->origin, ec);
    m.set_profile((ec ? std::filesystem::path(s.cluster.profile->origin) : abs).lexically_normal().string());
  }
  for (int d : s.cluster.fabric.torus_dims) m.mutable_cluster()->mutable_fabric()->add_torus_dims(d);
  for (const models::NodeGroupSpec& g : s.cluster.node_groups) {
    tp::ClusterSpec::NodeGroup& x = *m.mutable_cluster()->add_node_group();
    x.set_node_template(g.node_template);
    x.set_num_nodes(g.num_nodes);
    if (!g.gpu.empty()) x.set_gpu(g.gpu);
  }
  for (int l : s.parallel.pipeline_stage_layers) m.mutable_workload()->mutable_parallel()->add_pipeline_stage_layers(l);
  for (const models::ElementOverride& o : s.cluster.overrides) {
    tp::ClusterSpec::Override& x = *m.mutable_cluster()->add_overrides();
    x.set_select(o.select);
    if (o.clock_factor != 0.0) x.set_clock_factor(o.clock_factor);
    if (o.bandwidth_factor != 0.0) x.set_bandwidth_factor(o.bandwidth_factor);
    if (o.failed) x.set_failed(true);
    if (o.power_cap_w != 0.0) x.set_power_cap_w(o.power_cap_w);
    if (o.supply_c) x.set_supply_c(*o.supply_c);
    if (o.missing) x.set_missing(*o.missing);
  }
  if (s.reliability) {
    for (const models::FailureRate& f : s.reliability->failures) {
      tp::ReliabilitySpec::Failure& x = *m.mutable_reliability()->add_failure();
      x.set_cause(f.cause);
      x.set_per_gpu_hour(f.per_gpu_hour);
      x.set_per_node_hour(f.per_node_hour);
    }
  }
  for (double a : s.thermal.gpu_airflow_fraction) m.mutable_thermal()->add_gpu_airflow_fraction(a);
  for (const models::JobSpec& j : s.jobs) {
    tp::JobSpec& x = *m.add_job();
    if (!j.name.empty()) x.set_name(j.name);
    if (!j.workload.empty()) x.set_workload(j.workload);
    x.set_gpus(j.gpus);
    if (j.arrival_s != 0.0) x.set_arrival_s(j.arrival_s);
    if (j.priority != 0) x.set_priority(j.priority);
    if (j.tokens != 0.0) x.set_tokens(j.tokens);
    if (j.duration_s != 0.0) x.set_duration_s(j.duration_s);
    if (j.alone_duration_s != 0.0) x.set_alone_duration_s(j.alone_duration_s);
  }
  add_described_node_templates(s, m);
  return m;
}

models::Scenario through_message(const models::Scenario& s, std::vector<std::string>& bad_enums) {
  models::Scenario out;
  const tp::Scenario m = to_proto(s);
  out.cluster.described_node_templates = described_node_templates_of(m);
  to_struct(m, out, bad_enums);
  return out;
}

// The enum orders of models/spec/ and traincast.proto are the same (the field table copies enums
// by number); these pin it, and each proto enum's size (the loader's range check).
static_assert(static_cast<int>(models::FabricKind::fat_tree) == tp::FabricSpec::fat_tree);
static_assert(static_cast<int>(models::FabricKind::rail_optimized) == tp::FabricSpec::rail_optimized);
static_assert(static_cast<int>(models::PipelineSchedule::interleaved_one_f_one_b) ==
              tp::ParallelSpec::interleaved_one_f_one_b);
static_assert(static_cast<int>(models::Precision::fp8) == tp::TrainingSpec::fp8);
static_assert(static_cast<int>(models::Precision::bf16) == tp::TrainingSpec::bf16);
static_assert(static_cast<int>(models::Recompute::full) == tp::TrainingSpec::full);
static_assert(static_cast<int>(models::Fp8Recipe::mx_blockwise) == tp::TrainingSpec::mx_blockwise &&
              static_cast<int>(models::Fp8Recipe::rowwise) == tp::TrainingSpec::rowwise &&
              tp::TrainingSpec::Fp8Recipe_ARRAYSIZE == 4);
static_assert(static_cast<int>(models::ComputeModel::kernel) == tp::TrainingSpec::kernel &&
              tp::TrainingSpec::ComputeModel_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::ZeroImplementation::deepspeed) == tp::ParallelSpec::deepspeed &&
              tp::ParallelSpec::ZeroImplementation_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::TpOverlapImplementation::async_tp) == tp::ParallelSpec::async_tp &&
              tp::ParallelSpec::TpOverlapImplementation_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::ActivationLayout::batch_first) == tp::ParallelSpec::batch_first &&
              tp::ParallelSpec::ActivationLayout_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::SelectivePolicy::torchtitan_op) == tp::TrainingSpec::torchtitan_op &&
              tp::TrainingSpec::SelectivePolicy_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::CrossEntropy::unfused) == tp::TrainingSpec::unfused &&
              tp::TrainingSpec::CrossEntropy_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::AttentionKernel::cudnn) == tp::TrainingSpec::cudnn &&
              tp::TrainingSpec::AttentionKernel_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::EpAllToAll::deepep) == tp::TrainingSpec::deepep &&
              tp::TrainingSpec::EpAllToAll_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::ElementwiseFusion::eager) == tp::eager && tp::ElementwiseFusion_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::Architecture::encoder) == tp::ModelSpec::encoder &&
              tp::ModelSpec::Architecture_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::ModelFamily::resnet) == tp::ModelSpec::resnet &&
              tp::ModelSpec::Family_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::FabricKind::torus) == tp::FabricSpec::torus);
static_assert(static_cast<int>(models::FabricRouting::ecmp_hash) == tp::FabricSpec::ecmp_hash &&
              static_cast<int>(models::FabricRouting::d_mod_k) == tp::FabricSpec::d_mod_k &&
              tp::FabricSpec::Routing_ARRAYSIZE == 4);
static_assert(static_cast<int>(models::CollectiveAlgorithm::nvls_tree) == tp::nvls_tree &&
              static_cast<int>(models::CollectiveAlgorithm::hierarchical) == tp::hierarchical &&
              static_cast<int>(models::CollectiveAlgorithm::pat) == tp::pat &&
              static_cast<int>(models::CollectiveAlgorithm::collnet_chain) == tp::collnet_chain &&
              tp::CollectiveAlgorithm_ARRAYSIZE == 9);
static_assert(static_cast<int>(models::CollectiveProtocol::simple) + 1 == tp::CollectiveSpec::simple &&
              static_cast<int>(models::CollectiveProtocol::ll) + 1 == tp::CollectiveSpec::ll &&
              tp::CollectiveSpec::Protocol_ARRAYSIZE == 4);
static_assert(static_cast<int>(models::NicPlacement::other_socket) == tp::ClusterSpec::other_socket &&
              tp::ClusterSpec::NicPlacement_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::NumaBinding::socket0) == tp::DataLoaderSpec::socket0 &&
              tp::DataLoaderSpec::NumaBinding_ARRAYSIZE == 3);
static_assert(static_cast<int>(models::Cooling::liquid) == tp::ThermalSpec::liquid &&
              static_cast<int>(models::ThermalStart::idle) == tp::ThermalSpec::idle &&
              tp::ThermalSpec::Cooling_ARRAYSIZE == 2 && tp::ThermalSpec::Start_ARRAYSIZE == 2);
static_assert(tp::FabricSpec::Kind_ARRAYSIZE == 4 && tp::ParallelSpec::Schedule_ARRAYSIZE == 2 &&
              tp::TrainingSpec::Precision_ARRAYSIZE == 5 && tp::TrainingSpec::Recompute_ARRAYSIZE == 3);
static_assert(static_cast<int>(models::RaidLevel::raid6) == tp::LocalStorageSpec::raid6 &&
              tp::LocalStorageSpec::Raid_ARRAYSIZE == 5);
static_assert(static_cast<int>(models::WriteCachePolicy::write_through) == tp::LocalStorageSpec::write_through &&
              tp::LocalStorageSpec::CachePolicy_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::SchedulerPolicy::backfill) == tp::SchedulerSpec::backfill &&
              tp::SchedulerSpec::Policy_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::JobPlacement::topology_aware) == tp::SchedulerSpec::topology_aware &&
              tp::SchedulerSpec::Placement_ARRAYSIZE == 3);
static_assert(static_cast<int>(models::StorageTarget::shared_fs) == tp::shared_fs && tp::StorageTarget_ARRAYSIZE == 2);
static_assert(static_cast<int>(models::CheckpointMode::asynchronous) == tp::StorageSpec::asynchronous &&
              tp::StorageSpec::CheckpointMode_ARRAYSIZE == 2);

}  // namespace traincast::io::detail
