// The scenario's field table (scenario_fields.h): one row per scalar of proto::Scenario, with the
// few rows that need more than a member pointer (their mode, a shifted enum) spelled out above it.

#include "models/io/scenario_fields.h"

namespace traincast::io::detail {
namespace {

using S = models::Scenario;
using Cluster = models::ClusterSpec;
using Fabric = models::FabricSpec;
using Collectives = models::CollectiveSpec;
using Model = models::ModelSpec;
using Parallel = models::ParallelSpec;
using Training = models::TrainingSpec;
using Offload = models::OffloadSpec;
using DataLoader = models::DataLoaderSpec;
using Options = models::OptionsSpec;
using Storage = models::StorageSpec;
using Local = models::LocalStorageSpec;
using SharedFs = models::SharedFsSpec;
using Reliability = models::ReliabilitySpec;
using Cost = models::CostSpec;
using Power = models::PowerSpec;
using Thermal = models::ThermalSpec;
using Scheduler = models::SchedulerSpec;

/// The row of the member at the end of the member-pointer chain `Members`.
template <auto... Members>
constexpr ScenarioField field(std::string_view path, Written written = Written::always,
                              bool (*when)(const S&) = nullptr) {
  return {path, member_kind<Members...>(), &get_member<Members...>, &set_member<Members...>, written, when};
}

template <auto... Members>
constexpr ScenarioField field(std::string_view path, bool (*when)(const S&)) {
  return field<Members...>(path, Written::always, when);
}

template <auto Member>
constexpr ScenarioSection section(std::string_view path) {
  return {path, [](const S& s) { return (s.*Member).has_value(); }, [](S& s) { (s.*Member).emplace(); }};
}

// The modes that decide which fields a printed scenario carries: each field below is an error in
// the loader outside its mode, so to_proto leaves it out there.

/// ResNet fields (family, image_size, num_classes) are errors on a transformer.
bool resnet(const S& s) { return s.model.family == models::ModelFamily::resnet; }
/// The transformer shape fields are errors on a ResNet.
bool not_resnet(const S& s) { return s.model.family != models::ModelFamily::resnet; }
/// The dropout fields are errors on a ResNet.
bool transformer(const S& s) { return s.model.family == models::ModelFamily::transformer; }
/// The MoE fields are errors on a dense model.
bool moe(const S& s) { return s.model.num_experts > 0; }
/// The MLA widths are errors without multi_latent_attention.
bool mla(const S& s) { return s.model.multi_latent_attention; }
/// sliding_window_pattern is an error without sliding_window.
bool windowed(const S& s) { return s.model.sliding_window > 0; }
/// The encoder fields are errors on a decoder.
bool encoder(const S& s) { return s.model.architecture == models::Architecture::encoder; }
/// lora_target_modules is an error without LoRA; lora_rank 0 (full training) is left out.
bool lora(const S& s) { return s.training.lora_rank != 0; }
/// The offload figures are errors without optimizer offload; optimizer false is left out.
bool offload(const S& s) { return s.offload.optimizer; }

/// cluster.collectives.protocol: the proto enum numbers NCCL's protocols from 1 (0 is `any`, the
/// least predicted time); the struct holds them from 0 in an std::optional (empty = any). Always
/// written, `any` when empty.
std::optional<FieldValue> get_protocol(const S& s) {
  const std::optional<models::CollectiveProtocol>& p = s.cluster.collectives.protocol;
  return EnumNumber{p ? static_cast<int>(*p) + 1 : 0};
}

/// `any` (0) leaves the struct as it is (empty by default).
void set_protocol(S& s, const FieldValue& v) {
  const int number = std::get<EnumNumber>(v).number;
  if (number != 0) s.cluster.collectives.protocol = static_cast<models::CollectiveProtocol>(number - 1);
}

/// thermal.supply_air_c and thermal.coolant_c: read with their presence (ThermalSpec::*_given);
/// written where the cooling uses them (supply air under air, coolant under liquid, defaults
/// filled in) or where given, so a printed scenario reads back without a warning the file did not
/// earn. Air's default leaves out coolant_c: 35, liquid's supply_air_c: 25.
std::optional<FieldValue> get_supply_air(const S& s) {
  const Thermal& t = s.thermal;
  if (t.cooling != models::Cooling::air && !t.given.supply_air_c && t.supply_air_c == Thermal{}.supply_air_c)
    return std::nullopt;
  return t.supply_air_c;
}
void set_supply_air(S& s, const FieldValue& v) {
  s.thermal.supply_air_c = std::get<double>(v);
  s.thermal.given.supply_air_c = true;
}
std::optional<FieldValue> get_coolant(const S& s) {
  const Thermal& t = s.thermal;
  if (t.cooling != models::Cooling::liquid && !t.given.coolant_c && t.coolant_c == Thermal{}.coolant_c)
    return std::nullopt;
  return t.coolant_c;
}
void set_coolant(S& s, const FieldValue& v) {
  s.thermal.coolant_c = std::get<double>(v);
  s.thermal.given.coolant_c = true;
}

/// power.pue: read with its presence (PowerSpec::given), always written.
std::optional<FieldValue> get_pue(const S& s) { return s.power.pue; }
void set_pue(S& s, const FieldValue& v) {
  s.power.pue = std::get<double>(v);
  s.power.given.pue = true;
}

// Order: as scenario_fields.h says.
constexpr ScenarioField kFields[] = {
    field<&S::name>("name"),
    field<&S::description>("description"),
    // cluster
    field<&S::cluster, &Cluster::node_template>("cluster.node_template"),
    field<&S::cluster, &Cluster::num_nodes>("cluster.num_nodes"),
    field<&S::cluster, &Cluster::gpu>("cluster.gpu"),
    field<&S::cluster, &Cluster::fabric, &Fabric::kind>("cluster.fabric.kind"),
    field<&S::cluster, &Cluster::fabric, &Fabric::oversubscription>("cluster.fabric.oversubscription"),
    field<&S::cluster, &Cluster::fabric, &Fabric::switch_latency_ns>("cluster.fabric.switch_latency_ns"),
    field<&S::cluster, &Cluster::fabric, &Fabric::nodes_per_leaf>("cluster.fabric.nodes_per_leaf"),
    field<&S::cluster, &Cluster::fabric, &Fabric::tiers>("cluster.fabric.tiers"),
    field<&S::cluster, &Cluster::fabric, &Fabric::leaves_per_pod>("cluster.fabric.leaves_per_pod"),
    field<&S::cluster, &Cluster::fabric, &Fabric::cable_length_m>("cluster.fabric.cable_length_m"),
    field<&S::cluster, &Cluster::fabric, &Fabric::leaf_up_ports>("cluster.fabric.leaf_up_ports"),
    field<&S::cluster, &Cluster::fabric, &Fabric::leaf_ports>("cluster.fabric.leaf_ports", Written::if_changed),
    field<&S::cluster, &Cluster::fabric, &Fabric::routing>("cluster.fabric.routing"),
    field<&S::cluster, &Cluster::fabric, &Fabric::ecmp_seed>("cluster.fabric.ecmp_seed"),
    field<&S::cluster, &Cluster::fabric, &Fabric::sharp>("cluster.fabric.sharp", Written::if_changed),
    field<&S::cluster, &Cluster::collectives, &Collectives::algorithm>("cluster.collectives.algorithm"),
    {"cluster.collectives.protocol", FieldKind::enumeration, &get_protocol, &set_protocol},
    field<&S::cluster, &Cluster::collectives, &Collectives::min_channels>("cluster.collectives.min_channels",
                                                                          Written::if_changed),
    field<&S::cluster, &Cluster::collectives, &Collectives::max_channels>("cluster.collectives.max_channels",
                                                                          Written::if_changed),
    field<&S::cluster, &Cluster::collectives, &Collectives::nccl_version>("cluster.collectives.nccl_version",
                                                                          Written::if_changed),
    field<&S::cluster, &Cluster::gpu_direct_rdma>("cluster.gpu_direct_rdma"),
    field<&S::cluster, &Cluster::nic_placement>("cluster.nic_placement"),
    field<&S::cluster, &Cluster::pcie_p2p>("cluster.pcie_p2p"),
    field<&S::cluster, &Cluster::nic>("cluster.nic"),
    field<&S::cluster, &Cluster::nics_per_node>("cluster.nics_per_node"),
    field<&S::cluster, &Cluster::nvlink_bridge_gpus>("cluster.nvlink_bridge_gpus"),
    // workload.model
    field<&S::model, &Model::name>("workload.model.name"),
    field<&S::model, &Model::num_layers>("workload.model.num_layers"),
    field<&S::model, &Model::hidden_size>("workload.model.hidden_size", not_resnet),
    field<&S::model, &Model::num_attention_heads>("workload.model.num_attention_heads", not_resnet),
    field<&S::model, &Model::num_query_groups>("workload.model.num_query_groups", not_resnet),
    field<&S::model, &Model::ffn_hidden_size>("workload.model.ffn_hidden_size", not_resnet),
    field<&S::model, &Model::vocab_size>("workload.model.vocab_size", not_resnet),
    field<&S::model, &Model::make_vocab_size_divisible_by>("workload.model.make_vocab_size_divisible_by", not_resnet),
    field<&S::model, &Model::seq_length>("workload.model.seq_length", not_resnet),
    field<&S::model, &Model::gated_mlp>("workload.model.gated_mlp", not_resnet),
    field<&S::model, &Model::untied_embeddings>("workload.model.untied_embeddings", not_resnet),
    field<&S::model, &Model::num_experts>("workload.model.num_experts", moe),
    field<&S::model, &Model::moe_top_k>("workload.model.moe_top_k", moe),
    field<&S::model, &Model::moe_ffn_hidden_size>("workload.model.moe_ffn_hidden_size", moe),
    field<&S::model, &Model::num_shared_experts>("workload.model.num_shared_experts", moe),
    field<&S::model, &Model::first_dense_layers>("workload.model.first_dense_layers", moe),
    field<&S::model, &Model::moe_capacity_factor>("workload.model.moe_capacity_factor", moe),
    field<&S::model, &Model::moe_expert_imbalance>("workload.model.moe_expert_imbalance", moe),
    field<&S::model, &Model::separate_projections>("workload.model.separate_projections", Written::if_changed,
                                                   not_resnet),
    field<&S::model, &Model::head_dim>("workload.model.head_dim", Written::if_changed, not_resnet),
    field<&S::model, &Model::multi_latent_attention>("workload.model.multi_latent_attention", Written::if_changed,
                                                     not_resnet),
    field<&S::model, &Model::q_lora_rank>("workload.model.q_lora_rank", mla),
    field<&S::model, &Model::kv_lora_rank>("workload.model.kv_lora_rank", mla),
    field<&S::model, &Model::qk_nope_head_dim>("workload.model.qk_nope_head_dim", mla),
    field<&S::model, &Model::qk_rope_head_dim>("workload.model.qk_rope_head_dim", mla),
    field<&S::model, &Model::v_head_dim>("workload.model.v_head_dim", mla),
    field<&S::model, &Model::sliding_window>("workload.model.sliding_window", Written::if_changed, not_resnet),
    field<&S::model, &Model::sliding_window_pattern>("workload.model.sliding_window_pattern", windowed),
    field<&S::model, &Model::family>("workload.model.family", resnet),
    field<&S::model, &Model::image_size>("workload.model.image_size", resnet),
    field<&S::model, &Model::num_classes>("workload.model.num_classes", resnet),
    field<&S::model, &Model::architecture>("workload.model.architecture", encoder),
    field<&S::model, &Model::mlm_prediction_fraction>("workload.model.mlm_prediction_fraction", encoder),
    field<&S::model, &Model::max_position_embeddings>("workload.model.max_position_embeddings", encoder),
    field<&S::model, &Model::attention_dropout>("workload.model.attention_dropout", transformer),
    field<&S::model, &Model::hidden_dropout>("workload.model.hidden_dropout", transformer),
    // workload.parallel
    field<&S::parallel, &Parallel::tp>("workload.parallel.tp"),
    field<&S::parallel, &Parallel::pp>("workload.parallel.pp"),
    field<&S::parallel, &Parallel::dp>("workload.parallel.dp"),
    field<&S::parallel, &Parallel::sequence_parallel>("workload.parallel.sequence_parallel"),
    field<&S::parallel, &Parallel::schedule>("workload.parallel.schedule"),
    field<&S::parallel, &Parallel::virtual_stages>("workload.parallel.virtual_stages"),
    field<&S::parallel, &Parallel::uneven_stages>("workload.parallel.uneven_stages"),
    field<&S::parallel, &Parallel::zero_stage>("workload.parallel.zero_stage"),
    field<&S::parallel, &Parallel::dp_bucket_bytes>("workload.parallel.dp_bucket_bytes"),
    field<&S::parallel, &Parallel::overlap_grad_reduce>("workload.parallel.overlap_grad_reduce"),
    field<&S::parallel, &Parallel::overlap_param_gather>("workload.parallel.overlap_param_gather"),
    field<&S::parallel, &Parallel::tp_comm_overlap>("workload.parallel.tp_comm_overlap"),
    field<&S::parallel, &Parallel::ep>("workload.parallel.ep"),
    field<&S::parallel, &Parallel::cp>("workload.parallel.cp", Written::if_changed),
    field<&S::parallel, &Parallel::reshard_after_forward>("workload.parallel.reshard_after_forward",
                                                          Written::if_changed),
    field<&S::parallel, &Parallel::reshard_after_backward>("workload.parallel.reshard_after_backward",
                                                           Written::if_changed),
    field<&S::parallel, &Parallel::param_gather_bytes>("workload.parallel.param_gather_bytes", Written::if_changed),
    field<&S::parallel, &Parallel::grad_sync_every_microbatch>("workload.parallel.grad_sync_every_microbatch",
                                                               Written::if_changed),
    field<&S::parallel, &Parallel::zero_implementation>("workload.parallel.zero_implementation", Written::if_changed),
    field<&S::parallel, &Parallel::reduce_bucket_elements>("workload.parallel.reduce_bucket_elements",
                                                           Written::if_changed),
    field<&S::parallel, &Parallel::tp_overlap_implementation>("workload.parallel.tp_overlap_implementation",
                                                              Written::if_changed),
    field<&S::parallel, &Parallel::moe_shared_expert_overlap>("workload.parallel.moe_shared_expert_overlap",
                                                              Written::if_changed),
    field<&S::parallel, &Parallel::activation_layout>("workload.parallel.activation_layout", Written::if_changed),
    field<&S::parallel, &Parallel::overlap_tp_grad_reduce>("workload.parallel.overlap_tp_grad_reduce",
                                                           Written::if_changed),
    // workload.training
    field<&S::training, &Training::global_batch_size>("workload.training.global_batch_size"),
    field<&S::training, &Training::micro_batch_size>("workload.training.micro_batch_size"),
    field<&S::training, &Training::precision>("workload.training.precision"),
    field<&S::training, &Training::recompute>("workload.training.recompute"),
    field<&S::training, &Training::fp32_grad_accumulation>("workload.training.fp32_grad_accumulation"),
    field<&S::training, &Training::flash_attention>("workload.training.flash_attention"),
    field<&S::training, &Training::train_tokens>("workload.training.train_tokens"),
    field<&S::training, &Training::lora_rank>("workload.training.lora_rank", lora),
    field<&S::training, &Training::lora_target_modules>("workload.training.lora_target_modules", lora),
    field<&S::training, &Training::fp8_recipe>("workload.training.fp8_recipe", Written::if_changed),
    field<&S::training, &Training::compute_model>("workload.training.compute_model", Written::if_changed),
    field<&S::training, &Training::selective_policy>("workload.training.selective_policy", Written::if_changed),
    field<&S::training, &Training::cross_entropy>("workload.training.cross_entropy", Written::if_changed),
    field<&S::training, &Training::attention_kernel>("workload.training.attention_kernel", Written::if_changed),
    field<&S::training, &Training::ep_all_to_all>("workload.training.ep_all_to_all", Written::if_changed),
    field<&S::training, &Training::moe_max_nodes_per_token>("workload.training.moe_max_nodes_per_token",
                                                            Written::if_changed),
    field<&S::training, &Training::elementwise_fusion>("workload.training.elementwise_fusion", Written::if_changed),
    // workload.offload
    field<&S::offload, &Offload::optimizer>("workload.offload.optimizer", offload),
    field<&S::offload, &Offload::host_memory_bytes_per_s>("workload.offload.host_memory_bytes_per_s", offload),
    field<&S::offload, &Offload::cpu_adam_efficiency>("workload.offload.cpu_adam_efficiency", offload),
    // workload.data_loader (an optional section)
    field<&S::data_loader, &DataLoader::numa_binding>("workload.data_loader.numa_binding"),
    field<&S::data_loader, &DataLoader::input_bytes_per_element>("workload.data_loader.input_bytes_per_element"),
    field<&S::data_loader, &DataLoader::prefetch>("workload.data_loader.prefetch"),
    // options
    field<&S::options, &Options::iterations>("options.iterations"),
    field<&S::options, &Options::fold_symmetric>("options.fold_symmetric"),
    field<&S::options, &Options::threads>("options.threads"),
    // storage (an optional section)
    field<&S::storage, &Storage::local, &Local::drives>("storage.local.drives"),
    field<&S::storage, &Storage::local, &Local::drive_read_gb_per_s>("storage.local.drive_read_gb_per_s"),
    field<&S::storage, &Storage::local, &Local::drive_write_gb_per_s>("storage.local.drive_write_gb_per_s"),
    field<&S::storage, &Storage::local, &Local::raid>("storage.local.raid"),
    field<&S::storage, &Storage::local, &Local::hardware_controller>("storage.local.hardware_controller"),
    field<&S::storage, &Storage::local, &Local::cache_policy>("storage.local.cache_policy"),
    field<&S::storage, &Storage::local, &Local::controller_cache_bytes>("storage.local.controller_cache_bytes"),
    field<&S::storage, &Storage::local, &Local::controller_gb_per_s>("storage.local.controller_gb_per_s"),
    field<&S::storage, &Storage::shared_fs, &SharedFs::aggregate_read_gb_per_s>(
        "storage.shared_fs.aggregate_read_gb_per_s"),
    field<&S::storage, &Storage::shared_fs, &SharedFs::aggregate_write_gb_per_s>(
        "storage.shared_fs.aggregate_write_gb_per_s"),
    field<&S::storage, &Storage::shared_fs, &SharedFs::per_node_gb_per_s>("storage.shared_fs.per_node_gb_per_s"),
    field<&S::storage, &Storage::data_source>("storage.data_source"),
    field<&S::storage, &Storage::bytes_per_token>("storage.bytes_per_token"),
    field<&S::storage, &Storage::bytes_per_sample>("storage.bytes_per_sample"),
    field<&S::storage, &Storage::checkpoint_target>("storage.checkpoint_target"),
    field<&S::storage, &Storage::checkpoint_mode>("storage.checkpoint_mode"),
    field<&S::storage, &Storage::checkpoint_interval_s>("storage.checkpoint_interval_s"),
    field<&S::storage, &Storage::snapshot_gb_per_s>("storage.snapshot_gb_per_s"),
    // reliability (an optional section)
    field<&S::reliability, &Reliability::checkpoint_interval_s>("reliability.checkpoint_interval_s"),
    field<&S::reliability, &Reliability::restart_overhead_s>("reliability.restart_overhead_s"),
    field<&S::reliability, &Reliability::horizon_s>("reliability.horizon_s"),
    field<&S::reliability, &Reliability::monte_carlo_draws>("reliability.monte_carlo_draws"),
    field<&S::reliability, &Reliability::seed>("reliability.seed"),
    // cost (an optional section)
    field<&S::cost, &Cost::node_price_usd>("cost.node_price_usd"),
    field<&S::cost, &Cost::switch_price_usd>("cost.switch_price_usd"),
    field<&S::cost, &Cost::cable_price_usd>("cost.cable_price_usd"),
    field<&S::cost, &Cost::amortization_years>("cost.amortization_years"),
    field<&S::cost, &Cost::upkeep_fraction_per_year>("cost.upkeep_fraction_per_year"),
    field<&S::cost, &Cost::energy_price_usd_per_kwh>("cost.energy_price_usd_per_kwh"),
    field<&S::cost, &Cost::cloud_price_per_gpu_hour_usd>("cost.cloud_price_per_gpu_hour_usd"),
    field<&S::cost, &Cost::utilization>("cost.utilization"),
    // power
    field<&S::power, &Power::gpu_power_limit_w>("power.gpu_power_limit_w"),
    {"power.pue", FieldKind::floating, &get_pue, &set_pue},
    field<&S::power, &Power::cpu_load_fraction>("power.cpu_load_fraction"),
    field<&S::power, &Power::psu_redundant>("power.psu_redundant"),
    field<&S::power, &Power::memory_bound_fraction>("power.memory_bound_fraction"),
    field<&S::power, &Power::comm_fraction>("power.comm_fraction"),
    // thermal
    field<&S::thermal, &Thermal::cooling>("thermal.cooling"),
    {"thermal.supply_air_c", FieldKind::floating, &get_supply_air, &set_supply_air},
    {"thermal.coolant_c", FieldKind::floating, &get_coolant, &set_coolant},
    field<&S::thermal, &Thermal::r_k_per_w>("thermal.r_k_per_w"),
    field<&S::thermal, &Thermal::c_j_per_k>("thermal.c_j_per_k"),
    field<&S::thermal, &Thermal::rack_cooling_capacity_w>("thermal.rack_cooling_capacity_w"),
    field<&S::thermal, &Thermal::nodes_per_rack>("thermal.nodes_per_rack"),
    field<&S::thermal, &Thermal::start>("thermal.start"),
    // scheduler (`traincast cluster`; left out of printed scenarios at their defaults)
    field<&S::scheduler, &Scheduler::policy>("scheduler.policy", Written::if_changed),
    field<&S::scheduler, &Scheduler::placement>("scheduler.placement", Written::if_changed),
};

constexpr ScenarioSection kSections[] = {
    section<&S::data_loader>("workload.data_loader"),
    section<&S::storage>("storage"),
    section<&S::reliability>("reliability"),
    section<&S::cost>("cost"),
};

}  // namespace

std::optional<FieldValue> ScenarioField::written_value(const models::Scenario& s) const {
  if (when != nullptr && !when(s)) return std::nullopt;
  std::optional<FieldValue> value = get(s);
  if (value && written == Written::if_changed) {
    static const models::Scenario defaults;
    if (value == get(defaults)) return std::nullopt;
  }
  return value;
}

std::span<const ScenarioField> scenario_fields() { return kFields; }

std::span<const ScenarioSection> scenario_sections() { return kSections; }

}  // namespace traincast::io::detail
