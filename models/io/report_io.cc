// Reports out: models::Report as traincast.proto's Report message, every scalar through the field
// table (report_fields.h) by reflection and the lists by hand, and as JSON (report_io.h).

#include "models/io/report_io.h"

#include <vector>

#include "models/io/field_reflection.h"
#include "models/io/report_fields.h"
#include "models/io/scenario_io_internal.h"
#include "traincast.pb.h"

namespace traincast::io {
namespace {

namespace tp = traincast::proto;
using detail::FieldChain;
using detail::FieldValue;
using detail::ReportField;

/// A table row with its descriptors, looked up once.
struct ResolvedField {
  const ReportField* row;
  FieldChain chain;
};

const std::vector<ResolvedField>& resolved_fields() {
  static const std::vector<ResolvedField> fields = [] {
    std::vector<ResolvedField> out;
    for (const ReportField& row : detail::report_fields()) {
      out.push_back(
          {&row, detail::scalar_chain(tp::Report::descriptor(), row.path, row.kind, detail::CopyDirection::write)});
    }
    return out;
  }();
  return fields;
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

/// Report.reliability.causes: the per-cause rates.
void causes_to_proto(const models::Report& r, tp::Report& m) {
  for (const models::CauseReport& c : r.reliability.causes) {
    tp::Report::Reliability::Cause& co = *m.mutable_reliability()->add_causes();
    co.set_cause(c.cause);
    co.set_rate_per_hour(c.rate_per_hour);
    co.set_mean_interruptions(c.mean_interruptions);
  }
}

/// Report.power.psu_overloads and power.gpus: PSU overloads, per-GPU figures.
void power_lists_to_proto(const models::Report& r, tp::Report& m) {
  tp::Report::Power& pw = *m.mutable_power();
  for (const models::PsuOverload& o : r.power.psu_overloads) {
    tp::Report::PsuOverload& x = *pw.add_psu_overloads();
    x.set_node(o.node);
    x.set_first_time_s(o.first_time_s);
    x.set_peak_w(o.peak_w);
    x.set_capacity_w(o.capacity_w);
    x.set_excess_w(o.excess_w);
    x.set_overload_time_fraction(o.overload_time_fraction);
  }
  for (const models::GpuPower& g : r.power.gpus) {
    tp::Report::GpuPower& x = *pw.add_gpus();
    x.set_gpu(g.gpu);
    x.set_average_w(g.average_w);
    x.set_peak_w(g.peak_w);
    x.set_energy_j(g.energy_j);
    x.set_clock_fraction_min(g.clock_fraction_min);
  }
}

/// Report.thermal.gpus: per-GPU temperatures.
void thermal_gpus_to_proto(const models::Report& r, tp::Report& m) {
  for (const models::GpuThermal& g : r.thermal.gpus) {
    tp::Report::GpuThermal& x = *m.mutable_thermal()->add_gpus();
    x.set_gpu(g.gpu);
    x.set_peak_c(g.peak_c);
    x.set_average_c(g.average_c);
    x.set_inlet_c(g.inlet_c);
    x.set_throttled_time_fraction(g.throttled_time_fraction);
    x.set_start_c(g.start_c);
    x.set_end_c(g.end_c);
  }
}

/// Report.folding.classes (only with classes: the section is absent otherwise).
void folding_classes_to_proto(const models::Report& r, tp::Report& m) {
  for (const models::FoldingClassReport& c : r.folding.classes) {
    tp::Report::Folding::Class& x = *m.mutable_folding()->add_classes();
    x.set_representative(c.representative);
    x.set_replicas(c.replicas);
    x.set_members(c.members);
    x.set_reason(c.reason);
  }
}

/// Report.overrides.entries (only with cluster.overrides: the section is absent otherwise; its
/// cost scalars are rows of the field table).
void overrides_to_proto(const models::Report& r, tp::Report& m) {
  if (r.overrides.entries.empty()) return;
  tp::Report::Overrides& o = *m.mutable_overrides();
  for (const models::OverrideEffectReport& e : r.overrides.entries) {
    tp::Report::Overrides::Entry& x = *o.add_entries();
    x.set_index(e.index);
    x.set_select(e.select);
    x.set_setting(e.setting);
    x.set_sm_clock_mhz(e.sm_clock_mhz);
    x.set_boost_clock_mhz(e.boost_clock_mhz);
    x.set_straggler(e.straggler);
    x.set_hottest_gpu_c(e.hottest_gpu_c);
    x.set_throttled_time_fraction(e.throttled_time_fraction);
    x.set_bytes_per_iteration(e.bytes_per_iteration);
    x.set_utilization(e.utilization);
    x.set_peer(e.peer);
    x.set_peer_bytes_per_iteration(e.peer_bytes_per_iteration);
    x.set_acts(e.acts);
    x.set_folded(e.folded);
    x.set_failed_instead_known(e.failed_instead_known);
    x.set_failed_instead_cost_s(e.failed_instead_cost_s);
    x.set_peers_waiting(e.peers_waiting);
    x.set_peers_wait_s(e.peers_wait_s);
  }
}

/// Report.mixed's groups and stages (mixed clusters only).
void mixed_lists_to_proto(const models::Report& r, tp::Report& m) {
  for (const models::NodeGroupReport& g : r.mixed.groups) {
    tp::Report::Mixed::Group& x = *m.mutable_mixed()->add_groups();
    x.set_node_template(g.node_template);
    x.set_gpu(g.gpu);
    x.set_first_node(g.first_node);
    x.set_num_nodes(g.num_nodes);
  }
  for (const models::StageTimeReport& s : r.mixed.stages) {
    tp::Report::Mixed::Stage& x = *m.mutable_mixed()->add_stages();
    x.set_stage(s.stage);
    x.set_node_group(s.node_group);
    x.set_gpu(s.gpu);
    x.set_layers(s.layers);
    x.set_compute_s_per_micro_batch(s.compute_s_per_micro_batch);
    x.set_memory_peak_bytes(s.memory_peak_bytes);
    x.set_memory_capacity_bytes(s.memory_capacity_bytes);
    x.set_oom(s.oom);
  }
}

/// The whole report as a message: every scalar row of the table, then the lists.
tp::Report report_to_proto(const models::Report& r) {
  tp::Report m;
  for (const ResolvedField& f : resolved_fields()) {
    if (const std::optional<FieldValue> value = f.row->value(r))
      detail::set_field(detail::mutable_parent_of(m, f.chain), f.chain.back(), *value);
  }
  busiest_links_to_proto(r, m);
  causes_to_proto(r, m);
  power_lists_to_proto(r, m);
  thermal_gpus_to_proto(r, m);
  folding_classes_to_proto(r, m);
  mixed_lists_to_proto(r, m);
  for (const std::string& d : r.drained_nodes) m.mutable_drained()->add_node(d);
  overrides_to_proto(r, m);
  return m;
}

}  // namespace

std::string report_to_json(const models::Report& report) {
  return detail::message_to_json(report_to_proto(report), true, "report_to_json");
}

std::string overrides_to_json(const models::OverridesReport& ov) {
  models::Report r;
  r.overrides = ov;
  return detail::message_to_json(report_to_proto(r).overrides(), true, "overrides_to_json", false);
}

}  // namespace traincast::io
