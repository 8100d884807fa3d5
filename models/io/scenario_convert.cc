// protobuf <-> models::Scenario conversion (scenario_convert.h), and the static_asserts that pin
// the enum orders of models/spec/scenario.h to those of traincast.proto.

#include "models/io/scenario_convert.h"

#include <filesystem>
#include <system_error>

#include "models/calibration/calibration_profile.h"

namespace traincast::io::detail {
namespace {

namespace tp = traincast::proto;

template <typename Enum>
bool enum_from_number(int number, int count, Enum& out) {
  if (number < 0 || number >= count) return false;
  out = static_cast<Enum>(number);
  return true;
}

/// Issue 4 sections: present in the file = modelled.
void storage_reliability_cost_to_struct(const tp::Scenario& m, models::Scenario& s,
                                        std::vector<std::string>& bad_enums) {
  if (m.has_storage()) {
    const tp::StorageSpec& st = m.storage();
    models::StorageSpec& o = s.storage.emplace();
    const tp::LocalStorageSpec& l = st.local();
    if (l.has_drives()) o.local.drives = l.drives();
    if (l.has_drive_read_gb_per_s()) o.local.drive_read_gb_per_s = l.drive_read_gb_per_s();
    if (l.has_drive_write_gb_per_s()) o.local.drive_write_gb_per_s = l.drive_write_gb_per_s();
    if (l.has_raid() && !enum_from_number(l.raid(), 5, o.local.raid)) bad_enums.push_back("storage.local.raid");
    if (l.has_hardware_controller()) o.local.hardware_controller = l.hardware_controller();
    if (l.has_cache_policy() && !enum_from_number(l.cache_policy(), 2, o.local.cache_policy))
      bad_enums.push_back("storage.local.cache_policy");
    if (l.has_controller_cache_bytes()) o.local.controller_cache_bytes = l.controller_cache_bytes();
    if (l.has_controller_gb_per_s()) o.local.controller_gb_per_s = l.controller_gb_per_s();
    const tp::SharedFsSpec& f = st.shared_fs();
    if (f.has_aggregate_read_gb_per_s()) o.shared_fs.aggregate_read_gb_per_s = f.aggregate_read_gb_per_s();
    if (f.has_aggregate_write_gb_per_s()) o.shared_fs.aggregate_write_gb_per_s = f.aggregate_write_gb_per_s();
    if (f.has_per_node_gb_per_s()) o.shared_fs.per_node_gb_per_s = f.per_node_gb_per_s();
    if (st.has_data_source() && !enum_from_number(st.data_source(), 2, o.data_source))
      bad_enums.push_back("storage.data_source");
    if (st.has_bytes_per_token()) o.bytes_per_token = st.bytes_per_token();
    if (st.has_bytes_per_sample()) o.bytes_per_sample = st.bytes_per_sample();
    if (st.has_checkpoint_target() && !enum_from_number(st.checkpoint_target(), 2, o.checkpoint_target))
      bad_enums.push_back("storage.checkpoint_target");
    if (st.has_checkpoint_mode() && !enum_from_number(st.checkpoint_mode(), 2, o.checkpoint_mode))
      bad_enums.push_back("storage.checkpoint_mode");
    if (st.has_checkpoint_interval_s()) o.checkpoint_interval_s = st.checkpoint_interval_s();
    if (st.has_snapshot_gb_per_s()) o.snapshot_gb_per_s = st.snapshot_gb_per_s();
  }
  if (m.has_reliability()) {
    const tp::ReliabilitySpec& r = m.reliability();
    models::ReliabilitySpec& o = s.reliability.emplace();
    for (const tp::ReliabilitySpec::Failure& f : r.failure())
      o.failures.push_back({f.cause(), f.per_gpu_hour(), f.per_node_hour()});
    if (r.has_checkpoint_interval_s()) o.checkpoint_interval_s = r.checkpoint_interval_s();
    if (r.has_restart_overhead_s()) o.restart_overhead_s = r.restart_overhead_s();
    if (r.has_horizon_s()) o.horizon_s = r.horizon_s();
    if (r.has_monte_carlo_draws()) o.monte_carlo_draws = r.monte_carlo_draws();
    if (r.has_seed()) o.seed = r.seed();
  }
  if (m.has_cost()) {
    const tp::CostSpec& c = m.cost();
    models::CostSpec& o = s.cost.emplace();
    if (c.has_node_price_usd()) o.node_price_usd = c.node_price_usd();
    if (c.has_switch_price_usd()) o.switch_price_usd = c.switch_price_usd();
    if (c.has_cable_price_usd()) o.cable_price_usd = c.cable_price_usd();
    if (c.has_amortization_years()) o.amortization_years = c.amortization_years();
    if (c.has_upkeep_fraction_per_year()) o.upkeep_fraction_per_year = c.upkeep_fraction_per_year();
    if (c.has_energy_price_usd_per_kwh()) o.energy_price_usd_per_kwh = c.energy_price_usd_per_kwh();
    if (c.has_cloud_price_per_gpu_hour_usd()) o.cloud_price_per_gpu_hour_usd = c.cloud_price_per_gpu_hour_usd();
    if (c.has_utilization()) o.utilization = c.utilization();
  }
}

void storage_reliability_cost_to_proto(const models::Scenario& s, tp::Scenario& m) {
  if (s.storage) {
    const models::StorageSpec& st = *s.storage;
    tp::StorageSpec& o = *m.mutable_storage();
    tp::LocalStorageSpec& l = *o.mutable_local();
    l.set_drives(st.local.drives);
    l.set_drive_read_gb_per_s(st.local.drive_read_gb_per_s);
    l.set_drive_write_gb_per_s(st.local.drive_write_gb_per_s);
    l.set_raid(static_cast<tp::LocalStorageSpec::Raid>(st.local.raid));
    l.set_hardware_controller(st.local.hardware_controller);
    l.set_cache_policy(static_cast<tp::LocalStorageSpec::CachePolicy>(st.local.cache_policy));
    l.set_controller_cache_bytes(st.local.controller_cache_bytes);
    l.set_controller_gb_per_s(st.local.controller_gb_per_s);
    tp::SharedFsSpec& f = *o.mutable_shared_fs();
    f.set_aggregate_read_gb_per_s(st.shared_fs.aggregate_read_gb_per_s);
    f.set_aggregate_write_gb_per_s(st.shared_fs.aggregate_write_gb_per_s);
    f.set_per_node_gb_per_s(st.shared_fs.per_node_gb_per_s);
    o.set_data_source(static_cast<tp::StorageTarget>(st.data_source));
    o.set_bytes_per_token(st.bytes_per_token);
    o.set_bytes_per_sample(st.bytes_per_sample);
    o.set_checkpoint_target(static_cast<tp::StorageTarget>(st.checkpoint_target));
    o.set_checkpoint_mode(static_cast<tp::StorageSpec::CheckpointMode>(st.checkpoint_mode));
    o.set_checkpoint_interval_s(st.checkpoint_interval_s);
    o.set_snapshot_gb_per_s(st.snapshot_gb_per_s);
  }
  if (s.reliability) {
    const models::ReliabilitySpec& r = *s.reliability;
    tp::ReliabilitySpec& o = *m.mutable_reliability();
    for (const models::FailureRate& f : r.failures) {
      tp::ReliabilitySpec::Failure& x = *o.add_failure();
      x.set_cause(f.cause);
      x.set_per_gpu_hour(f.per_gpu_hour);
      x.set_per_node_hour(f.per_node_hour);
    }
    o.set_checkpoint_interval_s(r.checkpoint_interval_s);
    o.set_restart_overhead_s(r.restart_overhead_s);
    o.set_horizon_s(r.horizon_s);
    o.set_monte_carlo_draws(r.monte_carlo_draws);
    o.set_seed(r.seed);
  }
  if (s.cost) {
    const models::CostSpec& c = *s.cost;
    tp::CostSpec& o = *m.mutable_cost();
    o.set_node_price_usd(c.node_price_usd);
    o.set_switch_price_usd(c.switch_price_usd);
    o.set_cable_price_usd(c.cable_price_usd);
    o.set_amortization_years(c.amortization_years);
    o.set_upkeep_fraction_per_year(c.upkeep_fraction_per_year);
    o.set_energy_price_usd_per_kwh(c.energy_price_usd_per_kwh);
    o.set_cloud_price_per_gpu_hour_usd(c.cloud_price_per_gpu_hour_usd);
    o.set_utilization(c.utilization);
  }
}
static_assert(static_cast<int>(models::RaidLevel::raid6) == tp::LocalStorageSpec::raid6 &&
              tp::LocalStorageSpec::Raid_ARRAYSIZE == 5);
static_assert(static_cast<int>(models::WriteCachePolicy::write_through) == tp::LocalStorageSpec::write_through);
static_assert(static_cast<int>(models::StorageTarget::shared_fs) == tp::shared_fs);
static_assert(static_cast<int>(models::CheckpointMode::asynchronous) == tp::StorageSpec::asynchronous);

}  // namespace

void to_struct(const tp::Scenario& m, models::Scenario& s, std::vector<std::string>& bad_enums) {
  if (m.has_name()) s.name = m.name();
  if (m.has_description()) s.description = m.description();

  const tp::ClusterSpec& c = m.cluster();
  if (c.has_node_template()) s.cluster.node_template = c.node_template();
  if (c.has_num_nodes()) s.cluster.num_nodes = c.num_nodes();
  if (c.has_gpu()) s.cluster.gpu = c.gpu();
  const tp::FabricSpec& f = c.fabric();
  if (f.has_kind() && !enum_from_number(f.kind(), 4, s.cluster.fabric.kind)) bad_enums.push_back("cluster.fabric.kind");
  if (f.has_oversubscription()) s.cluster.fabric.oversubscription = f.oversubscription();
  if (f.has_switch_latency_ns()) s.cluster.fabric.switch_latency_ns = f.switch_latency_ns();
  if (f.has_nodes_per_leaf()) s.cluster.fabric.nodes_per_leaf = f.nodes_per_leaf();
  if (f.has_tiers()) s.cluster.fabric.tiers = f.tiers();
  if (f.has_leaves_per_pod()) s.cluster.fabric.leaves_per_pod = f.leaves_per_pod();
  if (f.torus_dims_size() > 0) s.cluster.fabric.torus_dims.assign(f.torus_dims().begin(), f.torus_dims().end());
  if (f.has_cable_length_m()) s.cluster.fabric.cable_length_m = f.cable_length_m();
  const tp::CollectiveSpec& cs = c.collectives();
  if (cs.has_algorithm() && !enum_from_number(cs.algorithm(), 7, s.cluster.collectives.algorithm))
    bad_enums.push_back("cluster.collectives.algorithm");
  if (cs.has_protocol()) {
    if (cs.protocol() >= 1 && cs.protocol() <= 3) {
      s.cluster.collectives.protocol = static_cast<models::CollectiveProtocol>(cs.protocol() - 1);
    } else if (cs.protocol() != 0) {
      bad_enums.push_back("cluster.collectives.protocol");
    }
  }
  if (cs.has_min_channels()) s.cluster.collectives.min_channels = cs.min_channels();
  if (cs.has_max_channels()) s.cluster.collectives.max_channels = cs.max_channels();
  if (c.has_gpu_direct_rdma()) s.cluster.gpu_direct_rdma = c.gpu_direct_rdma();
  if (c.has_nic_placement() && !enum_from_number(c.nic_placement(), 2, s.cluster.nic_placement))
    bad_enums.push_back("cluster.nic_placement");
  if (c.has_pcie_p2p()) s.cluster.pcie_p2p = c.pcie_p2p();
  if (c.has_nic()) s.cluster.nic = c.nic();
  if (c.has_nics_per_node()) s.cluster.nics_per_node = c.nics_per_node();

  const tp::ModelSpec& mo = m.workload().model();
  models::ModelSpec& ms = s.model;
  if (mo.has_name()) ms.name = mo.name();
  if (mo.has_num_layers()) ms.num_layers = mo.num_layers();
  if (mo.has_hidden_size()) ms.hidden_size = mo.hidden_size();
  if (mo.has_num_attention_heads()) ms.num_attention_heads = mo.num_attention_heads();
  if (mo.has_num_query_groups()) ms.num_query_groups = mo.num_query_groups();
  if (mo.has_ffn_hidden_size()) ms.ffn_hidden_size = mo.ffn_hidden_size();
  if (mo.has_vocab_size()) ms.vocab_size = mo.vocab_size();
  if (mo.has_seq_length()) ms.seq_length = mo.seq_length();
  if (mo.has_gated_mlp()) ms.gated_mlp = mo.gated_mlp();
  if (mo.has_untied_embeddings()) ms.untied_embeddings = mo.untied_embeddings();
  if (mo.has_num_experts()) ms.num_experts = mo.num_experts();
  if (mo.has_moe_top_k()) ms.moe_top_k = mo.moe_top_k();
  if (mo.has_moe_ffn_hidden_size()) ms.moe_ffn_hidden_size = mo.moe_ffn_hidden_size();
  if (mo.has_num_shared_experts()) ms.num_shared_experts = mo.num_shared_experts();
  if (mo.has_first_dense_layers()) ms.first_dense_layers = mo.first_dense_layers();
  if (mo.has_moe_capacity_factor()) ms.moe_capacity_factor = mo.moe_capacity_factor();
  if (mo.has_family() && !enum_from_number(mo.family(), 2, ms.family)) bad_enums.push_back("workload.model.family");
  if (mo.has_image_size()) ms.image_size = mo.image_size();
  if (mo.has_num_classes()) ms.num_classes = mo.num_classes();
  if (mo.has_architecture() && !enum_from_number(mo.architecture(), 2, ms.architecture))
    bad_enums.push_back("workload.model.architecture");
  if (mo.has_mlm_prediction_fraction()) ms.mlm_prediction_fraction = mo.mlm_prediction_fraction();
  if (mo.has_max_position_embeddings()) ms.max_position_embeddings = mo.max_position_embeddings();
  if (mo.has_attention_dropout()) ms.attention_dropout = mo.attention_dropout();
  if (mo.has_hidden_dropout()) ms.hidden_dropout = mo.hidden_dropout();

  const tp::ParallelSpec& p = m.workload().parallel();
  models::ParallelSpec& ps = s.parallel;
  if (p.has_tp()) ps.tp = p.tp();
  if (p.has_pp()) ps.pp = p.pp();
  if (p.has_dp()) ps.dp = p.dp();
  if (p.has_sequence_parallel()) ps.sequence_parallel = p.sequence_parallel();
  if (p.has_schedule() && !enum_from_number(p.schedule(), 2, ps.schedule))
    bad_enums.push_back("workload.parallel.schedule");
  if (p.has_virtual_stages()) ps.virtual_stages = p.virtual_stages();
  if (p.has_uneven_stages()) ps.uneven_stages = p.uneven_stages();
  if (p.has_zero_stage()) ps.zero_stage = p.zero_stage();
  if (p.has_dp_bucket_bytes()) {
    ps.dp_bucket_bytes = p.dp_bucket_bytes();
  } else if (ms.family == models::ModelFamily::resnet) {
    // PyTorch DDP's default bucket_cap_mb = 25 (torch.nn.parallel.DistributedDataParallel docs).
    ps.dp_bucket_bytes = 25.0 * 1048576.0;
  }
  if (p.has_overlap_grad_reduce()) ps.overlap_grad_reduce = p.overlap_grad_reduce();
  if (p.has_overlap_param_gather()) ps.overlap_param_gather = p.overlap_param_gather();
  if (p.has_tp_comm_overlap()) ps.tp_comm_overlap = p.tp_comm_overlap();
  if (p.has_ep()) ps.ep = p.ep();
  if (p.has_cp()) ps.cp = p.cp();

  const tp::TrainingSpec& t = m.workload().training();
  models::TrainingSpec& ts = s.training;
  if (t.has_global_batch_size()) ts.global_batch_size = t.global_batch_size();
  if (t.has_micro_batch_size()) ts.micro_batch_size = t.micro_batch_size();
  if (t.has_precision() && !enum_from_number(t.precision(), 5, ts.precision))
    bad_enums.push_back("workload.training.precision");
  if (t.has_recompute() && !enum_from_number(t.recompute(), 3, ts.recompute))
    bad_enums.push_back("workload.training.recompute");
  if (t.has_fp32_grad_accumulation()) ts.fp32_grad_accumulation = t.fp32_grad_accumulation();
  if (t.has_flash_attention()) ts.flash_attention = t.flash_attention();
  if (t.has_train_tokens()) ts.train_tokens = t.train_tokens();
  if (t.has_lora_rank()) ts.lora_rank = t.lora_rank();
  if (t.has_lora_target_modules()) ts.lora_target_modules = t.lora_target_modules();
  const tp::OffloadSpec& off = m.workload().offload();
  if (off.has_optimizer()) s.offload.optimizer = off.optimizer();
  if (off.has_host_memory_bytes_per_s()) s.offload.host_memory_bytes_per_s = off.host_memory_bytes_per_s();
  if (off.has_cpu_adam_efficiency()) s.offload.cpu_adam_efficiency = off.cpu_adam_efficiency();

  if (m.workload().has_data_loader()) {
    const tp::DataLoaderSpec& dl = m.workload().data_loader();
    models::DataLoaderSpec& d = s.data_loader.emplace();
    if (dl.has_numa_binding() && !enum_from_number(dl.numa_binding(), 3, d.numa_binding))
      bad_enums.push_back("workload.data_loader.numa_binding");
    if (dl.has_input_bytes_per_element()) d.input_bytes_per_element = dl.input_bytes_per_element();
    if (dl.has_prefetch()) d.prefetch = dl.prefetch();
  }

  const tp::OptionsSpec& o = m.options();
  if (o.has_iterations()) s.options.iterations = o.iterations();
  if (o.has_fold_symmetric()) s.options.fold_symmetric = o.fold_symmetric();
  if (o.has_threads()) s.options.threads = o.threads();
  storage_reliability_cost_to_struct(m, s, bad_enums);

  const tp::PowerSpec& pw = m.power();
  if (pw.has_gpu_power_limit_w()) s.power.gpu_power_limit_w = pw.gpu_power_limit_w();
  if (pw.has_pue()) s.power.pue = pw.pue();
  if (pw.has_cpu_load_fraction()) s.power.cpu_load_fraction = pw.cpu_load_fraction();
  if (pw.has_psu_redundant()) s.power.psu_redundant = pw.psu_redundant();
  if (pw.has_memory_bound_fraction()) s.power.memory_bound_fraction = pw.memory_bound_fraction();
  if (pw.has_comm_fraction()) s.power.comm_fraction = pw.comm_fraction();
  const tp::ThermalSpec& th = m.thermal();
  if (th.has_cooling() && !enum_from_number(th.cooling(), 2, s.thermal.cooling)) bad_enums.push_back("thermal.cooling");
  if (th.has_supply_air_c()) s.thermal.supply_air_c = th.supply_air_c();
  if (th.has_coolant_c()) s.thermal.coolant_c = th.coolant_c();
  s.thermal.gpu_airflow_fraction.assign(th.gpu_airflow_fraction().begin(), th.gpu_airflow_fraction().end());
  if (th.has_r_k_per_w()) s.thermal.r_k_per_w = th.r_k_per_w();
  if (th.has_c_j_per_k()) s.thermal.c_j_per_k = th.c_j_per_k();
  if (th.has_rack_cooling_capacity_w()) s.thermal.rack_cooling_capacity_w = th.rack_cooling_capacity_w();
  if (th.has_nodes_per_rack()) s.thermal.nodes_per_rack = th.nodes_per_rack();
  if (th.has_start() && !enum_from_number(th.start(), 2, s.thermal.start)) bad_enums.push_back("thermal.start");
}

// The enum orders of models/spec/scenario.h and traincast.proto are the same; these pin it.
static_assert(static_cast<int>(models::FabricKind::fat_tree) == tp::FabricSpec::fat_tree);
static_assert(static_cast<int>(models::FabricKind::rail_optimized) == tp::FabricSpec::rail_optimized);
static_assert(static_cast<int>(models::PipelineSchedule::interleaved_one_f_one_b) ==
              tp::ParallelSpec::interleaved_one_f_one_b);
static_assert(static_cast<int>(models::Precision::fp8) == tp::TrainingSpec::fp8);
static_assert(static_cast<int>(models::Precision::bf16) == tp::TrainingSpec::bf16);
static_assert(static_cast<int>(models::Recompute::full) == tp::TrainingSpec::full);
static_assert(static_cast<int>(models::Architecture::encoder) == tp::ModelSpec::encoder);
static_assert(static_cast<int>(models::FabricKind::torus) == tp::FabricSpec::torus);
static_assert(static_cast<int>(models::CollectiveAlgorithm::nvls_tree) == tp::nvls_tree &&
              static_cast<int>(models::CollectiveAlgorithm::hierarchical) == tp::hierarchical &&
              static_cast<int>(models::CollectiveAlgorithm::pat) == tp::pat && tp::CollectiveAlgorithm_ARRAYSIZE == 7);
static_assert(static_cast<int>(models::CollectiveProtocol::simple) + 1 == tp::CollectiveSpec::simple &&
              static_cast<int>(models::CollectiveProtocol::ll) + 1 == tp::CollectiveSpec::ll);
static_assert(static_cast<int>(models::NicPlacement::other_socket) == tp::ClusterSpec::other_socket);
static_assert(static_cast<int>(models::NumaBinding::socket0) == tp::DataLoaderSpec::socket0 &&
              tp::DataLoaderSpec::NumaBinding_ARRAYSIZE == 3);
static_assert(static_cast<int>(models::Cooling::liquid) == tp::ThermalSpec::liquid &&
              static_cast<int>(models::ThermalStart::idle) == tp::ThermalSpec::idle);
static_assert(tp::FabricSpec::Kind_ARRAYSIZE == 4 && tp::ParallelSpec::Schedule_ARRAYSIZE == 2 &&
              tp::TrainingSpec::Precision_ARRAYSIZE == 5 && tp::TrainingSpec::Recompute_ARRAYSIZE == 3);

tp::Scenario to_proto(const models::Scenario& s) {
  tp::Scenario m;
  m.set_name(s.name);
  m.set_description(s.description);
  if (s.cluster.profile != nullptr && !s.cluster.profile->origin.empty()) {
    // The file the profile was read from, absolute: the text may be saved anywhere.
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(s.cluster.profile->origin, ec);
    m.set_profile((ec ? std::filesystem::path(s.cluster.profile->origin) : abs).lexically_normal().string());
  }
  tp::ClusterSpec& c = *m.mutable_cluster();
  c.set_node_template(s.cluster.node_template);
  c.set_num_nodes(s.cluster.num_nodes);
  c.set_gpu(s.cluster.gpu);
  tp::FabricSpec& f = *c.mutable_fabric();
  f.set_kind(static_cast<tp::FabricSpec::Kind>(s.cluster.fabric.kind));
  f.set_oversubscription(s.cluster.fabric.oversubscription);
  f.set_switch_latency_ns(s.cluster.fabric.switch_latency_ns);
  f.set_nodes_per_leaf(s.cluster.fabric.nodes_per_leaf);
  f.set_tiers(s.cluster.fabric.tiers);
  f.set_leaves_per_pod(s.cluster.fabric.leaves_per_pod);
  for (int d : s.cluster.fabric.torus_dims) f.add_torus_dims(d);
  f.set_cable_length_m(s.cluster.fabric.cable_length_m);
  tp::CollectiveSpec& cs = *c.mutable_collectives();
  cs.set_algorithm(static_cast<tp::CollectiveAlgorithm>(s.cluster.collectives.algorithm));
  cs.set_protocol(s.cluster.collectives.protocol
                      ? static_cast<tp::CollectiveSpec::Protocol>(static_cast<int>(*s.cluster.collectives.protocol) + 1)
                      : tp::CollectiveSpec::any);
  if (s.cluster.collectives.min_channels != 0) cs.set_min_channels(s.cluster.collectives.min_channels);
  if (s.cluster.collectives.max_channels != 0) cs.set_max_channels(s.cluster.collectives.max_channels);
  c.set_gpu_direct_rdma(s.cluster.gpu_direct_rdma);
  c.set_nic_placement(static_cast<tp::ClusterSpec::NicPlacement>(s.cluster.nic_placement));
  if (s.cluster.pcie_p2p) c.set_pcie_p2p(*s.cluster.pcie_p2p);
  c.set_nic(s.cluster.nic);
  if (s.cluster.nics_per_node) c.set_nics_per_node(*s.cluster.nics_per_node);

  tp::ModelSpec& mo = *m.mutable_workload()->mutable_model();
  mo.set_name(s.model.name);
  if (s.model.family == models::ModelFamily::resnet) {  // ResNet fields are errors on a transformer
    mo.set_family(tp::ModelSpec::resnet);
    mo.set_image_size(s.model.image_size);
    mo.set_num_classes(s.model.num_classes);
  }
  mo.set_num_layers(s.model.num_layers);
  if (s.model.family != models::ModelFamily::resnet) {  // the transformer shape fields are errors on a ResNet
    mo.set_hidden_size(s.model.hidden_size);
    mo.set_num_attention_heads(s.model.num_attention_heads);
    mo.set_num_query_groups(s.model.num_query_groups);
    mo.set_ffn_hidden_size(s.model.ffn_hidden_size);
    mo.set_vocab_size(s.model.vocab_size);
    mo.set_seq_length(s.model.seq_length);
    mo.set_gated_mlp(s.model.gated_mlp);
    mo.set_untied_embeddings(s.model.untied_embeddings);
  }
  if (s.model.num_experts > 0) {  // the MoE fields are errors on a dense model
    mo.set_num_experts(s.model.num_experts);
    mo.set_moe_top_k(s.model.moe_top_k);
    mo.set_moe_ffn_hidden_size(s.model.moe_ffn_hidden_size);
    mo.set_num_shared_experts(s.model.num_shared_experts);
    mo.set_first_dense_layers(s.model.first_dense_layers);
    mo.set_moe_capacity_factor(s.model.moe_capacity_factor);
  }
  if (s.model.architecture == models::Architecture::encoder) {  // the encoder fields are errors on a decoder
    mo.set_architecture(tp::ModelSpec::encoder);
    mo.set_mlm_prediction_fraction(s.model.mlm_prediction_fraction);
    mo.set_max_position_embeddings(s.model.max_position_embeddings);
  }
  if (s.model.family == models::ModelFamily::transformer) {  // dropout fields are errors on a ResNet
    mo.set_attention_dropout(s.model.attention_dropout);
    mo.set_hidden_dropout(s.model.hidden_dropout);
  }

  tp::ParallelSpec& p = *m.mutable_workload()->mutable_parallel();
  p.set_tp(s.parallel.tp);
  p.set_pp(s.parallel.pp);
  p.set_dp(s.parallel.dp);
  p.set_sequence_parallel(s.parallel.sequence_parallel);
  p.set_schedule(static_cast<tp::ParallelSpec::Schedule>(s.parallel.schedule));
  p.set_virtual_stages(s.parallel.virtual_stages);
  p.set_uneven_stages(s.parallel.uneven_stages);
  p.set_zero_stage(s.parallel.zero_stage);
  p.set_dp_bucket_bytes(s.parallel.dp_bucket_bytes);
  p.set_overlap_grad_reduce(s.parallel.overlap_grad_reduce);
  p.set_overlap_param_gather(s.parallel.overlap_param_gather);
  p.set_tp_comm_overlap(s.parallel.tp_comm_overlap);
  p.set_ep(s.parallel.ep);
  if (s.parallel.cp != 1) p.set_cp(s.parallel.cp);  // written when used, so older readers see no new field

  tp::TrainingSpec& t = *m.mutable_workload()->mutable_training();
  t.set_global_batch_size(s.training.global_batch_size);
  t.set_micro_batch_size(s.training.micro_batch_size);
  t.set_precision(static_cast<tp::TrainingSpec::Precision>(s.training.precision));
  t.set_recompute(static_cast<tp::TrainingSpec::Recompute>(s.training.recompute));
  t.set_fp32_grad_accumulation(s.training.fp32_grad_accumulation);
  t.set_flash_attention(s.training.flash_attention);
  t.set_train_tokens(s.training.train_tokens);
  if (s.training.lora_rank != 0) {
    t.set_lora_rank(s.training.lora_rank);
    t.set_lora_target_modules(s.training.lora_target_modules);
  }
  if (s.offload.optimizer) {
    tp::OffloadSpec& off = *m.mutable_workload()->mutable_offload();
    off.set_optimizer(true);
    off.set_host_memory_bytes_per_s(s.offload.host_memory_bytes_per_s);
    off.set_cpu_adam_efficiency(s.offload.cpu_adam_efficiency);
  }

  if (s.data_loader) {
    tp::DataLoaderSpec& dl = *m.mutable_workload()->mutable_data_loader();
    dl.set_numa_binding(static_cast<tp::DataLoaderSpec::NumaBinding>(s.data_loader->numa_binding));
    dl.set_input_bytes_per_element(s.data_loader->input_bytes_per_element);
    dl.set_prefetch(s.data_loader->prefetch);
  }

  tp::OptionsSpec& o = *m.mutable_options();
  o.set_iterations(s.options.iterations);
  o.set_fold_symmetric(s.options.fold_symmetric);
  o.set_threads(s.options.threads);
  storage_reliability_cost_to_proto(s, m);

  tp::PowerSpec& pw = *m.mutable_power();
  pw.set_gpu_power_limit_w(s.power.gpu_power_limit_w);
  pw.set_pue(s.power.pue);
  pw.set_cpu_load_fraction(s.power.cpu_load_fraction);
  if (s.power.psu_redundant) pw.set_psu_redundant(*s.power.psu_redundant);
  if (s.power.memory_bound_fraction) pw.set_memory_bound_fraction(*s.power.memory_bound_fraction);
  if (s.power.comm_fraction) pw.set_comm_fraction(*s.power.comm_fraction);
  tp::ThermalSpec& th = *m.mutable_thermal();
  th.set_cooling(static_cast<tp::ThermalSpec::Cooling>(s.thermal.cooling));
  th.set_supply_air_c(s.thermal.supply_air_c);
  th.set_coolant_c(s.thermal.coolant_c);
  for (double a : s.thermal.gpu_airflow_fraction) th.add_gpu_airflow_fraction(a);
  th.set_r_k_per_w(s.thermal.r_k_per_w);
  th.set_c_j_per_k(s.thermal.c_j_per_k);
  th.set_rack_cooling_capacity_w(s.thermal.rack_cooling_capacity_w);
  th.set_nodes_per_rack(s.thermal.nodes_per_rack);
  th.set_start(static_cast<tp::ThermalSpec::Start>(s.thermal.start));
  return m;
}

}  // namespace traincast::io::detail
