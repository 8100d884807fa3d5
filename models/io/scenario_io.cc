#include "models/io/scenario_io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include "models/cost/cost_model.h"
#include "models/hardware/catalog.h"
#include "models/io/file_kind.h"
#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/overrides.h"
#include "models/io/profile_io.h"
#include "models/power/power_model.h"
#include "models/reliability/reliability_model.h"
#include "models/workload/layer_program.h"
#include "models/workload/offload.h"
#include "models/workload/transformer.h"
#include "traincast.pb.h"

namespace traincast::io {

namespace detail {
// Generated at build time from scenarios/default.textproto (models/io/embed_text.cmake).
extern const char kDefaultScenarioText[];
extern const std::size_t kDefaultScenarioTextSize;
}  // namespace detail

namespace {

namespace pb = google::protobuf;
namespace tp = traincast::proto;
using detail::Override;
using detail::PathStep;
using detail::SourcePos;

/// Inputs larger than this are refused before parsing (a scenario is a few kB).
constexpr std::size_t kMaxInputBytes = 64u << 20;

constexpr std::string_view kDefaultOrigin = "scenarios/default.textproto";
/// Largest cluster the simulator takes (2^20 GPUs: a million-GPU cluster builds about ten million
/// link resources, a few GB of memory).
constexpr std::int64_t kMaxGpus = std::int64_t{1} << 20;
/// Largest workload.training.train_tokens: 1e15, about 28x the largest published pretraining run
/// (Qwen3: about 36T tokens, Qwen3 Technical Report, arXiv:2505.09388, 2025; Llama 3: 15.6T,
/// arXiv:2407.21783, 2024). Beyond it a time-to-train is not a plan, and 1e30-style typos would
/// print 10^20-day trainings.
constexpr double kMaxTrainTokens = 1e15;
constexpr std::string_view kTrainTokensWhy =
    "about 28x the largest published pretraining runs: Qwen3 36T tokens (Qwen3 Technical Report 2025), "
    "Llama 3 15.6T (Meta 2024)";

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

std::vector<Override> as_cli_overrides(const std::vector<std::string>& assignments) {
  std::vector<Override> out;
  out.reserve(assignments.size());
  for (const std::string& a : assignments) out.push_back({a, "--set"});
  return out;
}

// ------------------------------------------------------------------------------------------------
// proto <-> struct
// ------------------------------------------------------------------------------------------------

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

/// Copies every present field of `m` over the defaults in `s`. Enum numbers that name no value
/// (proto3 accepts them) are reported into `bad_enums` as field paths.
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

// The enum orders of models/scenario.h and traincast.proto are the same; these pin it.
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

// ------------------------------------------------------------------------------------------------
// Semantic checks
// ------------------------------------------------------------------------------------------------

/// Positions and presence of fields, and the error list, for the semantic checks.
class Checker {
 public:
  Checker(const pb::Message& message, const detail::SourceMap& map, std::string_view origin,
          const std::map<std::string, std::string>& override_origins, std::vector<std::string>& errors)
      : message_(message), map_(map), origin_(origin), override_origins_(override_origins), errors_(errors) {}

  /// "origin:line:col" of the field at `path` (or of its deepest written ancestor), or the origin
  /// of the override that set it.
  std::string where(const std::string& path) const {
    if (const auto it = override_origins_.find(path); it != override_origins_.end()) return it->second;
    std::vector<PathStep> steps;
    if (!detail::resolve_path(message_.GetDescriptor(), path, steps, nullptr))
      return detail::format_pos(origin_, {1, 1});
    return detail::format_pos(origin_, map_.locate(steps));
  }

  /// Whether the field at `path` was written by an override (--set or a case's `set`).
  bool overridden(const std::string& path) const { return override_origins_.count(path) > 0; }

  /// Whether the field at `path` was written (file or override).
  bool present(const std::string& path) const {
    std::vector<PathStep> steps;
    if (!detail::resolve_path(message_.GetDescriptor(), path, steps, nullptr)) return false;
    const pb::Message* m = &message_;
    for (const PathStep& step : steps) {
      const pb::Reflection* r = m->GetReflection();
      const bool is_message = step.field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE;
      if (step.field->is_repeated()) {
        if (step.index < 0 || step.index >= r->FieldSize(*m, step.field)) return false;
        if (is_message) m = &r->GetRepeatedMessage(*m, step.field, step.index);
        continue;
      }
      if (!r->HasField(*m, step.field)) return false;
      if (is_message) m = &r->GetMessage(*m, step.field);
    }
    return true;
  }

  void error(const std::string& path, const std::string& what) {
    errors_.push_back(where(path) + ": " + path + ": " + what);
  }

  /// The integer field at `path` within its own range (int_ranges.h, the table the parsers' messages
  /// quote too), else "not set" / "got V" (expected that range). Cross-field limits are checked by
  /// the caller after this.
  bool int_field(const std::string& path, std::int64_t value) {
    std::vector<PathStep> steps;
    if (!detail::resolve_path(message_.GetDescriptor(), path, steps, nullptr))
      throw std::logic_error("Checker::int_field: no field " + path);
    const pb::FieldDescriptor* field = steps.back().field;
    const detail::IntRange r = detail::int_range(field);
    if (value >= r.minimum && value <= r.maximum) return true;
    const std::string expected = "(expected " + detail::expected_integer(field) + ")";
    error(path, present(path) ? "got " + std::to_string(value) + " " + expected : "not set " + expected);
    return false;
  }

  /// finite value >= minimum (or > minimum when strict).
  bool finite_at_least(const std::string& path, double value, double minimum, bool strict) {
    if (std::isfinite(value) && (strict ? value > minimum : value >= minimum)) return true;
    error(path,
          "got " + number(value) + " (expected a finite number " + (strict ? "> " : ">= ") + number(minimum) + ")");
    return false;
  }

  static std::string number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

 private:
  const pb::Message& message_;
  const detail::SourceMap& map_;
  std::string_view origin_;
  const std::map<std::string, std::string>& override_origins_;
  std::vector<std::string>& errors_;
};

/// Power and cooling fields (scenarios/README.md, "power" and "thermal").
void check_power_thermal(const models::Scenario& s, Checker& k, const models::NodeTemplate* node,
                         const models::GpuSpec* gpu) {
  const models::PowerSpec& pw = s.power;
  const models::ThermalSpec& th = s.thermal;
  auto range = [&](const std::string& path, double v, double lo, double hi, const std::string& unit) {
    if (std::isfinite(v) && v >= lo && v <= hi) return true;
    k.error(path, "got " + Checker::number(v) + " (expected " + Checker::number(lo) + " to " + Checker::number(hi) +
                      unit + ")");
    return false;
  };
  if (k.finite_at_least("power.gpu_power_limit_w", pw.gpu_power_limit_w, 0.0, false) && gpu != nullptr &&
      pw.gpu_power_limit_w != 0.0) {
    // As nvidia-smi -pl: a cap below the board's minimum is refused, not silently exceeded.
    const double lo = models::min_power_limit_w(*gpu);
    if (pw.gpu_power_limit_w < lo || pw.gpu_power_limit_w > gpu->tdp_w) {
      const std::string why =
          gpu->min_power_limit_w >= lo
              ? "nvidia-smi -pl refuses caps below its Min Power Limit"
              : "below it the GPU draws more than the cap even at its lowest clock under full tensor load" +
                    std::string(gpu->min_power_limit_w > 0 ? " (its published Min Power Limit is " +
                                                                 Checker::number(gpu->min_power_limit_w) + " W)"
                                                           : "; the catalog has no published Min Power Limit for it");
      k.error("power.gpu_power_limit_w",
              "got " + Checker::number(pw.gpu_power_limit_w) + " W (expected 0 for no cap, or " + Checker::number(lo) +
                  " to " + Checker::number(gpu->tdp_w) + " W (the TDP) for " + gpu->name + ": " + why + ")");
    }
  }
  range("power.pue", pw.pue, 1.0, 3.0, " (facility / IT power; 1 = no overhead)");
  range("power.cpu_load_fraction", pw.cpu_load_fraction, 0.0, 1.0, "");
  if (pw.memory_bound_fraction) range("power.memory_bound_fraction", *pw.memory_bound_fraction, 0.0, 1.0, "");
  if (pw.comm_fraction) range("power.comm_fraction", *pw.comm_fraction, 0.0, 1.0, "");
  if (pw.psu_redundant && node != nullptr && gpu != nullptr) {
    const int count = models::node_power_spec(*node, *gpu).psu_count;
    if (k.int_field("power.psu_redundant", *pw.psu_redundant) && *pw.psu_redundant >= count)
      k.error("power.psu_redundant", "got " + std::to_string(*pw.psu_redundant) + " (expected 0 to " +
                                         std::to_string(count - 1) + ": " + node->name + " has " +
                                         std::to_string(count) + " power supplies)");
  }
  // -273.15 C is absolute zero; the ranges are what air and water loops of data centres run at.
  range("thermal.supply_air_c", th.supply_air_c, 0.0, 60.0, " C");
  range("thermal.coolant_c", th.coolant_c, 0.0, 70.0, " C");
  if (node != nullptr && th.gpu_airflow_fraction.size() > static_cast<std::size_t>(node->gpus_per_node))
    k.error("thermal.gpu_airflow_fraction", std::to_string(th.gpu_airflow_fraction.size()) + " values for " +
                                                std::to_string(node->gpus_per_node) +
                                                " GPUs per node (expected at most one per local GPU)");
  for (std::size_t i = 0; i < th.gpu_airflow_fraction.size(); ++i) {
    const double a = th.gpu_airflow_fraction[i];
    if (!(std::isfinite(a) && a > 0.0 && a <= 1.0))
      k.error("thermal.gpu_airflow_fraction[" + std::to_string(i) + "]",
              "got " + Checker::number(a) + " (expected a fraction > 0 and <= 1 of the design airflow)");
  }
  k.finite_at_least("thermal.r_k_per_w", th.r_k_per_w, 0.0, false);
  k.finite_at_least("thermal.c_j_per_k", th.c_j_per_k, 0.0, false);
  if (k.finite_at_least("thermal.rack_cooling_capacity_w", th.rack_cooling_capacity_w, 0.0, false) &&
      th.rack_cooling_capacity_w > 0 && th.cooling == models::Cooling::liquid)
    k.error("thermal.rack_cooling_capacity_w", "applies to air cooling (expected 0 with cooling: liquid)");
  k.int_field("thermal.nodes_per_rack", th.nodes_per_rack);
}

std::string names_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Checks of the cluster fields added for issue 3 (collectives, NICs, fabric shapes).
void check_cluster_extras(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::FabricSpec& f = s.cluster.fabric;
  k.int_field("cluster.fabric.tiers", f.tiers);
  k.int_field("cluster.fabric.leaves_per_pod", f.leaves_per_pod);
  k.finite_at_least("cluster.fabric.cable_length_m", f.cable_length_m, 0.0, false);
  k.int_field("cluster.collectives.min_channels", s.cluster.collectives.min_channels);
  k.int_field("cluster.collectives.max_channels", s.cluster.collectives.max_channels);
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

/// Every semantic rule of the schema (scenarios/README.md, "Checks"). Appends to `errors`; may
/// normalise `s` (sequence_parallel off when tp = 1, as Megatron-LM does).
/// Whether `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
/// LoRA fields (workload.training.lora_rank, lora_target_modules): a rank from 0 to hidden_size,
/// known target names, and a model the LoRA programs cover (dense decoder).
void check_lora(const models::Scenario& s, Checker& k) {
  const models::TrainingSpec& t = s.training;
  const models::ModelSpec& m = s.model;
  if (t.lora_rank == 0) {
    if (k.present("workload.training.lora_target_modules"))
      k.error("workload.training.lora_target_modules", "is set but lora_rank is 0 (expected lora_rank >= 1)");
    return;
  }
  if (!k.int_field("workload.training.lora_rank", t.lora_rank)) return;
  if (m.hidden_size > 0 && t.lora_rank > m.hidden_size) {
    k.error("workload.training.lora_rank",
            "got " + std::to_string(t.lora_rank) +
                " (expected 0 for full training, or a LoRA rank from 1 to hidden_size" +
                (m.hidden_size > 0 ? " = " + std::to_string(m.hidden_size) : std::string()) + ")");
    return;
  }
  if (m.family != models::ModelFamily::transformer || m.architecture != models::Architecture::decoder ||
      m.num_experts > 0) {
    k.error("workload.training.lora_rank",
            "got " + std::to_string(t.lora_rank) +
                " for a model LoRA is not modelled for (expected 0, or a dense decoder: family transformer, "
                "architecture decoder, num_experts 0)");
    return;
  }
  models::LoraTargets targets;
  std::string why;
  if (!models::parse_lora_targets(t.lora_target_modules, m.gated_mlp, targets, &why))
    k.error("workload.training.lora_target_modules",
            "\"" + t.lora_target_modules + "\": " + why +
                " (expected comma-separated names from q, k, v, o, gate, up, down, or all-linear)");
}

/// CPU offload fields (workload.offload.*): finite bandwidth and efficiency, ZeRO with DP, and a
/// host-memory figure for the node's CPU.
void check_offload(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  const models::OffloadSpec& o = s.offload;
  if (o.host_memory_bytes_per_s != 0)
    k.finite_at_least("workload.offload.host_memory_bytes_per_s", o.host_memory_bytes_per_s, 0.0, true);
  if (!std::isfinite(o.cpu_adam_efficiency) || !(o.cpu_adam_efficiency > 0 && o.cpu_adam_efficiency <= 1))
    k.error("workload.offload.cpu_adam_efficiency",
            "got " + Checker::number(o.cpu_adam_efficiency) + " (expected a number > 0 and <= 1)");
  if (!o.optimizer) {
    for (const char* f : {"workload.offload.host_memory_bytes_per_s", "workload.offload.cpu_adam_efficiency"})
      if (k.present(f)) k.error(f, "is set but offload.optimizer is false (expected optimizer: true)");
    return;
  }
  const models::ParallelSpec& p = s.parallel;
  // The optimizer is sharded over the dp x cp ranks that hold the same parameters.
  if (p.dp * std::max(1, p.cp) > 1 && p.zero_stage == 0)
    k.error("workload.offload.optimizer",
            "is true with dp = " + std::to_string(p.dp) + (p.cp > 1 ? " x cp = " + std::to_string(p.cp) : "") +
                " and zero_stage 0 (expected zero_stage >= 1: ZeRO-Offload shards the offloaded optimizer over DP, "
                "as DeepSpeed's offload_optimizer is a ZeRO option)");
  if (s.model.family == models::ModelFamily::resnet)
    k.error("workload.offload.optimizer",
            "is true for a ResNet (expected false: offload is modelled for Adam on "
            "transformers; the ResNet recipe is SGD on the GPU)");
  if (node != nullptr && o.host_memory_bytes_per_s == 0 && models::socket_memory_bytes_per_s(node->cpu) <= 0)
    k.error("workload.offload.optimizer",
            "node template " + node->name + " has CPU \"" + node->cpu +
                "\" with no host-memory bandwidth in the table (expected workload.offload.host_memory_bytes_per_s "
                "> 0: DRAM bandwidth of one socket)");
}

/// Encoder fields (workload.model.architecture, mlm_prediction_fraction, max_position_embeddings).
void check_encoder(const models::Scenario& s, Checker& k) {
  const models::ModelSpec& m = s.model;
  if (m.architecture != models::Architecture::encoder) {
    for (const char* f : {"workload.model.mlm_prediction_fraction", "workload.model.max_position_embeddings"})
      if (k.present(f)) k.error(f, "is set but architecture is decoder (expected architecture: encoder)");
    return;
  }
  if (m.family != models::ModelFamily::transformer) {
    k.error("workload.model.architecture", "is encoder with a non-transformer family (expected family: transformer)");
    return;
  }
  const double q = m.mlm_prediction_fraction;
  if (!std::isfinite(q) || !(q > 0.0 && q <= 1.0))
    k.error("workload.model.mlm_prediction_fraction",
            "got " + Checker::number(q) + " (expected a number > 0 and <= 1; BERT: 0.15)");
  if (m.max_position_embeddings != 0 && m.max_position_embeddings < m.seq_length)
    k.error("workload.model.max_position_embeddings", "got " + std::to_string(m.max_position_embeddings) +
                                                          " (expected 0 for seq_length, or an integer >= " +
                                                          "seq_length = " + std::to_string(m.seq_length) + ")");
  if (m.num_experts > 0)
    k.error("workload.model.num_experts",
            "got " + std::to_string(m.num_experts) + " for an encoder (expected 0: MoE is modelled for decoders only)");
  if (m.gated_mlp) k.error("workload.model.gated_mlp", "is true for an encoder (expected false: BERT's MLP is GELU)");
  if (m.untied_embeddings)
    k.error("workload.model.untied_embeddings",
            "is true for an encoder (expected false: BERT ties the MLM projection to the embedding)");
}

/// Dropout probabilities (workload.model.attention_dropout, hidden_dropout): finite, in [0, 1).
void check_dropout(const models::Scenario& s, Checker& k) {
  if (s.model.family != models::ModelFamily::transformer) return;  // check_resnet rejects them
  for (const auto& [f, p] :
       {std::pair<const char*, double>{"workload.model.attention_dropout", s.model.attention_dropout},
        {"workload.model.hidden_dropout", s.model.hidden_dropout}})
    if (!std::isfinite(p) || !(p >= 0.0 && p < 1.0))
      k.error(f, "got " + Checker::number(p) +
                     " (expected a probability >= 0 and < 1: 0.1 for GPT/BERT, 0 for Llama-family models)");
}

/// Mixture-of-experts and expert-parallel fields (workload.model.num_experts ..., parallel.ep).
void check_moe(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::ParallelSpec& p = s.parallel;
  const bool experts_ok = k.int_field("workload.model.num_experts", m.num_experts);
  const bool moe = experts_ok && m.num_experts > 0;
  if (moe) {
    if (k.int_field("workload.model.moe_top_k", m.moe_top_k) && m.moe_top_k > m.num_experts)
      k.error("workload.model.moe_top_k", "got " + to_string(m.moe_top_k) + " (expected an integer from 1 to " +
                                              "num_experts = " + to_string(m.num_experts) + ")");
    k.int_field("workload.model.moe_ffn_hidden_size", m.moe_ffn_hidden_size);
    k.int_field("workload.model.num_shared_experts", m.num_shared_experts);
    if (k.int_field("workload.model.first_dense_layers", m.first_dense_layers) && m.num_layers >= 1 &&
        m.first_dense_layers >= m.num_layers)
      k.error("workload.model.first_dense_layers",
              "got " + to_string(m.first_dense_layers) +
                  " (expected an integer from 0 to num_layers - 1 = " + to_string(m.num_layers - 1) + ")");
    const double cf = m.moe_capacity_factor;
    if (!std::isfinite(cf) || !(cf == 0.0 || (cf >= 1.0 && cf <= 64.0)))
      k.error("workload.model.moe_capacity_factor",
              "got " + Checker::number(cf) + " (expected 0 for dropless routing, or a number from 1 to 64)");
    if (p.tp > 1 && !p.sequence_parallel)
      k.error("workload.parallel.sequence_parallel",
              "a MoE model with tp > 1 needs sequence parallelism, as Megatron-Core does (expected "
              "sequence_parallel: true)");
    const int mffn = m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size;
    if (m.num_shared_experts > 0 && p.tp > 1 && mffn > 0 &&
        (static_cast<std::int64_t>(mffn) * m.num_shared_experts) % p.tp != 0)
      k.error("workload.parallel.tp", to_string(p.tp) + " does not divide the shared experts' width " +
                                          to_string(m.num_shared_experts) + " x " + to_string(mffn) +
                                          " (expected a divisor of it)");
  } else {
    for (const char* f :
         {"workload.model.moe_top_k", "workload.model.moe_ffn_hidden_size", "workload.model.num_shared_experts",
          "workload.model.first_dense_layers", "workload.model.moe_capacity_factor"})
      if (k.present(f)) k.error(f, "is set but num_experts is 0 (expected num_experts >= 1 for a MoE model)");
  }
  if (k.int_field("workload.parallel.ep", p.ep) && p.ep > 1) {
    if (!moe) {
      k.error("workload.parallel.ep",
              "got " + to_string(p.ep) + " for a dense model (expected 1, or num_experts >= 1)");
    } else if (m.num_experts % p.ep != 0) {
      k.error("workload.parallel.ep", to_string(p.ep) + " does not divide num_experts " + to_string(m.num_experts) +
                                          " (expected a divisor of " + to_string(m.num_experts) + ")");
    } else if (p.dp >= 1 && p.dp % p.ep != 0) {
      k.error("workload.parallel.ep", to_string(p.ep) + " does not divide dp " + to_string(p.dp) +
                                          " (expected a divisor of dp: experts are split over data-parallel ranks)");
    }
  }
}

/// Context parallelism (workload.parallel.cp): ring attention over dense transformers.
void check_context_parallel(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::ParallelSpec& p = s.parallel;
  if (!k.int_field("workload.parallel.cp", p.cp) || p.cp == 1) return;
  const std::string got = "got " + to_string(p.cp);
  if (m.family != models::ModelFamily::transformer) {
    k.error("workload.parallel.cp", got + " for a ResNet (expected 1: ResNets are trained with DDP)");
    return;
  }
  if (m.num_experts > 0) {
    k.error("workload.parallel.cp",
            got + " with num_experts > 0 (expected 1: context parallelism is modelled for dense models only)");
  }
  const std::int64_t chunks = 2 * static_cast<std::int64_t>(p.cp);
  if (m.seq_length >= 1 && m.seq_length % chunks != 0) {
    k.error("workload.parallel.cp", "seq_length " + to_string(m.seq_length) +
                                        " is not divisible by 2 * cp = " + to_string(chunks) +
                                        " (expected 2 * cp to divide seq_length: the load-balanced split cuts each "
                                        "sequence into 2 * cp equal chunks)");
  }
  if (!s.training.flash_attention) {
    k.error("workload.training.flash_attention",
            "is false with cp = " + to_string(p.cp) +
                " (expected true: context parallelism runs on the fused attention kernel, as Megatron-Core with "
                "TransformerEngine does)");
  }
}

/// The data loader's input copies (workload.data_loader): ResNet family only.
void check_data_loader(const models::Scenario& s, Checker& k) {
  if (!s.data_loader) return;
  if (s.model.family != models::ModelFamily::resnet) {
    k.error("workload.data_loader",
            "is set for a transformer (expected it absent, or family: resnet: input copies are modelled for image "
            "batches)");
    return;
  }
  const double b = s.data_loader->input_bytes_per_element;
  if (!(b == 1.0 || b == 2.0 || b == 4.0))
    k.error("workload.data_loader.input_bytes_per_element",
            "got " + Checker::number(b) + " (expected 1 for uint8, 2 for fp16 or 4 for fp32)");
}

/// ResNet fields (workload.model.family: resnet): depth, resolution, classes; no transformer
/// shape fields; data parallel only (DDP).
void check_resnet(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::ParallelSpec& p = s.parallel;
  if (m.num_layers != 50 && m.num_layers != 101 && m.num_layers != 152)
    k.error("workload.model.num_layers",
            "got " + to_string(m.num_layers) + " for a ResNet (expected the depth: 50, 101 or 152)");
  k.int_field("workload.model.image_size", m.image_size);
  k.int_field("workload.model.num_classes", m.num_classes);
  for (const char* f :
       {"workload.model.hidden_size", "workload.model.num_attention_heads", "workload.model.num_query_groups",
        "workload.model.ffn_hidden_size", "workload.model.vocab_size", "workload.model.seq_length",
        "workload.model.gated_mlp", "workload.model.untied_embeddings", "workload.model.num_experts",
        "workload.model.attention_dropout", "workload.model.hidden_dropout"})
    if (k.present(f)) k.error(f, "is a transformer field but family is resnet (expected it absent)");
  for (const auto& [f, v] : {std::pair<const char*, int>{"workload.parallel.tp", p.tp}, {"workload.parallel.pp", p.pp}})
    if (v != 1) k.error(f, "got " + to_string(v) + " for a ResNet (expected 1: ResNets are trained with DDP)");
  if (p.zero_stage != 0)
    k.error("workload.parallel.zero_stage", "got " + to_string(p.zero_stage) + " for a ResNet (expected 0: DDP)");
}

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(n) >= s.size()) return false;  // truncated sequence
    for (int j = 1; j <= n; ++j) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(j)]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const std::uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

/// Checks of the storage, reliability and cost sections (issue 4).
void check_storage_reliability_cost(const models::Scenario& s, const std::string& gpu_name, Checker& k) {
  using std::to_string;
  if (s.storage) {
    const models::StorageSpec& st = *s.storage;
    const models::LocalStorageSpec& l = st.local;
    // A local drive setting given by an override with nothing on the local drives would be
    // silently ignored (e.g. --set storage.local.raid=... on a scenario without a storage
    // section, whose defaults read and checkpoint on the shared file system). A file may describe
    // drives it does not use (and a written-back scenario always has them).
    if (st.data_source != models::StorageTarget::local && st.checkpoint_target != models::StorageTarget::local) {
      const pb::Descriptor* local = tp::LocalStorageSpec::descriptor();
      for (int i = 0; i < local->field_count(); ++i) {
        const std::string path = "storage.local." + local->field(i)->name();
        if (!k.overridden(path)) continue;
        k.error(path,
                "has no effect: neither storage.data_source nor storage.checkpoint_target is local (expected "
                "one of them set to local; both default to shared_fs)");
        break;
      }
    }
    if (k.int_field("storage.local.drives", l.drives)) {
      const int need[] = {1, 2, 2, 3, 4};
      const char* names[] = {"raid0", "raid1", "raid10", "raid5", "raid6"};
      const int level = static_cast<int>(l.raid);
      if (l.drives < need[level] || (l.raid == models::RaidLevel::raid10 && l.drives % 2 != 0)) {
        k.error(
            "storage.local.drives",
            "got " + to_string(l.drives) + " for " + names[level] + " (expected " +
                (l.raid == models::RaidLevel::raid10 ? "an even number >= 2" : "at least " + to_string(need[level])) +
                ")");
      }
    }
    k.finite_at_least("storage.local.drive_read_gb_per_s", l.drive_read_gb_per_s, 0.0, true);
    k.finite_at_least("storage.local.drive_write_gb_per_s", l.drive_write_gb_per_s, 0.0, true);
    k.finite_at_least("storage.local.controller_cache_bytes", l.controller_cache_bytes, 0.0, false);
    k.finite_at_least("storage.local.controller_gb_per_s", l.controller_gb_per_s, 0.0, true);
    k.finite_at_least("storage.shared_fs.aggregate_read_gb_per_s", st.shared_fs.aggregate_read_gb_per_s, 0.0, true);
    k.finite_at_least("storage.shared_fs.aggregate_write_gb_per_s", st.shared_fs.aggregate_write_gb_per_s, 0.0, true);
    k.finite_at_least("storage.shared_fs.per_node_gb_per_s", st.shared_fs.per_node_gb_per_s, 0.0, true);
    k.finite_at_least("storage.bytes_per_token", st.bytes_per_token, 0.0, false);
    k.finite_at_least("storage.bytes_per_sample", st.bytes_per_sample, 0.0, false);
    k.finite_at_least("storage.checkpoint_interval_s", st.checkpoint_interval_s, 0.0, false);
    k.finite_at_least("storage.snapshot_gb_per_s", st.snapshot_gb_per_s, 0.0, false);
  }
  if (s.reliability) {
    const models::ReliabilitySpec& r = *s.reliability;
    std::set<std::string> causes;
    for (std::size_t i = 0; i < r.failures.size(); ++i) {
      const std::string at = "reliability.failure[" + to_string(i) + "]";
      const models::FailureRate& f = r.failures[i];
      if (f.cause.empty()) {
        k.error(at + ".cause", std::string(k.present(at + ".cause") ? "is empty" : "not set") +
                                   " (expected a cause name, unique in the list)");
      } else if (!causes.insert(f.cause).second) {
        k.error(at + ".cause",
                "\"" + detail::clip(f.cause) + "\" is used by an earlier failure (expected a unique name)");
      }
      k.finite_at_least(at + ".per_gpu_hour", f.per_gpu_hour, 0.0, false);
      k.finite_at_least(at + ".per_node_hour", f.per_node_hour, 0.0, false);
      if (f.per_gpu_hour > 1.0 || f.per_node_hour > 1.0) {
        k.error(at + (f.per_gpu_hour > 1.0 ? ".per_gpu_hour" : ".per_node_hour"),
                "more than one failure per hour per component (expected a rate <= 1: failures per GPU-hour or "
                "node-hour, e.g. 7e-6)");
      }
    }
    if (k.finite_at_least("reliability.checkpoint_interval_s", r.checkpoint_interval_s, 0.0, false) &&
        r.checkpoint_interval_s > 0 && r.checkpoint_interval_s < 1.0) {
      k.error("reliability.checkpoint_interval_s",
              "got " + Checker::number(r.checkpoint_interval_s) + " (expected 0 for Daly's optimum, or at least 1 s)");
    }
    k.finite_at_least("reliability.restart_overhead_s", r.restart_overhead_s, 0.0, false);
    if (r.horizon_s > models::kMaxFailureWindowS && std::isfinite(r.horizon_s)) {
      k.error("reliability.horizon_s", "got " + Checker::number(r.horizon_s) +
                                           " (expected at most 3.2e8 s, about 10 years: the simulator's range)");
    }
    if (k.finite_at_least("reliability.horizon_s", r.horizon_s, 0.0, false) && r.horizon_s == 0 &&
        s.training.train_tokens <= 0) {
      k.error("reliability.horizon_s",
              "is 0 and no token budget is given (expected horizon_s > 0, or workload.training.train_tokens > 0)");
    }
    k.int_field("reliability.monte_carlo_draws", r.monte_carlo_draws);
  }
  if (s.cost) {
    const models::CostSpec& c = *s.cost;
    k.finite_at_least("cost.node_price_usd", c.node_price_usd, 0.0, false);
    k.finite_at_least("cost.switch_price_usd", c.switch_price_usd, 0.0, false);
    k.finite_at_least("cost.cable_price_usd", c.cable_price_usd, 0.0, false);
    k.finite_at_least("cost.amortization_years", c.amortization_years, 0.0, true);
    k.finite_at_least("cost.upkeep_fraction_per_year", c.upkeep_fraction_per_year, 0.0, false);
    k.finite_at_least("cost.energy_price_usd_per_kwh", c.energy_price_usd_per_kwh, 0.0, false);
    k.finite_at_least("cost.cloud_price_per_gpu_hour_usd", c.cloud_price_per_gpu_hour_usd, 0.0, false);
    if (!(std::isfinite(c.utilization) && c.utilization > 0 && c.utilization <= 1)) {
      k.error("cost.utilization", "got " + Checker::number(c.utilization) + " (expected a fraction in (0, 1])");
    }
    if (c.node_price_usd == 0 && !models::default_node_price_usd(gpu_name)) {
      k.error("cost.node_price_usd", "no default price for " + gpu_name +
                                         " nodes (expected a price in USD > 0; defaults exist for H100-SXM5-80GB)");
    }
    if (c.cloud_price_per_gpu_hour_usd == 0 && !models::default_cloud_price_per_gpu_hour_usd(gpu_name)) {
      k.error("cost.cloud_price_per_gpu_hour_usd",
              "no default rent for " + gpu_name +
                  " (expected a price in USD per GPU-hour > 0; defaults exist for H100-SXM5-80GB, H200-SXM-141GB, "
                  "A100-SXM4-40GB)");
    }
  }
}

void check_scenario(models::Scenario& s, Checker& k, bool check_workload) {
  using std::to_string;
  for (const auto& [path, text] : {std::pair<const char*, const std::string*>{"name", &s.name},
                                   {"description", &s.description},
                                   {"cluster.node_template", &s.cluster.node_template},
                                   {"cluster.gpu", &s.cluster.gpu},
                                   {"workload.model.name", &s.model.name}}) {
    if (!valid_utf8(*text)) k.error(path, "is not valid UTF-8 (expected UTF-8 text)");
  }
  // Cluster.
  const models::NodeTemplate* node = nullptr;
  try {
    node = &models::find_node_template(s.cluster.node_template);
  } catch (const std::exception&) {
    k.error("cluster.node_template", "unknown node template \"" + detail::clip(s.cluster.node_template) + "\"" +
                                         detail::did_you_mean(s.cluster.node_template, models::node_template_names()) +
                                         " (expected one of: " + names_list(models::node_template_names()) + ")");
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
  check_cluster_extras(s, k);
  check_power_thermal(s, k, node, gpu);
  if (!check_workload) {
    // Cluster-only use (nccl-tests, explain): the workload may be absent and is not checked.
    k.int_field("options.iterations", s.options.iterations);
    k.int_field("options.threads", s.options.threads);
    return;
  }

  // Model.
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
  if (hidden_ok && heads_ok && m.hidden_size % m.num_attention_heads != 0) {
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
    k.int_field("workload.model.seq_length", m.seq_length);
  }

  // Parallelism.
  models::ParallelSpec& p = s.parallel;
  const bool tp_ok = k.int_field("workload.parallel.tp", p.tp);
  const bool pp_ok = k.int_field("workload.parallel.pp", p.pp);
  const bool dp_ok = k.int_field("workload.parallel.dp", p.dp);
  if (tp_ok && heads_ok && m.num_attention_heads % p.tp != 0) {
    k.error("workload.parallel.tp", to_string(p.tp) + " does not divide num_attention_heads " +
                                        to_string(m.num_attention_heads) + " (expected a divisor of " +
                                        to_string(m.num_attention_heads) + ")");
  } else if (tp_ok && groups_ok && m.num_query_groups > 0 && m.num_query_groups % p.tp != 0) {
    k.error("workload.parallel.tp", to_string(p.tp) + " does not divide num_query_groups " +
                                        to_string(m.num_query_groups) + " (expected a divisor of " +
                                        to_string(m.num_query_groups) + ")");
  }
  const bool interleaved = p.schedule == models::PipelineSchedule::interleaved_one_f_one_b;
  const bool vs_ok = k.int_field("workload.parallel.virtual_stages", p.virtual_stages);
  if (pp_ok && layers_ok) {
    if (p.pp > m.num_layers) {
      k.error("workload.parallel.pp", to_string(p.pp) + " stages for " + to_string(m.num_layers) +
                                          " layers (expected at most num_layers = " + to_string(m.num_layers) + ")");
    } else if (!interleaved && !p.uneven_stages && m.num_layers % p.pp != 0) {
      k.error("workload.parallel.pp", to_string(p.pp) + " does not divide num_layers " + to_string(m.num_layers) +
                                          " (expected a divisor of " + to_string(m.num_layers) +
                                          ", or uneven_stages: true)");
    }
  }
  if (interleaved) {
    if (pp_ok && p.pp < 2) {
      k.error("workload.parallel.pp",
              "got 1 with schedule interleaved_one_f_one_b (expected pp >= 2, or schedule: one_f_one_b)");
    }
    if (vs_ok && p.virtual_stages < 2) {
      k.error("workload.parallel.virtual_stages",
              "got 1 with schedule interleaved_one_f_one_b (expected virtual_stages >= 2)");
    } else if (vs_ok && pp_ok && layers_ok) {
      const std::int64_t chunks = static_cast<std::int64_t>(p.pp) * p.virtual_stages;
      if (p.uneven_stages && m.num_layers < chunks) {
        // Uneven interleaving (Llama 3's 126 layers on 16 stages): every model chunk needs a layer.
        k.error("workload.parallel.virtual_stages",
                "num_layers " + to_string(m.num_layers) + " is fewer than pp * virtual_stages = " + to_string(p.pp) +
                    " * " + to_string(p.virtual_stages) + " = " + to_string(chunks) +
                    " (expected at least one layer per model chunk)");
      } else if (!p.uneven_stages && m.num_layers % chunks != 0) {
        k.error("workload.parallel.virtual_stages",
                "num_layers " + to_string(m.num_layers) + " is not divisible by pp * virtual_stages = " +
                    to_string(p.pp) + " * " + to_string(p.virtual_stages) + " = " + to_string(chunks) +
                    " (expected pp * virtual_stages to divide num_layers, or uneven_stages: true)");
      }
    }
  } else if (vs_ok && p.virtual_stages > 1) {
    k.error("workload.parallel.virtual_stages",
            "got " + to_string(p.virtual_stages) +
                " with schedule one_f_one_b (expected 1, or schedule: interleaved_one_f_one_b)");
  }
  if (tp_ok && m.ffn_hidden_size > 0 && m.ffn_hidden_size % p.tp != 0) {
    k.error("workload.parallel.tp", to_string(p.tp) + " does not divide ffn_hidden_size " +
                                        to_string(m.ffn_hidden_size) + " (expected a divisor of " +
                                        to_string(m.ffn_hidden_size) + ")");
  }
  if (p.overlap_param_gather && p.zero_stage == 0) {
    k.error("workload.parallel.overlap_param_gather",
            "needs the distributed optimizer, which gathers parameters (expected zero_stage: 1 or 2, or "
            "overlap_param_gather: false)");
  } else if (p.overlap_param_gather && p.zero_stage == 3) {
    k.error("workload.parallel.overlap_param_gather",
            "ZeRO-3 gathers each layer's parameters right before use, with prefetch, not after the step "
            "(expected overlap_param_gather: false with zero_stage: 3)");
  }
  if (!k.int_field("workload.parallel.zero_stage", p.zero_stage)) {
  } else if (p.zero_stage >= 2 && m.num_experts > 0) {
    k.error("workload.parallel.zero_stage",
            "got " + to_string(p.zero_stage) +
                " with num_experts > 0: ZeRO-2/3 are not modelled for MoE experts (expected 0 or 1)");
  }
  k.finite_at_least("workload.parallel.dp_bucket_bytes", p.dp_bucket_bytes, 0.0, true);
  if (tp_ok && p.tp > 1 && p.tp_comm_overlap && !p.sequence_parallel) {
    k.error("workload.parallel.tp_comm_overlap",
            "needs sequence parallelism (expected sequence_parallel: true, or tp_comm_overlap: false)");
  }
  check_moe(s, k);
  check_encoder(s, k);
  check_dropout(s, k);
  check_context_parallel(s, k);
  check_data_loader(s, k);
  if (p.tp == 1) p.sequence_parallel = false;  // a no-op with one TP rank; Megatron-LM turns it off too

  if (node != nullptr && nodes_ok && tp_ok && pp_ok && dp_ok) {
    const std::int64_t gpus = static_cast<std::int64_t>(s.cluster.num_nodes) * node->gpus_per_node;
    if (gpus > kMaxGpus) {
      k.error("cluster.num_nodes", to_string(s.cluster.num_nodes) + " nodes of " + to_string(node->gpus_per_node) +
                                       " GPUs = " + to_string(gpus) + " GPUs (expected at most " + to_string(kMaxGpus) +
                                       " GPUs: the simulator's range)");
    }
    const std::int64_t used = static_cast<std::int64_t>(p.tp) * p.pp * p.dp * std::max(1, p.cp);
    // The field blamed for a product that does not match: the one an override (--set, a case's
    // `set`) wrote, as that is what the user changed; dp when none was overridden.
    std::string blamed = "workload.parallel.dp";
    for (const char* f : {"workload.parallel.tp", "workload.parallel.cp", "workload.parallel.pp",
                          "workload.parallel.dp", "cluster.num_nodes", "cluster.node_template"}) {
      if (k.overridden(f)) {
        blamed = f;
        break;
      }
    }
    if (used != gpus && p.cp > 1) {
      k.error(blamed, "tp * cp * pp * dp = " + to_string(p.tp) + " * " + to_string(p.cp) + " * " + to_string(p.pp) +
                          " * " + to_string(p.dp) + " = " + to_string(used) + " but the cluster has " +
                          to_string(gpus) + " GPUs (" + to_string(s.cluster.num_nodes) + " x " + node->name + " with " +
                          to_string(node->gpus_per_node) +
                          " GPUs each) (expected tp * cp * pp * dp = " + to_string(gpus) + ")");
    } else if (used != gpus) {
      k.error(blamed, "tp * pp * dp = " + to_string(p.tp) + " * " + to_string(p.pp) + " * " + to_string(p.dp) + " = " +
                          to_string(used) + " but the cluster has " + to_string(gpus) + " GPUs (" +
                          to_string(s.cluster.num_nodes) + " x " + node->name + " with " +
                          to_string(node->gpus_per_node) + " GPUs each) (expected tp * pp * dp = " + to_string(gpus) +
                          ")");
    }
  }

  // Training.
  const models::TrainingSpec& t = s.training;
  const bool gbs_ok = k.int_field("workload.training.global_batch_size", t.global_batch_size);
  const bool mbs_ok = k.int_field("workload.training.micro_batch_size", t.micro_batch_size);
  if (gbs_ok && mbs_ok && dp_ok) {
    const std::int64_t step = static_cast<std::int64_t>(p.dp) * t.micro_batch_size;
    if (t.global_batch_size % step != 0) {
      k.error("workload.training.global_batch_size",
              to_string(t.global_batch_size) + " is not divisible by dp * micro_batch_size = " + to_string(p.dp) +
                  " * " + to_string(t.micro_batch_size) + " = " + to_string(step) + " (expected a multiple of " +
                  to_string(step) + ")");
    } else if (interleaved && pp_ok && p.pp > 1 && (t.global_batch_size / step) % p.pp != 0) {
      // Megatron-LM's interleaved schedule runs micro-batches in groups of pp.
      const std::int64_t micro_batches = t.global_batch_size / step;
      k.error("workload.training.global_batch_size",
              to_string(t.global_batch_size) + " gives " + to_string(micro_batches) +
                  " micro-batches per pipeline, not a multiple of pp = " + to_string(p.pp) +
                  " as interleaved_one_f_one_b needs (expected a multiple of " + to_string(step * p.pp) + ")");
    }
  }
  if (gpu != nullptr) {
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
      k.error("workload.training.precision", std::string(models::precision_name(t.precision)) +
                                                 " is not supported by " + gpu_name +
                                                 " (expected one of: " + supported + ")");
    }
  }
  if (k.finite_at_least("workload.training.train_tokens", t.train_tokens, 0.0, false) &&
      ((t.train_tokens > 0 && t.train_tokens < 1) || t.train_tokens > kMaxTrainTokens)) {
    k.error("workload.training.train_tokens",
            "got " + Checker::number(t.train_tokens) +
                " (expected 0 for no token budget, or 1 to 1e15 tokens: " + std::string(kTrainTokensWhy) + ")");
  }
  check_lora(s, k);
  check_offload(s, node, k);

  // Options.
  k.int_field("options.iterations", s.options.iterations);
  k.int_field("options.threads", s.options.threads);

  check_storage_reliability_cost(s, gpu_name, k);
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

/// Overrides a cluster-only command would ignore (see load_cluster_scenario_file).
void unused_override_errors(const std::map<std::string, std::string>& override_origins, const ClusterUse& use,
                            Checker& k) {
  std::string reads = "the scenario's cluster", expected = "a cluster.* field";
  for (const std::string& f : use.also_reads) {
    reads += " and " + f;
    expected += " or " + f;
  }
  for (const auto& entry : override_origins) {
    const std::string& path = entry.first;
    if (path.rfind("cluster.", 0) == 0 || path == "name" || path == "description" || path == "profile") continue;
    if (std::find(use.also_reads.begin(), use.also_reads.end(), path) != use.also_reads.end()) continue;
    k.error(path, "has no effect: " + use.command + " uses only " + reads + " (expected " + expected + ")");
  }
}

/// Parse, override, convert, check. Throws ScenarioError with everything found. cluster_only:
/// null for a whole scenario; else what a cluster-only command reads (the workload is not checked).
models::Scenario load_impl(std::string_view text, std::string_view origin, Format format,
                           const std::vector<Override>& overrides, const ClusterUse* cluster_only = nullptr) {
  if (text.size() > kMaxInputBytes) {
    throw ScenarioError({std::string(origin) + ": input too large (" + std::to_string(text.size()) +
                         " bytes; expected at most " + std::to_string(kMaxInputBytes) + ")"});
  }
  tp::Scenario message;
  detail::ReadOutcome read = detail::read_message(text, origin, format, message);
  if (!read.errors.empty()) {
    if (auto other = detail::wrong_kind_message(text, origin, format, message.GetDescriptor()))
      throw ScenarioError({*other});
  }
  std::vector<std::string> errors = std::move(read.errors);
  std::map<std::string, std::string> override_origins;
  detail::apply_overrides(message, overrides, errors, override_origins);
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  if (cluster_only == nullptr && !message.has_workload()) {
    // Without this, each required workload field reports "not set" at 1:1 (7 lines for one cause).
    const std::string block = format == Format::json ? "a \"workload\": {...} object" : "a workload { ... } block";
    const bool cluster = message.has_cluster();
    throw ScenarioError(
        {detail::format_pos(origin, {1, 1}) + ": workload: " +
         (cluster ? "the file describes only a cluster, it has no workload section (expected " + block +
                        " with model, parallel and training, as in scenarios/default.textproto; a cluster-only "
                        "file is read by traincast nccl-tests, traincast explain and traincast chakra)"
                  : "the file has no workload section (expected " + block +
                        " with model, parallel and training, as in scenarios/default.textproto)")});
  }

  models::Scenario scenario;
  std::vector<std::string> bad_enums;
  to_struct(message, scenario, bad_enums);
  Checker checker(message, *read.source_map, origin, override_origins, errors);
  enum_errors(bad_enums, message, checker);
  check_scenario(scenario, checker, cluster_only == nullptr);
  if (cluster_only != nullptr) unused_override_errors(override_origins, *cluster_only, checker);
  if (message.has_profile() && !message.profile().empty()) {
    // Relative to the scenario file's directory (origin is its path for files).
    const std::filesystem::path rel(message.profile());
    const std::string resolved =
        rel.is_absolute() ? rel.string() : (std::filesystem::path(std::string(origin)).parent_path() / rel).string();
    try {
      scenario.cluster.profile = load_profile_file(resolved);
    } catch (const ScenarioError& e) {
      checker.error("profile", "cannot use profile \"" + detail::clip(message.profile()) + "\" (" +
                                   std::to_string(e.errors().size()) + " error(s) follow)");
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    }
  }
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  return scenario;
}

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// ------------------------------------------------------------------------------------------------
// Report
// ------------------------------------------------------------------------------------------------

tp::Report report_to_proto(const models::Report& r) {
  tp::Report m;
  m.set_scenario(r.scenario);
  m.set_gpu(r.gpu);
  m.set_num_gpus(r.num_gpus);
  m.set_num_nodes(r.num_nodes);
  m.set_tp(r.tp);
  m.set_pp(r.pp);
  m.set_dp(r.dp);
  m.set_micro_batches(r.micro_batches);
  m.set_iteration_time_s(r.iteration_time_s);
  m.set_tokens_per_s(r.tokens_per_s);
  m.set_samples_per_s(r.samples_per_s);
  m.set_model_flops_per_iteration(r.model_flops_per_iteration);
  m.set_hardware_flops_per_iteration(r.hardware_flops_per_iteration);
  m.set_tflops_per_gpu(r.tflops_per_gpu);
  m.set_hardware_tflops_per_gpu(r.hardware_tflops_per_gpu);
  m.set_mfu(r.mfu);
  m.set_hfu(r.hfu);
  m.set_peak_flops_per_gpu(r.peak_flops_per_gpu);
  tp::Report::TimeBreakdown& b = *m.mutable_breakdown();
  b.set_compute_s(r.breakdown.compute_s);
  b.set_tp_comm_exposed_s(r.breakdown.tp_comm_exposed_s);
  b.set_dp_comm_exposed_s(r.breakdown.dp_comm_exposed_s);
  b.set_pp_comm_exposed_s(r.breakdown.pp_comm_exposed_s);
  b.set_pipeline_bubble_s(r.breakdown.pipeline_bubble_s);
  b.set_optimizer_s(r.breakdown.optimizer_s);
  b.set_storage_stall_s(r.breakdown.storage_stall_s);
  b.set_ep_comm_exposed_s(r.breakdown.ep_comm_exposed_s);
  b.set_offload_s(r.breakdown.offload_s);
  b.set_cp_comm_exposed_s(r.breakdown.cp_comm_exposed_s);
  b.set_input_copy_exposed_s(r.breakdown.input_copy_exposed_s);
  b.set_straggler_wait_s(r.breakdown.straggler_wait_s);
  {
    const models::StragglerReport& s = r.straggler;
    tp::Report::Straggler& o = *m.mutable_straggler();
    o.set_found(s.found);
    o.set_gpu(s.gpu);
    o.set_node(s.node);
    o.set_local_gpu(s.local_gpu);
    o.set_cause(s.cause);
    o.set_sm_clock_mhz(s.sm_clock_mhz);
    o.set_boost_clock_mhz(s.boost_clock_mhz);
    o.set_temperature_c(s.temperature_c);
    o.set_throttled_time_fraction(s.throttled_time_fraction);
    o.set_slowest_kernel_s(s.slowest_kernel_s);
    o.set_breakdown_kernel_s(s.breakdown_kernel_s);
    o.set_slowest_replica(s.slowest_replica);
    o.set_breakdown_replica(s.breakdown_replica);
  }
  tp::Report::MemoryBreakdown& mem = *m.mutable_memory();
  mem.set_weights_bytes(r.memory.weights_bytes);
  mem.set_grads_bytes(r.memory.grads_bytes);
  mem.set_optimizer_bytes(r.memory.optimizer_bytes);
  mem.set_host_bytes(r.memory.host_bytes);
  mem.set_activations_bytes(r.memory.activations_bytes);
  mem.set_workspace_bytes(r.memory.workspace_bytes);
  mem.set_peak_bytes_per_gpu(r.memory.peak_bytes_per_gpu);
  mem.set_capacity_bytes(r.memory.capacity_bytes);
  mem.set_oom(r.memory.oom);
  mem.set_advice(r.memory.advice);
  mem.set_worst_stage(r.memory.worst_stage);
  for (const models::LinkUsage& l : r.busiest_links) {
    tp::Report::LinkUsage& u = *m.add_busiest_links();
    u.set_name(l.name);
    u.set_utilization(l.utilization);
    u.set_bytes(l.bytes);
    u.set_capacity_bytes_per_s(l.capacity_bytes_per_s);
  }
  m.set_train_tokens(r.train_tokens);
  m.set_time_to_train_s(r.time_to_train_s);
  m.set_events(static_cast<double>(r.events));
  m.set_folded(r.folded);
  m.set_iterations_simulated(r.iterations_simulated);
  {
    const models::UtilizationReport& ut = r.utilization;
    tp::Report::Utilization& uo = *m.mutable_utilization();
    uo.set_gpu_compute_busy_fraction_mean(ut.gpu_compute_busy_fraction_mean);
    uo.set_gpu_compute_busy_fraction_min(ut.gpu_compute_busy_fraction_min);
    uo.set_gpu_compute_busy_fraction_max(ut.gpu_compute_busy_fraction_max);
    uo.set_nvlink_utilization_mean(ut.nvlink_utilization_mean);
    uo.set_nvlink_utilization_max(ut.nvlink_utilization_max);
    uo.set_nvlink_links_used(ut.nvlink_links_used);
    uo.set_nic_utilization_mean(ut.nic_utilization_mean);
    uo.set_nic_utilization_max(ut.nic_utilization_max);
    uo.set_nic_links_used(ut.nic_links_used);
  }
  const models::StorageReport& st = r.storage;
  tp::Report::Storage& so = *m.mutable_storage();
  so.set_modelled(st.modelled);
  so.set_data_bytes_per_iteration(st.data_bytes_per_iteration);
  so.set_data_read_gb_per_s_needed(st.data_read_gb_per_s_needed);
  so.set_data_read_gb_per_s_available(st.data_read_gb_per_s_available);
  so.set_data_read_s_per_iteration(st.data_read_s_per_iteration);
  so.set_data_stall_s_per_iteration(st.data_stall_s_per_iteration);
  so.set_checkpoint_bytes(st.checkpoint_bytes);
  so.set_checkpoint_bytes_per_writer_node(st.checkpoint_bytes_per_writer_node);
  so.set_checkpoint_writer_nodes(st.checkpoint_writer_nodes);
  so.set_checkpoint_write_gb_per_s(st.checkpoint_write_gb_per_s);
  so.set_checkpoint_write_s(st.checkpoint_write_s);
  so.set_checkpoint_snapshot_s(st.checkpoint_snapshot_s);
  so.set_checkpoint_stall_s(st.checkpoint_stall_s);
  so.set_checkpoint_read_s(st.checkpoint_read_s);
  so.set_checkpoint_interval_s(st.checkpoint_interval_s);
  so.set_checkpoint_interval_iterations(st.checkpoint_interval_iterations);
  so.set_checkpoint_stall_s_per_iteration(st.checkpoint_stall_s_per_iteration);
  so.set_bottleneck(st.bottleneck);
  const models::ReliabilityReport& rl = r.reliability;
  tp::Report::Reliability& ro = *m.mutable_reliability();
  ro.set_modelled(rl.modelled);
  ro.set_failure_rate_per_hour(rl.failure_rate_per_hour);
  ro.set_job_mtbf_h(rl.job_mtbf_h);
  ro.set_checkpoint_interval_s(rl.checkpoint_interval_s);
  ro.set_checkpoint_stall_s(rl.checkpoint_stall_s);
  ro.set_restart_s(rl.restart_s);
  ro.set_useful_work_s(rl.useful_work_s);
  ro.set_work_requested_s(rl.work_requested_s);
  ro.set_draws(rl.draws);
  ro.set_seed(static_cast<double>(rl.seed));
  ro.set_interruptions_mean(rl.interruptions_mean);
  ro.set_interruptions_stddev(rl.interruptions_stddev);
  ro.set_interruptions_p5(rl.interruptions_p5);
  ro.set_interruptions_p95(rl.interruptions_p95);
  ro.set_wall_clock_s_mean(rl.wall_clock_s_mean);
  ro.set_wall_clock_s_p5(rl.wall_clock_s_p5);
  ro.set_wall_clock_s_p95(rl.wall_clock_s_p95);
  ro.set_lost_work_s_mean(rl.lost_work_s_mean);
  ro.set_restart_time_s_mean(rl.restart_time_s_mean);
  ro.set_checkpoint_time_s_mean(rl.checkpoint_time_s_mean);
  ro.set_goodput_mean(rl.goodput_mean);
  ro.set_goodput_p5(rl.goodput_p5);
  ro.set_goodput_p95(rl.goodput_p95);
  ro.set_expected_interruptions_analytic(rl.expected_interruptions_analytic);
  for (const models::CauseReport& c : rl.causes) {
    tp::Report::Reliability::Cause& co = *ro.add_causes();
    co.set_cause(c.cause);
    co.set_rate_per_hour(c.rate_per_hour);
    co.set_mean_interruptions(c.mean_interruptions);
  }
  const models::CostReport& c = r.cost;
  tp::Report::Cost& co = *m.mutable_cost();
  co.set_modelled(c.modelled);
  co.set_nodes(c.nodes);
  co.set_switches(c.switches);
  co.set_cables(c.cables);
  co.set_capex_usd(c.capex_usd);
  co.set_capex_per_year_usd(c.capex_per_year_usd);
  co.set_upkeep_per_year_usd(c.upkeep_per_year_usd);
  co.set_energy_modelled(c.energy_modelled);
  co.set_facility_power_w(c.facility_power_w);
  co.set_energy_per_year_usd(c.energy_per_year_usd);
  co.set_own_cost_per_gpu_hour_usd(c.own_cost_per_gpu_hour_usd);
  co.set_cloud_price_per_gpu_hour_usd(c.cloud_price_per_gpu_hour_usd);
  co.set_train_gpu_hours(c.train_gpu_hours);
  co.set_own_cost_to_train_usd(c.own_cost_to_train_usd);
  co.set_cloud_cost_to_train_usd(c.cloud_cost_to_train_usd);
  if (!c.payback_never) co.set_payback_years(c.payback_years);  // omitted when owning never pays back
  co.set_payback_never(c.payback_never);
  co.set_breakeven_utilization(c.breakeven_utilization);
  co.set_note(c.note);
  co.set_amortization_years(c.amortization_years);
  m.set_ep(r.ep);
  tp::Report::Power& pw = *m.mutable_power();
  const models::PowerReport& p = r.power;
  pw.set_gpu_average_w(p.gpu_average_w);
  pw.set_gpu_peak_w(p.gpu_peak_w);
  pw.set_node_average_w(p.node_average_w);
  pw.set_node_peak_w(p.node_peak_w);
  pw.set_rack_average_w(p.rack_average_w);
  pw.set_rack_peak_w(p.rack_peak_w);
  pw.set_it_average_w(p.it_average_w);
  pw.set_facility_average_w(p.facility_average_w);
  pw.set_facility_peak_w(p.facility_peak_w);
  pw.set_pue(p.pue);
  pw.set_it_energy_per_iteration_j(p.it_energy_per_iteration_j);
  pw.set_energy_per_iteration_j(p.energy_per_iteration_j);
  pw.set_energy_to_train_kwh(p.energy_to_train_kwh);
  pw.set_gpu_power_limit_w(p.gpu_power_limit_w);
  pw.set_node_psu_capacity_w(p.node_psu_capacity_w);
  for (const models::PsuOverload& o : p.psu_overloads) {
    tp::Report::PsuOverload& x = *pw.add_psu_overloads();
    x.set_node(o.node);
    x.set_first_time_s(o.first_time_s);
    x.set_peak_w(o.peak_w);
    x.set_capacity_w(o.capacity_w);
    x.set_excess_w(o.excess_w);
    x.set_overload_time_fraction(o.overload_time_fraction);
  }
  for (const models::GpuPower& g : p.gpus) {
    tp::Report::GpuPower& x = *pw.add_gpus();
    x.set_gpu(g.gpu);
    x.set_average_w(g.average_w);
    x.set_peak_w(g.peak_w);
    x.set_energy_j(g.energy_j);
    x.set_clock_fraction_min(g.clock_fraction_min);
  }
  tp::Report::Thermal& th = *m.mutable_thermal();
  const models::ThermalReport& t = r.thermal;
  th.set_peak_c(t.peak_c);
  th.set_hottest_gpu(t.hottest_gpu);
  th.set_slowdown_c(t.slowdown_c);
  th.set_throttled_time_fraction(t.throttled_time_fraction);
  th.set_throttled_gpus(t.throttled_gpus);
  th.set_steady_state(t.steady_state);
  th.set_max_drift_c(t.max_drift_c);
  th.set_rack_inlet_max_c(t.rack_inlet_max_c);
  th.set_throttle_iteration_increase_s(t.throttle_iteration_increase_s);
  th.set_throttle_iteration_increase_fraction(t.throttle_iteration_increase_fraction);
  for (const models::GpuThermal& g : t.gpus) {
    tp::Report::GpuThermal& x = *th.add_gpus();
    x.set_gpu(g.gpu);
    x.set_peak_c(g.peak_c);
    x.set_average_c(g.average_c);
    x.set_inlet_c(g.inlet_c);
    x.set_throttled_time_fraction(g.throttled_time_fraction);
    x.set_start_c(g.start_c);
    x.set_end_c(g.end_c);
  }
  m.set_cp(r.cp);
  return m;
}

// ------------------------------------------------------------------------------------------------
// Validation cases
// ------------------------------------------------------------------------------------------------

void check_case_fields(const tp::ValidationCases::Case& c, int i, Checker& k, std::set<std::string>& names) {
  const std::string at = "case[" + std::to_string(i) + "]";
  if (c.name().empty()) {
    k.error(at + ".name", std::string(k.present(at + ".name") ? "is empty" : "not set") + " (expected a unique name)");
  } else if (!names.insert(c.name()).second) {
    k.error(at + ".name", "\"" + detail::clip(c.name()) + "\" is used by an earlier case (expected a unique name)");
  }
  if (c.scenario().empty()) {
    k.error(at + ".scenario", std::string(k.present(at + ".scenario") ? "is empty" : "not set") +
                                  " (expected a scenario file path relative to the cases file)");
  }
  if (c.has_nccl_tests()) {
    const tp::ValidationCases::NcclTests& t = c.nccl_tests();
    const std::string nt = at + ".nccl_tests";
    if (t.log().empty()) {
      k.error(nt + ".log", std::string(k.present(nt + ".log") ? "is empty" : "not set") +
                               " (expected a nccl-tests output file relative to the cases file)");
    }
    for (const char* field : {"metric", "measured"}) {
      if (k.present(at + "." + field)) {
        k.error(at + "." + field, "set together with nccl_tests (expected either nccl_tests or metric and measured)");
      }
    }
    k.int_field(nt + ".run", t.run());
    if (t.has_max_large_error()) k.finite_at_least(nt + ".max_large_error", t.max_large_error(), 0.0, true);
    if (t.has_max_small_error()) k.finite_at_least(nt + ".max_small_error", t.max_small_error(), 0.0, true);
    k.finite_at_least(at + ".tolerance", c.tolerance(), 0.0, false);
    return;
  }
  const auto& metrics = models::validation_metrics();
  if (std::find(metrics.begin(), metrics.end(), c.metric()) == metrics.end()) {
    std::vector<std::string> names_v(metrics.begin(), metrics.end());
    k.error(at + ".metric", (k.present(at + ".metric") ? "unknown metric \"" + detail::clip(c.metric()) + "\"" +
                                                             detail::did_you_mean(c.metric(), names_v)
                                                       : std::string("not set")) +
                                " (expected one of: " + names_list(names_v) + ")");
  }
  if (!k.present(at + ".measured")) {
    k.error(at + ".measured", "not set (expected a finite number > 0)");
  } else {
    k.finite_at_least(at + ".measured", c.measured(), 0.0, true);
  }
  k.finite_at_least(at + ".tolerance", c.tolerance(), 0.0, false);
}

}  // namespace

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ScenarioError(
        {path + ": cannot read file (" + std::make_error_code(std::errc::is_a_directory).message() + ")"});
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno != 0 ? errno : ENOENT;
    throw ScenarioError({path + ": cannot read file (" + std::generic_category().message(err) + ")"});
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw ScenarioError({path + ": cannot read file (read error)"});
  std::string text = std::move(buffer).str();
  // A NUL byte never occurs in text (the test git and grep use to call a file binary); without this
  // the parsers report a puzzle such as "1:1: unexpected end of file" (the tokenizer stops at NUL).
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    throw ScenarioError({path + ": not a text file (a NUL byte at offset " + std::to_string(nul) +
                         "; expected text, e.g. a .textproto or .json file)"});
  }
  return text;
}

// ------------------------------------------------------------------------------------------------
// Public API
// ------------------------------------------------------------------------------------------------

ScenarioError::ScenarioError(std::vector<std::string> errors)
    : std::runtime_error(join_lines(errors)), errors_(std::move(errors)) {}

Format format_for_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ScenarioError({path + ": is a directory (expected a .textproto, .txtpb, .pbtxt, .txt or .json file)"});
  }
  const std::string ext = extension_of(path);
  if (ext == ".textproto" || ext == ".txtpb" || ext == ".pbtxt" || ext == ".txt") return Format::text;
  if (ext == ".json") return Format::json;
  throw ScenarioError(
      {path + ": unknown file extension \"" + ext + "\" (expected .textproto, .txtpb, .pbtxt, .txt or .json)"});
}

models::Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides) {
  const Format format = format_for_path(path);
  const std::string text = read_input_file(path);
  return load_impl(text, path, format, as_cli_overrides(overrides));
}

models::Scenario load_scenario_text(std::string_view text, std::string_view origin, Format format,
                                    const std::vector<std::string>& overrides) {
  return load_impl(text, origin, format, as_cli_overrides(overrides));
}

models::Scenario load_cluster_scenario_file(const std::string& path, const std::vector<std::string>& overrides,
                                            const ClusterUse& use) {
  const Format format = format_for_path(path);
  const std::string text = read_input_file(path);
  return load_impl(text, path, format, as_cli_overrides(overrides), &use);
}

std::string_view default_scenario_text() { return {detail::kDefaultScenarioText, detail::kDefaultScenarioTextSize}; }

models::Scenario default_scenario(const std::vector<std::string>& overrides) {
  try {
    return load_impl(default_scenario_text(), kDefaultOrigin, Format::text, as_cli_overrides(overrides));
  } catch (const ScenarioError& e) {
    // An error positioned in scenarios/default.textproto points at a file the user never named:
    // say that it is the embedded default and which --set options changed it.
    std::vector<std::string> errors = e.errors();
    const bool in_default = std::any_of(errors.begin(), errors.end(), [](const std::string& m) {
      return m.rfind(std::string(kDefaultOrigin) + ":", 0) == 0;
    });
    if (!in_default) throw;
    std::string note = std::string(kDefaultOrigin) +
                       ": note: this is traincast's embedded default scenario (no scenario file was given)";
    if (!overrides.empty()) {
      note += ", as changed by";
      for (const std::string& o : overrides) note += " --set " + detail::clip(o);
    }
    errors.push_back(note);
    throw ScenarioError(std::move(errors));
  }
}

std::string scenario_to_text(const models::Scenario& scenario) {
  std::string out;
  pb::TextFormat::Printer printer;
  printer.PrintToString(to_proto(scenario), &out);
  return out;
}

namespace {
/// `message` as indented JSON with proto field names, ending in a newline; `all_fields` prints
/// fields at their default too. Throws std::runtime_error naming `what` if protobuf refuses.
std::string message_to_json(const pb::Message& message, bool all_fields, const char* what) {
  pb::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = all_fields;
  options.preserve_proto_field_names = true;
  std::string out;
  const auto status = pb::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) throw std::runtime_error(std::string(what) + ": " + std::string(status.message()));
  if (out.empty() || out.back() != '\n') out += '\n';
  return out;
}
}  // namespace

std::string scenario_to_json(const models::Scenario& scenario) {
  return message_to_json(to_proto(scenario), false, "scenario_to_json");
}

std::string report_to_json(const models::Report& report) {
  return message_to_json(report_to_proto(report), true, "report_to_json");
}

std::vector<models::ValidationCase> load_validation_cases(const std::string& path) {
  const Format format = format_for_path(path);
  const std::string text = read_input_file(path);
  if (text.size() > kMaxInputBytes) {
    throw ScenarioError({path + ": input too large (" + std::to_string(text.size()) + " bytes; expected at most " +
                         std::to_string(kMaxInputBytes) + ")"});
  }
  tp::ValidationCases message;
  detail::ReadOutcome read = detail::read_message(text, path, format, message);
  if (!read.errors.empty()) {
    if (auto other = detail::wrong_kind_message(text, path, format, message.GetDescriptor()))
      throw ScenarioError({*other});
  }
  std::vector<std::string> errors = std::move(read.errors);
  if (!errors.empty()) throw ScenarioError(std::move(errors));

  const std::map<std::string, std::string> no_overrides;
  Checker k(message, *read.source_map, path, no_overrides, errors);
  if (message.case__size() == 0) k.error("case", "no cases (expected at least one case { ... })");
  std::set<std::string> names;
  for (int i = 0; i < message.case__size(); ++i) check_case_fields(message.case_(i), i, k, names);

  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  std::vector<models::ValidationCase> cases;
  for (int i = 0; i < message.case__size(); ++i) {
    const tp::ValidationCases::Case& c = message.case_(i);
    models::ValidationCase out;
    out.name = c.name();
    out.scenario_path = c.scenario().empty() ? std::string() : (base / c.scenario()).lexically_normal().string();
    out.metric = c.metric();
    out.measured = c.measured();
    out.tolerance = c.tolerance();
    out.source = c.has_source() && !c.source().empty() ? c.source() : message.source();
    out.notes = c.notes();
    if (c.has_nccl_tests()) {
      const tp::ValidationCases::NcclTests& t = c.nccl_tests();
      models::NcclTestsValidation v;
      v.log_path = t.log().empty() ? std::string() : (base / t.log()).lexically_normal().string();
      v.op = t.op();
      v.gpus = t.gpus();
      v.run = t.run();
      if (t.has_max_large_error()) v.max_large_error = t.max_large_error();
      if (t.has_max_small_error()) v.max_small_error = t.max_small_error();
      v.known_gap = t.known_gap();
      v.holdout_known_gap = t.holdout_known_gap();
      out.nccl_tests = v;
      out.metric = "nccl_tests_busbw";
    }
    std::vector<Override> overrides;
    for (int j = 0; j < c.set_size(); ++j) {
      out.overrides.push_back(c.set(j));
      overrides.push_back({c.set(j), k.where("case[" + std::to_string(i) + "].set[" + std::to_string(j) + "]")});
    }
    if (!out.scenario_path.empty()) {
      const std::string at = "case[" + std::to_string(i) + "].scenario";
      std::string scenario_text;
      Format scenario_format = Format::text;
      try {
        scenario_format = format_for_path(out.scenario_path);
        scenario_text = read_input_file(out.scenario_path);
      } catch (const ScenarioError& e) {
        // The file itself is the problem: say which case named it.
        k.error(at, e.what());
        cases.push_back(std::move(out));
        continue;
      }
      try {
        const ClusterUse nccl_case{"an nccl_tests case", {}};
        out.scenario = load_impl(scenario_text, out.scenario_path, scenario_format, overrides,
                                 out.nccl_tests ? &nccl_case : nullptr);
      } catch (const ScenarioError& e) {
        // The scenario's own errors keep their file:line:col (overrides: the `set` entry's).
        for (const std::string& line : e.errors()) errors.push_back(line);
      }
    }
    cases.push_back(std::move(out));
  }
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  return cases;
}

std::string field_position(const std::string& path, const std::string& field_path) {
  try {
    const std::string text = read_input_file(path);
    tp::Scenario message;
    const detail::ReadOutcome read = detail::read_message(text, path, format_for_path(path), message);
    std::vector<PathStep> steps;
    if (!detail::resolve_path(message.GetDescriptor(), field_path, steps, nullptr))
      return detail::format_pos(path, {1, 1});
    return detail::format_pos(path, read.source_map->locate(steps));
  } catch (const std::exception&) {
    return detail::format_pos(path, {1, 1});
  }
}

}  // namespace traincast::io
