// Profiles and measurement files. See profile_io.h.

#include "models/io/profile_io.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <google/protobuf/text_format.h>

#include "models/collectives/nccl_tests.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/io/file_kind.h"
#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/scenario_io_internal.h"
#include "models/io/suggest.h"
#include "traincast.pb.h"

namespace traincast::io {
namespace {

namespace pb = google::protobuf;
namespace tp = traincast::proto;
using detail::PathStep;

constexpr const char* kLinkNames[6] = {"other", "nvlink", "pcie", "socket", "nic", "fabric"};

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// Positions errors at field paths of one parsed message.
class Where {
 public:
  Where(const pb::Message& m, const detail::SourceMap& map, std::string_view origin, std::vector<std::string>& errors)
      : m_(m), map_(map), origin_(origin), errors_(errors) {}
  void error(const std::string& path, const std::string& what) {
    std::vector<PathStep> steps;
    const detail::SourcePos pos =
        detail::resolve_path(m_.GetDescriptor(), path, steps, nullptr) ? map_.locate(steps) : detail::SourcePos{1, 1};
    errors_.push_back(detail::format_pos(origin_, pos) + ": " + path + ": " + what);
  }
  /// lo < v <= hi (lo_open) or lo <= v <= hi.
  bool range(const std::string& path, double v, double lo, double hi, bool lo_open) {
    if (std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi) return true;
    error(path, "got " + num(v) + " (expected a number in " + (lo_open ? "(" : "[") + num(lo) + ", " + num(hi) + "])");
    return false;
  }
  /// The integer field at `path` within its own range (int_ranges.h, the table the parser's
  /// messages quote too), else "got V" / "not set" (expected that range).
  bool int_field(const std::string& path, std::int64_t value, bool present = true) {
    std::vector<PathStep> steps;
    if (!detail::resolve_path(m_.GetDescriptor(), path, steps, nullptr))
      throw std::logic_error("Where::int_field: no field " + path);
    const detail::IntRange r = detail::int_range(steps.back().field);
    if (present && value >= r.minimum && value <= r.maximum) return true;
    error(path, (present ? "got " + std::to_string(value) : std::string("not set")) + " (expected " +
                    detail::expected_integer(steps.back().field) + ")");
    return false;
  }
  /// A finite v > 0: a scale multiplies a modelled time or rate and has no physical bound of its own
  /// (the bounds are on the efficiencies it multiplies); 0, negative or not finite is nonsense.
  bool positive(const std::string& path, double v) {
    if (std::isfinite(v) && v > 0) return true;
    error(path, "got " + num(v) + " (expected a finite number > 0)");
    return false;
  }
  /// "file:line:col" of field `path` (line 1 when absent).
  std::string position(const std::string& path) const {
    std::vector<PathStep> steps;
    const detail::SourcePos pos =
        detail::resolve_path(m_.GetDescriptor(), path, steps, nullptr) ? map_.locate(steps) : detail::SourcePos{1, 1};
    return detail::format_pos(origin_, pos);
  }
  void required(const std::string& path, bool present) {
    if (!present) error(path, "not set (required)");
  }

 private:
  const pb::Message& m_;
  const detail::SourceMap& map_;
  std::string_view origin_;
  std::vector<std::string>& errors_;
};

std::string idx(const std::string& field, int i) { return field + "[" + std::to_string(i) + "]"; }

bool precision_from(int number, models::Precision& out) {
  if (number < 0 || number > 4) return false;
  out = static_cast<models::Precision>(number);
  return true;
}

models::NcclTestsOp nccl_op_of(models::CollectiveOp op) {
  switch (op) {
    case models::CollectiveOp::all_reduce:
      return models::NcclTestsOp::all_reduce;
    case models::CollectiveOp::all_gather:
      return models::NcclTestsOp::all_gather;
    case models::CollectiveOp::reduce_scatter:
      return models::NcclTestsOp::reduce_scatter;
    case models::CollectiveOp::all_to_all:
      return models::NcclTestsOp::alltoall;
    case models::CollectiveOp::broadcast:
      return models::NcclTestsOp::broadcast;
    case models::CollectiveOp::reduce:
      return models::NcclTestsOp::reduce;
    case models::CollectiveOp::send_recv:
      return models::NcclTestsOp::sendrecv;
  }
  return models::NcclTestsOp::all_reduce;
}

void parse_and_throw(std::string_view text, std::string_view origin, Format format, pb::Message& message,
                     detail::ReadOutcome& read) {
  if (text.size() > kMaxInputBytes) {
    throw ScenarioError({std::string(origin) + ": input too large (" + std::to_string(text.size()) +
                         " bytes; expected at most " + std::to_string(kMaxInputBytes) + ")"});
  }
  read = detail::read_message(text, origin, format, message);
  if (!read.errors.empty()) {
    if (auto other = detail::wrong_kind_message(text, origin, format, message.GetDescriptor()))
      throw ScenarioError({*other});
    throw ScenarioError(std::move(read.errors));
  }
}

/// What the profile says about itself: base (resolved from this file's directory when it is a
/// scenario file), base_set overrides, gpu, created_by, fit_options and source files.
void read_provenance(const tp::Profile& m, std::string_view origin, Where& w, models::CalibrationProfile& p) {
  p.origin = std::string(origin);
  p.base = m.base();
  p.base_path = p.base;
  if (m.has_base()) {
    p.base_where = w.position("base");
    // A scenario-file base (not a catalog GPU or node template) resolves from this file's directory
    // (the working directory for a pipe: relative_base_dir).
    const auto gpus = models::gpu_names();
    const auto templates = models::node_template_names();
    const bool catalog = std::find(gpus.begin(), gpus.end(), p.base) != gpus.end() ||
                         std::find(templates.begin(), templates.end(), p.base) != templates.end();
    const std::filesystem::path rel(p.base);
    if (!catalog && !p.base.empty() && rel.is_relative())
      p.base_path =
          (std::filesystem::path(detail::relative_base_dir(std::string(origin))) / rel).lexically_normal().string();
  }
  for (int i = 0; i < m.base_set_size(); ++i) {
    const std::string& set = m.base_set(i);
    const std::size_t eq = set.find('=');
    if (set.rfind("cluster.", 0) != 0 || eq == std::string::npos || eq + 1 == set.size()) {
      w.error(idx("base_set", i), "got \"" + detail::clip(set) +
                                      "\" (expected a cluster.FIELD=VALUE override as `--set` takes, e.g. "
                                      "cluster.pcie_p2p=false)");
      continue;
    }
    p.base_sets.push_back(set);
  }
  p.gpu = m.gpu();
  p.created_by = m.created_by();
  p.fit_options = m.fit_options();
  for (const tp::ProfileSource& s : m.source()) {
    p.sources.push_back({s.path(), s.sha256(), s.kind(), s.points_used(), s.points_skipped()});
  }
}

/// Errors at the line where `text` ends for a file with no fitted field, or one that
/// `traincast calibrate fit` wrote (created_by) without its end_of_profile line: cut short.
void check_complete(const tp::Profile& m, std::string_view text, std::string_view origin, Where& w,
                    std::vector<std::string>& errors) {
  // Cut short or empty: the line where the text ends.
  const int last_line = std::max(
      1, static_cast<int>(std::count(text.begin(), text.end(), '\n')) + (!text.empty() && text.back() != '\n' ? 1 : 0));
  const bool overlays = m.has_memory_efficiency() || m.has_kernel_fixed_s() || m.has_gemm_fixed_s() ||
                        m.gemm_surface_size() > 0 || m.gemm_point_size() > 0 || m.link_efficiency_size() > 0 ||
                        m.has_latency_scale() || m.collective_size() > 0 || m.has_pcie_duplex_efficiency() ||
                        m.has_power_thermal();
  if (!overlays) {
    errors.push_back(detail::format_pos(origin, {last_line, 1}) +
                     ": no fitted field (expected at least one of: memory_efficiency, kernel_fixed_s, "
                     "gemm_fixed_s, gemm_surface, gemm_point, link_efficiency, latency_scale, collective, "
                     "pcie_duplex_efficiency, power_thermal; an empty or cut-short file?)");
  }
  if (m.has_end_of_profile() && !m.end_of_profile()) {
    // Written false by hand: the marker only says the file is whole; false means nothing.
    w.error("end_of_profile",
            "false (expected true, the last line `traincast calibrate fit` writes to say the file "
            "is whole, or no end_of_profile line in a hand-written profile)");
  } else if (m.has_created_by() && !m.end_of_profile()) {
    // calibrate fit writes end_of_profile last (highest field number): without it, cut short.
    errors.push_back(detail::format_pos(origin, {last_line, 1}) +
                     ": end_of_profile: not set where the file ends (cut short? `traincast calibrate fit` writes "
                     "`end_of_profile: true` as its last line)");
  }
}

/// fitted_on (catalog GPU and node template, node count) and gpu: known catalog names; gpu set
/// when compute fields are.
void read_fitted_on_and_gpu(const tp::Profile& m, Where& w, models::CalibrationProfile& p) {
  if (m.has_fitted_on()) {
    const tp::ProfileSystem& f = m.fitted_on();
    p.fitted_on = {f.gpu(), f.node_template(), f.num_nodes(), f.nic(), f.gpus()};
    if (f.has_gpu()) {
      try {
        models::find_gpu(f.gpu());
      } catch (const std::exception&) {
        w.error("fitted_on.gpu", "unknown GPU \"" + detail::clip(f.gpu()) + "\"" +
                                     detail::did_you_mean(f.gpu(), models::gpu_names()) +
                                     " (expected a catalog GPU name; `traincast catalog` lists them)");
      }
    }
    if (f.has_node_template()) {
      const auto names = models::node_template_names();
      if (std::find(names.begin(), names.end(), f.node_template()) == names.end())
        w.error("fitted_on.node_template", "unknown node template \"" + detail::clip(f.node_template()) + "\"" +
                                               detail::did_you_mean(f.node_template(), names) +
                                               " (expected a catalog node template)");
    }
    if (f.has_num_nodes()) w.int_field("fitted_on.num_nodes", f.num_nodes());
  }
  if (!p.gpu.empty()) {
    try {
      models::find_gpu(p.gpu);
    } catch (const std::exception&) {
      w.error("gpu", "unknown GPU \"" + detail::clip(p.gpu) + "\"" + detail::did_you_mean(p.gpu, models::gpu_names()) +
                         " (expected a catalog GPU name; `traincast catalog` lists them)");
    }
  }
  const bool compute = m.has_memory_efficiency() || m.has_kernel_fixed_s() || m.has_gemm_fixed_s() ||
                       m.gemm_surface_size() > 0 || m.gemm_point_size() > 0;
  if (compute && p.gpu.empty()) w.error("gpu", "not set (required with compute fields: the GPU they were fitted on)");
}

/// Compute overlays: memory_efficiency, kernel_fixed_s, gemm_fixed_s, and the GEMM efficiency
/// surfaces with their points (one surface per dtype, each with points of its dtype).
void read_compute(const tp::Profile& m, Where& w, models::CalibrationProfile& p) {
  // Efficiencies are fractions of datasheet figures, at most what the hardware can do
  // (models/calibration/calibration_profile.h: kMaxLinkFraction for links and HBM, kMaxDuplexFraction for PCIe
  // both ways, kMaxGemmPeakFraction for GEMMs); `traincast calibrate fit` writes none beyond them.
  if (m.has_memory_efficiency() &&
      w.range("memory_efficiency", m.memory_efficiency(), 0, models::kMaxLinkFraction, true))
    p.memory_efficiency = m.memory_efficiency();
  if (m.has_kernel_fixed_s() && w.range("kernel_fixed_s", m.kernel_fixed_s(), 0, 1e-3, false))
    p.kernel_fixed_s = m.kernel_fixed_s();
  if (m.has_gemm_fixed_s() && w.range("gemm_fixed_s", m.gemm_fixed_s(), 0, 1e-3, false))
    p.gemm_fixed_s = m.gemm_fixed_s();
  const std::string dtypes = "fp32, tf32, fp16, bf16, fp8";
  for (int i = 0; i < m.gemm_surface_size(); ++i) {
    const tp::GemmSurface& g = m.gemm_surface(i);
    const std::string at = idx("gemm_surface", i);
    models::GemmEfficiencySurface s;
    w.required(at + ".dtype", g.has_dtype());
    if (g.has_dtype() && !precision_from(g.dtype(), s.dtype))
      w.error(at + ".dtype", "invalid value (expected one of: " + dtypes + ")");
    if (p.gemm.has(s.dtype) && g.has_dtype())
      w.error(at + ".dtype", "second surface for this dtype (expected one per dtype)");
    if (g.coefficients_size() != 10) {
      w.error(at + ".coefficients", "got " + std::to_string(g.coefficients_size()) + " numbers (expected 10)");
      continue;
    }
    bool finite = true;
    for (int j = 0; j < 10; ++j) {
      s.coefficients[j] = g.coefficients(j);
      finite = finite && std::isfinite(s.coefficients[j]);
    }
    if (!finite) w.error(at + ".coefficients", "not all finite (expected 10 finite numbers)");
    if (g.has_dtype()) p.gemm.surfaces.push_back(s);
  }
  for (int i = 0; i < m.gemm_point_size(); ++i) {
    const tp::GemmPoint& g = m.gemm_point(i);
    const std::string at = idx("gemm_point", i);
    models::GemmEfficiencyPoint q;
    w.required(at + ".dtype", g.has_dtype());
    if (g.has_dtype() && !precision_from(g.dtype(), q.dtype))
      w.error(at + ".dtype", "invalid value (expected one of: " + dtypes + ")");
    if (g.has_dtype() && !p.gemm.has(q.dtype))
      w.error(at + ".dtype", "no gemm_surface for this dtype (expected a surface before its points)");
    bool ok = w.range(at + ".m", g.m(), 0, models::kMaxGemmDimension, true);
    ok = w.range(at + ".n", g.n(), 0, models::kMaxGemmDimension, true) && ok;
    ok = w.range(at + ".k", g.k(), 0, models::kMaxGemmDimension, true) && ok;
    ok = w.range(at + ".efficiency", g.efficiency(), 0, models::kMaxGemmPeakFraction, true) && ok;
    q.m = g.m(), q.n = g.n(), q.k = g.k(), q.efficiency = g.efficiency();
    if (ok) p.gemm.points.push_back(q);
  }
  // A surface is evaluated within the box of its dtype's points (held at the edge beyond it) and
  // corrected towards them: without points a quadratic in log space would extrapolate without
  // bound (eta towards 0 for large GEMMs). The surface alone is not an efficiency: GemmEfficiency-
  // Table caps what the model uses at kMaxGemmPeakFraction, which the points respect.
  for (int i = 0; i < m.gemm_surface_size(); ++i) {
    const tp::GemmSurface& g = m.gemm_surface(i);
    models::Precision dtype{};
    if (!g.has_dtype() || !precision_from(g.dtype(), dtype) || !p.gemm.has(dtype) || g.coefficients_size() != 10 ||
        !std::all_of(g.coefficients().begin(), g.coefficients().end(), [](double c) { return std::isfinite(c); }))
      continue;  // reported above
    const bool points = std::any_of(m.gemm_point().begin(), m.gemm_point().end(),
                                    [&](const tp::GemmPoint& q) { return q.has_dtype() && q.dtype() == g.dtype(); });
    if (!points)
      w.error(idx("gemm_surface", i), "has no gemm_point of its dtype (expected the fit's points of " +
                                          std::string(models::precision_name(dtype)) +
                                          ": they bound the shapes the surface is evaluated at; without them it "
                                          "extrapolates without bound)");
  }
}

/// Link overlays: link_efficiency per link kind, latency_scale, pcie_duplex_efficiency.
void read_links(const tp::Profile& m, Where& w, models::CalibrationProfile& p) {
  for (int i = 0; i < m.link_efficiency_size(); ++i) {
    const tp::LinkEfficiencySpec& l = m.link_efficiency(i);
    const std::string at = idx("link_efficiency", i);
    int kind = -1;
    for (int k = 1; k < 6; ++k) {
      if (l.link() == kLinkNames[k]) kind = k;
    }
    if (kind < 0) {
      w.error(at + ".link", l.has_link() ? "unknown link kind \"" + detail::clip(l.link()) +
                                               "\" (expected one of: nvlink, pcie, socket, nic, fabric)"
                                         : "not set (expected one of: nvlink, pcie, socket, nic, fabric)");
      continue;
    }
    if (p.link_efficiency[kind]) w.error(at + ".link", "\"" + l.link() + "\" given twice (expected once per kind)");
    w.required(at + ".efficiency", l.has_efficiency());
    if (l.has_efficiency() && w.range(at + ".efficiency", l.efficiency(), 0, models::kMaxLinkFraction, true))
      p.link_efficiency[kind] = l.efficiency();
  }
  if (m.has_latency_scale() && w.positive("latency_scale", m.latency_scale())) p.latency_scale = m.latency_scale();
  if (m.has_pcie_duplex_efficiency() &&
      w.range("pcie_duplex_efficiency", m.pcie_duplex_efficiency(), 0, models::kMaxDuplexFraction, true))
    p.pcie_duplex_efficiency = m.pcie_duplex_efficiency();
}

/// One collective fit (collective[i], at = "collective[i]"): op, num_ranks, scales (overall and per
/// protocol), size corrections in increasing size; appended to p.collectives when all are valid
/// and no earlier fit has the same op and rank count.
void read_collective(const tp::CollectiveFitSpec& c, const std::string& at, Where& w, models::CalibrationProfile& p) {
  models::CollectiveFit f;
  bool ok = true;
  try {
    f.op = models::collective_op_of(models::parse_nccl_tests_op(c.op()));
  } catch (const std::invalid_argument& e) {
    w.error(at + ".op", c.has_op() ? e.what()
                                   : "not set (expected one of: all_reduce, all_gather, reduce_scatter, "
                                     "alltoall, broadcast, reduce, sendrecv)");
    ok = false;
  }
  if (!w.int_field(at + ".num_ranks", c.num_ranks(), c.has_num_ranks())) ok = false;
  f.num_ranks = c.num_ranks();
  if (c.has_latency_scale()) ok = w.positive(at + ".latency_scale", c.latency_scale()) && ok;
  if (c.has_bandwidth_scale()) ok = w.positive(at + ".bandwidth_scale", c.bandwidth_scale()) && ok;
  if (c.has_latency_scale()) f.latency_scale = c.latency_scale();
  if (c.has_bandwidth_scale()) f.bandwidth_scale = c.bandwidth_scale();
  // Per-protocol scales: absent, or exactly one per protocol (LL, LL128, Simple).
  static constexpr const char* kProtocolNames[3] = {"LL", "LL128", "Simple"};
  auto per_protocol = [&](const std::string& name, const pb::RepeatedField<double>& v, std::array<double, 3>& out) {
    if (v.empty()) return;
    if (v.size() != 3) {
      w.error(at + "." + name, "got " + std::to_string(v.size()) + " values (expected 3: LL, LL128, Simple)");
      ok = false;
      return;
    }
    for (int k = 0; k < 3; ++k) {
      if (std::isfinite(v[k]) && v[k] > 0) {
        out[static_cast<std::size_t>(k)] = v[k];
      } else {
        std::string field = at;
        field.append(".").append(name);
        w.error(field, "value " + std::to_string(k) + " (" + kProtocolNames[k] + "): got " + num(v[k]) +
                           " (expected a finite number > 0)");
        ok = false;
      }
    }
  };
  per_protocol("protocol_latency_scale", c.protocol_latency_scale(), f.protocol_latency_scale);
  per_protocol("protocol_bandwidth_scale", c.protocol_bandwidth_scale(), f.protocol_bandwidth_scale);
  f.alpha_s = c.alpha_s();
  f.busbw_gb_per_s = c.busbw_gb_per_s();
  for (int j = 0; j < c.size_correction_size(); ++j) {
    const tp::CollectiveSizePoint& s = c.size_correction(j);
    const std::string sat = at + "." + idx("size_correction", j);
    bool sok = w.range(sat + ".bytes", s.bytes(), 0, 1e15, true);
    sok = w.positive(sat + ".time_ratio", s.time_ratio()) && sok;
    if (sok && !f.size_correction.empty() && s.bytes() <= f.size_correction.back().bytes) {
      w.error(sat + ".bytes", "got " + num(s.bytes()) + " after " + num(f.size_correction.back().bytes) +
                                  " (expected sizes in increasing order)");
      sok = false;
    }
    if (sok) f.size_correction.push_back({s.bytes(), s.time_ratio()});
    ok = ok && sok;
  }
  if (ok && p.collective(f.op, f.num_ranks) != nullptr)
    w.error(at + ".op", "second fit for " + c.op() + " on " + std::to_string(f.num_ranks) + " ranks (expected one)");
  else if (ok)
    p.collectives.push_back(std::move(f));
}

/// power_thermal: the fitted idle power, compute-bound fraction and thermal RC, within range; gpu
/// set with them, idle power below its TDP.
void read_power_thermal(const tp::Profile& m, Where& w, models::CalibrationProfile& p) {
  if (m.has_power_thermal()) {
    const tp::PowerThermalFitSpec& t = m.power_thermal();
    models::PowerThermalOverlay& o = p.power_thermal;
    if (t.has_idle_w() && w.range("power_thermal.idle_w", t.idle_w(), 0, 2000, true)) o.idle_w = t.idle_w();
    if (t.has_compute_bound_fraction() &&
        w.range("power_thermal.compute_bound_fraction", t.compute_bound_fraction(), 0, 3, true))
      o.compute_bound_fraction = t.compute_bound_fraction();
    if (t.has_r_k_per_w() && w.range("power_thermal.r_k_per_w", t.r_k_per_w(), 0, 10, true))
      o.r_k_per_w = t.r_k_per_w();
    if (t.has_c_j_per_k() && w.range("power_thermal.c_j_per_k", t.c_j_per_k(), 0, 1e6, true))
      o.c_j_per_k = t.c_j_per_k();
    o.inlet_c = t.inlet_c();
    o.full_load_w = t.full_load_w();
    o.load_clock_fraction = t.load_clock_fraction();
    o.gpus = t.gpus();
    o.fitted_from = t.fitted_from();
    if (o.any() && p.gpu.empty())
      w.error("gpu", "not set (required with power_thermal fields: the GPU they were fitted on)");
    if (o.idle_w && !p.gpu.empty()) {
      try {
        const models::GpuSpec& g = models::find_gpu(p.gpu);
        if (*o.idle_w >= g.tdp_w)
          w.error("power_thermal.idle_w",
                  "got " + num(*o.idle_w) + " W (expected below the " + p.gpu + "'s TDP, " + num(g.tdp_w) + " W)");
      } catch (const std::exception&) {
      }  // unknown GPU: reported above
    }
  }
}

}  // namespace

std::shared_ptr<const models::CalibrationProfile> load_profile_text(std::string_view text, std::string_view origin,
                                                                    Format format) {
  tp::Profile m;
  detail::ReadOutcome read;
  parse_and_throw(text, origin, format, m, read);
  std::vector<std::string> errors;
  Where w(m, *read.source_map, origin, errors);
  auto p = std::make_shared<models::CalibrationProfile>();
  read_provenance(m, origin, w, *p);
  check_complete(m, text, origin, w, errors);
  read_fitted_on_and_gpu(m, w, *p);
  read_compute(m, w, *p);
  read_links(m, w, *p);
  for (int i = 0; i < m.collective_size(); ++i) {
    const tp::CollectiveFitSpec& c = m.collective(i);
    const std::string at = idx("collective", i);
    read_collective(c, at, w, *p);
  }
  read_power_thermal(m, w, *p);
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  return p;
}

namespace {

/// What a measurement file given where a profile belongs is ("an nccl-tests log", "a measurement
/// CSV"), or "" when the text does not look like one: an nccl-tests column header line
/// ("#  size  count  type ..."), or a first line of comma-separated names without the text
/// format's ':' and '{'.
std::string measurement_kind(std::string_view text) {
  std::size_t pos = 0;
  std::string_view first;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    std::istringstream words{std::string(line)};
    std::string a, b, c;
    words >> a >> b >> c;
    if (a == "#" && b == "size" && c == "count") return "an nccl-tests log";
    if (first.empty() && !a.empty() && a[0] != '#') first = line;
  }
  if (std::count(first.begin(), first.end(), ',') >= 2 && first.find(':') == std::string_view::npos &&
      first.find('{') == std::string_view::npos)
    return "a measurement CSV";
  return "";
}

}  // namespace

std::shared_ptr<const models::CalibrationProfile> load_profile_file(const std::string& path) {
  const InputText input = read_input(path);
  const Format format = input.format;
  const std::string& text = input.text;
  if (const std::string kind = measurement_kind(text); !kind.empty()) {
    // A measurement file where the profile belongs (`calibrate validate LOG LOG`): say so, not
    // the text format's errors on its first line.
    throw ScenarioError({path + ":1:1: this is " + kind +
                         ", not a calibration profile (expected a profile that `traincast calibrate fit` wrote; "
                         "`traincast calibrate validate PROFILE MEASUREMENTS...` takes the profile first)"});
  }
  return load_profile_text(text, path, format);
}

std::vector<std::string> profile_hardware_mismatch(const models::CalibrationProfile& p, const models::ClusterSpec& cs) {
  const models::NodeTemplate& node = models::cluster_node_template(cs);
  const std::string gpu = cs.gpu.empty() ? node.gpu : cs.gpu;
  const std::string nic = cs.nic.empty() ? node.nic : cs.nic;
  const std::string name = "profile " + (p.origin.empty() ? std::string("(in memory)") : p.origin);
  const models::ProfileSystem& f = p.fitted_on;
  const std::string fitted_gpu = f.gpu.empty() ? p.gpu : f.gpu;
  std::vector<std::string> out;
  if (!fitted_gpu.empty() && fitted_gpu != gpu) {
    out.push_back(name + " was fitted on GPU " + fitted_gpu + " but the scenario's GPU is " + gpu +
                  ": its efficiencies and scales were measured on the other GPU");
  }
  if (!f.node_template.empty() && f.node_template != cs.node_template) {
    out.push_back(name + " was fitted on node template " + f.node_template + " (" + std::to_string(f.num_nodes) +
                  " node(s)) but the scenario's is " + cs.node_template + " (" + std::to_string(cs.num_nodes) +
                  " node(s)): link efficiencies and collective scales were measured on the other system");
  } else if (!f.node_template.empty()) {
    const std::string fitted_nic = f.nic.empty() ? node.nic : f.nic;
    if (fitted_nic != nic)
      out.push_back(name + " was fitted with NIC " + fitted_nic + " but the scenario's NIC is " + nic +
                    ": its nic efficiency and collective scales were measured on the other NIC");
  }
  const models::GpuSpec& g = models::find_gpu(gpu);
  const char* const dtypes[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  std::vector<std::string> errors;
  for (const auto& s : p.gemm.surfaces) {
    const int d = static_cast<int>(s.dtype);
    const double peak = d == 0   ? g.peak_fp32_flops
                        : d == 1 ? g.peak_tf32_flops
                        : d == 2 ? g.peak_fp16_flops
                        : d == 3 ? g.peak_bf16_flops
                                 : g.peak_fp8_flops;
    if (!(peak > 0)) {
      std::string msg = p.origin;
      msg.append(": gemm_surface ").append(dtypes[d]).append(" (fitted on ");
      msg.append(fitted_gpu.empty() ? std::string("an unnamed GPU") : fitted_gpu);
      msg.append(") cannot apply: the scenario's GPU ").append(gpu).append(" has no dense ").append(dtypes[d]);
      msg.append(" peak (expected a profile fitted on ").append(gpu).append(", or one without that surface)");
      errors.push_back(std::move(msg));
    }
  }
  if (p.power_thermal.any() && p.gpu != gpu) {
    // The same refusal as the power model's (models/executor/power_thermal_setup.cc power_overlay),
    // made here so that it comes alone, not after the other-GPU warning above.
    errors.push_back(name + ": power_thermal was fitted on GPU \"" + p.gpu + "\" but the scenario's GPU is \"" + gpu +
                     "\" (expected a profile of the same GPU: idle and full-load power, R and C are the board's own)");
  }
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  return out;
}

namespace {

/// The profile as its schema's message (fields the profile does not hold left unset).
tp::Profile profile_message(const models::CalibrationProfile& p) {
  tp::Profile m;
  if (!p.base.empty()) m.set_base(p.base);
  if (!p.gpu.empty()) m.set_gpu(p.gpu);
  if (!p.created_by.empty()) m.set_created_by(p.created_by);
  if (!p.fit_options.empty()) m.set_fit_options(p.fit_options);
  for (const auto& s : p.sources) {
    tp::ProfileSource& o = *m.add_source();
    o.set_path(s.path);
    o.set_sha256(s.sha256);
    o.set_kind(s.kind);
    o.set_points_used(s.points_used);
    o.set_points_skipped(s.points_skipped);
  }
  if (p.memory_efficiency) m.set_memory_efficiency(*p.memory_efficiency);
  if (p.kernel_fixed_s) m.set_kernel_fixed_s(*p.kernel_fixed_s);
  if (p.gemm_fixed_s) m.set_gemm_fixed_s(*p.gemm_fixed_s);
  for (const auto& s : p.gemm.surfaces) {
    tp::GemmSurface& o = *m.add_gemm_surface();
    o.set_dtype(static_cast<tp::TrainingSpec::Precision>(s.dtype));
    for (double c : s.coefficients) o.add_coefficients(c);
  }
  for (const auto& q : p.gemm.points) {
    tp::GemmPoint& o = *m.add_gemm_point();
    o.set_dtype(static_cast<tp::TrainingSpec::Precision>(q.dtype));
    o.set_m(q.m);
    o.set_n(q.n);
    o.set_k(q.k);
    o.set_efficiency(q.efficiency);
  }
  for (int k = 1; k < 6; ++k) {
    if (!p.link_efficiency[k]) continue;
    tp::LinkEfficiencySpec& o = *m.add_link_efficiency();
    o.set_link(kLinkNames[k]);
    o.set_efficiency(*p.link_efficiency[k]);
  }
  if (p.latency_scale != 1.0) m.set_latency_scale(p.latency_scale);
  if (p.pcie_duplex_efficiency) m.set_pcie_duplex_efficiency(*p.pcie_duplex_efficiency);
  if (p.fitted_on != models::ProfileSystem{}) {
    tp::ProfileSystem& o = *m.mutable_fitted_on();
    if (!p.fitted_on.gpu.empty()) o.set_gpu(p.fitted_on.gpu);
    if (!p.fitted_on.node_template.empty()) o.set_node_template(p.fitted_on.node_template);
    if (p.fitted_on.num_nodes > 0) o.set_num_nodes(p.fitted_on.num_nodes);
    if (!p.fitted_on.nic.empty()) o.set_nic(p.fitted_on.nic);
    if (!p.fitted_on.gpus.empty()) o.set_gpus(p.fitted_on.gpus);
  }
  for (const std::string& set : p.base_sets) m.add_base_set(set);
  for (const auto& f : p.collectives) {
    tp::CollectiveFitSpec& o = *m.add_collective();
    o.set_op(std::string(models::nccl_tests_op_name(nccl_op_of(f.op))));
    o.set_num_ranks(f.num_ranks);
    o.set_latency_scale(f.latency_scale);
    o.set_bandwidth_scale(f.bandwidth_scale);
    const std::array<double, 3> ones{1.0, 1.0, 1.0};
    if (f.protocol_latency_scale != ones || f.protocol_bandwidth_scale != ones) {
      for (double v : f.protocol_latency_scale) o.add_protocol_latency_scale(v);
      for (double v : f.protocol_bandwidth_scale) o.add_protocol_bandwidth_scale(v);
    }
    for (const auto& s : f.size_correction) {
      tp::CollectiveSizePoint& c = *o.add_size_correction();
      c.set_bytes(s.bytes);
      c.set_time_ratio(s.time_ratio);
    }
    o.set_alpha_s(f.alpha_s);
    o.set_busbw_gb_per_s(f.busbw_gb_per_s);
  }
  const models::PowerThermalOverlay& pt = p.power_thermal;
  if (pt.any() || pt.full_load_w > 0) {
    tp::PowerThermalFitSpec& o = *m.mutable_power_thermal();
    if (pt.idle_w) o.set_idle_w(*pt.idle_w);
    if (pt.compute_bound_fraction) o.set_compute_bound_fraction(*pt.compute_bound_fraction);
    if (pt.r_k_per_w) o.set_r_k_per_w(*pt.r_k_per_w);
    if (pt.c_j_per_k) o.set_c_j_per_k(*pt.c_j_per_k);
    o.set_inlet_c(pt.inlet_c);
    o.set_full_load_w(pt.full_load_w);
    o.set_load_clock_fraction(pt.load_clock_fraction);
    o.set_gpus(pt.gpus);
    if (!pt.fitted_from.empty()) o.set_fitted_from(pt.fitted_from);
  }
  m.set_end_of_profile(true);  // the highest field number: printed last, so a cut-short file lacks it
  return m;
}

}  // namespace

std::string profile_to_json(const models::CalibrationProfile& profile) {
  return detail::message_to_json(profile_message(profile), false, "profile_to_json");
}

std::string profile_to_text(const models::CalibrationProfile& profile, const std::string& header_comment) {
  const tp::Profile m = profile_message(profile);
  pb::TextFormat::Printer printer;
  printer.SetUseShortRepeatedPrimitives(true);
  std::string body;
  printer.PrintToString(m, &body);
  std::string out;
  std::istringstream lines(header_comment);
  for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  return out + body;
}

models::MeasurementSet load_measurements_text(std::string_view text, std::string_view origin) {
  tp::Measurements m;
  detail::ReadOutcome read;
  parse_and_throw(text, origin, Format::text, m, read);
  std::vector<std::string> errors;
  Where w(m, *read.source_map, origin, errors);
  models::MeasurementSet out;
  out.gpu_name = m.machine().gpu_name();
  auto line_of = [&](const std::string& path) {
    std::vector<PathStep> steps;
    detail::resolve_path(m.GetDescriptor(), path, steps, nullptr);
    return std::string(origin) + ":" + std::to_string(read.source_map->locate(steps).line);
  };
  for (int i = 0; i < m.gemm_size(); ++i) {
    const tp::GemmMeasurement& g = m.gemm(i);
    const std::string at = idx("gemm", i);
    models::GemmSample s;
    const std::string& d = g.dtype();
    if (d == "fp32")
      s.dtype = models::Precision::fp32;
    else if (d == "tf32")
      s.dtype = models::Precision::tf32;
    else if (d == "fp16")
      s.dtype = models::Precision::fp16;
    else if (d == "bf16")
      s.dtype = models::Precision::bf16;
    else if (d == "fp8")
      s.dtype = models::Precision::fp8;
    else {
      w.error(at + ".dtype", "got \"" + detail::clip(d) + "\" (expected one of: fp32, tf32, fp16, bf16, fp8)");
      continue;
    }
    bool ok = w.range(at + ".m", static_cast<double>(g.m()), 0, models::kMaxGemmDimension, true);
    ok = w.range(at + ".n", static_cast<double>(g.n()), 0, models::kMaxGemmDimension, true) && ok;
    ok = w.range(at + ".k", static_cast<double>(g.k()), 0, models::kMaxGemmDimension, true) && ok;
    ok = w.range(at + ".time_s", g.time_s(), 0, 1e6, true) && ok;
    if (!ok) continue;
    s.m = static_cast<double>(g.m()), s.n = static_cast<double>(g.n()), s.k = static_cast<double>(g.k());
    s.time_s = g.time_s();
    s.where = line_of(at);
    out.gemm.push_back(s);
  }
  for (int i = 0; i < m.bandwidth_size(); ++i) {
    const tp::BandwidthMeasurement& b = m.bandwidth(i);
    const std::string at = idx("bandwidth", i);
    if (b.kind() < 1 || b.kind() > 6) {
      w.error(at + ".kind", "not set or invalid (expected one of: hbm_copy, hbm_read, hbm_write, h2d, d2h, d2d_peer)");
      continue;
    }
    bool ok = w.range(at + ".bytes", b.bytes(), 0, 1e15, true);
    ok = w.range(at + ".time_s", b.time_s(), 0, 1e6, true) && ok;
    if (!ok) continue;
    out.bandwidth.push_back(
        {static_cast<models::BandwidthSampleKind>(b.kind() - 1), b.size_bytes(), b.bytes(), b.time_s(), line_of(at)});
  }
  if (m.launch().has_back_to_back_kernel_s() &&
      w.range("launch.back_to_back_kernel_s", m.launch().back_to_back_kernel_s(), 0, 1, true))
    out.launch_back_to_back_s = m.launch().back_to_back_kernel_s();
  if (m.launch().has_empty_kernel_launch_s() &&
      w.range("launch.empty_kernel_launch_s", m.launch().empty_kernel_launch_s(), 0, 1, true))
    out.launch_empty_kernel_s = m.launch().empty_kernel_launch_s();
  for (int i = 0; i < m.collective_size(); ++i) {
    const tp::CollectiveMeasurement& c = m.collective(i);
    const std::string at = idx("collective", i);
    try {
      models::parse_nccl_tests_op(c.op());
    } catch (const std::invalid_argument& e) {
      w.error(at + ".op", e.what());
      continue;
    }
    bool ok = w.range(at + ".size_bytes", c.size_bytes(), 0, 1e15, false);
    ok = w.range(at + ".time_us", c.time_us(), 0, 1e12, true) && ok;
    if (c.has_num_ranks() && !w.int_field(at + ".num_ranks", c.num_ranks())) ok = false;
    if (!ok || c.size_bytes() == 0) continue;
    out.collectives.push_back({c.op(), c.num_ranks(), c.size_bytes(), c.time_us(), c.dtype(), line_of(at)});
  }
  // Burn samples (power vs load, thermal R and C). A sample NVML could not read (no power_w or
  // temperature_c) is skipped and counted; a value out of range, a missing time or phase, or a
  // time that does not increase for its GPU is an error.
  if (m.machine().has_sm_clock_max_mhz() &&
      w.range("machine.sm_clock_max_mhz", m.machine().sm_clock_max_mhz(), 0, 1e5, true))
    out.sm_clock_max_mhz = m.machine().sm_clock_max_mhz();
  if (m.machine().has_power_limit_w() && w.range("machine.power_limit_w", m.machine().power_limit_w(), 0, 1e4, true))
    out.power_limit_w = m.machine().power_limit_w();
  std::map<int, std::pair<double, int>> last_time;  // gpu -> (t_s, sample index) of its previous sample
  for (int i = 0; i < m.power_size(); ++i) {
    const tp::PowerSample& ps = m.power(i);
    const std::string at = idx("power", i);
    bool ok = true;
    if (ps.has_gpu() && !w.int_field(at + ".gpu", ps.gpu())) ok = false;
    if (!ps.has_t_s() || !std::isfinite(ps.t_s())) {
      w.error(at + ".t_s", ps.has_t_s() ? "got " + num(ps.t_s()) + " (expected a finite time [s])"
                                        : "not set (required: seconds since the burn started)");
      ok = false;
    }
    if (!ps.has_loaded()) {
      w.error(at + ".loaded", "not set (required: whether the burn GEMM ran at this sample)");
      ok = false;
    }
    if (ps.has_power_w()) ok = w.range(at + ".power_w", ps.power_w(), 0, 1e4, false) && ok;
    if (ps.has_temperature_c()) ok = w.range(at + ".temperature_c", ps.temperature_c(), -273.15, 200, true) && ok;
    if (ps.has_sm_clock_mhz()) ok = w.range(at + ".sm_clock_mhz", ps.sm_clock_mhz(), 0, 1e5, false) && ok;
    if (!ok) continue;
    const auto prev = last_time.find(ps.gpu());
    if (prev != last_time.end() && !(ps.t_s() > prev->second.first)) {
      w.error(at + ".t_s", "got " + num(ps.t_s()) + " s after " + num(prev->second.first) + " s at power[" +
                               std::to_string(prev->second.second) + "] of GPU " + std::to_string(ps.gpu()) +
                               " (expected increasing times per GPU)");
      continue;
    }
    last_time[ps.gpu()] = {ps.t_s(), i};
    if (!ps.has_power_w() || !ps.has_temperature_c()) {
      ++out.power_samples_skipped;
      continue;
    }
    models::PowerThermalSample q;
    q.gpu = ps.gpu();
    q.t_s = ps.t_s();
    q.power_w = ps.power_w();
    q.temperature_c = ps.temperature_c();
    q.sm_clock_mhz = ps.sm_clock_mhz();
    q.throttle_reasons = ps.throttle_reasons();
    q.loaded = ps.loaded();
    q.where = line_of(at);
    out.power.push_back(std::move(q));
  }
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  return out;
}

models::MeasurementSet load_measurements_file(const std::string& path) {
  return load_measurements_text(read_input_file(path), path);
}

}  // namespace traincast::io
