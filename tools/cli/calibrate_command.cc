// `traincast calibrate fit|validate`: measured points (traincast-bench files, nccl-tests logs,
// CSV) -> a calibration profile, and measured vs re-simulated per point (calibrate/fit/). This
// file dispatches to the subcommands (calibrate_subcommands.h).

#include <ostream>
#include <string>
#include <vector>

#include "tools/cli/calibrate_subcommands.h"
#include "tools/cli/commands.h"

namespace traincast::cli {

int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "usage: traincast calibrate fit MEASUREMENTS... --base BASE --out PROFILE [options]\n"
      "       traincast calibrate validate PROFILE MEASUREMENTS... [--holdout odd|even]\n"
      "       traincast calibrate validate --cases CASES --holdout odd|even\n"
      "`traincast calibrate fit --help` and `traincast calibrate validate --help` describe them.\n";
  if (args.empty()) {
    err << usage;
    return 2;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "fit") return calibrate_fit_command(rest, out, err);
  if (args[0] == "validate") return calibrate_validate_command(rest, out, err);
  if (args[0] == "--help" || args[0] == "-h") {
    out << usage;
    return 0;
  }
  err << "traincast calibrate: unknown subcommand '" << args[0] << "'\n" << usage;
  return 2;
}

}  // namespace traincast::cli
