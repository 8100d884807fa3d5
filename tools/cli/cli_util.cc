#include "tools/cli/cli_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "models/calibration/calibration_profile.h"
#include "models/collectives/nccl_tests.h"
#include "models/executor/power_thermal_setup.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/network_size.h"
#include "models/io/int_ranges.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "models/io/suggest.h"
#include "models/spec/report.h"
#include "models/spec/run_control.h"
#include "models/spec/scenario.h"
#include "models/workload/settings_notes.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace traincast::cli {
namespace fs = std::filesystem;

int guarded(std::ostream& err, int (*body)(void*), void* ctx) {
  try {
    return body(ctx);
  } catch (const models::Interrupted& e) {
    // Ctrl-C: one line, the shell's status for the signal (130 for SIGINT); nothing was written.
    err << "traincast: " << e.what() << " (no output written)\n";
    return 128 + (models::interrupt_signal() > 0 ? models::interrupt_signal() : SIGINT);
  } catch (const io::ScenarioError& e) {
    for (const std::string& m : e.errors()) err << m << "\n";
    return 2;
  } catch (const UsageError& e) {
    err << "traincast: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    err << "traincast: " << e.what() << "\n";
    return 2;
  } catch (const std::overflow_error& e) {
    err << "traincast: the scenario is beyond the simulator's range: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "traincast: internal error: " << e.what() << "\n";
    return 1;
  }
}

namespace {

/// The path with links resolved as far as they exist (the file itself may not exist yet).
fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p) : r;
}

}  // namespace

void refuse_non_file_output(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows symlinks
  if (fs::is_directory(st))
    throw UsageError(path + ": is a directory (expected a file path for the output, not a directory)");
  if (fs::exists(st) && !fs::is_regular_file(st))
    throw UsageError(path + ": exists and is not a regular file (a device, FIFO or socket); expected a file name");
}

void check_output_path(const std::string& path, bool force, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& other_outputs) {
  if (path.empty()) throw UsageError("output file name is empty");
  // No command reads or writes '-' as standard input/output (standard output carries the summary
  // or table), so '-' is refused rather than written as a file named '-'.
  if (path == "-")
    throw UsageError(
        "-: output to standard output is not supported (expected a file name; standard output carries the "
        "command's summary; use ./- for a file named '-')");
  refuse_non_file_output(path);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows symlinks
  if (fs::exists(st)) {
    if (!force) throw UsageError(path + ": file exists (pass --force to overwrite it)");
  } else if (fs::is_symlink(fs::symlink_status(path, ec))) {
    throw UsageError(path + ": is a dangling symbolic link (expected a file name)");
  }
  const fs::path target = resolved(path);
  const fs::path dir = target.parent_path();
  if (!fs::is_directory(dir, ec))
    throw UsageError(path + ": " +
                     (fs::exists(dir, ec) ? dir.string() + " is a file, not a directory"
                                          : "directory " + dir.string() + " does not exist"));
  if (::access(dir.c_str(), W_OK) != 0) {
    std::string msg = path;
    msg.append(": cannot write in ").append(dir.string()).append(" (").append(std::strerror(errno)).append(")");
    throw UsageError(msg);
  }
  // access() answers yes to root everywhere (/proc included), so try what write_output_file will
  // do: create a temporary file beside the target (then renamed over it) and, for an existing
  // target, open it for writing without truncating it. A run used to simulate for its whole length
  // and only then find it could not write.
  const bool existed = fs::exists(st);
  std::string probe = (dir / ".traincast_probe.XXXXXX").string();
  const int probe_fd = ::mkstemp(probe.data());
  if (probe_fd < 0) {
    std::string msg = path;
    msg.append(": cannot write: ")
        .append(dir.string())
        .append(" does not take new files (")
        .append(std::strerror(errno));
    msg.append(
        "; the output is written to a temporary file there and renamed; expected a directory on a writable file "
        "system)");
    throw UsageError(msg);
  }
  ::close(probe_fd);
  ::unlink(probe.c_str());
  if (existed) {
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) {
      std::string msg = path;
      msg.append(": cannot write it (").append(std::strerror(errno)).append(")");
      throw UsageError(msg);
    }
    ::close(fd);
  }
  for (const std::string& in : inputs)
    if (resolved(in) == target) {
      std::string msg = path;
      msg.append(": is one of the input files (").append(in).append(")");
      throw UsageError(msg);
    }
  for (const std::string& other : other_outputs)
    if (resolved(other) == target) throw UsageError(path + ": given for two outputs");
}

void refuse_repeated_files(const std::vector<std::string>& files, const std::string& command,
                           const std::string& expected) {
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (files[j] != files[i] && !fs::equivalent(files[j], files[i], ec)) continue;
      std::string message = command;
      message.append(": ").append(files[i]).append(" is given twice (expected ").append(expected).append(")");
      throw UsageError(message);
    }
}

void refuse_job_list(const models::Scenario& sc, const std::string& scenario_path, const std::string& command) {
  if (sc.jobs.empty()) return;
  throw io::ScenarioError({io::field_position(scenario_path, "job") +
                           ": job: the scenario holds several jobs (expected `traincast cluster` for it; `traincast " +
                           command + "` simulates one job on the whole cluster)"});
}

void warn_groups_straddle_nodes(const models::Scenario& sc, std::ostream& err) {
  const int per_node = models::cluster_node_template(sc.cluster).gpus_per_node;
  const auto check = [&](const char* what, int group) {
    if (group <= 1 || per_node % group == 0 || group % per_node == 0) return;
    err << "warning: " << what << " groups of " << group << " GPUs straddle the " << per_node
        << "-GPU nodes (NVLink domains) of " << sc.cluster.node_template
        << ": neither size divides the other, so some groups span two nodes and their collectives cross the "
           "NICs (expected a "
        << what << " that divides " << per_node << " or is a multiple of it)\n";
  };
  check("TP", sc.parallel.tp);
  if (sc.parallel.cp > 1) check("TP x CP", sc.parallel.tp * sc.parallel.cp);
}

namespace {

/// True for a scenario field path: lower-case words (with digits: fp8_recipe) joined by dots, at
/// least one dot (cluster.node_group, workload.parallel.uneven_stages), a word of a list with its
/// index (cluster.overrides[0].power_cap_w).
bool is_field_path(const std::string& s) {
  return s.find('.') != std::string::npos && s.front() != '.' && s.back() != '.' &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '[' || c == ']';
         });
}

}  // namespace

std::string note_at_field(const std::string& note, const std::string& scenario_path,
                          const std::vector<std::string>& overrides) {
  const std::string head = note.substr(0, note.find_first_of(" :"));
  if (!is_field_path(head)) return note;
  const std::string where = scenario_field_origin(scenario_path, head, overrides);
  if (where.rfind("--set ", 0) == 0) return "--set: " + note;  // as the --set errors name it
  if (scenario_path.empty()) return note;                      // the embedded default: no file
  return where + ": " + note;
}

void warn_settings_without_effect(const models::Scenario& sc, std::ostream& err, const std::string& scenario_path,
                                  const std::vector<std::string>& overrides, bool gpu_overrides_act) {
  for (const std::string& note : sc.input_warnings) err << "warning: " << note << "\n";
  for (const std::string& note : models::Cluster::settings_without_effect(sc.cluster))
    err << "warning: " << note_at_field(note, scenario_path, overrides) << "\n";
  for (const std::string& note : models::thermal_settings_without_effect(sc))
    err << "warning: " << note_at_field(note, scenario_path, overrides) << "\n";
  if (gpu_overrides_act)
    for (const std::string& note : models::power_caps_without_effect(sc))
      err << "warning: " << note_at_field(note, scenario_path, overrides) << "\n";
  warn_nic_spread(sc.cluster, err, scenario_path, overrides);
}

void warn_nic_spread(const models::ClusterSpec& cluster, std::ostream& err, const std::string& scenario_path,
                     const std::vector<std::string>& overrides) {
  std::vector<std::string> notes;
  try {
    notes = models::Cluster::nic_spread_notes(cluster);
  } catch (const std::invalid_argument&) {
    return;  // a bad spec: the command's Cluster gives its own message
  }
  for (const std::string& note : notes) err << "warning: " << note_at_field(note, scenario_path, overrides) << "\n";
}

void warn_workload_settings_without_effect(const models::Scenario& sc, std::ostream& err,
                                           const std::string& scenario_path,
                                           const std::vector<std::string>& overrides) {
  for (const std::string& note : models::workload_settings_without_effect(sc))
    err << "warning: " << note_at_field(note, scenario_path, overrides) << "\n";
}

std::vector<std::string> scenario_input_files(const models::Scenario& sc, const std::string& scenario_path) {
  std::vector<std::string> files;
  if (!scenario_path.empty()) files.push_back(scenario_path);
  if (sc.cluster.profile && !sc.cluster.profile->origin.empty()) files.push_back(sc.cluster.profile->origin);
  return files;
}

void write_output_file(const std::string& path, const std::string& text) {
  const fs::path target = resolved(path);
  std::string name = ".";  // appended, not "." + ...: bogus GCC 12 -Wrestrict (GCC bug 105651)
  name += target.filename().string();
  name += ".XXXXXX";
  std::string tmpl = (target.parent_path() / name).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw UsageError(path + ": cannot write (" + std::strerror(errno) + ")");
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmpl.c_str());
      std::string msg = path;
      msg.append(": write failed (").append(why).append(")");
      throw UsageError(msg);
    }
    done += static_cast<std::size_t>(n);
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    throw UsageError(path + ": write failed (" + why + ")");
  }
  if (std::rename(tmpl.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    throw UsageError(path + ": cannot write (" + why + ")");
  }
}

namespace {

/// What a numeric option refused by Boost takes, from its declared type: a value with spaces around
/// it is refused for every option (Boost's lexical_cast reads no spaces; one rule, not a trim for
/// some options), a number out of an int option's range says the range, anything else says the type.
std::string expected_option_value(const boost::program_options::options_description& opts, const std::string& option,
                                  const std::string& got) {
  namespace po = boost::program_options;
  const std::string name = option.substr(std::min(option.find_first_not_of('-'), option.size()));
  const po::option_description* desc = opts.find_nothrow(name, false);
  const bool whole = desc != nullptr && dynamic_cast<const po::typed_value<int>*>(desc->semantic().get()) != nullptr;
  std::string kind = whole ? "a whole number" : "a number";  // not const: returned by move
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  if (got.empty()) return kind;
  if (space(got.front()) || space(got.back())) return kind + " without spaces around it";
  if (whole) {
    // Digits Boost refused are beyond int's range, so beyond every int option's own range (which
    // the option's check names for values int holds; int's own range would read as the option's).
    const std::size_t sign = got.front() == '-' || got.front() == '+' ? 1 : 0;
    const bool digits = got.size() > sign && got.find_first_not_of("0123456789", sign) == std::string::npos;
    return digits ? kind + " in the option's range, not one this large" : kind + ", written in digits";
  }
  return kind;
}

/// For an integer written with a leading zero ("007", "-07", "00"): the number as it is written
/// without them ("7", "-7", "0"); "" for any other text ("0", "70", "0.5", "1e07").
std::string without_leading_zeros(const std::string& v) {
  const std::size_t sign = !v.empty() && v.front() == '-' ? 1 : 0;
  const std::string_view digits = std::string_view(v).substr(sign);
  if (digits.size() < 2 || digits.front() != '0' || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return {};
  const std::size_t first = std::min(digits.find_first_not_of('0'), digits.size() - 1);
  return v.substr(0, sign) + std::string(digits.substr(first));
}

/// "--tokens: got "1e-400": out of range as written (expected a finite number: ...)".
std::string out_of_range(const std::string& option, const std::string& got) {
  return option + ": got \"" + got + "\": out of range as written (expected " +
         std::string(io::detail::kDoubleRangeExpected) + ")";
}

}  // namespace

boost::program_options::variables_map parse_options(const std::vector<std::string>& args,
                                                    const boost::program_options::options_description& opts,
                                                    const boost::program_options::positional_options_description& pos) {
  namespace po = boost::program_options;
  po::variables_map vm;
  try {
    // No prefix guessing (fresh user, session 32: `--forc` was taken as --force, `--js F` as
    // --json F): an option is its whole name or an error with the closest name.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    const po::parsed_options parsed = po::command_line_parser(args).options(opts).positional(pos).style(style).run();
    // Boost reads a double option's "1e-400" as 0 without a word (1e400 it refuses): refused as
    // written, as a scenario file's number is (io::detail::double_out_of_range).
    for (const po::option& o : parsed.options) {
      const po::option_description* d = opts.find_nothrow(o.string_key, false);
      // An output option given "" (`--json ""`): named here, check_output_path would not know the flag.
      static const std::array<std::string_view, 5> kOutputs = {"json", "csv", "trace", "out", "dot"};
      if (d != nullptr && o.position_key < 0 &&
          std::find(kOutputs.begin(), kOutputs.end(), d->long_name()) != kOutputs.end())
        for (const std::string& v : o.value)
          if (v.empty())
            throw UsageError("--" + d->long_name() + ": got an empty file name (expected a path to write)");
      const bool is_double =
          d != nullptr && dynamic_cast<const po::typed_value<double>*>(d->semantic().get()) != nullptr;
      const bool is_int = d != nullptr && dynamic_cast<const po::typed_value<int>*>(d->semantic().get()) != nullptr;
      // Boost reads "+2" as 2, where --set options.threads=+2 and a scenario file's `threads: +2`
      // are refused (fresh user 43): one number reads the same everywhere.
      if (is_double || is_int)
        for (const std::string& v : o.value)
          if (!v.empty() && v.front() == '+')
            throw UsageError("--" + d->long_name() + ": got \"" + v +
                             "\": a number takes no '+' sign, as in a scenario file and --set (expected " +
                             v.substr(1) + ")");
      // Boost reads "007" as 7, where a scenario file and --set refuse an integer with a leading
      // zero (protobuf's text format reads it as octal): refused here too, one rule everywhere.
      if (is_double || is_int)
        for (const std::string& v : o.value)
          if (const std::string plain = without_leading_zeros(v); !plain.empty()) {
            std::string what = "--" + d->long_name();
            what.append(": got \"")
                .append(v)
                .append("\": a number has no leading zero, as in a scenario file and --set");
            throw UsageError(what.append(" (expected ").append(plain).append(")"));
          }
      if (!is_double) continue;
      for (const std::string& v : o.value)
        if (!v.empty() && std::isspace(static_cast<unsigned char>(v.front())) == 0 &&
            io::detail::double_out_of_range(v))
          throw UsageError(out_of_range("--" + d->long_name(), v));
    }
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::vector<std::string> names;
    for (const auto& o : opts.options())
      if (!o->long_name().empty()) names.push_back("--" + o->long_name());
    // `--threads=2` names the option with its value: compare the name alone.
    const std::string given = e.get_option_name().substr(0, e.get_option_name().find('='));
    std::string hint = io::detail::did_you_mean(given, names);
    // Another command's name for the same option (fresh user 43: `compare --threads 2`): run and
    // cluster take --threads; compare, plan, sweep and validate, running many simulations, --jobs.
    static const std::array<std::pair<std::string_view, std::string_view>, 2> kOtherName = {
        {{"--threads", "--jobs"}, {"--jobs", "--threads"}}};
    for (const auto& [other, ours] : kOtherName)
      if (hint.empty() && given == other && std::find(names.begin(), names.end(), ours) != names.end())
        hint = ", did you mean \"" + std::string(ours) + "\"? (this command's name for " + std::string(other) + ")";
    throw UsageError(std::string(e.what()) + hint);
  } catch (const po::invalid_option_value& e) {
    // Boost says "the argument ('abc') for option '--threads' is invalid": name the flag first,
    // as every other usage error does, and what it takes.
    const std::string what = e.what();
    const std::size_t a = what.find("('");
    const std::size_t b = what.find("')", a == std::string::npos ? 0 : a);
    const std::string got = a != std::string::npos && b != std::string::npos ? what.substr(a + 2, b - a - 2) : "";
    throw UsageError(e.get_option_name() + ": got \"" + got + "\" (expected " +
                     expected_option_value(opts, e.get_option_name(), got) + "; see --help for the option's range)");
  } catch (const po::too_many_positional_options_error&) {
    const unsigned most = pos.max_total_count();
    throw UsageError(most == 0 ? std::string("this command takes no file names (got one; options take the form "
                                             "--name value)")
                               : "too many file names on the command line (expected at most " + std::to_string(most) +
                                     (most == 1 ? " file" : " files") + "; options take the form --name value)");
  } catch (const po::multiple_occurrences& e) {
    // Boost says "option '--vary' cannot be specified more than once": named first, as every
    // other usage error, with what it takes (the last one would otherwise have to win silently).
    // Named as the user may have typed it: a short form beside the long one ("-b/--minbytes";
    // fresh user, session 39: `-b 8 -b 16` read "--minbytes: given more than once").
    std::string name = e.get_option_name();
    const std::string key = name.rfind("--", 0) == 0 ? name.substr(2) : name;
    if (const po::option_description* d = opts.find_nothrow(key, false)) {
      const std::string shorter = d->canonical_display_name(po::command_line_style::allow_dash_for_short);
      if (shorter.size() == 2 && shorter[0] == '-') name = shorter + "/" + name;
    }
    throw UsageError(name + ": given more than once (expected it once: it takes a single value; see --help)");
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

std::string scenario_field_origin(const std::string& scenario_path, const std::string& field,
                                  const std::vector<std::string>& overrides) {
  std::string where = scenario_path.empty() ? "(embedded default)" : io::field_position(scenario_path, field);
  for (const std::string& a : overrides)
    if (a.rfind(field + "=", 0) == 0) where = "--set " + a;
  return where;
}

std::string option_that_set(const std::string& field, const std::vector<std::string>& overrides,
                            const std::string& last_option) {
  std::string option;
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    std::string path = overrides[i].substr(0, overrides[i].find('='));
    path.erase(path.find_last_not_of(" \t") + 1);
    path.erase(0, path.find_first_not_of(" \t"));
    if (path == field) option = i + 1 == overrides.size() && !last_option.empty() ? last_option : "--set";
  }
  return option;
}

void name_price_options(models::CostReport& cost, const std::vector<std::string>& overrides,
                        const std::string& last_option) {
  const std::pair<std::string*, const char*> prices[] = {
      {&cost.node_price_source, "cost.node_price_usd"},
      {&cost.cloud_price_source, "cost.cloud_price_per_gpu_hour_usd"}};
  for (const auto& [source, field] : prices) {
    const std::string option = option_that_set(field, overrides, last_option);
    if (*source == "scenario" && !option.empty()) *source = option;
  }
}

void rethrow_at_field(const std::invalid_argument& e, const std::string& scenario_path,
                      const std::vector<std::string>& overrides) {
  const std::string msg = e.what();
  const std::size_t colon = msg.find(": ");
  // A field path: lower-case words joined by dots (at least one dot), e.g. cluster.node_group.
  const std::string head = colon == std::string::npos ? std::string() : msg.substr(0, colon);
  if (!is_field_path(head)) throw e;
  throw io::ScenarioError({scenario_field_origin(scenario_path, head, overrides) + ": " + msg});
}

void check_network_size_at(const models::Scenario& sc, const std::string& scenario_path,
                           const std::vector<std::string>& overrides) {
  models::NetworkSize size;
  try {
    size = models::Cluster::network_size(sc.cluster);
  } catch (const std::invalid_argument&) {
    return;  // a bad spec: the command's Cluster gives its own message
  }
  try {
    models::refuse_network_over_limit(sc.cluster, size);
  } catch (const std::invalid_argument& e) {
    throw io::ScenarioError({scenario_field_origin(scenario_path, "cluster.num_nodes", overrides) + ": " + e.what()});
  }
}

void warn_profile_hardware(const models::ClusterSpec& cs, std::ostream& err) {
  if (cs.profile == nullptr) return;
  for (const std::string& w : io::profile_hardware_mismatch(*cs.profile, cs)) err << "warning: " << w << "\n";
}

std::string profile_option(const boost::program_options::variables_map& vm) {
  if (vm.count("profile") == 0) return {};
  std::string path = vm["profile"].as<std::string>();
  if (path.empty()) throw UsageError("--profile: empty file name (expected a calibration profile file)");
  return path;
}

void use_profile(models::Scenario& sc, const std::string& profile_path, const std::vector<std::string>& overrides,
                 const std::function<models::Scenario(const std::vector<std::string>&)>& reload, std::ostream& err) {
  std::shared_ptr<const models::CalibrationProfile> profile =
      profile_path.empty() ? sc.cluster.profile : io::load_profile_file(profile_path);
  if (profile != nullptr && !profile->base_sets.empty()) {
    std::vector<std::string> all = profile->base_sets;
    all.insert(all.end(), overrides.begin(), overrides.end());
    sc = reload(all);
    std::string list;
    for (const std::string& s : profile->base_sets) {
      if (!list.empty()) list += ' ';
      list += "--set ";
      list += s;
    }
    err << "note: profile " << profile->origin << " applies its fit's " << list
        << " (its base_set; a --set on the command line wins)\n";
  }
  if (profile != nullptr) sc.cluster.profile = profile;
  warn_profile_hardware(sc.cluster, err);
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

/// Keeps freed memory in the process instead of handing it back to the kernel after every
/// simulation. A run allocates and frees tens of MB (op graphs, flow tables; single blocks of
/// ~50 MB in the 64-GPU acceptance sweep). With glibc's defaults such blocks are mmap'd and
/// unmapped every time and the heap top is trimmed, so each point page-faults its memory in again;
/// worse, a worker thread's arena (heaps of at most 64 MB) cannot keep a 50 MB block at all, so
/// with --jobs 2 the second thread re-faulted ~500 pages per point. Measured on the 100-point
/// test sweep (docs/speed.md, docs/sweeps.md): minor faults 254k -> 44k with one thread, 126k -> 88k (just
/// each arena's first touch) with two; sys time from ~20% of CPU time to ~5%. `run` does it too:
/// each ECMP draw frees its flow network (per resource ~110 bytes, 311,808 resources at DP 256 of
/// the 405B file) and the next draw faulted it in again (issue 18, docs/speed.md).
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);              // large blocks from the heaps too (a thread's arena adds heaps)
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // never give the top of the heap back
  mallopt(M_TOP_PAD, 64 << 20);        // grow by 64 MB at a time; keeps emptied thread heaps mapped
#endif
}

void check_thread_count(const std::string& flag, int n, std::string_view why, int min) {
  if (n < min || n > io::kMaxThreads) {
    throw UsageError(flag + ": got " + std::to_string(n) + " (expected an integer from " + std::to_string(min) +
                     " to " + std::to_string(io::kMaxThreads) + ": " + std::string(why) + ")");
  }
}

int thread_count_option(const std::string& flag, int n, std::string_view why) {
  check_thread_count(flag, n, why, 0);
  return n > 0 ? n : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

models::NcclTestsOp nccl_op_option(const std::string& flag, const std::string& text) {
  std::vector<std::string> names;
  for (int i = 0; i <= static_cast<int>(models::NcclTestsOp::sendrecv); ++i)
    names.emplace_back(models::nccl_tests_op_name(static_cast<models::NcclTestsOp>(i)));
  if (const auto it = std::find(names.begin(), names.end(), text); it != names.end())
    return static_cast<models::NcclTestsOp>(it - names.begin());
  // Another spelling of one of them ("AllReduce", "all-reduce", "all_reduce_perf"): named; else the
  // closest name, if one is close.
  std::string like = text;
  std::replace(like.begin(), like.end(), '-', '_');
  std::string hint;
  try {
    hint = ", did you mean \"" + std::string(models::nccl_tests_op_name(models::parse_nccl_tests_op(like))) + "\"?";
  } catch (const std::invalid_argument&) {
    hint = io::detail::did_you_mean(text, names);
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw UsageError(flag + ": got \"" + text + "\"" + hint + " (expected one of " + list +
                   ": the names of nccl-tests' binaries without _perf)");
}

void check_at_least(const std::string& flag, int n, int min, std::string_view what) {
  if (n >= min) return;
  throw UsageError(flag + ": got " + std::to_string(n) + " (expected a whole number >= " + std::to_string(min) + ": " +
                   std::string(what) + ")");
}

void check_percentage(const std::string& flag, double percent, std::string_view what) {
  if (percent >= 0 && std::isfinite(percent)) return;
  std::array<char, 32> shown{};
  const auto end = std::to_chars(shown.data(), shown.data() + shown.size(), percent).ptr;
  throw UsageError(flag + ": got " + std::string(shown.data(), end) +
                   " (expected a percentage >= 0: " + std::string(what) + ")");
}

std::string large_trace_note(const std::string& path, std::size_t bytes) {
  constexpr std::size_t kLargeTraceBytes = std::size_t{256} << 20;
  if (bytes <= kLargeTraceBytes) return "";
  return "note: --trace " + path + " is " + std::to_string((bytes + (std::size_t{1} << 19)) >> 20) +
         " MiB; traincast needs about 3x that in memory to write it (the events and their JSON text; "
         "measured peak RSS 2.6x a 1.9 GiB trace, 3.1x a 0.3 GiB one), and ui.perfetto.dev in a browser may "
         "run out of memory on it; open it through a local "
         "`trace_processor --httpd` (perfetto.dev/docs/visualization/large-traces), or trace fewer "
         "iterations (options.iterations)\n";
}

}  // namespace traincast::cli
