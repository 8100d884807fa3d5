#pragma once
// A Chakra execution trace (MLCommons Chakra, schema/protobuf/et_def.proto) as plain data: one
// RankTrace per rank, its nodes in file order. models/io/chakra_io.* reads and writes the `.et`
// files; models/executor/chakra_executor.* runs them on the op-graph runner.

#include <cstdint>
#include <string>
#include <vector>

namespace traincast::models {

/// Node types of et_def.proto (same numbers). STORAGE (8), BATCH (9) and CHECKPOINT (10) exist in
/// the public schema but are refused by the reader: nothing here simulates them.
enum class ChakraNodeType : std::uint8_t {
  metadata = 1,
  mem_load = 2,
  mem_store = 3,
  comp = 4,
  comm_send = 5,
  comm_recv = 6,
  comm_coll = 7,
};

/// Values of the `comm_type` attribute (et_def.proto CollectiveCommType, same numbers).
enum class ChakraCollective : std::uint8_t {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9,
};

/// Name as in et_def.proto, e.g. "ALL_REDUCE", "COMP_NODE".
const char* chakra_name(ChakraCollective c);
const char* chakra_name(ChakraNodeType t);

/// One node with the attributes the simulator uses. Absent values are -1.
struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  ChakraNodeType type = ChakraNodeType::comp;
  std::vector<std::uint64_t> ctrl_deps;  ///< ids of nodes of the same file
  std::vector<std::uint64_t> data_deps;  ///< ids of nodes of the same file
  /// Measured duration [ns]: the `duration_ns` attribute (traincast's export, exact) when present,
  /// else duration_micros x 1000; -1 when neither is given (duration_micros 0 = not measured).
  std::int64_t duration_ns = -1;
  double num_ops = -1;            ///< `num_ops`: floating-point operations of a COMP node
  double tensor_size_bytes = -1;  ///< `tensor_size`: bytes a COMP node moves / a MEM node loads or stores
  bool is_cpu_op = false;         ///< `is_cpu_op`: runs on the host thread, not on the GPU
  int comm_type = -1;             ///< `comm_type` (ChakraCollective value) of a COMM_COLL node
  double comm_size_bytes = -1;    ///< `comm_size` [bytes], nccl-tests convention (per rank buffer)
  int comm_src = -1;              ///< `comm_src`: sending rank of a COMM_RECV node
  int comm_dst = -1;              ///< `comm_dst`: receiving rank of a COMM_SEND node
  std::int64_t comm_tag = -1;     ///< `comm_tag`: matches a send with its receive
  std::string pg_name;            ///< `pg_name`: process group of a communication node ("" = all ranks)
  std::uint64_t file_offset = 0;  ///< byte offset of the node's length prefix in its file (messages)
};

/// A process group as PyTorch records it ("## process_group:init ##" metadata node).
struct ChakraProcessGroup {
  std::string name;        ///< pg_name
  std::vector<int> ranks;  ///< global ranks in group-rank order; empty = every rank
};

/// One rank's file.
struct ChakraRankTrace {
  std::string path;
  int rank = 0;
  std::string version;  ///< GlobalMetadata.version ("" when the file gives only a schema attribute)
  std::string schema;   ///< GlobalMetadata `schema` attribute, e.g. "1.0.2-chakra.0.0.4"
  std::vector<ChakraNode> nodes;
  std::vector<ChakraProcessGroup> process_groups;
  /// Dependencies the reader dropped: ctrl_deps naming nodes not in the file, and dependencies of
  /// a node on itself (see chakra_io.h).
  std::int64_t dropped_deps = 0;
};

}  // namespace traincast::models
