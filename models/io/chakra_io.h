#pragma once
// Chakra execution trace files (`.et`, MLCommons Chakra, schema in models/io/chakra_et.proto):
// reading them into plain models::ChakraRankTrace structs and writing them back. Each file is a
// stream of varint-length-prefixed protobuf messages: GlobalMetadata, then Node, Node, ...
//
// Errors are ChakraError (a std::invalid_argument: the CLI exits with status 2) whose message
// names the file, the byte offset, the node id and what was expected, e.g.
//   "t/ar.3.et: byte 1042: node 17: attribute comm_size: expected an integer (got string_val)"
//   "t/ar.3.et: byte 1042: truncated: the message declares 74 bytes but only 12 remain"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/chakra_trace.h"

namespace traincast::io {

struct ChakraError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Parses one rank's file from its bytes; `path` and `rank` only label the result and messages.
/// Checks every node: type one of METADATA, MEM_LOAD/STORE, COMP, COMM_SEND/RECV, COMM_COLL;
/// unique ids; data_deps naming nodes of the file (ctrl_deps naming absent nodes, and a node's
/// dependency on itself, are dropped and counted in dropped_deps: Chakra's PyTorch converter
/// removes dangling caller nodes and sometimes writes self-dependencies); attribute types (integers for comm_type,
/// comm_size, comm_src, comm_dst, comm_tag, num_ops, tensor_size; bool for is_cpu_op; string for pg_name); comm_type in
/// 0..9; sizes >= 0; COMM_COLL with comm_type, SEND with comm_dst, RECV with comm_src. Process groups come from
/// PyTorch's "## process_group:init ##" metadata node (inputs.values: a JSON list of {"pg_name", "ranks", ...},
/// possibly inside a Python list literal as the Chakra converter writes it). Throws ChakraError; never crashes or hangs
/// on arbitrary bytes.
models::ChakraRankTrace parse_chakra_trace(std::string_view bytes, const std::string& path, int rank);

/// Reads one file (parse_chakra_trace). Throws ChakraError when unreadable.
models::ChakraRankTrace read_chakra_file(const std::string& path, int rank);

/// The rank of a file named `<name>.<rank>.et` (Chakra's convention); -1 if the name has no rank.
int chakra_rank_from_path(const std::string& path);

/// Finds and reads every rank of a trace. `inputs`: one prefix `DIR/NAME` (files DIR/NAME.<r>.et),
/// one directory (every `*.et` in it, all with the same NAME), or a list of files (`NAME.<r>.et`;
/// a single file without a rank in its name is rank 0). Ranks must be 0..N-1, each once: a gap is
/// an error naming the missing rank and the file it expected. Returns traces ordered by rank.
/// Throws ChakraError.
std::vector<models::ChakraRankTrace> load_chakra_traces(const std::vector<std::string>& inputs);

/// The .et files load_chakra_traces reads for `inputs` (a prefix or directory resolved to its
/// files, sorted; a list of files as given), without reading them. Throws ChakraError as it does
/// for no input, an empty directory or a prefix that matches nothing.
std::vector<std::string> chakra_trace_files(const std::vector<std::string>& inputs);

/// Serializes a rank's trace (GlobalMetadata version "0.0.4" plus a `schema` attribute, a
/// "## process_group:init ##" metadata node when it has process groups, then its nodes) in the
/// length-delimited format. Durations go to duration_micros (rounded to the nearest microsecond,
/// at least 1 for a non-zero duration) and, exactly, to a `duration_ns` attribute that
/// parse_chakra_trace prefers. Deterministic bytes.
std::string write_chakra_trace(const models::ChakraRankTrace& trace);

}  // namespace traincast::io
