#pragma once
// The cells of a shared-data CSV file (../shared/data), for tests that fit or check against it:
// one vector per line (the header included), split at every comma; no quoting (the GEMM and
// training tables read with it have none). A missing file gives no rows.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace traincast::models::test_support {

inline std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(f, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace traincast::models::test_support
