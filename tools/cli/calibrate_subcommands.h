#pragma once
// The subcommands of `traincast calibrate` (tools/cli/calibrate_command.cc dispatches to them);
// arguments without the program and subcommand names, exit status as commands.h.

#include <iosfwd>
#include <string>
#include <vector>

namespace traincast::cli {

/// `traincast calibrate fit MEASUREMENTS... --base BASE --out PROFILE [options]`
/// (tools/cli/calibrate_fit_command.cc).
int calibrate_fit_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `traincast calibrate validate PROFILE MEASUREMENTS... [options]` and
/// `traincast calibrate validate --cases CASES --holdout odd|even` (tools/cli/calibrate_validate_command.cc).
int calibrate_validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace traincast::cli
