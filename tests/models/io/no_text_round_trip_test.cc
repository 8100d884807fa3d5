// Messages never pass through protobuf text on the way between structs and messages (defaults,
// sweep points): TextFormat appears in code only in the io loaders and writers listed here, each
// with its reason. Reads every .cc/.h under models/, tools/, calibrate/ and sim/.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace traincast::io {
namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;

/// The files that may use TextFormat, and why.
const std::map<std::string, std::string> kAllowed = {
    {"models/io/message_reader.cc", "the text parser of every loader"},
    {"models/io/enum_numbers.h", "the text parser's check of enum numbers (message_reader.cc's, in its own file)"},
    {"models/io/enum_numbers.cc", "the text parser's check of enum numbers (message_reader.cc's, in its own file)"},
    {"models/io/scenario_io.cc", "scenario_to_text, for --print-scenario"},
    {"models/io/profile_io.cc", "the profile writer"},
    {"models/io/sweep_loader.cc",
     "the sweep fingerprint hashes the base's text: it must stay so CSVs written before resume"},
};

/// `line` without a // comment (a mention in a comment is no use).
std::string code_of(const std::string& line) {
  const std::size_t comment = line.find("//");
  return comment == std::string::npos ? line : line.substr(0, comment);
}

/// "path:line" of every line of code that names TextFormat (or includes its header) under the
/// four source folders, outside kAllowed.
std::vector<std::string> text_format_uses(std::vector<std::string>& allowed_seen) {
  std::vector<std::string> uses;
  for (const char* folder : {"models", "tools", "calibrate", "sim"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSourceDir + "/" + folder)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string rel = fs::relative(e.path(), kSourceDir).generic_string();
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        const std::string code = code_of(line);
        if (code.find("TextFormat") == std::string::npos && code.find("text_format.h") == std::string::npos) continue;
        if (kAllowed.count(rel)) {
          allowed_seen.push_back(rel);
        } else {
          uses.push_back(rel + ":" + std::to_string(n) + ": " + line);
        }
      }
    }
  }
  return uses;
}

TEST(NoTextRoundTrip, TextFormatOnlyInTheIoLoadersAndWriters) {
  std::vector<std::string> allowed_seen;
  const std::vector<std::string> uses = text_format_uses(allowed_seen);
  std::ostringstream list;
  for (const std::string& u : uses) list << "\n  " << u;
  EXPECT_TRUE(uses.empty()) << "TextFormat outside the allowed io files (convert structs and messages with "
                               "models/io/scenario_convert.h instead):"
                            << list.str();
  // Each entry is still needed (a stale one would allow a new use unnoticed).
  for (const auto& [path, why] : kAllowed) {
    EXPECT_NE(std::find(allowed_seen.begin(), allowed_seen.end(), path), allowed_seen.end())
        << path << " no longer uses TextFormat (" << why << "): drop it from the list";
  }
}

}  // namespace
}  // namespace traincast::io
