// Tests of models/io's validation cases (validation_cases_io.h, validation_case.h): the metrics
// and their units, case files loaded with their scenarios, and every error they collect.

#include "models/io/validation_cases_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/scenario_io.h"
#include "models/io/validation_case.h"

namespace traincast::io {
namespace {

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;
const std::string kDataDir = kSourceDir + "/tests/models/io/data";

TEST(ValidationMetric, ValuesAndUnits) {
  models::Report r;
  r.iteration_time_s = 2;
  r.memory.activations_bytes = 3.0 * (1 << 30);
  r.memory.peak_bytes_per_gpu = 40.0 * (1 << 30);
  EXPECT_DOUBLE_EQ(models::metric_value(r, "iteration_time_s"), 2.0);
  EXPECT_DOUBLE_EQ(models::metric_value(r, "activation_memory_gib"), 3.0);  // GiB = 2^30 bytes
  EXPECT_DOUBLE_EQ(models::metric_value(r, "peak_memory_gib"), 40.0);
  for (std::string_view m : models::validation_metrics()) EXPECT_NO_THROW(models::metric_value(r, m));
  EXPECT_THROW(models::metric_value(r, "speed"), std::invalid_argument);
}

// ------------------------------------------------------------------------------------------------
// Validation cases
// ------------------------------------------------------------------------------------------------

TEST(ValidationCases, LoadsCasesWithResolvedScenariosAndOverrides) {
  const auto cases = load_validation_cases(kDataDir + "/cases.textproto");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].name, "small-baseline");
  EXPECT_EQ(cases[0].scenario_path, kDataDir + "/small.textproto");
  EXPECT_EQ(cases[0].metric, "tflops_per_gpu");
  EXPECT_DOUBLE_EQ(cases[0].measured, 123.5);
  EXPECT_EQ(cases[0].source, "made-up table 1");
  EXPECT_EQ(cases[0].notes, "baseline");
  EXPECT_EQ(cases[0].scenario.name, "small");
  EXPECT_EQ(cases[0].scenario.training.precision, models::Precision::bf16);
  EXPECT_EQ(cases[1].source, "test suite citation");  // file-level source
  EXPECT_EQ(cases[1].overrides,
            (std::vector<std::string>{"workload.training.precision=fp16", "workload.training.global_batch_size=128"}));
  EXPECT_EQ(cases[1].scenario.training.precision, models::Precision::fp16);
  EXPECT_EQ(cases[1].scenario.training.global_batch_size, 128);
  EXPECT_DOUBLE_EQ(cases[1].tolerance, 0.1);
  models::Report report;
  report.mfu = 0.5;
  EXPECT_DOUBLE_EQ(models::metric_value(report, cases[1].metric), 0.5);
}

/// Writes `text` to a temporary file named `name` and returns the errors of loading it as cases.
std::vector<std::string> case_file_errors(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  try {
    load_validation_cases(path);
  } catch (const ScenarioError& e) {
    std::filesystem::remove(path);
    std::vector<std::string> out;
    for (const std::string& line : e.errors()) out.push_back(line.substr(line.find(name)));
    return out;
  }
  std::filesystem::remove(path);
  ADD_FAILURE() << "no ScenarioError for " << name;
  return {};
}

TEST(ValidationCases, ParseErrorsNameTheCaseIndex) {
  EXPECT_EQ(case_file_errors("tc_cases.textproto", "case { name: \"a\" }\ncase {\n  nmae: \"b\"\n}\n"),
            std::vector<std::string>{
                "tc_cases.textproto:3:3: case[1].nmae: unknown field, did you mean \"name\"? (expected one of: name, "
                "scenario, set, metric, measured, source, notes, tolerance, nccl_tests, data_row, assumptions, "
                "oom_known_gap)"});
  EXPECT_EQ(
      case_file_errors("tc_cases.json", "{\"case\": [{\"name\": \"a\"},\n  {\"measured\": \"x\", \"set\": [1]}]}"),
      (std::vector<std::string>{"tc_cases.json:2:16: case[1].measured: invalid value \"x\" (expected a number)",
                                "tc_cases.json:2:29: case[1].set[0]: invalid value 1 (expected a string)"}));
}

TEST(ValidationCases, MfuIsAFraction) {
  // A fresh user's measured: 5 (500 %) was scored as an 89 % error with exit 0.
  const std::string text =
      "case { name: \"a\" scenario: \"" + kDataDir + "/small.textproto\" metric: \"mfu\" measured: 5 }\n";
  const std::string column = std::to_string(text.find("measured") + 1);
  EXPECT_EQ(case_file_errors("tc_mfu.textproto", text),
            std::vector<std::string>{"tc_mfu.textproto:1:" + column +
                                     ": case[0].measured: got 5 for mfu (expected a fraction > 0 and <= 1: 0.5 for "
                                     "50 %)"});
}

TEST(ValidationCases, ToleranceIsAFraction) {
  // A fresh user's tolerance: 5 (meant 5 %, read as 500 %) and 1e300 passed every case.
  for (const std::string value : {"5", "1e300", "-0.1", "1.0000001"}) {
    const std::string text = "case { name: \"a\" scenario: \"" + kDataDir +
                             "/small.textproto\" metric: \"mfu\" measured: 0.4 tolerance: " + value + " }\n";
    const std::string column = std::to_string(text.find("tolerance") + 1);
    EXPECT_EQ(case_file_errors("tc_tol.textproto", text),
              std::vector<std::string>{"tc_tol.textproto:1:" + column + ": case[0].tolerance: got " + value +
                                       " (expected a fraction >= 0 and <= 1: 0.05 for 5 %, 0 or unset for no limit "
                                       "of its own; validate --max-error is the one in percent)"})
        << value;
  }
  for (const std::string value : {"0", "0.05", "1"}) {
    const std::string text = "case { name: \"a\" scenario: \"" + kDataDir +
                             "/small.textproto\" metric: \"mfu\" measured: 0.4 tolerance: " + value + " }\n";
    const std::string path = (std::filesystem::temp_directory_path() / "tc_tol_ok.textproto").string();
    std::ofstream(path) << text;
    EXPECT_EQ(load_validation_cases(path).size(), 1u) << value;
    std::filesystem::remove(path);
  }
}

TEST(ValidationCases, EveryGalleryFileLoads) {
  // scenarios/*.textproto and scenarios/validation/*: scenarios, and *.cases.textproto case files.
  int loaded = 0;
  for (const std::string dir : {"/scenarios", "/scenarios/validation"}) {
    for (const auto& entry : std::filesystem::directory_iterator(kSourceDir + dir)) {
      const std::string path = entry.path().string();
      if (entry.path().extension() != ".textproto") continue;
      SCOPED_TRACE(path);
      try {
        if (path.ends_with(".cases.textproto")) {
          EXPECT_FALSE(load_validation_cases(path).empty());
        } else {
          load_scenario_file(path);
        }
        ++loaded;
      } catch (const ScenarioError& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
  EXPECT_GE(loaded, 1);
}

// An error inside a scenario file that several cases load names the case too (fresh-user
// finding: it pointed at the base file's line only).
TEST(ValidationCases, ScenarioFileErrorsNameTheCaseThatLoadedThem) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "traincast_case_base_test";
  std::filesystem::create_directories(dir);
  std::ifstream in(kDataDir + "/small.textproto");
  std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  base.replace(base.find("tp:"), 3, "tp: 3 pp:");  // invalid in the file itself
  std::ofstream(dir / "base.textproto") << base;
  std::ofstream(dir / "c.textproto")
      << "case {\n  name: \"first\"\n  scenario: \"base.textproto\"\n  metric: \"mfu\"\n  measured: 0.5\n}\n";
  try {
    load_validation_cases((dir / "c.textproto").string());
    ADD_FAILURE() << "no ScenarioError";
  } catch (const ScenarioError& e) {
    ASSERT_FALSE(e.errors().empty());
    for (const std::string& line : e.errors()) {
      EXPECT_EQ(line.rfind((dir / "base.textproto").string() + ":", 0), 0u) << line;
      EXPECT_NE(line.find(" (loaded by case[0] \"first\", " + (dir / "c.textproto").string() + ":1:1)"),
                std::string::npos)
          << line;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ValidationCases, CollectsErrorsOfTheCasesAndOfTheirScenarios) {
  const std::string path = kDataDir + "/bad_cases.textproto";
  try {
    load_validation_cases(path);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.errors(),
              (std::vector<std::string>{
                  // In line order (session 42: the case file's own checks came before its scenarios').
                  path + ":4:3: workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a divisor "
                         "of 16)",
                  // The case's `set` of tp broke the product: it is blamed, not dp in the scenario file.
                  path + ":4:3: workload.parallel.tp: tp * pp * dp = 3 * 2 * 4 = 24 but the cluster has 16 GPUs (2 x "
                         "dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 16)",
                  path + ":5:3: case[0].metric: unknown metric \"tflops\", did you mean \"tflops_per_gpu\"? (expected "
                         "one of: iteration_time_s, "
                         "tokens_per_s, tflops_per_gpu, hardware_tflops_per_gpu, mfu, hfu, activation_memory_gib, "
                         "peak_memory_gib, time_to_train_s)",
                  path + ":6:3: case[0].measured: got 0 (expected a finite number > 0 and <= 1e+12: no "
                         "metric's measurement comes near it: 1e12 tokens/s is 10,000x a 100,000-GPU run, "
                         "1e12 s 30,000 years)",
                  path + ":8:1: case[1].measured: not set (expected a finite number > 0)",
                  path + ":9:3: case[1].name: \"a\" is used by an earlier case (expected a unique name)",
                  path + ":10:3: case[1].scenario: " + kDataDir +
                      "/missing.textproto: cannot read file (No such file or directory)"}));
  }
}

}  // namespace
}  // namespace traincast::io
