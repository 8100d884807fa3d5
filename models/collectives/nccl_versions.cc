// NCCL releases: parsing cluster.collectives.nccl_version and the per-release constants. See
// nccl_versions.h.

#include "models/collectives/nccl_versions.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <stdexcept>

namespace traincast::models {
namespace {

// Speed arrays of NVIDIA/nccl src/graph/search.cc [GB/s].
// Single array of the 2.7-2.11 search.cc (copyright 2016-2020, stored commit 01afd20a:
// "speedArray[] = { 42.0, 24.0, ... }", used for rings and trees, inside and across nodes).
constexpr std::array<double, 17> kSpeedLegacy{42.0, 24.0, 21.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0,
                                              6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// speedArrayIntra / speedArrayInter of the releases with PXN (2.12+; stored commit 2dfd8375 and
// later), for GPUs before sm90 in every later release.
constexpr std::array<double, 13> kSpeedIntra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
constexpr std::array<double, 19> kSpeedInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                             7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// sm90SpeedArrayIntra / Inter, first form (stored copies with "{ 60.0, 40.0, 30.0, ...}").
constexpr std::array<double, 9> kSm90IntraV1{60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0};
constexpr std::array<double, 16> kSm90InterV1{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5,
                                              15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// Second form (50.0 / 11.0 intra and 22.0 inter added; current search.cc).
constexpr std::array<double, 11> kSm90Intra{60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr std::array<double, 17> kSm90Inter{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                            15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// sm100SpeedArrayIntra / Inter, first form and the current one (45.0 intra, 86.0 / 80.0 inter).
constexpr std::array<double, 11> kSm100IntraV1{90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr std::array<double, 18> kSm100InterV1{96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                               17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 12> kSm100Intra{90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr std::array<double, 20> kSm100Inter{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                             20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

bool parse_int(std::string_view s, int& out) {
  if (s.empty() || s.size() > 4) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

}  // namespace

std::string to_string(const NcclVersion& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

bool parse_nccl_version(std::string_view text, NcclVersion& out, std::string& error) {
  const std::string got = "(got \"" + std::string(text) + "\")";
  NcclVersion v{0, 0, 0};
  const auto dot1 = text.find('.');
  bool ok = dot1 != std::string_view::npos && parse_int(text.substr(0, dot1), v.major);
  if (ok) {
    const std::string_view rest = text.substr(dot1 + 1);
    const auto dot2 = rest.find('.');
    ok = dot2 == std::string_view::npos
             ? parse_int(rest, v.minor)
             : parse_int(rest.substr(0, dot2), v.minor) && parse_int(rest.substr(dot2 + 1), v.patch);
  }
  // A component with a leading zero ("2.08.0") is not how NCCL writes a release: refused rather
  // than read as 2.8.0.
  for (std::size_t at = 0; ok && at < text.size();) {
    const std::size_t dot = std::min(text.find('.', at), text.size());
    if (dot - at > 1 && text[at] == '0') ok = false;
    at = dot + 1;
  }
  if (!ok) {
    error = "expected MAJOR.MINOR.PATCH such as 2.18.3 (MAJOR.MINOR means patch 0; no leading zeros) " + got;
    return false;
  }
  if (v.minor > 99 || v.patch > 99) {  // NCCL_VERSION_CODE = major x 10000 + minor x 100 + patch
    error = "expected MINOR and PATCH of at most 99, as NCCL's version code has them " + got;
    return false;
  }
  if (v.code() < kOldestNcclVersion.code()) {
    error = to_string(v) + " is older than " + to_string(kOldestNcclVersion) + ", the oldest modelled release " + got;
    return false;
  }
  if (v.code() > kNewestNcclVersion.code()) {
    error = to_string(v) + " is newer than " + to_string(kNewestNcclVersion) + ", the newest modelled release " + got;
    return false;
  }
  out = v;
  return true;
}

NcclVersion nccl_version_of(const std::string& field) {
  if (field.empty()) return kNewestNcclVersion;
  NcclVersion v;
  std::string error;
  if (!parse_nccl_version(field, v, error)) throw std::invalid_argument("cluster.collectives.nccl_version: " + error);
  return v;
}

std::span<const double> nccl_speed_array(const NcclVersion& v, int cc_class, bool intra) {
  // Release boundaries: the arrays are those of NVIDIA/nccl search.cc; which release first
  // shipped each form is taken from the release history as far as the stored snapshots show it
  // (legacy single array before 2.12; sm90 arrays from 2.19, second form from 2.21; sm100 arrays
  // from 2.25, second form from 2.27). A boundary not confirmed by a stored tagged snapshot is
  // the first release with that form as best known, not a fitted value.
  if (!v.at_least(2, 12)) return kSpeedLegacy;
  if (cc_class >= 100 && v.at_least(2, 25)) {
    if (v.at_least(2, 27)) return intra ? std::span<const double>(kSm100Intra) : std::span<const double>(kSm100Inter);
    return intra ? std::span<const double>(kSm100IntraV1) : std::span<const double>(kSm100InterV1);
  }
  if (cc_class >= 90 && v.at_least(2, 19)) {
    if (v.at_least(2, 21)) return intra ? std::span<const double>(kSm90Intra) : std::span<const double>(kSm90Inter);
    return intra ? std::span<const double>(kSm90IntraV1) : std::span<const double>(kSm90InterV1);
  }
  return intra ? std::span<const double>(kSpeedIntra) : std::span<const double>(kSpeedInter);
}

bool nccl_has_nvls(const NcclVersion& v) { return v.at_least(2, 17); }
bool nccl_has_nvls_tree(const NcclVersion& v) { return v.at_least(2, 18); }
bool nccl_has_pat(const NcclVersion& v) { return v.at_least(2, 23); }
bool nccl_pat_era_ring_latency(const NcclVersion& v) { return v.at_least(2, 23); }
// The enqueue.cc copies of the PAT releases with the CollNetDirect arity test (2.23-2.25) skip
// NVLS only without nvlsSupport; the later copies (with the 2.27 symmetric-kernel code) add the
// localRanks > NCCL_MAX_NVLS_ARITY test for every function but all_reduce. 2.27 is the first
// release with it as best known (not confirmed by a stored tagged snapshot).
bool nccl_nvls_gather_arity_limited(const NcclVersion& v) { return v.at_least(2, 27); }

}  // namespace traincast::models
