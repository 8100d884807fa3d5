#pragma once
// Checks of one nccl-tests data row against its table (used by the log parser, nccl_tests_log.cc):
// its size against its count, type and operation; its root against its operation; its data type,
// redop and root against the rows before it. Each as nccl-tests prints them (src/common.cu,
// src/*.cu, v2.13+), checked against every shared log (../shared/data/nccl-tests and raw/).

#include <map>
#include <string>
#include <string_view>

#include "calibrate/nccl_tests_log.h"

namespace traincast::calibrate {

/// Bytes per element of an nccl-tests data type by the name its tables print (nccl-tests
/// src/common.cu: test_typenames and wordSize; "char" and "int" from versions before 2.0); 0 for a
/// name nccl-tests never prints.
int nccl_tests_type_bytes(std::string_view type);

/// "" when row.size_bytes = count x word_bytes x k, k as nccl-tests prints `op` on n ranks
/// (setupArgs prints max(send, receive bytes) and the per-rank parameter count): k = 1 for
/// all_reduce, broadcast, reduce and sendrecv; k = n for all_gather, reduce_scatter, alltoall,
/// gather, scatter and hypercube (any whole k >= 1 where n is unknown); k = 1 or n for an unnamed
/// op (any whole k where n is unknown). Else "at" + "size S does not match count C of T (...):
/// expected size = ...". `at` is "path:line: ".
std::string check_row_size(const NcclTestsRow& row, std::string_view op, int n, int word_bytes, const std::string& at);

/// "" when row.root is what nccl-tests prints for `op` on n ranks: -1 for an operation without a
/// root (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, hypercube: every shared log
/// of them prints -1), a rank 0 .. n-1 for broadcast, reduce, gather and scatter (0 by default;
/// any rank >= 0 where n is unknown), -1 or a rank for an unnamed op. Else "at" + "root R ...
/// (expected ...)". `op_field` names where the op came from ("" for the log itself, "--op" ...).
std::string check_row_root(const NcclTestsRow& row, std::string_view op, int n, const std::string& at,
                           std::string_view op_field = "");

/// The blocks of one table: nccl-tests runs each (data type, redop, root) over all its sizes,
/// rising, before the next (-d all, -o all, -r all: the type, op and root loops of src/*.cu's
/// RunTest around TimeTest's size loop), so a row's type, redop or root differs from the row
/// before it only where the sizes start again from -b, and a block never comes back.
class NcclTestsTableBlocks {
 public:
  /// "" when `row` (of `word_bytes`-byte elements, its table of size factor k: check_row_size)
  /// continues the current block or starts a new one as nccl-tests does; then it is recorded.
  /// Else "at" + "type double after float on line N (expected float: ...)" (or redop, root).
  std::string add(const NcclTestsRow& row, int word_bytes, int k, const std::string& at);

 private:
  std::map<std::string, int> done_;  ///< the blocks already ended: key -> their last row's line
  std::string key_;                  ///< the current block's key; "" before the first row
  std::string type_, redop_;
  int root_ = -1;
  int line_ = 0;            ///< the previous row's line
  double first_bytes_ = 0;  ///< the table's first size [bytes]
  double first_unit_ = 1;   ///< its element size x k [bytes]
};

}  // namespace traincast::calibrate
