// Checks of one nccl-tests data row against its table. See nccl_tests_table.h.

#include "calibrate/nccl_tests_table.h"

#include <limits>

namespace traincast::calibrate {
namespace {

/// Operations whose size column is count x type size (their buffers hold `count` elements).
bool size_is_count(std::string_view op) {
  return op == "all_reduce" || op == "broadcast" || op == "reduce" || op == "sendrecv";
}

/// Operations whose count column is per rank and size column count x type size x ranks
/// (src/all_gather.cu, reduce_scatter.cu, alltoall.cu, gather.cu, scatter.cu, hypercube.cu:
/// paramcount = count / nranks; the shared logs n05, n07, n08, n11b, n11e, r02, r03, r11).
bool size_is_per_rank(std::string_view op) {
  return op == "all_gather" || op == "reduce_scatter" || op == "alltoall" || op == "gather" || op == "scatter" ||
         op == "hypercube";
}

bool has_root(std::string_view op) { return op == "broadcast" || op == "reduce" || op == "gather" || op == "scatter"; }

bool rootless(std::string_view op) {
  return op == "all_reduce" || op == "sendrecv" || (size_is_per_rank(op) && !has_root(op));
}

}  // namespace

int nccl_tests_type_bytes(std::string_view t) {
  if (t == "int8" || t == "uint8" || t == "char" || t == "f8e4m3" || t == "f8e5m2") return 1;
  if (t == "half" || t == "bfloat16") return 2;
  if (t == "int32" || t == "uint32" || t == "int" || t == "float") return 4;
  if (t == "int64" || t == "uint64" || t == "double") return 8;
  return 0;
}

std::string check_row_size(const NcclTestsRow& row, std::string_view op, int n, int word_bytes, const std::string& at) {
  const auto size = static_cast<long long>(row.size_bytes);
  const bool representable = row.count >= 0 && row.count <= std::numeric_limits<long long>::max() / 8;
  const long long unit = representable ? row.count * word_bytes : -1;
  const long long k = unit > 0 && size % unit == 0 ? size / unit : 0;
  bool fits = false;
  if (unit == 0) {
    fits = size == 0;
  } else if (k >= 1) {
    if (size_is_count(op)) {
      fits = k == 1;
    } else if (size_is_per_rank(op)) {
      fits = n <= 0 || k == n;
    } else {
      fits = k == 1 || n <= 0 || k == n;
    }
  }
  if (fits) return "";
  const std::string w = std::to_string(word_bytes);
  std::string e = at + "size " + std::to_string(size) + " does not match count " + std::to_string(row.count) + " of " +
                  row.type + " (" + w + " bytes each): expected size = count x " + w;
  const std::string rule =
      " (nccl-tests prints size = count x type size for all_reduce, broadcast, reduce and sendrecv, and count x type "
      "size x ranks for all_gather, reduce_scatter and alltoall, whose count is per rank; a row from another table?)";
  if (size_is_count(op) && representable) return e + " = " + std::to_string(unit) + " for " + std::string(op) + rule;
  if (size_is_per_rank(op) && representable) {
    if (n <= 0) return e + " x the rank count for " + std::string(op) + rule;
    return e + " x " + std::to_string(n) + " ranks = " + std::to_string(unit * n) + " for " + std::string(op) + rule;
  }
  return e + (n > 1 ? " or count x " + w + " x " + std::to_string(n) + " ranks"
                    : std::string(" or a multiple of it, as nccl-tests prints"));
}

std::string check_row_root(const NcclTestsRow& row, std::string_view op, int n, const std::string& at,
                           std::string_view op_field) {
  const std::string who = op_field.empty() ? std::string(op) : std::string(op_field) + " " + std::string(op);
  const std::string got = at + "root " + std::to_string(row.root);
  if (row.root < -1) {
    return got +
           " (expected -1, or a rank 0 or above: nccl-tests prints -1 for an operation without a root and the "
           "root rank for broadcast, reduce, gather and scatter)";
  }
  if (rootless(op) && row.root != -1) {
    return got + " for " + who +
           ", which has no root (expected -1: nccl-tests prints root -1 for all_reduce, all_gather, reduce_scatter, "
           "alltoall and sendrecv, and a rank only for broadcast, reduce, gather and scatter; a row of one of them?)";
  }
  if (has_root(op) && (row.root == -1 || (n > 0 && row.root >= n))) {
    return got + " for " + who + " (expected a rank 0 to " + (n > 0 ? std::to_string(n - 1) : std::string("N-1")) +
           ": nccl-tests prints the root rank of broadcast, reduce, gather and scatter, 0 unless -r names another" +
           (row.root == -1 ? "; -1 is printed for operations without a root: a row of another operation?)" : ")");
  }
  return "";
}

std::string NcclTestsTableBlocks::add(const NcclTestsRow& row, int word_bytes, int k, const std::string& at) {
  const std::string key = row.type + " " + row.redop + " " + std::to_string(row.root);
  if (key_.empty()) {
    first_bytes_ = row.size_bytes;
    first_unit_ = static_cast<double>(word_bytes) * (k > 0 ? k : 1);
  } else if (key != key_) {
    std::string field = "type", got = row.type, want = type_, word = "data type";
    if (row.type == type_ && row.redop != redop_) {
      field = "redop", got = row.redop, want = redop_, word = "reduction";
    } else if (row.type == type_) {
      field = "root", got = std::to_string(row.root), want = std::to_string(root_), word = "root";
    }
    std::string e = at + field + " " + got + " after " + want + " on line " + std::to_string(line_) + " (expected " +
                    want + ": nccl-tests runs each " + word + " over all its sizes before the next";
    if (const auto it = done_.find(key); it != done_.end()) {
      e += ", and " + field + " " + got + "'s sizes ended at line " + std::to_string(it->second) +
           ", so it does not come back";
    } else if (!(row.size_bytes < first_bytes_ + first_unit_)) {
      e += ", starting again from the table's first size, " + std::to_string(static_cast<long long>(first_bytes_)) +
           " bytes (rounded down to whole elements), not at " + std::to_string(static_cast<long long>(row.size_bytes));
    } else {
      e.clear();
    }
    if (!e.empty()) return e + "; a row from another table? delete it, or split the log at a column header)";
    done_[key_] = line_;
  }
  key_ = key;
  type_ = row.type;
  redop_ = row.redop;
  root_ = row.root;
  line_ = row.line;
  return "";
}

}  // namespace traincast::calibrate
