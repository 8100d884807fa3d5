#pragma once
// Runs the traincast command line in-process for the CLI tests: main_dispatch with argv
// {"traincast", args...}, stdout and stderr captured as strings; slurp() reads an output file.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli/commands.h"

namespace traincast::cli::test_support {

struct Result {
  int status;       ///< exit status main() would return (0 ok, 2 bad input)
  std::string out;  ///< what the command wrote to stdout
  std::string err;  ///< what it wrote to stderr
};

inline Result run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::vector<std::string> argv_s = {"traincast"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  const int status = main_dispatch(static_cast<int>(argv.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

/// The whole file at `p` as bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace traincast::cli::test_support
