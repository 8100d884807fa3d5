// The property-test harness: seeded draws, tally and table, known-violations file.

#include "tests/properties/property_harness.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace traincast::properties {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int Rng::uniform(int lo, int hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<int>(next() % span);
}

bool Rng::chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

std::uint64_t suite_seed() {
  if (const char* s = std::getenv("TRAINCAST_PROPERTY_SEED"); s != nullptr && *s != '\0')
    return std::strtoull(s, nullptr, 0);
  return kDefaultSeed;
}

bool default_seed() { return suite_seed() == kDefaultSeed; }

Rng draw_rng(const std::string& group, int index) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a of the group name
  for (char c : group) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  Rng mix(suite_seed() ^ h ^ (static_cast<std::uint64_t>(index) << 32));
  return Rng(mix.next());
}

std::string draw_id(const std::string& group, int index) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d", index);
  return group + "-" + buf;
}

std::string only_draw() {
  const char* s = std::getenv("TRAINCAST_PROPERTY_DRAW");
  return s != nullptr ? std::string(s) : std::string();
}

void Tally::count(const std::string& property, const CheckResult& r) {
  if (!r.applies) return;
  Row& row = rows_[property];
  ++row.draws;
  if (r.violated) ++row.violations;
  if (r.tuner_switch) ++row.switches;
}

void Tally::add_violation(Violation v) { violations_.push_back(std::move(v)); }

void Tally::add_switch(const std::string& draw, const std::string& property, const std::string& detail) {
  switches_.push_back(draw + " " + property + ": " + detail);
}

int Tally::draws(const std::string& property) const {
  const auto it = rows_.find(property);
  return it == rows_.end() ? 0 : it->second.draws;
}

int Tally::total_checks() const {
  int n = 0;
  for (const auto& [name, row] : rows_) n += row.draws;
  return n;
}

std::string Tally::summary(const std::string& group, double seconds) const {
  std::ostringstream o;
  char buf[160];
  o << "property draws of group '" << group << "' (seed 0x" << std::hex << suite_seed() << std::dec << "):\n";
  std::snprintf(buf, sizeof buf, "  %-28s %7s %11s %14s\n", "property", "draws", "violations", "tuner-switch");
  o << buf;
  for (const auto& [name, row] : rows_) {
    std::snprintf(buf, sizeof buf, "  %-28s %7d %11d %14d\n", name.c_str(), row.draws, row.violations, row.switches);
    o << buf;
  }
  std::snprintf(buf, sizeof buf, "  %-28s %7d   (%.1f s)\n", "checks in all", total_checks(), seconds);
  o << buf;
  if (!switches_.empty()) {
    o << "allowed at a tuner switch point (automatic, <= 2 %):\n";
    for (const std::string& s : switches_) o << "  " << s << "\n";
  }
  for (const Violation& v : violations_) {
    o << "VIOLATION " << v.draw << " " << v.property << ": " << v.detail << "\n";
    o << "  shrunk: " << v.shrunk << "\n  reproduce: " << v.reproduce << "\n  scenario (baseline side):\n";
    std::istringstream lines(v.scenario);
    for (std::string line; std::getline(lines, line);) o << "    " << line << "\n";
  }
  return o.str();
}

std::vector<KnownViolation> load_known_violations(std::vector<std::string>& errors) {
  const char* root = std::getenv("TRAINCAST_SOURCE_DIR");
  const std::string path =
      std::string(root != nullptr ? root : TRAINCAST_SOURCE_DIR) + "/tests/properties/known_violations.txt";
  std::ifstream in(path);
  std::vector<KnownViolation> out;
  if (!in) {
    errors.push_back(path + ": cannot read the known-violations file");
    return out;
  }
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream fields(line);
    KnownViolation k;
    k.line = line_no;
    fields >> k.draw >> k.property;
    std::getline(fields, k.cause);
    const auto c = k.cause.find_first_not_of(" \t");
    k.cause = c == std::string::npos ? "" : k.cause.substr(c);
    if (k.property.empty() || k.cause.empty()) {
      errors.push_back(path + ":" + std::to_string(line_no) + ": expected '<draw id> <property> <cause>'");
      continue;
    }
    out.push_back(k);
  }
  return out;
}

std::vector<std::string> unexplained(const std::string& group, const Tally& tally, bool all_draws_ran) {
  std::vector<std::string> errors;
  if (!default_seed()) return errors;  // the file lists the default seed's draws only
  const std::vector<KnownViolation> known = load_known_violations(errors);
  for (std::string& e : unexplained(group, tally, all_draws_ran, known)) errors.push_back(std::move(e));
  return errors;
}

std::vector<std::string> unexplained(const std::string& group, const Tally& tally, bool all_draws_ran,
                                     const std::vector<KnownViolation>& known) {
  std::vector<std::string> errors;
  std::set<std::pair<std::string, std::string>> found;
  for (const Violation& v : tally.violations()) found.emplace(v.draw, v.property);
  std::set<std::pair<std::string, std::string>> listed;
  const std::string prefix = group + "-";
  for (const KnownViolation& k : known) {
    if (k.draw.rfind(prefix, 0) != 0) continue;
    listed.emplace(k.draw, k.property);
    if (all_draws_ran && !found.count({k.draw, k.property}))
      errors.push_back("known_violations.txt:" + std::to_string(k.line) + ": " + k.draw + " " + k.property +
                       " no longer occurs: remove the line");
  }
  for (const Violation& v : tally.violations())
    if (!listed.count({v.draw, v.property}))
      errors.push_back(v.draw + " " + v.property + " violated and not in known_violations.txt: " + v.detail);
  return errors;
}

double excess(double better_s, double worse_s) { return better_s > 0 ? (worse_s - better_s) / better_s : 0.0; }

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace traincast::properties
