// `traincast merge OUT.csv PART.csv...`: joins the CSVs of `traincast sweep --shard i/N` (or any
// CSVs of one sweep that together hold every point once) into the CSV a single run writes.

#include <algorithm>
#include <boost/program_options.hpp>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "models/io/sweep.h"
#include "models/io/sweep_csv.h"
#include "models/io/sweep_loader.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

std::string shard_name(models::SweepShard s) {
  return s.count == 1 ? std::string("whole sweep") : "shard " + std::to_string(s.index) + "/" + std::to_string(s.count);
}

/// Refuses parts that are not `sweep`'s (hash, point count, header) or whose rows' axis values
/// are not their points' (io::check_sweep_csv_axes). files[i + 1] is parts[i]'s path.
void check_parts_against_sweep(const models::Sweep& sweep, const std::string& sweep_path,
                               const std::vector<io::SweepCsv>& parts, const std::vector<std::string>& files) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const io::SweepCsv& p = parts[i];
    const std::string& name = files[i + 1];
    if (p.hash != sweep.hash || p.points != sweep.num_points()) {
      std::string msg = name + ":1: not from ";
      msg += sweep_path + " (hash " + p.hash + ", " + std::to_string(p.points) + " points; the sweep: hash ";
      msg += sweep.hash + ", " + std::to_string(sweep.num_points()) + " points) (expected parts of that sweep)";
      problems.push_back(msg);
      continue;
    }
    try {
      io::check_sweep_csv_axes(p, name, sweep);
    } catch (const io::ScenarioError& e) {
      problems.insert(problems.end(), e.errors().begin(), e.errors().end());
    }
  }
  if (!problems.empty()) throw io::ScenarioError(problems);
}

}  // namespace

int merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast merge OUT.csv PART.csv... [--sweep SWEEP] [--force]\n\n"
      "Joins CSVs written by `traincast sweep --shard i/N` (one per shard, or any CSVs of the same\n"
      "sweep that together hold every point exactly once) into OUT.csv, byte for byte the CSV that\n"
      "one `traincast sweep` run writes. Checks that every part comes from the same sweep (hash in\n"
      "the first line) with the same columns, that no point is in two parts and none is missing,\n"
      "and every cell as the sweep writes it (status, metrics >= 0, a reason for oom/invalid/error\n"
      "rows). With --sweep, also that the parts are that sweep's and each row's axis values are its\n"
      "point's; without it the axis values cannot be checked, and a note on stderr says so.\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("force", "overwrite an existing OUT.csv")(
      "sweep", po::value<std::string>(), "the sweep file the parts were run from: check each row's axis values")(
      "files", po::value<std::vector<std::string>>(), "OUT.csv then the parts (positional)");
  po::positional_options_description pos;
  pos.add("files", -1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    const std::vector<std::string> files =
        vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (files.size() < 2)
      throw UsageError("merge: expected OUT.csv and at least one part (usage: traincast merge OUT.csv PART.csv...)");
    const std::string& out_path = files[0];
    std::vector<std::string> inputs(files.begin() + 1, files.end());
    const std::string sweep_path = vm.count("sweep") ? vm["sweep"].as<std::string>() : std::string();
    if (!sweep_path.empty()) inputs.push_back(sweep_path);
    check_output_path(out_path, vm.count("force") > 0, inputs);
    // A part given twice would report each of its points as "also in" itself.
    refuse_repeated_files(std::vector<std::string>(files.begin() + 1, files.end()), "merge",
                          "each part once: a part given twice holds every point twice");
    std::vector<io::SweepCsv> parts;
    for (std::size_t i = 1; i < files.size(); ++i) parts.push_back(io::read_sweep_csv(files[i]));
    const io::SweepCsv& first = parts[0];
    std::vector<std::string> problems;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const io::SweepCsv& p = parts[i];
      const std::string& name = files[i + 1];
      if (p.partial_last_line) {
        problems.push_back(name +
                           ": ends inside a row: its run was interrupted (expected a finished part: "
                           "continue it with traincast sweep --resume)");
      }
      if (i == 0) continue;
      if (p.hash != first.hash || p.points != first.points) {
        problems.push_back(name + ":1: from a different sweep (hash " + p.hash + ", " + std::to_string(p.points) +
                           " points) than " + files[1] + " (hash " + first.hash + ", " + std::to_string(first.points) +
                           " points) (expected parts of one sweep)");
      } else if (p.header != first.header) {
        problems.push_back(name + ":2: header differs from " + files[1] + "'s (expected the same columns)");
      }
    }
    if (!problems.empty()) throw io::ScenarioError(problems);
    if (!sweep_path.empty()) {
      const models::Sweep sweep = io::load_sweep_file(sweep_path);
      if (!sweep.base_path.empty()) check_output_path(out_path, true, {sweep.base_path});  // not the sweep's base
      check_parts_against_sweep(sweep, sweep_path, parts, files);
    }

    // Every point once.
    struct Where {
      std::size_t part;
      const io::SweepCsv::Row* row;
    };
    std::vector<Where> by_point(first.points, {0, nullptr});
    for (std::size_t i = 0; i < parts.size(); ++i) {
      for (const io::SweepCsv::Row& r : parts[i].rows) {
        Where& w = by_point[r.point];
        if (w.row != nullptr) {
          problems.push_back(files[i + 1] + ":" + std::to_string(r.line_number) + ": point " + std::to_string(r.point) +
                             " is also in " + files[w.part + 1] + ":" + std::to_string(w.row->line_number) +
                             " (expected each point in one part)");
          continue;
        }
        w = {i, &r};
      }
    }
    std::vector<std::size_t> missing;
    for (std::size_t p = 0; p < by_point.size(); ++p) {
      if (by_point[p].row == nullptr) missing.push_back(p);
    }
    if (!missing.empty()) {
      std::string list;
      for (std::size_t k = 0; k < std::min<std::size_t>(missing.size(), 10); ++k) {
        list += (k == 0 ? "" : ", ") + std::to_string(missing[k]);
      }
      if (missing.size() > 10) list += ", ...";
      std::map<std::string, int> shards_seen;
      for (const io::SweepCsv& p : parts) ++shards_seen[shard_name(p.shard)];
      std::string seen;
      for (const auto& [name, n] : shards_seen) seen += (seen.empty() ? "" : ", ") + name;
      problems.push_back("merge: " + std::to_string(missing.size()) + " of " + std::to_string(first.points) +
                         " points are in no part (" + list + "; parts given: " + seen +
                         ") (expected every point: is a shard missing or unfinished?)");
    }
    if (!problems.empty()) throw io::ScenarioError(problems);

    // The single-run CSV: its first line names no shard.
    const std::string comment = "# traincast sweep " + first.hash + " points " + std::to_string(first.points) + "\n";
    std::string text = comment + first.header;
    for (const Where& w : by_point) text += w.row->line;
    write_output_file(out_path, text);
    if (sweep_path.empty()) {
      err << "traincast merge: note: axis values not checked against the sweep (pass --sweep SWEEP to check "
             "that each row's axis values are its point's)\n";
    }
    out << "traincast merge: " << first.points << " points from " << parts.size() << " part"
        << (parts.size() == 1 ? "" : "s") << " -> " << out_path << "\n";
    return 0;
  });
}

}  // namespace traincast::cli
