// Rows missing from an nccl-tests table: see nccl_tests_gaps.h.

#include "calibrate/nccl_tests_gaps.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace traincast::calibrate {

std::vector<std::string> missing_row_notes(const NcclTestsRun& run, std::string_view origin) {
  std::vector<std::string> notes;
  std::map<std::string, std::vector<const NcclTestsRow*>> by_key;
  for (const NcclTestsRow& r : run.rows) {
    if (r.size_bytes > 0) by_key[r.type + " " + r.redop + " " + std::to_string(r.root)].push_back(&r);
  }
  for (const auto& [key, rows] : by_key) {
    if (rows.size() < 3) continue;
    // The most frequent step (ratio for -f, difference for -i) is the table's step.
    std::map<double, int> ratios, steps;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      ++ratios[rows[i]->size_bytes / rows[i - 1]->size_bytes];
      ++steps[rows[i]->size_bytes - rows[i - 1]->size_bytes];
    }
    const auto most = [](const std::map<double, int>& m) {
      return std::max_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    };
    const auto ratio = most(ratios);
    const auto step = most(steps);
    const bool geometric = ratio->second >= step->second;
    if ((geometric ? ratio->second : step->second) < 2) continue;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const double a = rows[i - 1]->size_bytes;
      const double b = rows[i]->size_bytes;
      const double gaps = geometric ? std::log(b / a) / std::log(ratio->first) : (b - a) / step->first;
      if (gaps > 1.5) {
        notes.push_back(std::string(origin) + ":" + std::to_string(rows[i]->line) + ": size " +
                        std::to_string(static_cast<long long>(b)) + " follows " +
                        std::to_string(static_cast<long long>(a)) + " on line " + std::to_string(rows[i - 1]->line) +
                        ", " + std::to_string(std::lround(gaps)) +
                        " steps of the table's usual one: " + std::to_string(std::lround(gaps) - 1) +
                        " row(s) missing between them (deleted, or a damaged row skipped as noise)");
      }
    }
  }
  return notes;
}

}  // namespace traincast::calibrate
