#pragma once
// NCCL releases the model knows (cluster.collectives.nccl_version): parsing "2.18.3" and the
// constants and algorithms that changed between releases (search.cc, tuning.cc, enqueue.cc).

#include <span>
#include <string>
#include <string_view>

namespace traincast::models {

/// An NCCL release, major.minor.patch (e.g. 2.18.3).
struct NcclVersion {
  int major = 2;
  int minor = 28;
  int patch = 3;
  /// Comparable number major * 10000 + minor * 100 + patch (NCCL's NCCL_VERSION_CODE form).
  int code() const { return major * 10000 + minor * 100 + patch; }
  bool at_least(int maj, int min) const { return code() >= maj * 10000 + min * 100; }
  bool operator==(const NcclVersion&) const = default;
};

/// Oldest and newest release whose constants are modelled (the shared nccl-tests logs span
/// NCCL 2.9-2.28); the default version is the newest.
inline constexpr NcclVersion kOldestNcclVersion{2, 9, 0};
inline constexpr NcclVersion kNewestNcclVersion{2, 28, 3};

/// Parses "MAJOR.MINOR.PATCH" (or "MAJOR.MINOR", patch 0; an NCCL "-1" package suffix is
/// refused). Returns false and sets `error` (e.g. "expected MAJOR.MINOR.PATCH such as 2.18.3
/// (got \"2.x\")", "2.8.4 is older than 2.9.0, the oldest modelled release") when malformed or
/// out of [kOldestNcclVersion, kNewestNcclVersion].
bool parse_nccl_version(std::string_view text, NcclVersion& out, std::string& error);
/// "2.18.3".
std::string to_string(const NcclVersion& v);

/// The version a cluster's collectives use: the parsed nccl_version field, or the newest when the
/// field is empty. Throws std::invalid_argument "cluster.collectives.nccl_version: ..." for a
/// value parse_nccl_version refuses (the loader refuses it first, with its position).
NcclVersion nccl_version_of(const std::string& field);

/// NCCL's search speed arrays [GB/s] (src/graph/search.cc) for this release and GPU class
/// (cc_class 80: before Hopper, 90: Hopper, 100: Blackwell), descending; intra: a single node,
/// else across nodes.
std::span<const double> nccl_speed_array(const NcclVersion& v, int cc_class, bool intra);

/// Algorithms by release: NVLS (2.17+, src/transport/nvls.cc), NVLS tree (2.18+), PAT (2.23+).
bool nccl_has_nvls(const NcclVersion& v);
bool nccl_has_nvls_tree(const NcclVersion& v);
bool nccl_has_pat(const NcclVersion& v);
/// Ring latency across nodes as in the PAT releases (2.23+, tuning.cc): nInterSteps 2 (nNodes - 1)
/// for all_reduce (before: 2 nNodes) and NET Tree latency for one GPU per node.
bool nccl_pat_era_ring_latency(const NcclVersion& v);
/// NVLS all_gather / reduce_scatter only with at most kNcclMaxNvlsArity GPUs on the node (the
/// releases whose src/enqueue.cc skips NVLS "if (info->func != ncclFuncAllReduce &&
/// comm->localRanks > NCCL_MAX_NVLS_ARITY)"; 2.27+, see nccl_versions.cc); all_reduce has no limit.
bool nccl_nvls_gather_arity_limited(const NcclVersion& v);
/// NCCL_MAX_NVLS_ARITY (src/include/device.h of the 2.2x releases): 32.
inline constexpr int kNcclMaxNvlsArity = 32;

}  // namespace traincast::models
