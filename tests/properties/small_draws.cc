// Small collectives and their properties (small_draws.h).

#include "tests/properties/small_draws.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "tests/properties/property_harness.h"

namespace traincast::properties {
namespace {

int nics_drawn(const NetDraw& d) { return d.nics_per_node; }

/// (few, many): the draw's NIC count against one more (7 against 8 at 8).
std::pair<int, int> nic_step(const NetDraw& d) {
  const int n = nics_drawn(d);
  return n >= 8 ? std::pair{7, 8} : std::pair{n, n + 1};
}

CheckResult more_nics_small(const NetDraw& d) {
  const auto [few, many] = nic_step(d);
  NetDraw a = d, b = d;
  a.nics_per_node = few;
  b.nics_per_node = many;
  return monotone(d, std::to_string(few) + " NICs", run_net(a), std::to_string(many) + " NICs", run_net(b));
}
Sides more_nics_small_side(const NetDraw& d) {
  const auto [few, many] = nic_step(d);
  return {"--set cluster.nics_per_node=" + std::to_string(few), "--set cluster.nics_per_node=" + std::to_string(many)};
}

/// NICs next to their GPUs (affine) never slower than every NIC on the other socket: NCCL gives
/// each GPU its closest NICs (ncclTopoGetLocalNet), so a worse placement can only cost.
CheckResult affine_never_slower(const NetDraw& d) {
  NetDraw worse = d, affine = d;
  worse.nic_placement = "other_socket";
  affine.nic_placement = "";
  return monotone(d, "nic_placement other_socket", run_net(worse), "affine", run_net(affine));
}
Sides affine_side(const NetDraw&) { return {"--set cluster.nic_placement=other_socket", ""}; }

/// 2 S never faster than S. NCCL's channel cut (nccl_channel_cut) keeps channels in steps of
/// channels x threads x threshold bytes, so where 2 S keeps more than twice the channels of S each
/// channel moves less at 2 S: a step NCCL's kernels take too (docs/accuracy.md, "NCCL's channel
/// cut"), not checked.
/// Checked over kDoublings doublings from the draw's size (1 KiB-1 MiB, so up to 16 MiB, where
/// the tuner leaves LL), each against the last; the first that fails is the violation.
constexpr int kDoublings = 4;

CheckResult bigger_message_never_faster(const NetDraw& d) {
  NetDraw at = d;
  NetOutcome last = run_net(d);
  CheckResult r = not_applicable();
  for (int k = 0; k < kDoublings; ++k) {
    NetDraw big = at;
    big.bytes = 2 * at.bytes;
    const NetOutcome next = run_net(big);
    if (next.kept_channels <= 2 * last.kept_channels) {
      r = monotone(d, fmt(big.bytes) + " B", next, fmt(at.bytes) + " B", last);
      if (r.violated) return r;
    }
    at = big;
    last = next;
  }
  return r;
}
Sides bigger_message_side(const NetDraw& d) {
  return {"-b " + fmt(d.bytes) + " -e " + fmt(d.bytes * (1 << kDoublings)) + " -f 2", ""};
}

/// The predicted time the choice weighs (latency + bytes / the run's bandwidth at the channels
/// NCCL's cut keeps, the least over the algorithms and protocols; CollectiveChoice::choice_seconds)
/// never falls when the size doubles: each candidate's time grows with the size, and so does
/// their least, except where the cut keeps more than twice the channels at 2 S (as
/// bigger_message_never_faster: each channel moves less there).
CheckResult tuner_time_grows_with_size(const NetDraw& d) {
  NetDraw big = d;
  big.bytes = 2 * d.bytes;
  const NetOutcome small_run = run_net(d), big_run = run_net(big);
  CheckResult r;
  if (big_run.kept_channels > 2 * small_run.kept_channels) return not_applicable();
  r.detail = fmt(d.bytes) + " B: tuner " + fmt(small_run.tuner_s * 1e6) + " us (" + small_run.choice + "); " +
             fmt(big.bytes) + " B: tuner " + fmt(big_run.tuner_s * 1e6) + " us (" + big_run.choice + ")";
  r.violated = excess(big_run.tuner_s, small_run.tuner_s) > kCollectiveStrict;
  return r;
}

const NetProperty& named(const std::string& name) {
  for (const NetProperty& p : net_properties())
    if (p.name == name) return p;
  throw std::logic_error("no net property " + name);
}

}  // namespace

NetDraw draw_small(int index) {
  Rng rng = draw_rng("small", index);
  NetDraw d;
  d.id = draw_id("small", index);
  d.node_template = rng.pick(std::vector<std::string>{"dgx_h100", "dgx_a100", "hgx_h200", "pcie_8gpu_2socket",
                                                      "pcie_8gpu_2socket_h100_nvlink_bridge"});
  d.nics_per_node = rng.uniform(1, 8);
  d.num_nodes = rng.uniform(2, 4);
  if (rng.chance(0.3)) d.nic_placement = "other_socket";
  if (rng.chance(0.4)) {
    d.fabric_kind = "rail_optimized";
  } else {
    d.nodes_per_leaf = rng.pick(std::vector<int>{1, 2});
    d.oversubscription = rng.pick(std::vector<double>{1.0, 1.5, 2.0, 3.0});
  }
  d.op = rng.pick(std::vector<std::string>{"all_reduce", "all_gather", "reduce_scatter"});
  d.bytes = std::ldexp(1.0, rng.uniform(10, 20));  // 1 KiB .. 1 MiB
  if (rng.chance(0.25)) {
    d.algorithm = "ring";
    d.protocol = rng.pick(std::vector<std::string>{"ll", "ll128", "simple"});
  }
  return d;
}

const std::vector<NetProperty>& small_properties() {
  static const std::vector<NetProperty> p{
      {"more_nics_small", more_nics_small, more_nics_small_side},
      {"affine_never_slower", affine_never_slower, affine_side},
      {"bigger_message_never_faster", bigger_message_never_faster, bigger_message_side},
      {"tuner_time_grows_with_size", tuner_time_grows_with_size, bigger_message_side},
      named("less_oversubscription"),
      named("faster_nic"),
      named("failed_nic_never_faster"),
      named("slowed_nic_never_faster"),
  };
  return p;
}

}  // namespace traincast::properties
