#include "models/planner/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace traincast::models::planner {
namespace {

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string seconds(double s) {
  const double a = std::fabs(s);
  if (a >= 1.0) return fixed(s, 2) + " s";
  if (a >= 1e-3) return fixed(s * 1e3, 1) + " ms";
  return fixed(s * 1e6, 0) + " us";
}

std::string gib(double bytes) { return fixed(bytes / 1073741824.0, 1) + " GiB"; }

std::string versus(const char* what, int other, int winner) {
  return std::string(what) + " " + std::to_string(other) + " vs " + std::to_string(winner);
}

void add(std::string& reason, const std::string& part) {
  if (part.empty()) return;
  if (!reason.empty()) reason += "; ";
  reason += part;
}

double ideal_bubble(const Layout& l, int micro_batches) {
  return micro_batches > 0 ? static_cast<double>(l.pp - 1) / (l.virtual_stages * micro_batches) : 0.0;
}

std::string pipeline_form(const Layout& l, int micro_batches) {
  std::string s = "PP " + std::to_string(l.pp);
  if (l.virtual_stages > 1) s += " x " + std::to_string(l.virtual_stages) + " chunks";
  return s + ", " + std::to_string(micro_batches) + " micro-batches";
}

/// Recomputed FLOPs as a fraction of model FLOPs (0 when nothing is re-run, e.g. selective
/// recomputation with flash attention).
double recomputed_fraction(const Report& r) {
  return r.model_flops_per_iteration > 0 ? r.hardware_flops_per_iteration / r.model_flops_per_iteration - 1 : 0.0;
}

/// `slower`: whether the other layout's compute is longer than the winner's; an efficiency remark
/// is given only where it points the way the compute moved (a TP 8 layout with less compute than
/// a TP 4 one owes it to something else, e.g. its stages' layers).
std::string compute_reason(const PlanEntry& oe, const PlanEntry& we, const Scenario& base, bool slower) {
  const Layout& o = oe.layout;
  const Layout& w = we.layout;
  std::string r;
  auto remark = [&](bool other_less_efficient, const char* less, const char* more) {
    return std::string(other_less_efficient == slower ? (other_less_efficient ? less : more) : "");
  };
  if (o.recompute != w.recompute && std::fabs(recomputed_fraction(oe.report) - recomputed_fraction(we.report)) > 1e-9)
    add(r, std::string("recompute ") + recompute_name(o.recompute) + " vs " + recompute_name(w.recompute) +
               " (backward re-runs " + fixed(100 * recomputed_fraction(oe.report), 0) + "% vs " +
               fixed(100 * recomputed_fraction(we.report), 0) + "% of the model FLOPs)");
  if (o.micro_batch_size != w.micro_batch_size)
    add(r, versus("micro-batch", o.micro_batch_size, w.micro_batch_size) +
               remark(o.micro_batch_size < w.micro_batch_size,
                      " (smaller GEMMs, lower efficiency, more kernel launches)", " (larger GEMMs)"));
  if (o.tp != w.tp)
    add(r, versus("TP", o.tp, w.tp) +
               remark(o.tp > w.tp, " (each GEMM split more ways runs less efficiently)", " (wider GEMMs per GPU)"));
  if (o.sequence_parallel != w.sequence_parallel)
    add(r, o.sequence_parallel ? "SP splits LayerNorm and dropout across TP ranks"
                               : "without SP, LayerNorm and dropout run on every TP rank");
  const int o_layers = max_stage_layers(o, base), w_layers = max_stage_layers(w, base);
  if (o.uneven_stages)
    add(r, "uneven stages: the first stages carry one more layer and set the pace");
  else if ((o.pp != w.pp || o_layers != w_layers) && !w.uneven_stages)
    add(r, versus("PP", o.pp, w.pp) + ": " + std::to_string(o_layers) + " vs " + std::to_string(w_layers) +
               (o_layers * o.pp == base.model.num_layers && w_layers * w.pp == base.model.num_layers
                    ? " layers per stage"
                    : " layers on the fullest stage") +
               " beside the first stage's embedding and the last one's output layer");
  return r;
}

std::string tp_reason(const Layout& o, const Layout& w, int gpn) {
  std::string r;
  if (o.tp > gpn && w.tp <= gpn)
    add(r, "TP " + std::to_string(o.tp) + " spans " + std::to_string(o.tp / gpn) + " nodes (" + std::to_string(gpn) +
               " GPUs per node): its collectives leave NVLink for the NICs");
  else if (w.tp > gpn && o.tp <= gpn)
    add(r, "TP " + std::to_string(o.tp) + " stays inside a node (NVLink) while TP " + std::to_string(w.tp) +
               " crosses nodes");
  else if (o.tp != w.tp)
    add(r, versus("TP", o.tp, w.tp));
  if (o.micro_batch_size != w.micro_batch_size)
    add(r, versus("micro-batch", o.micro_batch_size, w.micro_batch_size) + " (message size and count)");
  if (o.sequence_parallel != w.sequence_parallel)
    add(r, o.sequence_parallel ? "SP: reduce-scatter + all-gather instead of all-reduce"
                               : "no SP: all-reduce instead of reduce-scatter + all-gather");
  if (o.recompute == Recompute::full && w.recompute != Recompute::full)
    add(r, "full recomputation repeats the forward TP collectives");
  return r;
}

std::string dp_reason(const PlanEntry& o, const PlanEntry& w) {
  std::string r;
  if (o.layout.dp != w.layout.dp) add(r, versus("DP", o.layout.dp, w.layout.dp));
  if (o.layout.tp * o.layout.pp != w.layout.tp * w.layout.pp)
    add(r, "gradients per GPU " + gib(o.memory.grads_bytes) + " vs " + gib(w.memory.grads_bytes));
  if (o.layout.zero_stage != w.layout.zero_stage)
    add(r, o.layout.zero_stage > w.layout.zero_stage
               ? "ZeRO-1 adds a parameter all-gather after the optimizer step"
               : "ZeRO-0 all-reduces whole gradients where ZeRO-1 reduce-scatters them");
  return r;
}

std::string pp_reason(const PlanEntry& o, const PlanEntry& w) {
  std::string r;
  if (o.layout.pp != w.layout.pp) add(r, versus("PP", o.layout.pp, w.layout.pp));
  if (o.layout.virtual_stages != w.layout.virtual_stages)
    add(r,
        versus("chunks per GPU", o.layout.virtual_stages, w.layout.virtual_stages) + " (more sends per micro-batch)");
  if (o.report.micro_batches != w.report.micro_batches)
    add(r, versus("micro-batches", o.report.micro_batches, w.report.micro_batches));
  return r;
}

std::string bubble_reason(const PlanEntry& o, const PlanEntry& w) {
  const Layout &ol = o.layout, &wl = w.layout;
  if (ol.pp == wl.pp && ol.virtual_stages == wl.virtual_stages && o.report.micro_batches == w.report.micro_batches)
    return ol.pp > 1 ? "same pipeline shape; the difference is waiting on other stages' communication" : "";
  const double ideal_o = ideal_bubble(ol, o.report.micro_batches), ideal_w = ideal_bubble(wl, w.report.micro_batches);
  std::string r = pipeline_form(ol, o.report.micro_batches) + " vs " + pipeline_form(wl, w.report.micro_batches) +
                  "; ideal 1F1B bubble (p-1)/(v*m) " + fixed(100 * ideal_o, 1) + "% vs " + fixed(100 * ideal_w, 1) +
                  "% of compute";
  const double delta = o.report.breakdown.pipeline_bubble_s - w.report.breakdown.pipeline_bubble_s;
  if ((delta > 0) != (ideal_o > ideal_w)) r += "; the rest is waiting on other stages (longer stages, communication)";
  return r;
}

std::string optimizer_reason(const PlanEntry& o, const PlanEntry& w) {
  std::string r;
  if (o.layout.zero_stage != w.layout.zero_stage)
    add(r, o.layout.zero_stage > w.layout.zero_stage ? "ZeRO-1 shards the optimizer step over DP"
                                                     : "ZeRO-0 updates every parameter on every DP rank");
  if (o.layout.tp * o.layout.pp != w.layout.tp * w.layout.pp)
    add(r, versus("TP x PP", o.layout.tp * o.layout.pp, w.layout.tp * w.layout.pp) + " (parameters per GPU)");
  return r;
}

/// The slower GPU each layout's breakdown waited for, e.g. "slowest: node 0 GPU 4 (thermal)".
std::string straggler_reason(const PlanEntry& o, const PlanEntry& w, const Scenario& base) {
  std::string r;
  for (const PlanEntry* e : {&o, &w}) {
    const StragglerReport& s = e->report.straggler;
    if (!s.found) continue;
    add(r, to_string(e->layout, base) + ": slowest node " + std::to_string(s.node) + " GPU " +
               std::to_string(s.local_gpu) + " (" + s.cause + ", SM clock " + fixed(s.sm_clock_mhz, 0) + " MHz)");
  }
  return r;
}

/// The EP group's ranks lie TP apart (Megatron's order), so its all-to-all spans tp x ep GPUs.
std::string ep_reason(const Layout& o, const Layout& w) {
  return o.tp == w.tp ? std::string()
                      : versus("TP", o.tp, w.tp) + ": the EP group's ranks lie TP apart, spanning TP x EP GPUs";
}

}  // namespace

Explanation explain_difference(const PlanEntry& winner, const PlanEntry& other, int gpus_per_node,
                               const Scenario& scenario) {
  if (gpus_per_node < 1 || scenario.model.num_layers < 1)
    throw std::invalid_argument("explain_difference: gpus_per_node and the model's num_layers must be >= 1");
  if (!winner.simulated || !winner.error.empty() || !other.simulated || !other.error.empty())
    throw std::invalid_argument("explain_difference: both layouts must have been simulated successfully");
  const TimeBreakdown& a = winner.report.breakdown;
  const TimeBreakdown& b = other.report.breakdown;
  const double base = winner.report.iteration_time_s;
  const Layout& ol = other.layout;
  const Layout& wl = winner.layout;
  std::vector<ComponentDelta> all = {
      {"compute", b.compute_s - a.compute_s, 0, compute_reason(other, winner, scenario, b.compute_s > a.compute_s)},
      {"exposed TP communication", b.tp_comm_exposed_s - a.tp_comm_exposed_s, 0, tp_reason(ol, wl, gpus_per_node)},
      {"exposed DP communication", b.dp_comm_exposed_s - a.dp_comm_exposed_s, 0, dp_reason(other, winner)},
      {"exposed PP send/recv", b.pp_comm_exposed_s - a.pp_comm_exposed_s, 0, pp_reason(other, winner)},
      {"pipeline bubble", b.pipeline_bubble_s - a.pipeline_bubble_s, 0, bubble_reason(other, winner)},
      {"optimizer step", b.optimizer_s - a.optimizer_s, 0, optimizer_reason(other, winner)},
      {"waiting for slower GPUs (straggler)", b.straggler_wait_s - a.straggler_wait_s, 0,
       straggler_reason(other, winner, scenario)},
      {"exposed EP all-to-all", b.ep_comm_exposed_s - a.ep_comm_exposed_s, 0, ep_reason(ol, wl)},
      {"exposed CP send/recv", b.cp_comm_exposed_s - a.cp_comm_exposed_s, 0, ""},
      {"CPU offload", b.offload_s - a.offload_s, 0, ""},
      {"exposed input copies", b.input_copy_exposed_s - a.input_copy_exposed_s, 0, ""},
      {"storage stall", b.storage_stall_s - a.storage_stall_s, 0, ""},
  };
  for (ComponentDelta& c : all) c.percent = base > 0 ? 100.0 * c.delta_s / base : 0.0;
  // Losses first (largest first), then gains (largest first); stable for equal values.
  std::stable_sort(all.begin(), all.end(), [](const ComponentDelta& x, const ComponentDelta& y) {
    const bool xl = x.delta_s > 0, yl = y.delta_s > 0;
    if (xl != yl) return xl;
    return std::fabs(x.delta_s) > std::fabs(y.delta_s);
  });
  // Shown: a component worth 0.5 % of the iteration, or a tenth of the difference explained (a
  // 0.035 s TP part of a 0.091 s difference was left out at 0.2 % of 14 s).
  Explanation e;
  const double difference_s = std::fabs(other.report.iteration_time_s - base);
  for (const ComponentDelta& c : all)
    if (std::fabs(c.percent) >= 0.5 || (c.delta_s != 0 && std::fabs(c.delta_s) >= 0.1 * difference_s) ||
        (e.components.empty() && c.delta_s != 0))
      e.components.push_back(c);

  const double slower_pct = base > 0 ? 100.0 * (other.report.iteration_time_s - base) / base : 0.0;
  e.headline = to_string(ol, scenario) + " is " + fixed(slower_pct, 1) + "% slower (" +
               seconds(other.report.iteration_time_s) + " vs " + seconds(base) + " per iteration)";
  // The components with their first reason, e.g. "+12.0% pipeline bubble (PP 16 vs 8)".
  std::string parts;
  for (const ComponentDelta& c : e.components) {
    // Appended piece by piece: GCC 12's -Wrestrict misfires on "literal" + std::string chains here.
    std::string part = c.percent >= 0 ? "+" : "";
    part += fixed(c.percent, 1);
    part += "% ";
    part += c.component;
    const std::string first = c.reason.substr(0, c.reason.find(';'));
    if (!first.empty()) part += " (" + first + ")";
    parts += (parts.empty() ? ": " : ", ") + part;
  }
  e.headline += parts;
  return e;
}

}  // namespace traincast::models::planner
