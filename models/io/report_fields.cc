// The report's field table (report_fields.h): one row per scalar of proto::Report outside its
// lists (busiest_links, reliability.causes, power.psu_overloads, power.gpus, thermal.gpus,
// overrides.entries: by hand in report_io.cc).

#include "models/io/report_fields.h"

#include <stdexcept>
#include <string>

namespace traincast::io::detail {
namespace {

using R = models::Report;
using Breakdown = models::TimeBreakdown;
using Straggler = models::StragglerReport;
using Memory = models::MemoryBreakdown;
using Utilization = models::UtilizationReport;
using Storage = models::StorageReport;
using Reliability = models::ReliabilityReport;
using Cost = models::CostReport;
using Power = models::PowerReport;
using Thermal = models::ThermalReport;
using Routing = models::RoutingReport;

/// The row of the member at the end of the member-pointer chain `Members`.
template <auto... Members>
constexpr ReportField field(std::string_view path, bool (*when)(const R&) = nullptr) {
  return {path, member_kind<Members...>(), &get_member<Members...>, when};
}

/// payback_years is left out when owning never pays back (it is then 0, which would read as "at once").
bool pays_back(const R& r) { return !r.cost.payback_never; }
/// The straggler's pipeline stages are written only for a pipeline-parallel job.
bool is_pipeline(const R& r) { return r.pp > 1; }
/// The folding section is written only when it has classes (runs with cluster.overrides).
bool has_folding(const R& r) { return !r.folding.classes.empty(); }
/// The overrides' cost is written only where `traincast run` simulated the job without them.
bool has_override_cost(const R& r) { return r.overrides.cost_known; }
/// The mixed section is written only on a mixed cluster (node groups).
bool is_mixed(const R& r) { return !r.mixed.groups.empty(); }
using Mixed = models::MixedClusterReport;

// Order: the order report_to_proto set them in before this table (JSON keys follow field numbers).
constexpr ReportField kFields[] = {
    field<&R::scenario>("scenario"),
    field<&R::gpu>("gpu"),
    field<&R::num_gpus>("num_gpus"),
    field<&R::num_nodes>("num_nodes"),
    field<&R::tp>("tp"),
    field<&R::pp>("pp"),
    field<&R::dp>("dp"),
    field<&R::micro_batches>("micro_batches"),
    field<&R::iteration_time_s>("iteration_time_s"),
    field<&R::tokens_per_s>("tokens_per_s"),
    field<&R::samples_per_s>("samples_per_s"),
    field<&R::model_flops_per_iteration>("model_flops_per_iteration"),
    field<&R::hardware_flops_per_iteration>("hardware_flops_per_iteration"),
    field<&R::tflops_per_gpu>("tflops_per_gpu"),
    field<&R::hardware_tflops_per_gpu>("hardware_tflops_per_gpu"),
    field<&R::mfu>("mfu"),
    field<&R::hfu>("hfu"),
    field<&R::peak_flops_per_gpu>("peak_flops_per_gpu"),
    // breakdown
    field<&R::breakdown, &Breakdown::compute_s>("breakdown.compute_s"),
    field<&R::breakdown, &Breakdown::tp_comm_exposed_s>("breakdown.tp_comm_exposed_s"),
    field<&R::breakdown, &Breakdown::dp_comm_exposed_s>("breakdown.dp_comm_exposed_s"),
    field<&R::breakdown, &Breakdown::pp_comm_exposed_s>("breakdown.pp_comm_exposed_s"),
    field<&R::breakdown, &Breakdown::pipeline_bubble_s>("breakdown.pipeline_bubble_s"),
    field<&R::breakdown, &Breakdown::optimizer_s>("breakdown.optimizer_s"),
    field<&R::breakdown, &Breakdown::storage_stall_s>("breakdown.storage_stall_s"),
    field<&R::breakdown, &Breakdown::ep_comm_exposed_s>("breakdown.ep_comm_exposed_s"),
    field<&R::breakdown, &Breakdown::offload_s>("breakdown.offload_s"),
    field<&R::breakdown, &Breakdown::cp_comm_exposed_s>("breakdown.cp_comm_exposed_s"),
    field<&R::breakdown, &Breakdown::input_copy_exposed_s>("breakdown.input_copy_exposed_s"),
    field<&R::breakdown, &Breakdown::straggler_wait_s>("breakdown.straggler_wait_s"),
    // straggler
    field<&R::straggler, &Straggler::found>("straggler.found"),
    field<&R::straggler, &Straggler::gpu>("straggler.gpu"),
    field<&R::straggler, &Straggler::node>("straggler.node"),
    field<&R::straggler, &Straggler::local_gpu>("straggler.local_gpu"),
    field<&R::straggler, &Straggler::cause>("straggler.cause"),
    field<&R::straggler, &Straggler::sm_clock_mhz>("straggler.sm_clock_mhz"),
    field<&R::straggler, &Straggler::boost_clock_mhz>("straggler.boost_clock_mhz"),
    field<&R::straggler, &Straggler::temperature_c>("straggler.temperature_c"),
    field<&R::straggler, &Straggler::throttled_time_fraction>("straggler.throttled_time_fraction"),
    field<&R::straggler, &Straggler::slowest_kernel_s>("straggler.slowest_kernel_s"),
    field<&R::straggler, &Straggler::breakdown_kernel_s>("straggler.breakdown_kernel_s"),
    field<&R::straggler, &Straggler::slowest_replica>("straggler.slowest_replica"),
    field<&R::straggler, &Straggler::breakdown_replica>("straggler.breakdown_replica"),
    field<&R::straggler, &Straggler::slowest_stage>("straggler.slowest_stage", is_pipeline),
    field<&R::straggler, &Straggler::breakdown_stage>("straggler.breakdown_stage", is_pipeline),
    // memory
    field<&R::memory, &Memory::weights_bytes>("memory.weights_bytes"),
    field<&R::memory, &Memory::grads_bytes>("memory.grads_bytes"),
    field<&R::memory, &Memory::optimizer_bytes>("memory.optimizer_bytes"),
    field<&R::memory, &Memory::host_bytes>("memory.host_bytes"),
    field<&R::memory, &Memory::activations_bytes>("memory.activations_bytes"),
    field<&R::memory, &Memory::workspace_bytes>("memory.workspace_bytes"),
    field<&R::memory, &Memory::peak_bytes_per_gpu>("memory.peak_bytes_per_gpu"),
    field<&R::memory, &Memory::capacity_bytes>("memory.capacity_bytes"),
    field<&R::memory, &Memory::oom>("memory.oom"),
    field<&R::memory, &Memory::advice>("memory.advice"),
    field<&R::memory, &Memory::worst_stage>("memory.worst_stage"),
    field<&R::train_tokens>("train_tokens"),
    field<&R::time_to_train_s>("time_to_train_s"),
    field<&R::train_tokens_source>("train_tokens_source"),
    field<&R::events>("events"),
    field<&R::folded>("folded"),
    field<&R::folding, &models::FoldingReport::replicas>("folding.replicas", has_folding),
    field<&R::folding, &models::FoldingReport::simulated_replicas>("folding.simulated_replicas", has_folding),
    field<&R::overrides, &models::OverridesReport::cost_known>("overrides.cost_known", has_override_cost),
    field<&R::overrides, &models::OverridesReport::cost_s>("overrides.cost_s", has_override_cost),
    field<&R::overrides, &models::OverridesReport::cost_fraction>("overrides.cost_fraction", has_override_cost),
    field<&R::mixed, &Mixed::slow_group>("mixed.slow_group", is_mixed),
    field<&R::mixed, &Mixed::fast_group>("mixed.fast_group", is_mixed),
    field<&R::mixed, &Mixed::slow_stage_s>("mixed.slow_stage_s", is_mixed),
    field<&R::mixed, &Mixed::fast_stage_s>("mixed.fast_stage_s", is_mixed),
    field<&R::mixed, &Mixed::pipeline_s>("mixed.pipeline_s", is_mixed),
    field<&R::mixed, &Mixed::all_fast_pipeline_s>("mixed.all_fast_pipeline_s", is_mixed),
    field<&R::mixed, &Mixed::slow_group_cost_s>("mixed.slow_group_cost_s", is_mixed),
    field<&R::iterations_simulated>("iterations_simulated"),
    // utilization
    field<&R::utilization, &Utilization::gpu_compute_busy_fraction_mean>("utilization.gpu_compute_busy_fraction_mean"),
    field<&R::utilization, &Utilization::gpu_compute_busy_fraction_min>("utilization.gpu_compute_busy_fraction_min"),
    field<&R::utilization, &Utilization::gpu_compute_busy_fraction_max>("utilization.gpu_compute_busy_fraction_max"),
    field<&R::utilization, &Utilization::nvlink_utilization_mean>("utilization.nvlink_utilization_mean"),
    field<&R::utilization, &Utilization::nvlink_utilization_max>("utilization.nvlink_utilization_max"),
    field<&R::utilization, &Utilization::nvlink_links_used>("utilization.nvlink_links_used"),
    field<&R::utilization, &Utilization::nic_utilization_mean>("utilization.nic_utilization_mean"),
    field<&R::utilization, &Utilization::nic_utilization_max>("utilization.nic_utilization_max"),
    field<&R::utilization, &Utilization::nic_links_used>("utilization.nic_links_used"),
    // storage
    field<&R::storage, &Storage::modelled>("storage.modelled"),
    field<&R::storage, &Storage::data_bytes_per_iteration>("storage.data_bytes_per_iteration"),
    field<&R::storage, &Storage::data_read_gb_per_s_needed>("storage.data_read_gb_per_s_needed"),
    field<&R::storage, &Storage::data_read_gb_per_s_available>("storage.data_read_gb_per_s_available"),
    field<&R::storage, &Storage::data_read_s_per_iteration>("storage.data_read_s_per_iteration"),
    field<&R::storage, &Storage::data_stall_s_per_iteration>("storage.data_stall_s_per_iteration"),
    field<&R::storage, &Storage::checkpoint_bytes>("storage.checkpoint_bytes"),
    field<&R::storage, &Storage::checkpoint_bytes_per_writer_node>("storage.checkpoint_bytes_per_writer_node"),
    field<&R::storage, &Storage::checkpoint_writer_nodes>("storage.checkpoint_writer_nodes"),
    field<&R::storage, &Storage::checkpoint_write_gb_per_s>("storage.checkpoint_write_gb_per_s"),
    field<&R::storage, &Storage::checkpoint_write_s>("storage.checkpoint_write_s"),
    field<&R::storage, &Storage::checkpoint_snapshot_s>("storage.checkpoint_snapshot_s"),
    field<&R::storage, &Storage::checkpoint_stall_s>("storage.checkpoint_stall_s"),
    field<&R::storage, &Storage::checkpoint_read_s>("storage.checkpoint_read_s"),
    field<&R::storage, &Storage::checkpoint_interval_s>("storage.checkpoint_interval_s"),
    field<&R::storage, &Storage::checkpoint_interval_iterations>("storage.checkpoint_interval_iterations"),
    field<&R::storage, &Storage::checkpoint_stall_s_per_iteration>("storage.checkpoint_stall_s_per_iteration"),
    field<&R::storage, &Storage::bottleneck>("storage.bottleneck"),
    // reliability
    field<&R::reliability, &Reliability::modelled>("reliability.modelled"),
    field<&R::reliability, &Reliability::failure_rate_per_hour>("reliability.failure_rate_per_hour"),
    field<&R::reliability, &Reliability::job_mtbf_h>("reliability.job_mtbf_h"),
    field<&R::reliability, &Reliability::checkpoint_interval_s>("reliability.checkpoint_interval_s"),
    field<&R::reliability, &Reliability::checkpoint_stall_s>("reliability.checkpoint_stall_s"),
    field<&R::reliability, &Reliability::restart_s>("reliability.restart_s"),
    field<&R::reliability, &Reliability::useful_work_s>("reliability.useful_work_s"),
    field<&R::reliability, &Reliability::work_requested_s>("reliability.work_requested_s"),
    field<&R::reliability, &Reliability::draws>("reliability.draws"),
    field<&R::reliability, &Reliability::seed>("reliability.seed"),
    field<&R::reliability, &Reliability::interruptions_mean>("reliability.interruptions_mean"),
    field<&R::reliability, &Reliability::interruptions_stddev>("reliability.interruptions_stddev"),
    field<&R::reliability, &Reliability::interruptions_p5>("reliability.interruptions_p5"),
    field<&R::reliability, &Reliability::interruptions_p95>("reliability.interruptions_p95"),
    field<&R::reliability, &Reliability::wall_clock_s_mean>("reliability.wall_clock_s_mean"),
    field<&R::reliability, &Reliability::wall_clock_s_p5>("reliability.wall_clock_s_p5"),
    field<&R::reliability, &Reliability::wall_clock_s_p95>("reliability.wall_clock_s_p95"),
    field<&R::reliability, &Reliability::lost_work_s_mean>("reliability.lost_work_s_mean"),
    field<&R::reliability, &Reliability::restart_time_s_mean>("reliability.restart_time_s_mean"),
    field<&R::reliability, &Reliability::checkpoint_time_s_mean>("reliability.checkpoint_time_s_mean"),
    field<&R::reliability, &Reliability::goodput_mean>("reliability.goodput_mean"),
    field<&R::reliability, &Reliability::goodput_p5>("reliability.goodput_p5"),
    field<&R::reliability, &Reliability::goodput_p95>("reliability.goodput_p95"),
    field<&R::reliability, &Reliability::expected_interruptions_analytic>(
        "reliability.expected_interruptions_analytic"),
    // cost
    field<&R::cost, &Cost::modelled>("cost.modelled"),
    field<&R::cost, &Cost::nodes>("cost.nodes"),
    field<&R::cost, &Cost::switches>("cost.switches"),
    field<&R::cost, &Cost::cables>("cost.cables"),
    field<&R::cost, &Cost::capex_usd>("cost.capex_usd"),
    field<&R::cost, &Cost::capex_per_year_usd>("cost.capex_per_year_usd"),
    field<&R::cost, &Cost::upkeep_per_year_usd>("cost.upkeep_per_year_usd"),
    field<&R::cost, &Cost::energy_modelled>("cost.energy_modelled"),
    field<&R::cost, &Cost::facility_power_w>("cost.facility_power_w"),
    field<&R::cost, &Cost::energy_per_year_usd>("cost.energy_per_year_usd"),
    field<&R::cost, &Cost::own_cost_per_gpu_hour_usd>("cost.own_cost_per_gpu_hour_usd"),
    field<&R::cost, &Cost::cloud_price_per_gpu_hour_usd>("cost.cloud_price_per_gpu_hour_usd"),
    field<&R::cost, &Cost::train_gpu_hours>("cost.train_gpu_hours"),
    field<&R::cost, &Cost::own_cost_to_train_usd>("cost.own_cost_to_train_usd"),
    field<&R::cost, &Cost::cloud_cost_to_train_usd>("cost.cloud_cost_to_train_usd"),
    field<&R::cost, &Cost::payback_years>("cost.payback_years", pays_back),
    field<&R::cost, &Cost::payback_never>("cost.payback_never"),
    field<&R::cost, &Cost::breakeven_utilization>("cost.breakeven_utilization"),
    field<&R::cost, &Cost::note>("cost.note"),
    field<&R::cost, &Cost::amortization_years>("cost.amortization_years"),
    field<&R::cost, &Cost::own_modelled>("cost.own_modelled"),
    field<&R::cost, &Cost::rent_modelled>("cost.rent_modelled"),
    field<&R::cost, &Cost::node_price_usd>("cost.node_price_usd"),
    field<&R::cost, &Cost::node_price_source>("cost.node_price_source"),
    field<&R::cost, &Cost::node_price_unit>("cost.node_price_unit"),
    field<&R::cost, &Cost::units_bought>("cost.units_bought"),
    field<&R::cost, &Cost::cloud_price_source>("cost.cloud_price_source"),
    field<&R::ep>("ep"),
    // power
    field<&R::power, &Power::gpu_average_w>("power.gpu_average_w"),
    field<&R::power, &Power::gpu_peak_w>("power.gpu_peak_w"),
    field<&R::power, &Power::node_average_w>("power.node_average_w"),
    field<&R::power, &Power::node_peak_w>("power.node_peak_w"),
    field<&R::power, &Power::rack_average_w>("power.rack_average_w"),
    field<&R::power, &Power::rack_peak_w>("power.rack_peak_w"),
    field<&R::power, &Power::it_average_w>("power.it_average_w"),
    field<&R::power, &Power::facility_average_w>("power.facility_average_w"),
    field<&R::power, &Power::facility_peak_w>("power.facility_peak_w"),
    field<&R::power, &Power::pue>("power.pue"),
    field<&R::power, &Power::it_energy_per_iteration_j>("power.it_energy_per_iteration_j"),
    field<&R::power, &Power::energy_per_iteration_j>("power.energy_per_iteration_j"),
    field<&R::power, &Power::energy_to_train_kwh>("power.energy_to_train_kwh"),
    field<&R::power, &Power::gpu_power_limit_w>("power.gpu_power_limit_w"),
    field<&R::power, &Power::node_psu_capacity_w>("power.node_psu_capacity_w"),
    // thermal
    field<&R::thermal, &Thermal::peak_c>("thermal.peak_c"),
    field<&R::thermal, &Thermal::hottest_gpu>("thermal.hottest_gpu"),
    field<&R::thermal, &Thermal::slowdown_c>("thermal.slowdown_c"),
    field<&R::thermal, &Thermal::throttled_time_fraction>("thermal.throttled_time_fraction"),
    field<&R::thermal, &Thermal::throttled_gpus>("thermal.throttled_gpus"),
    field<&R::thermal, &Thermal::steady_state>("thermal.steady_state"),
    field<&R::thermal, &Thermal::max_drift_c>("thermal.max_drift_c"),
    field<&R::thermal, &Thermal::rack_inlet_max_c>("thermal.rack_inlet_max_c"),
    field<&R::thermal, &Thermal::throttle_iteration_increase_s>("thermal.throttle_iteration_increase_s"),
    field<&R::thermal, &Thermal::throttle_iteration_increase_fraction>("thermal.throttle_iteration_increase_fraction"),
    field<&R::thermal, &Thermal::steady_state_offset_c>("thermal.steady_state_offset_c"),
    field<&R::cp>("cp"),
    // routing
    field<&R::routing, &Routing::routing>("routing.routing"),
    field<&R::routing, &Routing::seeds>("routing.seeds"),
    field<&R::routing, &Routing::iteration_time_s_min>("routing.iteration_time_s_min"),
    field<&R::routing, &Routing::iteration_time_s_max>("routing.iteration_time_s_max"),
    field<&R::routing, &Routing::iteration_time_s_stddev>("routing.iteration_time_s_stddev"),
    field<&R::caveat>("caveat"),
    field<&R::compute_model>("compute.compute_model"),
    field<&R::attention_kernel>("compute.attention_kernel"),
    field<&R::profile>("compute.profile"),
    field<&R::profile_gpu>("compute.profile_gpu"),
    field<&R::recompute>("compute.recompute"),
    field<&R::selective_policy>("compute.selective_policy"),
};

}  // namespace

std::optional<FieldValue> ReportField::value(const models::Report& r) const {
  if (when != nullptr && !when(r)) return std::nullopt;
  return get(r);
}

std::span<const ReportField> report_fields() { return kFields; }

const ReportField& report_field(std::string_view path) {
  for (const ReportField& f : kFields) {
    if (f.path == path) return f;
  }
  throw std::logic_error("report_field: no report field " + std::string(path));
}

}  // namespace traincast::io::detail
