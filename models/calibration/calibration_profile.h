#pragma once
// Calibration profile (DESIGN §5): what `traincast calibrate fit` derives from measurements of one
// machine, as an overlay on the catalog's datasheet defaults, and what the models use when a
// scenario names a profile (ClusterSpec::profile). Plain structs: models/io reads and writes them
// as message Profile (models/io/traincast.proto); calibrate/fit produces them.
//
// How the models use a profile:
//  - compute (models/compute/compute_model.h): GEMM time = flops / (peak_dtype x eta(M, N, K)) with
//    eta from GemmEfficiencyTable when the profile has a surface for the dtype (the measured
//    times include launch, ramp and memory traffic: no fixed cost or memory bound is added); memory_efficiency,
//    kernel_fixed_s and gemm_fixed_s replace the defaults when set.
//  - collectives (models/collectives/collective_engine.h): link_efficiency replaces NCCL's per-link-kind
//    figure (LinkEfficiency) on the flow model's links; pcie_duplex_efficiency bounds a GPU PCIe
//    link loaded both ways by one collective (up + down); latency_scale multiplies NCCL's latency
//    terms; a CollectiveFit for the call's (op, group size) multiplies the latency by its
//    latency_scale (x the protocol's), the achievable bandwidth by its bandwidth_scale (x the
//    protocol's), and the whole time by its size
//    correction (interpolated in log size, as NCCL's own treeCorrectionFactor is a table over
//    log2 size).
//  - power and thermal (models/executor power_thermal_setup): power_thermal.idle_w replaces the
//    catalog idle power, compute_bound_fraction the tensor-core-bound u(a) of GpuPowerCurve,
//    r_k_per_w and c_j_per_k the default lumped RC (a scenario's own thermal.r_k_per_w /
//    thermal.c_j_per_k still win; airflow fractions still scale R). Fitted by
//    calibrate/fit/power_fit.h from traincast-bench's burn.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/spec/collective_op.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Physical limits of a profile's fractions of datasheet figures: calibrate/fit never writes a value
/// beyond them (it clips or refuses, calibrate/fit/README.md) and models/io/profile_io refuses a
/// profile that has one.
///
/// kMaxLinkFraction: the largest fraction of a link's datasheet line rate (per direction) that a
/// measurement may reach, and so the largest link_efficiency and memory_efficiency (HBM: the
/// datasheet bandwidth is its pin rate). A link cannot carry more than its line rate; 5% covers
/// nccl-tests' rounding of printed times (3-4 digits) and the model's protocol factors. The fit's
/// wrong-hardware check of collectives refuses a log above it (calibrate/fit/profile_fit.cc).
inline constexpr double kMaxLinkFraction = 1.05;
/// kMaxDuplexFraction: the largest pcie_duplex_efficiency (up + down <= D x one direction's line
/// rate): a full-duplex link carries at most its line rate each way, 2 x kMaxLinkFraction.
inline constexpr double kMaxDuplexFraction = 2 * kMaxLinkFraction;
/// kMaxGemmPeakFraction: the largest GEMM efficiency (measured FLOP/s / dense peak of the dtype).
/// Datasheet peaks are at the boost clock (H100 SXM 989.4 TFLOP/s bf16 = 132 SMs x 4096 FLOP/clock
/// x 1.83 GHz); the highest SM clock, 1.98 GHz, is 8% above, so a GEMM more than 10% above its peak
/// is mistimed or from another GPU.
inline constexpr double kMaxGemmPeakFraction = 1.10;

/// One GEMM shape's fitted efficiency: measured FLOP/s / dense peak of the dtype.
struct GemmEfficiencyPoint {
  Precision dtype = Precision::bf16;
  double m = 0, n = 0, k = 0;  ///< > 0; a batched GEMM of b matrices is folded into m (b x m)
  double efficiency = 0;       ///< (0, kMaxGemmPeakFraction] (above 1 at a clock above the datasheet's boost)
};

/// Per-dtype smooth surface ln(eta) = c . [1, x, y, z, x^2, y^2, z^2, xy, xz, yz] in x = ln m,
/// y = ln n, z = ln k (fitted robustly), plus the fit points' residuals, interpolated by inverse
/// squared distance in (ln m, ln n, ln k) over the 8 nearest points of the dtype.
struct GemmEfficiencySurface {
  Precision dtype = Precision::bf16;
  std::array<double, 10> coefficients{};
};

struct GemmEfficiencyTable {
  std::vector<GemmEfficiencySurface> surfaces;  ///< at most one per dtype
  std::vector<GemmEfficiencyPoint> points;      ///< measured points kept by the fit (outliers dropped)
  bool has(Precision dtype) const;
  /// eta for an (m, n, k) GEMM of `dtype` (all > 0): surface x exp(interpolated residual of the
  /// nearest points), at most kMaxGemmPeakFraction. Beyond the measured range the surface's value
  /// is held at the edge of the measured box (eta does not extrapolate). Throws std::invalid_argument when has(dtype)
  /// is false.
  double efficiency(Precision dtype, double m, double n, double k) const;
};

/// Size correction of one collective: time multiplier at measured sizes.
struct CollectiveSizePoint {
  double bytes = 0;       ///< nccl-tests size [bytes], > 0
  double time_ratio = 1;  ///< measured time / model time (with the fit's scales) at this size, > 0
};

/// Fitted parameters of one collective operation on groups of num_ranks GPUs.
struct CollectiveFit {
  CollectiveOp op{};
  int num_ranks = 0;             ///< group size the fit applies to (exact match)
  double latency_scale = 1.0;    ///< multiplies NCCL's latency terms (on top of the profile-wide scale)
  double bandwidth_scale = 1.0;  ///< multiplies the achievable bandwidth (on top of link_efficiency)
  /// Per NCCL protocol (index: LL, LL128, Simple), on top of latency_scale / bandwidth_scale: each
  /// protocol's own alpha and beta, as NCCL's tuner has one latency and bandwidth per (algorithm,
  /// protocol) and runs the cheapest. > 0; 1 = the op's common scale.
  std::array<double, 3> protocol_latency_scale{1.0, 1.0, 1.0};
  std::array<double, 3> protocol_bandwidth_scale{1.0, 1.0, 1.0};
  std::vector<CollectiveSizePoint> size_correction;  ///< by increasing bytes; empty = none
  /// Derived, for reading (not used by the model): the fitted model's time at 0 bytes [s] (alpha)
  /// and its busbw at large sizes [GB/s] (the alpha-beta view of the fit).
  double alpha_s = 0;
  double busbw_gb_per_s = 0;
  /// Time multiplier at `bytes`: size_correction's ln(time_ratio) interpolated linearly in
  /// ln(bytes), held at the end values outside the measured range; 1 when empty.
  double correction(double bytes) const;
};

/// One input the profile was fitted from.
struct ProfileSource {
  std::string path;        ///< as given on the command line
  std::string sha256;      ///< of the file's bytes, hex
  std::string kind;        ///< "measurements", "nccl-tests log", "csv"
  int points_used = 0;     ///< measured points that entered a fit
  int points_skipped = 0;  ///< held out, rejected as outliers, or of a kind not fitted
};

/// Power vs load and lumped thermal RC fitted from a burn (DESIGN §4.5). Unset = catalog default.
struct PowerThermalOverlay {
  std::optional<double> idle_w;                  ///< GPU idle power [W], (0, 2000]
  std::optional<double> compute_bound_fraction;  ///< u(compute_bound), (0, 3]; > 1: power-capped burn
  std::optional<double> r_k_per_w;               ///< R [K/W], (0, 10]
  std::optional<double> c_j_per_k;               ///< C [J/K], (0, 1e6]
  // For reading only (the model does not use them).
  double inlet_c = 0;              ///< effective inlet the fit found [C]
  double full_load_w = 0;          ///< measured burn power [W] (0 = not fitted)
  double load_clock_fraction = 0;  ///< median SM clock during the burn / maximum (0 = unknown)
  int gpus = 0;                    ///< GPUs fitted (values are medians over them)
  std::string fitted_from;         ///< inputs, phases and samples used
  bool any() const { return idle_w || compute_bound_fraction || r_k_per_w || c_j_per_k; }
};

/// Hardware a profile was fitted on (from --base, --gpus); empty strings = not recorded.
struct ProfileSystem {
  std::string gpu;            ///< catalog GPU name of the base
  std::string node_template;  ///< catalog node template ("" for a GPU base)
  int num_nodes = 0;          ///< nodes of the base (0 for a GPU base)
  std::string nic;            ///< compute NIC catalog name ("" = the template's / none)
  std::string gpus;           ///< GPUs the collectives ran on, as --gpus ("" = all)
  bool operator==(const ProfileSystem&) const = default;
};

struct CalibrationProfile {
  std::string origin;  ///< file it was read from ("" when built in memory), for messages
  /// GPU catalog name, node template, or scenario file the fit was based on (--base). A scenario
  /// file is written relative to the profile file's directory (absolute when the two share no
  /// directory below the root), so the profile can be moved with its base.
  std::string base;
  /// `base` as it resolves: a relative scenario-file base joined to the directory of `origin`
  /// (lexically normalised); otherwise as written. Set by io::load_profile_text.
  std::string base_path;
  /// "file:line:col" of the `base` field in `origin`, for messages ("" when not read from text).
  std::string base_where;
  /// The fit's --set overrides of its scenario base that describe the system (cluster.* fields,
  /// "cluster.pcie_p2p=false" as given). Applied again, under a command's own --set, wherever the
  /// profile is used (`traincast run|nccl-tests|chakra --profile`, `calibrate validate`), so the
  /// simulated system is the one the fit saw.
  std::vector<std::string> base_sets;
  std::string gpu;          ///< catalog GPU name the compute fits refer to; "" = none
  std::string created_by;   ///< tool and version
  std::string fit_options;  ///< options of the fit (holdout, gpus, ...), free text
  std::vector<ProfileSource> sources;
  ProfileSystem fitted_on;  ///< the hardware of the fit (Profile.fitted_on)

  // Compute (ComputeParams overlay; unset = the catalog/compute model default).
  std::optional<double> memory_efficiency;  ///< fraction of datasheet HBM bandwidth, (0, 1.5]
  std::optional<double> kernel_fixed_s;     ///< per non-GEMM kernel [s]
  std::optional<double> gemm_fixed_s;       ///< per GEMM when no eta table covers the dtype [s]
  GemmEfficiencyTable gemm;

  // Collectives.
  /// Achievable fraction of line rate per LinkKind (index = static_cast<int>(LinkKind)); unset =
  /// NCCL's figure (LinkEfficiency).
  std::array<std::optional<double>, 6> link_efficiency{};
  double latency_scale = 1.0;  ///< multiplies every NCCL latency term, > 0
  /// Both-direction budget of a GPU's own PCIe link (GPU <-> its switch or root port) while one
  /// collective loads both directions: bytes up + bytes down <= this x one direction's line rate,
  /// on top of each direction's link_efficiency. Unset = 2 x the PCIe efficiency (no extra
  /// limit). Range (0, 3]. Fitted from collectives whose GPUs send and receive over PCIe (see
  /// calibrate/fit/README.md: on two RTX 2080 Ti without P2P, all_reduce reaches 4 GB/s each way
  /// where one-way broadcast reaches 11.1 GB/s through the same switch uplink).
  std::optional<double> pcie_duplex_efficiency;
  std::vector<CollectiveFit> collectives;

  // Power and thermal.
  PowerThermalOverlay power_thermal;

  /// The fit for (op, num_ranks), or null.
  const CollectiveFit* collective(CollectiveOp op, int num_ranks) const;
};

}  // namespace traincast::models
