#pragma once
// Runs the traincast command line in-process for the CLI tests: main_dispatch with argv
// {"traincast", args...}, stdout and stderr captured as strings (slurp() of tests/support/fixtures.h
// reads an output file).

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
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
  argv.reserve(argv_s.size());
  for (auto& s : argv_s) argv.push_back(s.data());
  const int status = main_dispatch(static_cast<int>(argv.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

using traincast::test_support::slurp;  // tests/support/fixtures.h

/// Whether `what` occurs in `text` (a command's stdout or stderr).
inline bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

/// Occurrences of `what` in `text` (overlapping ones counted).
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace traincast::cli::test_support
