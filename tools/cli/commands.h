#pragma once
// The traincast subcommands, callable in-process (tests) and from main. Each takes its
// arguments (without the program and subcommand names) and the streams to print to, and returns
// the process exit status: 0 ok, 1 a check failed (e.g. --max-mape exceeded), 2 bad input.
// Errors in input are printed to `err` as the loaders format them (file:line:col: field: ...).

#include <iosfwd>
#include <string>
#include <vector>

namespace traincast::cli {

/// `traincast run [SCENARIO] [--set path=value]... [--json F] [--trace F] [--threads N]`
int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// `traincast validate CASES... [--max-mape PCT] [--jobs N] [--csv F]`
int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// `traincast catalog` — GPUs and node templates the scenarios may name.
int catalog_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// `traincast plan [SCENARIO] [--set ...] [--top K] [--jobs N] [--json F]` — best parallel
/// layouts for the scenario's model and cluster (tools/cli/plan_command.cc, models/planner/).
int plan_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// `traincast nccl-tests SCENARIO [--op OP] [-b MIN] [-e MAX] [-f FACTOR] [--gpus LIST] [--csv F]` —
/// nccl-tests simulated on the scenario's GPUs, printed in nccl-tests' layout (tools/cli/nccl_tests_command.cc).
int nccl_tests_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// `traincast explain SCENARIO [--path GPU_A GPU_B] [--dot FILE]` — the topology in words, a route
/// and its bottleneck, Graphviz export (tools/cli/explain_command.cc).
int explain_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `traincast sweep SWEEP --out F [--jobs N] [--resume] [--shard i/N] [--force]` — every point of a
/// sweep file, one CSV row each, in point order (tools/cli/sweep_command.cc, models/io/sweep_io.h).
/// Exit status 130 when stopped by SIGINT (rows written stay). Under mpirun (built with MPI) rank 0
/// distributes points to all ranks.
int sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// `traincast merge OUT.csv PART.csv... [--force]` — joins sweep shards into the single-run CSV.
int merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `traincast chakra run SCENARIO TRACE... [--replicate N] [--trace F]` and
/// `traincast chakra export SCENARIO --out DIR [--name NAME] [--force]` — Chakra execution traces
/// on a scenario's cluster, and its generated job as Chakra traces (tools/cli/chakra_command.cc).
int chakra_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `traincast calibrate fit MEASUREMENTS... --base B --out P` and `traincast calibrate validate
/// PROFILE MEASUREMENTS... [--holdout odd|even]` (tools/cli/calibrate_command.cc, calibrate/fit/).
int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `traincast compare A B ... [--vary field=v1,v2] [--tokens N] [--json F] [--csv F]` — scenarios side by
/// side for a buyer: time, days and dollars to train, power, with prices' sources and the model's
/// error band (tools/cli/compare_command.cc, tools/cli/compare.h).
int compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `traincast cluster SCENARIO [--set ...] [--policy fifo|backfill|both] [--threads N] [--csv F] [--json F]` —
/// several jobs sharing the scenario's cluster under a scheduler (tools/cli/cluster_command.cc,
/// models/scheduler/).
int cluster_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// Dispatches argv (program name first) to a subcommand; prints usage for none/unknown/--help.
int main_dispatch(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace traincast::cli
