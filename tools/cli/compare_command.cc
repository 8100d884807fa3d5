// `traincast compare A B ...` and `traincast compare A --vary field=v1,v2` (issue 21).
#include <algorithm>
#include <array>
#include <boost/algorithm/string/trim.hpp>
#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "models/io/scenario_io.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"
#include "tools/cli/compare.h"
#include "tools/cli/compare_notes.h"
#include "tools/cli/interrupt.h"

namespace traincast::cli {
namespace po = boost::program_options;

namespace {

/// A space or a tab: what --vary values and paths lose at their ends.
bool is_blank(char c) { return c == ' ' || c == '\t'; }

/// `text` as a finite number when all of it is one (strtod's syntax), else nullopt.
std::optional<double> as_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// "field.path=v1,v2,..." -> the field and its values. Throws UsageError.
std::pair<std::string, std::vector<std::string>> parse_vary(const std::string& v) {
  const std::size_t eq = v.find('=');
  std::vector<std::string> values;
  if (eq != std::string::npos) {
    std::size_t start = eq + 1;
    while (start <= v.size()) {
      const std::size_t comma = std::min(v.find(',', start), v.size());
      // "bf16, fp16": the spaces after a comma are the list's, not the value's (the column was
      // labelled "precision= fp16").
      values.push_back(boost::algorithm::trim_copy_if(v.substr(start, comma - start), is_blank));
      start = comma + 1;
    }
  }
  // "tp=2,,4" or "tp=2,4,": an empty value between commas, named by its position.
  if (eq != std::string::npos && eq != 0 && values.size() >= 2)
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i].empty())
        throw UsageError("--vary: value " + std::to_string(i + 1) + " of " + std::to_string(values.size()) + " in \"" +
                         v +
                         "\" is empty (expected a value after every comma: drop the extra comma or put a value there)");
  if (eq == std::string::npos || eq == 0 || values.size() < 2 || values[0].empty())
    throw UsageError("--vary: got \"" + v +
                     "\" (expected field.path=v1,v2[,...]: a scenario field and at least two "
                     "values, e.g. --vary workload.training.micro_batch_size=1,2,4)");
  // 1e12 and 1000000000000 (or 2 and 2.0) load as the same number: two identical columns.
  std::vector<std::optional<double>> numbers(values.size());
  std::transform(values.begin(), values.end(), numbers.begin(), as_number);
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      if (values[i] == values[j])
        throw UsageError("--vary: got \"" + values[i] + "\" twice in \"" + v +
                         "\" (expected each value once: a repeated value is a repeated column)");
      if (numbers[i] && numbers[j] && *numbers[i] == *numbers[j])
        throw UsageError("--vary: got \"" + values[j] + "\" and \"" + values[i] + "\", the same number, in \"" + v +
                         "\" (expected each value once: a repeated value is a repeated column)");
    }
  return {v.substr(0, eq), values};
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  std::string b = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = b.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? b : b.substr(0, dot);
}

/// The scenario at `path` (the embedded default when empty) with `overrides`; the last of them
/// from `last_option` ("--vary") when not empty, so that its messages name the option typed.
models::Scenario load(const std::string& path, const std::vector<std::string>& overrides,
                      const std::string& last_option) {
  models::Scenario sc = path.empty() ? io::default_scenario(overrides, last_option)
                                     : io::load_scenario_file(path, overrides, last_option);
  refuse_job_list(sc, path, "compare");
  return sc;
}

/// One column of the comparison: its file ("" for the embedded default), its label and its
/// overrides (every --set, then its --vary assignment).
struct Column {
  std::string file, label;
  std::vector<std::string> overrides;
};

/// The columns' labels, once their scenarios are loaded (`in`, one per column): a file's name
/// without its folder and extension; for an input that is not a regular file (a pipe, /dev/fd/N,
/// a FIFO: "63" of /dev/fd/63 names nothing the user wrote) the scenario's `name`, else its path as
/// given. Two columns of one label: a file's labelled by its path as given, a pipe's by its name
/// and path ("llama (/dev/fd/63)"), so the table and the verdicts name no two columns alike.
void label_files(std::vector<Column>& cols, std::vector<CompareInput>& in) {
  std::vector<bool> piped(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    piped[i] = io::is_stream_input(cols[i].file);
    cols[i].label = !piped[i]                     ? base_name(cols[i].file)
                    : in[i].scenario.name.empty() ? cols[i].file
                                                  : in[i].scenario.name;
  }
  std::vector<std::string> first;
  first.reserve(cols.size());
  for (const Column& c : cols) first.push_back(c.label);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (std::count(first.begin(), first.end(), first[i]) < 2) continue;
    cols[i].label = !piped[i] || cols[i].label == cols[i].file ? cols[i].file : first[i] + " (" + cols[i].file + ")";
  }
  for (std::size_t i = 0; i < cols.size(); ++i) in[i].label = cols[i].label;
}

/// A --set that failed on some of the columns but not all: its message (which names no file)
/// followed by a note at each column's file it failed on, naming the --set's field ("b.textproto:
/// note: --set cluster.overrides[0].select failed on this scenario; ..."); every other message as
/// it is, each once.
/// Messages every column gave come first, so that one of them never sits between a column's
/// messages and reads as that column's (second fresh user 43). `found[i]`: column i's messages.
std::vector<std::string> errors_by_column(const std::vector<Column>& cols,
                                          const std::vector<std::vector<std::string>>& found) {
  std::vector<std::string> messages;
  for (const std::vector<std::string>& f : found)
    for (const std::string& m : f)
      if (std::find(messages.begin(), messages.end(), m) == messages.end()) messages.push_back(m);
  std::stable_partition(messages.begin(), messages.end(), [&](const std::string& m) {
    return std::all_of(found.begin(), found.end(),
                       [&](const std::vector<std::string>& f) { return std::find(f.begin(), f.end(), m) != f.end(); });
  });
  std::vector<std::string> out;
  for (const std::string& m : messages) {
    out.push_back(m);
    if (m.rfind("--set: ", 0) != 0) continue;
    // The note names the --set by its field ("--set: FIELD: what"), not as "the --set above": read
    // as a list (the Python module's ScenarioError.errors) or between other lines, it stands alone.
    const std::size_t end = m.find(": ", 7);
    const std::string field = m.substr(7, end == std::string::npos ? std::string::npos : end - 7);
    std::vector<std::size_t> on;
    for (std::size_t i = 0; i < found.size(); ++i)
      if (std::find(found[i].begin(), found[i].end(), m) != found[i].end()) on.push_back(i);
    if (on.size() == cols.size()) continue;  // every column: nothing to tell them apart
    for (const std::size_t i : on) {
      // A --vary column is its assignment; a file's column is labelled once loaded (label_files).
      const std::string column = cols[i].label == cols[i].file ? "" : " (column " + cols[i].label + ")";
      std::string note = cols[i].file.empty() ? std::string("(embedded default)") : cols[i].file;
      note.append(": note: --set ").append(field).append(" failed on this scenario").append(column);
      out.push_back(note.append("; compare applies every --set to each scenario"));
    }
  }
  return out;
}

/// Each column's input warnings, each line once. A node_template block that another column of the
/// same file runs (`--vary cluster.node_template=a,b`) is used: its "no node uses it" warning is
/// dropped there. A setting's warning is positioned as `run` positions it (note_at_field: the
/// column's FILE:LINE:COL:, `--set:`), and `--vary:` where the varied field caused it (fresh user
/// 39); `overrides` are each column's --set values and its --vary assignment.
void print_column_warnings(std::vector<CompareInput>& in, const std::vector<std::vector<std::string>>& overrides,
                           const std::string& vary_field, std::ostream& err) {
  for (CompareInput& x : in) {
    std::vector<std::string>& notes = x.scenario.input_warnings;
    for (const CompareInput& y : in) {
      if (&y == &x || y.origin != x.origin) continue;
      std::vector<std::string> used{y.scenario.cluster.node_template};
      for (const models::NodeGroupSpec& g : y.scenario.cluster.node_groups) used.push_back(g.node_template);
      for (std::string t : used) {
        t = t.substr(0, t.find('/'));  // a partition "base/N" uses its base's block
        const std::string needle = ": \"" + t + "\" is described but no node uses it";
        std::erase_if(notes, [&](const std::string& n) { return n.find(needle) != std::string::npos; });
      }
    }
  }
  std::ostringstream warnings;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const CompareInput& x = in[i];
    const std::string file = x.origin == "(embedded default)" ? std::string() : x.origin;
    const std::vector<std::string> none;
    const std::vector<std::string>& o = i < overrides.size() ? overrides[i] : none;
    warn_groups_straddle_nodes(x.scenario, warnings);
    warn_settings_without_effect(x.scenario, warnings, file, o);
    warn_workload_settings_without_effect(x.scenario, warnings, file, o);
  }
  const std::string by_set = "warning: --set: " + vary_field;
  // Each line once: columns of one file repeat its warnings (an unused block's note names each
  // column's template after its position: once per block).
  std::istringstream lines(warnings.str());
  std::vector<std::string> printed;
  for (std::string line; std::getline(lines, line);) {
    if (!vary_field.empty() && line.rfind(by_set, 0) == 0 && line.size() > by_set.size() &&
        (line[by_set.size()] == ' ' || line[by_set.size()] == ':'))
      line = "warning: --vary: " + line.substr(by_set.size() - vary_field.size());
    const std::string key = line.substr(0, line.find(" is described but no node uses it"));
    if (std::find(printed.begin(), printed.end(), key) != printed.end()) continue;
    printed.push_back(key);
    err << line << "\n";
  }
}

/// The options and --help text of `traincast compare`.
po::options_description compare_options() {
  po::options_description opts(
      "traincast compare A B [C...] [options]\n"
      "traincast compare [A] --vary field.path=v1,v2[,...] [options]\n\n"
      "Runs each scenario (or one scenario once per value of one field) and prints one table: time per\n"
      "iteration, tokens/s, MFU, memory headroom, the time to train a token budget with goodput from\n"
      "the reliability model, facility power (IT x PUE) average and peak, energy to train, rent and\n"
      "own cost (TCO, payback), then the prices used with their source and date, the model's\n"
      "validated error per GPU (docs/accuracy.md) and a verdict per scenario against the first. A\n"
      "scenario without a token budget gets --tokens, else 20 tokens per parameter (marked *);\n"
      "without reliability/cost sections, their defaults (catalog prices; a GPU with no public\n"
      "price is shown as not priced). A scenario with cluster.overrides is also run without them: under the\n"
      "table, what each entry did and what they cost, as `run` prints it. Bad input: positioned error, exit\n"
      "status 2. On a terminal, stderr shows the scenarios simulated so far.\n\nOptions");
  opts.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scalar field in every scenario, e.g. --set cost.utilization=0.6; a list's entry by its index, "
      "the next index adding one, e.g. --set 'cluster.overrides[0].select=node1/gpu3' (repeatable)")(
      "vary", po::value<std::string>(),
      "one field and its values, one column each: --vary workload.training.micro_batch_size=1,2,4")(
      "tokens", po::value<double>(),
      "token budget for scenarios that give none (workload.training.train_tokens): a whole number, e.g. 1e12")(
      "jobs,j", po::value<int>()->default_value(1),
      "scenarios simulated in parallel, 1 to 1024, 0 for all hardware threads (output identical for any value)")(
      "json", po::value<std::string>(), "also write the comparison as JSON to this file")(
      "csv", po::value<std::string>(), "also write the comparison as CSV to this file")(
      "force", "overwrite existing --json/--csv files")("scenarios", po::value<std::vector<std::string>>(),
                                                        "scenario files");
  return opts;
}

}  // namespace

int compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description opts = compare_options();
  po::positional_options_description pos;
  pos.add("scenarios", -1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    const std::vector<std::string> files =
        vm.count("scenarios") ? vm["scenarios"].as<std::vector<std::string>>() : std::vector<std::string>{};
    const std::vector<std::string> sets =
        vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
    const int jobs = thread_count_option("--jobs", vm["jobs"].as<int>(), kSimulationsWhy);
    const double tokens = vm.count("tokens") ? vm["tokens"].as<double>() : 0.0;
    if (vm.count("tokens") && !(tokens >= 1 && tokens <= io::kMaxTrainTokens && tokens == std::floor(tokens))) {
      // The shortest text that reads back to the value (1000000000.5 printed as "1e+09" before).
      std::array<char, 64> got{};
      const auto end = std::to_chars(got.data(), got.data() + got.size(), tokens).ptr;
      throw UsageError(
          "--tokens: got " + std::string(got.data(), end) +
          " (expected a whole number of tokens from 1 to 1e15, e.g. 1e12: " + std::string(io::kTrainTokensWhy) + ")");
    }
    std::vector<Column> cols;
    std::string vary_field;
    if (vm.count("vary")) {
      if (files.size() > 1)
        throw UsageError("--vary: takes one scenario (got " + std::to_string(files.size()) +
                         "; expected `traincast compare SCENARIO --vary field=v1,v2`)");
      const auto [field, values] = parse_vary(vm["vary"].as<std::string>());
      vary_field = field;
      // A --set of the varied field would be overridden by every column's value without a word.
      // Paths compared as the loader reads them: spaces around the path ignored (an index with a
      // leading zero, "node_group[01]", is refused by the loader).
      const auto canonical = [](std::string path) {
        boost::algorithm::trim_if(path, is_blank);
        return path;
      };
      for (const std::string& a : sets) {
        if (canonical(a.substr(0, a.find('='))) != canonical(field)) continue;
        std::string message = "--set " + a;
        message += ": sets the field --vary varies (expected one of them for ";
        message += field;
        message += ")";
        throw UsageError(message);
      }
      for (const std::string& v : values) {
        std::string assignment = field;
        assignment += '=';
        assignment += v;
        std::vector<std::string> o = sets;
        o.push_back(assignment);
        cols.push_back({files.empty() ? "" : files[0], assignment, o});
      }
    } else {
      if (files.size() < 2)
        throw UsageError("compare: needs at least two scenarios, or one with --vary field=v1,v2 (got " +
                         std::to_string(files.size()) + ")");
      // The same file twice gets the same --set and so the same answer: a slip, not a comparison.
      refuse_repeated_files(files, "compare", "different scenarios, or one with --vary field=v1,v2");
      for (const std::string& f : files) cols.push_back({f, f, sets});  // labelled once loaded: label_files
    }
    if (vm.count("json") && vm.count("csv") && vm["json"].as<std::string>() == vm["csv"].as<std::string>())
      throw UsageError("--csv: names the same file as --json");
    // Another spelling of one file ("./c.csv" and "c.csv") is refused by check_output_path.
    std::vector<std::string> written;
    for (const char* o : {"json", "csv"}) {
      if (!vm.count(o)) continue;
      check_output_path(vm[o].as<std::string>(), vm.count("force") > 0, files, written);
      written.push_back(vm[o].as<std::string>());
    }
    // Load every column first (all input errors before any simulation), then fill the defaults.
    std::vector<CompareInput> in;
    std::vector<std::string> budgets;
    std::vector<std::vector<std::string>> errors(cols.size());
    // The varied field's value comes from --vary (the last override), not from a --set: the loader
    // names that option in its messages.
    const std::string last_option = vary_field.empty() ? "" : "--vary";
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const Column& c = cols[i];
      try {
        const models::Scenario first = load(c.file, c.overrides, last_option);
        std::string budget;
        std::vector<std::string> o = compare_defaults(first, tokens, budget);
        o.insert(o.end(), c.overrides.begin(), c.overrides.end());
        models::Scenario filled = load(c.file, o, last_option);
        const bool reliability_added = !first.reliability && filled.reliability;  // compare_defaults' section
        in.push_back({c.label, c.file.empty() ? "(embedded default)" : c.file, std::move(filled), reliability_added,
                      c.overrides, last_option});
        budgets.push_back(budget);
      } catch (const io::ScenarioError& e) {
        errors[i] = e.errors();
      }
    }
    if (std::any_of(errors.begin(), errors.end(), [](const auto& e) { return !e.empty(); }))
      throw io::ScenarioError(errors_by_column(cols, errors));
    if (vary_field.empty()) label_files(cols, in);
    for (std::size_t i = 0; i < in.size(); ++i)
      if (tokens > 0 && budgets[i] == "scenario")
        err << "traincast compare: --tokens not used for " << in[i].label
            << ": its scenario (file or --set) gives workload.training.train_tokens ("
            << in[i].scenario.training.train_tokens << ")\n";
    std::vector<std::vector<std::string>> column_overrides;
    column_overrides.reserve(cols.size());
    for (const Column& c : cols) column_overrides.push_back(c.overrides);
    print_column_warnings(in, column_overrides, vary_field, err);
    // A --set price over columns of unlike hardware (compare_notes.h).
    warn_prices_set_for_unlike_columns(in, sets, err);
    const InterruptScope interrupts;  // Ctrl-C stops the simulations (exit 130, nothing written)
    // On a terminal, "compare: scenarios simulated: 3/40 (8%)" (a 40-value --vary runs minutes).
    TerminalProgress progress(progress_terminal(err), kCompareProgress);
    const CompareResult result = compare_scenarios(in, budgets, jobs);
    progress.finish();
    out << format_compare(result) << cooling_pue_note(in);
    if (vm.count("json")) write_output_file(vm["json"].as<std::string>(), compare_to_json(result));
    if (vm.count("csv")) write_output_file(vm["csv"].as<std::string>(), compare_to_csv(result));
    return 0;
  });
}

}  // namespace traincast::cli
