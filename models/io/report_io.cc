// Reports out: models::Report as traincast.proto's Report message, section by section, and as
// JSON (report_io.h).

#include "models/io/report_io.h"

#include "models/io/scenario_io_internal.h"
#include "traincast.pb.h"

namespace traincast::io {
namespace {

namespace tp = traincast::proto;

/// Report.breakdown: where the iteration time went.
void breakdown_to_proto(const models::Report& r, tp::Report& m) {
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
}

/// Report.straggler: the slowest GPU and why.
void straggler_to_proto(const models::Report& r, tp::Report& m) {
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

/// Report.memory: per-GPU memory by kind, the peak and its stage.
void memory_to_proto(const models::Report& r, tp::Report& m) {
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
}

/// Report.busiest_links, in the report's order.
void busiest_links_to_proto(const models::Report& r, tp::Report& m) {
  for (const models::LinkUsage& l : r.busiest_links) {
    tp::Report::LinkUsage& u = *m.add_busiest_links();
    u.set_name(l.name);
    u.set_utilization(l.utilization);
    u.set_bytes(l.bytes);
    u.set_capacity_bytes_per_s(l.capacity_bytes_per_s);
  }
}

/// Report.utilization: GPU compute, NVLink and NIC busy fractions.
void utilization_to_proto(const models::Report& r, tp::Report& m) {
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

/// Report.storage: data-loading and checkpoint traffic.
void storage_to_proto(const models::Report& r, tp::Report& m) {
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
}

/// Report.reliability: failures, restarts and goodput, with the per-cause rates.
void reliability_to_proto(const models::Report& r, tp::Report& m) {
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
}

/// Report.cost: capital, upkeep and energy cost, owning against renting.
void cost_to_proto(const models::Report& r, tp::Report& m) {
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
}

/// Report.power: GPU, node, rack and facility power, PSU overloads, per-GPU figures.
void power_to_proto(const models::Report& r, tp::Report& m) {
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
}

/// Report.thermal: temperatures and throttling, per-GPU figures.
void thermal_to_proto(const models::Report& r, tp::Report& m) {
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
}

/// The whole report as a message: the top-level figures here, each section by its helper above.
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
  breakdown_to_proto(r, m);
  straggler_to_proto(r, m);
  memory_to_proto(r, m);
  busiest_links_to_proto(r, m);
  m.set_train_tokens(r.train_tokens);
  m.set_time_to_train_s(r.time_to_train_s);
  m.set_events(static_cast<double>(r.events));
  m.set_folded(r.folded);
  m.set_iterations_simulated(r.iterations_simulated);
  utilization_to_proto(r, m);
  storage_to_proto(r, m);
  reliability_to_proto(r, m);
  cost_to_proto(r, m);
  m.set_ep(r.ep);
  power_to_proto(r, m);
  thermal_to_proto(r, m);
  m.set_cp(r.cp);
  return m;
}

}  // namespace

std::string report_to_json(const models::Report& report) {
  return detail::message_to_json(report_to_proto(report), true, "report_to_json");
}

}  // namespace traincast::io
