// nccl-tests log parser. See nccl_tests_log.h.

#include "calibrate/nccl_tests_log.h"

#include "calibrate/nccl_tests_gaps.h"
#include "calibrate/nccl_tests_row_check.h"
#include "calibrate/nccl_tests_table.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

namespace traincast::calibrate {
namespace {

/// Inputs larger than this are refused (published logs are tens of kB): the value of
/// io::kMaxInputBytes (models/io/scenario_io.h), which this std-only folder cannot include
/// (docs/layout.md).
constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;
/// At most this many errors are listed; then one line says how many more there were.
constexpr std::size_t kMaxErrors = 50;

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool parse_ll(std::string_view s, long long& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

/// A rank number or count of the log's preamble ("Rank N", "ranks: N", "nodes: M"): digits that
/// fit an int below its maximum, so N + 1 ranks is an int too.
bool parse_count(std::string_view s, int& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size() && out < std::numeric_limits<int>::max();
}

bool parse_double(std::string_view s, double& out) {
  // from_chars for double is in libstdc++ 11+; strtod as a fallback-free portable path.
  const std::string tmp(s);
  if (tmp.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(tmp.c_str(), &end);
  return end == tmp.c_str() + tmp.size() && errno == 0 && std::isfinite(out);
}

/// Removes launcher prefixes: "[1,0]<stdout>:" (Open MPI tag output) and " 0: " (srun -l).
std::string_view strip_prefixes(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  for (int pass = 0; pass < 2; ++pass) {
    if (line.size() > 2 && line[0] == '[') {
      const std::size_t close = line.find("]<");
      const std::size_t colon = line.find(">:");
      if (close != std::string_view::npos && colon != std::string_view::npos && close < colon && colon < 40) {
        line.remove_prefix(colon + 2);
        continue;
      }
    }
    // srun -l: optional spaces, digits, ':' and a space.
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t j = i;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i && j + 1 < line.size() + 1 && j < line.size() && line[j] == ':' &&
        (j + 1 == line.size() || line[j + 1] == ' ')) {
      line.remove_prefix(std::min(line.size(), j + 2));
      continue;
    }
    break;
  }
  return line;
}

/// The operation named by the first "<name>_perf" in `line` ("all_reduce" for all_reduce_perf,
/// all_reduce_perf_mpi), or "".
std::string op_mentioned(std::string_view line) {
  const std::size_t at = line.find("_perf");
  if (at == std::string_view::npos || at == 0) return "";
  std::size_t start = at;
  while (start > 0 && (std::isalnum(static_cast<unsigned char>(line[start - 1])) || line[start - 1] == '_')) --start;
  std::string name(line.substr(start, at - start));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> known = {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
                                              "reduce",     "sendrecv",   "scatter",        "gather",   "hypercube"};
  return known.count(name) ? name : "";
}

/// Besides "<op>_perf": "-t all_gather" (run_nccl_tests.sh), a bare operation word on a
/// "command:" note line ("# command: NCCL_ALGO=NVLSTree all_reduce"), and the first line of
/// `traincast nccl-tests` ("# traincast nccl-tests (simulated): sendrecv on 16 of 16 GPUs of ...").
std::string op_in_command(std::string_view line) {
  const auto f = split_ws(line);
  static const std::set<std::string_view> known = {"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                                   "broadcast",  "reduce",     "sendrecv"};
  if (f.size() >= 4 && f[0] == "traincast" && f[1] == "nccl-tests" && f[2] == "(simulated):" && known.count(f[3]))
    return std::string(f[3]);
  for (std::size_t i = 0; i + 1 < f.size(); ++i) {
    if ((f[i] == "-t" || f[i] == "--test") && known.count(f[i + 1])) return std::string(f[i + 1]);
  }
  if (!f.empty() && f[0] == "command:") {
    for (std::string_view w : f) {
      if (known.count(w)) return std::string(w);
    }
  }
  return "";
}

std::string clip(std::string_view s) {
  std::string out(s.substr(0, 60));
  if (s.size() > 60) out += "...";
  return out;
}

struct Pending {
  std::string op;
  int op_line = 0;  // the line that named op
  std::vector<std::string> devices;
  std::set<std::string> hosts;
  int max_rank = -1;
  int ranks_note = 0, nodes_note = 0;
  void reset_ranks() {
    devices.clear();
    hosts.clear();
    max_rank = -1;
  }
};

class Parser {
 public:
  Parser(std::string_view origin) : origin_(origin) {}

  NcclTestsLog parse(std::string_view text) {
    if (text.size() > kMaxInputBytes) {
      throw NcclTestsLogError({std::string(origin_) + ": input too large (" + std::to_string(text.size()) +
                               " bytes; expected at most " + std::to_string(kMaxInputBytes) + ")"});
    }
    std::size_t pos = 0;
    int number = 0;
    while (pos < text.size()) {
      const std::size_t nl = text.find('\n', pos);
      const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
      lines_.push_back(text.substr(pos, end - pos));
      pos = end + 1;
    }
    // The last data-row candidate may be cut short (a truncated paste); find it first.
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      if (looks_like_row(strip_prefixes(lines_[i]))) last_candidate_ = static_cast<int>(i) + 1;
    }
    for (std::string_view raw : lines_) line(++number, strip_prefixes(raw));
    finish();
    return std::move(log_);
  }

 private:
  std::string at(int line) const { return std::string(origin_) + ":" + std::to_string(line) + ": "; }

  void error(std::string message) {
    if (errors_.size() < kMaxErrors) errors_.push_back(std::move(message));
    ++error_count_;
  }

  /// First two fields integers and a third that starts with a letter: "8  2  float ...".
  static bool looks_like_row(std::string_view s) {
    const auto f = split_ws(s);
    return f.size() >= 2 && all_digits(f[0]) && all_digits(f[1]) &&
           (f.size() == 2 || std::isalpha(static_cast<unsigned char>(f[2][0])));
  }

  void line(int n, std::string_view s) {
    const std::size_t first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return;
    if (s[first] == '#') {
      comment(n, s.substr(first + 1));
      return;
    }
    if (failure_line_ == 0 &&
        (s.find("Test NCCL failure") != std::string_view::npos ||
         s.find("Test CUDA failure") != std::string_view::npos || s.find("Test failure") != std::string_view::npos)) {
      failure_line_ = n;
      failure_text_ = std::string(s.substr(first));
    }
    if (const std::string op = op_mentioned(s); !op.empty()) {
      pending_.op = op;
      pending_.op_line = n;
    } else if (const std::string op2 = op_in_command(s); !op2.empty()) {
      pending_.op = op2;
      pending_.op_line = n;
    }
    const auto f = split_ws(s);
    if (f.size() < 2 || !all_digits(f[0]) || !all_digits(f[1])) {
      // Inside a table, a row of the table's width whose size or count is damaged ("8388608x"):
      // refused by row() with its line rather than skipped as noise.
      if (current_ != nullptr && f.size() == 11 + (has_redop_ ? 1U : 0U) + (has_root_ ? 1U : 0U) &&
          std::isdigit(static_cast<unsigned char>(f[0][0])) && nccl_tests_type_bytes(f[2]) > 0) {
        row(n, f);
        return;
      }
      prefixed_row(n, f);
      return;  // noise (INFO lines, prompts, ...)
    }
    if (f.size() >= 3 && !std::isalpha(static_cast<unsigned char>(f[2][0]))) {
      // Two integers then no data type: outside a table noise; inside one a damaged row, refused
      // rather than skipped (a skipped row is a size silently missing from the fit).
      if (current_ != nullptr) {
        error(at(n) + "line starts with two integers as a data row does, but its third field \"" + clip(f[2]) +
              "\" is not an nccl-tests data type (expected a row: " + columns_text() + "; mend or delete the line)");
      }
      return;
    }
    row(n, f);
  }

  /// A line inside a table that is not a data row but ends in one ("host3: 8 2 float sum -1 ...",
  /// "xy8 2 float ..."): a row with text pasted in front of it. Refused with its line rather than
  /// skipped as noise, which would silently drop a size from the fit. NCCL INFO lines never end in
  /// size count type and eight numbers.
  void prefixed_row(int n, const std::vector<std::string_view>& f) {
    if (current_ == nullptr) return;
    const std::size_t lead = 3 + (has_redop_ ? 1 : 0) + (has_root_ ? 1 : 0);
    const std::size_t full = lead + 8;
    if (f.size() < full) return;
    const std::size_t k = f.size() - full;
    std::string_view size = f[k];
    std::size_t glued = 0;  // leading characters before the size's digits when nothing separates them
    if (k == 0) {
      while (glued < size.size() && !std::isdigit(static_cast<unsigned char>(size[glued]))) ++glued;
      if (glued == 0 || glued == size.size()) return;
      size.remove_prefix(glued);
    }
    if (!all_digits(size) || !all_digits(f[k + 1]) || !std::isalpha(static_cast<unsigned char>(f[k + 2][0]))) return;
    for (std::size_t j = lead; j < full; ++j) {
      double v = 0;
      if (j % 4 != (lead + 3) % 4 && !parse_double(f[k + j], v)) return;  // time, algbw, busbw are numbers
    }
    std::string prefix;
    for (std::size_t j = 0; j < k; ++j) {
      if (j > 0) prefix += ' ';
      prefix.append(f[j]);
    }
    if (k == 0) prefix = std::string(f[0].substr(0, glued));
    error(at(n) + "data row with leading unexpected text \"" + clip(prefix) + "\" (" +
          (k == 0 ? std::string("glued to its size") : std::to_string(k) + " field(s) before its size") +
          "; expected a row to start with its size: " + columns_text() +
          "; delete the text in front of the row, or the line)");
  }

  void comment(int n, std::string_view c) {
    const auto f = split_ws(c);
    if (f.empty()) return;
    if (const std::string op = op_mentioned(c); !op.empty()) {
      pending_.op = op;
      pending_.op_line = n;
    } else if (const std::string op2 = op_in_command(c); !op2.empty()) {
      pending_.op = op2;
      pending_.op_line = n;
    }
    if (f[0] == "nThread") {
      // A new run's preamble: its Rank lines follow.
      pending_.reset_ranks();
      return;
    }
    if (f[0] == "Rank" && f.size() >= 2 && all_digits(f[1])) {
      rank_line(n, c, f);
      return;
    }
    if (f[0] == "ranks:" && f.size() >= 2 && all_digits(f[1])) {
      if (!parse_count(f[1], pending_.ranks_note)) count_error(n, "ranks:", f[1]);
      for (std::size_t i = 2; i + 1 < f.size(); ++i) {
        if (f[i] == "nodes:" && all_digits(f[i + 1]) && !parse_count(f[i + 1], pending_.nodes_note)) {
          count_error(n, "nodes:", f[i + 1]);
        }
      }
      return;
    }
    if (f.size() >= 6 && f[0] == "size" && f[1] == "count") {
      header(n, f);
      return;
    }
    if (f.size() >= 5 && f[0] == "Avg" && f[1] == "bus" && f[2] == "bandwidth" && f[3] == ":") {
      double v = 0;
      if (current_ != nullptr && parse_double(f[4], v)) current_->avg_busbw_gbps = v;
      return;
    }
    if (f.size() >= 6 && f[0] == "Out" && f[1] == "of" && f[2] == "bounds" && f[3] == "values") {
      if (current_ != nullptr && f.size() >= 7) current_->check = std::string(f[6]);
      return;
    }
  }

  /// A preamble number (after `what`) too large for nccl-tests' int ranks.
  void count_error(int n, std::string_view what, std::string_view digits) {
    error(at(n) + std::string(what) + " " + clip(digits) + " is out of range (expected an integer below " +
          std::to_string(std::numeric_limits<int>::max()) + ", as nccl-tests counts ranks in an int)");
  }

  void rank_line(int n, std::string_view c, const std::vector<std::string_view>& f) {
    int rank = 0;
    if (!parse_count(f[1], rank)) {
      count_error(n, "Rank", f[1]);
      return;
    }
    pending_.max_rank = std::max(pending_.max_rank, rank);
    for (std::size_t i = 2; i + 1 < f.size(); ++i) {
      if (f[i] == "on") {
        pending_.hosts.insert(std::string(f[i + 1]));
        break;
      }
    }
    // Device name: after the "[bus id]" token.
    const std::size_t close = c.find("] ");
    if (close != std::string_view::npos) {
      std::string_view name = c.substr(close + 2);
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.remove_suffix(1);
      pending_.devices.emplace_back(name);
    }
  }

  void header(int n, const std::vector<std::string_view>& f) {
    // Validate: size count type [redop] [root] time algbw busbw wrong time algbw busbw wrong.
    std::vector<std::string> cols(f.begin(), f.end());
    std::size_t i = 3;
    bool redop = false, root = false;
    if (i < cols.size() && cols[i] == "redop") {
      redop = true;
      ++i;
    }
    if (i < cols.size() && cols[i] == "root") {
      root = true;
      ++i;
    }
    auto is_time = [](const std::string& s) { return s == "time" || s == "cputime"; };
    auto is_wrong = [](const std::string& s) { return s == "#wrong" || s == "error"; };
    const bool ok = cols[2] == "type" && cols.size() == i + 8 && is_time(cols[i]) && cols[i + 1] == "algbw" &&
                    cols[i + 2] == "busbw" && is_wrong(cols[i + 3]) && is_time(cols[i + 4]) && cols[i + 5] == "algbw" &&
                    cols[i + 6] == "busbw" && is_wrong(cols[i + 7]);
    if (!ok) {
      std::string got;
      for (const auto& s : cols) got += (got.empty() ? "" : " ") + s;
      error(at(n) + "unknown column header \"" + clip(got) +
            "\" (expected size count type [redop] [root] time algbw busbw #wrong time algbw busbw #wrong)");
      current_ = nullptr;
      return;
    }
    close_run();
    NcclTestsRun run;
    run.op = pending_.op;
    run.op_line = pending_.op.empty() ? 0 : pending_.op_line;
    run.header_line = n;
    run.columns = cols;
    run.num_ranks = pending_.max_rank >= 0 ? pending_.max_rank + 1 : pending_.ranks_note;
    run.num_hosts = !pending_.hosts.empty() ? static_cast<int>(pending_.hosts.size()) : pending_.nodes_note;
    run.devices = pending_.devices;
    log_.runs.push_back(std::move(run));
    current_ = &log_.runs.back();
    last_size_.clear();
    blocks_ = {};
    has_redop_ = redop;
    has_root_ = root;
    pending_.op.clear();
    pending_.op_line = 0;
    pending_.reset_ranks();
  }

  void row(int n, const std::vector<std::string_view>& f) {
    if (current_ == nullptr) {
      if (f.size() >= 11) {
        error(at(n) + "data row before any column header (expected a \"#  size  count  type ...\" header line first)");
      }
      return;
    }
    const std::size_t lead = 3 + (has_redop_ ? 1 : 0) + (has_root_ ? 1 : 0);
    const std::size_t full = lead + 8;
    const bool tail = n == last_candidate_;
    if (f.size() != full && !(tail && f.size() < full)) {
      error(at(n) + "data row has " + std::to_string(f.size()) + " fields (expected " + std::to_string(full) + ": " +
            columns_text() + ")");
      return;
    }
    if (f.size() < lead + 4) {
      // Its out-of-place numbers are missing or may be cut inside a number ("41.3" of "41.31"):
      // refused rather than dropped, so that a fit never silently loses its largest size.
      error(at(n) + "data row cut short: " + std::to_string(f.size()) + " of " + std::to_string(full) +
            " fields (expected " + std::to_string(full) + ": " + columns_text() +
            "); the log ends inside its out-of-place columns: delete the partial row (or paste the rest of it)");
      return;
    }
    NcclTestsRow r;
    r.line = n;
    long long size = 0;
    bool ok = parse_ll(f[0], size) && parse_ll(f[1], r.count);
    if (!ok) {
      error(at(n) + "size and count must be integers (got \"" + clip(f[0]) + "\" and \"" + clip(f[1]) + "\")");
      return;
    }
    r.size_bytes = static_cast<double>(size);
    r.type = std::string(f[2]);
    const int word_bytes = nccl_tests_type_bytes(f[2]);
    if (word_bytes == 0) {
      error(at(n) + "type \"" + clip(f[2]) +
            "\" is not an nccl-tests data type (expected int8, uint8, int32, uint32, int64, uint64, half, float, "
            "double, bfloat16, f8e4m3 or f8e5m2)");
      return;
    }
    if (std::string problem = check_row_size(r, current_->op, current_->num_ranks, word_bytes, at(n));
        !problem.empty()) {
      error(std::move(problem));
      return;
    }
    std::size_t i = 3;
    if (has_redop_) r.redop = std::string(f[i++]);
    if (has_root_) {
      long long root = 0;
      if (!parse_ll(f[i], root) && !(f[i].size() > 1 && f[i][0] == '-' && parse_ll(f[i].substr(1), root))) {
        error(at(n) + "root \"" + clip(f[i]) + "\" is not an integer");
        return;
      }
      if (f[i][0] == '-' && root > 0) root = -root;
      r.root = static_cast<int>(root);
      if (std::string problem = check_row_root(r, current_->op, current_->num_ranks, at(n)); !problem.empty()) {
        error(std::move(problem));
        return;
      }
      ++i;
    }
    static const char* const names[] = {"time", "algbw", "busbw"};
    for (int half = 0; half < 2; ++half) {
      NcclTestsResultColumns& c = half == 0 ? r.out_of_place : r.in_place;
      const std::size_t base = i + 4 * static_cast<std::size_t>(half);
      if (base + 4 > f.size()) {
        log_.notes.push_back(at(n) + "last data row cut short in the in-place columns (" + std::to_string(f.size()) +
                             " of " + std::to_string(full) + " fields); out-of-place kept");
        break;
      }
      double* dst[] = {&c.time_us, &c.algbw_gbps, &c.busbw_gbps};
      for (int k = 0; k < 3; ++k) {
        if (!parse_double(f[base + k], *dst[k]) || *dst[k] < 0) {
          error(at(n) + std::string(half == 0 ? "out-of-place " : "in-place ") + names[k] + " \"" + clip(f[base + k]) +
                "\" is not a number >= 0");
          return;
        }
      }
      c.wrong = std::string(f[base + 3]);
      c.present = true;
    }
    if (size > 0 && r.out_of_place.time_us == 0 && !(r.in_place.present && r.in_place.time_us > 0)) {
      error(at(n) + "time 0 for " + std::to_string(size) +
            " bytes (expected a measured time > 0: nccl-tests prints microseconds to 0.01 and no transfer of "
            "data takes less)");
      return;
    }
    if (std::string problem = check_row_results(r, *current_, at(n)); !problem.empty()) {
      error(std::move(problem));
      return;
    }
    const long long unit = r.count * word_bytes;
    if (std::string problem =
            blocks_.add(r, word_bytes, unit > 0 ? static_cast<int>(size / unit) : current_->num_ranks, at(n));
        !problem.empty()) {
      error(std::move(problem));
      return;
    }
    // nccl-tests loops each type and operation over rising sizes; rounding to whole elements
    // repeats only size 0 (r11, n11e). A smaller size after a larger one is a second run under the
    // header; the same size > 0 again is a row measured twice (none of the shared logs has one).
    const std::string key = r.type + " " + r.redop + " " + std::to_string(r.root);
    if (const auto it = last_size_.find(key); it != last_size_.end()) {
      const auto [last, line] = it->second;
      const std::string what = std::to_string(size) + " " + r.type + (r.redop.empty() ? "" : " " + r.redop);
      if (size > 0 && size == last) {
        error(at(n) + "size: got " + what + " again after line " + std::to_string(line) +
              " (expected each size once within a table, as nccl-tests prints them: a row measured again or "
              "pasted twice; delete one)");
        return;
      }
      if (size < last) {
        error(at(n) + "size " + what + " after size " + std::to_string(last) + " on line " + std::to_string(line) +
              " (expected sizes in rising order within a table, as nccl-tests prints them; a second run pasted "
              "under the same header? split the log at a column header)");
        return;
      }
    }
    last_size_[key] = {size, n};
    current_->rows.push_back(std::move(r));
  }

  std::string columns_text() const {
    std::string out;
    for (const auto& c : current_->columns) out += (out.empty() ? "" : " ") + c;
    return out;
  }

  void close_run() {
    if (current_ != nullptr) {
      for (std::string& note : missing_row_notes(*current_, origin_)) log_.notes.push_back(std::move(note));
    }
    if (!log_.runs.empty() && log_.runs.back().rows.empty()) {
      log_.notes.push_back(at(log_.runs.back().header_line) + "column header without data rows; run skipped");
      log_.runs.pop_back();
    }
    current_ = nullptr;
  }

  void finish() {
    close_run();
    if (log_.runs.empty() && errors_.empty()) {
      std::string why = std::string(origin_) +
                        ": no nccl-tests data rows (expected rows after a \"#  size  count  type ...\" column header)";
      if (failure_line_ > 0) {
        why += "; the run failed at line " + std::to_string(failure_line_) + ": \"" + clip(failure_text_) + "\"";
      }
      error(why);
    }
    if (!errors_.empty()) {
      if (error_count_ > errors_.size()) {
        errors_.push_back(std::string(origin_) + ": " + std::to_string(error_count_ - errors_.size()) +
                          " more errors not shown");
      }
      throw NcclTestsLogError(std::move(errors_));
    }
  }

  std::string_view origin_;
  std::vector<std::string_view> lines_;
  int last_candidate_ = 0;
  NcclTestsLog log_;
  NcclTestsRun* current_ = nullptr;
  /// The current table's last size and its line by type, redop and root.
  std::map<std::string, std::pair<long long, int>> last_size_;
  NcclTestsTableBlocks blocks_;  ///< the current table's (type, redop, root) blocks
  bool has_redop_ = false, has_root_ = false;
  Pending pending_;
  std::vector<std::string> errors_;
  std::size_t error_count_ = 0;
  int failure_line_ = 0;
  std::string failure_text_;
};

}  // namespace

NcclTestsLogError::NcclTestsLogError(std::vector<std::string> errors)
    : std::runtime_error(join(errors)), errors_(std::move(errors)) {}

NcclTestsLog parse_nccl_tests_log(std::string_view text, std::string_view origin) { return Parser(origin).parse(text); }

NcclTestsLog read_nccl_tests_log(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno != 0 ? errno : ENOENT;
    throw NcclTestsLogError({path + ": cannot read file (" + std::generic_category().message(err) + ")"});
  }
  // At most kMaxInputBytes + 1 bytes (a path to /dev/zero or a FIFO has no size to check up front);
  // the parser refuses the text when it is longer than kMaxInputBytes.
  std::string text;
  char chunk[1 << 16];
  while (in && text.size() <= kMaxInputBytes) {
    in.read(chunk, static_cast<std::streamsize>(std::min(sizeof chunk, kMaxInputBytes + 1 - text.size())));
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw NcclTestsLogError({path + ": cannot read file (read error)"});
  return parse_nccl_tests_log(text, path);
}

std::string op_conflict(const NcclTestsRun& run, std::string_view op, std::string_view path,
                        std::string_view op_field) {
  if (op.empty() || run.op.empty() || op == run.op) return "";
  return std::string(path) + ":" + std::to_string(run.op_line) + ": the log names operation " + run.op +
         " for the table at line " + std::to_string(run.header_line) + "; " + std::string(op_field) + " " +
         std::string(op) + " differs (expected an operation there only for logs that name none: drop it or give " +
         run.op + ")";
}

bool row_disturbed(const NcclTestsRow& row) {
  return row.in_place.present && row.in_place.time_us > 0 &&
         row.out_of_place.time_us > kDisturbedRowRatio * row.in_place.time_us;
}

double row_time_us(const NcclTestsRow& row) {
  return row_disturbed(row) ? row.in_place.time_us : row.out_of_place.time_us;
}

}  // namespace traincast::calibrate
