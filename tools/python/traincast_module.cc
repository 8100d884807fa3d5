// traincast._traincast: the compiled half of the `traincast` Python package (docs/python.md).
// It runs a traincast subcommand in this process, through the same function the CLI's main
// calls (tools/cli/commands.h main_dispatch), and hands back its exit status and what it printed;
// tools/python/traincast/__init__.py builds the Python API (run, sweep, plan, compare, cluster, nccl_tests,
// catalog, validate) on it and reads the JSON and CSV files the subcommands write.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tools/cli/commands.h"

namespace py = pybind11;

namespace {

/// Runs `traincast ARGS...` in process. args: the subcommand and its arguments, as on the command
/// line (without the program name). Returns (exit status, stdout text, stderr text); the status
/// is the CLI's: 0 ok, 1 a check failed or an internal error, 2 bad input, 130 interrupted.
/// The GIL is released while it runs, so other Python threads go on; Ctrl-C reaches the
/// subcommand's own handler (it stops and returns 130) and Python's handler is restored after.
std::tuple<int, std::string, std::string> call(const std::vector<std::string>& args) {
  // argv holds C strings: a NUL would cut the argument there and what follows would never be
  // checked (fresh-user finding: a name "x\0y\x1b[31m" ran as "x"). Refused as the CLI refuses bad
  // input, with exit status 2.
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::size_t nul = args[i].find('\0');
    if (nul != std::string::npos) {
      return {2, "",
              "traincast: argument " + std::to_string(i + 1) + " (\"" +
                  args[i].substr(0, std::min<std::size_t>(nul, 40)) + "\"...) contains a NUL character at offset " +
                  std::to_string(nul) + " (expected text without NUL: a command line cannot carry one)\n"};
    }
  }
  std::vector<std::string> argv_strings;
  argv_strings.reserve(args.size() + 1);
  argv_strings.emplace_back("traincast");
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  int status = 0;
  {
    const py::gil_scoped_release release;
    status = traincast::cli::main_dispatch(static_cast<int>(argv_strings.size()), argv.data(), out, err);
  }
  return {status, out.str(), err.str()};
}

}  // namespace

PYBIND11_MODULE(_traincast, m) {
  m.doc() = "traincast's subcommands run in process (use the traincast package, not this module)";
  m.def("call", &call, py::arg("args"),
        "Runs `traincast ARGS...` in this process; returns (exit_status, stdout, stderr).");
}
