// What a fresh user found in run, compare and validate (session 36): run's energy to train was of
// the failure-free time while its rent and compare's energy were of the wall clock with failures
// (514 vs 522 kWh for one scenario); compare refused a column for a reliability section it had
// added itself (a 15T-token budget on H20: "need 14343 days of failure-free training ... expected
// reliability.horizon_s"); compare's CSV wrote 0 where a row has no answer (a ResNet's
// days_to_train, a payback where nothing is priced) and a ResNet's images/s under tokens_per_s;
// validate scored two case files with the same bytes twice.

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::has;
using test_support::Result;
using test_support::run;

/// The default scenario with a token budget and a failure rate (one failure per node every 20 h).
std::string with_failures(const std::string& tokens) {
  std::string text = traincast::test_support::slurp(kSrc + "/scenarios/default.textproto");
  const std::string at = "  training {\n";
  text.replace(text.find(at), at.size(), at + "    train_tokens: " + tokens + "\n");
  return text + "reliability { failure { cause: \"x\" per_node_hour: 0.05 } monte_carlo_draws: 20 }\n";
}

/// The number after `key` in a JSON text (the first occurrence).
double json_number(const std::string& json, const std::string& key) {
  const std::size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return std::nan("");
  return std::stod(json.substr(at + key.size() + 4));
}

TEST(FreshUser36Lead, RunsEnergyToTrainIsOfTheWallClockWithFailures) {
  const traincast::test_support::TempDir dir("fresh_user36_energy");
  const std::string f = dir.write("f.textproto", with_failures("1e10"));
  const Result r = run({"run", f, "--json", dir.file("r.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string json = traincast::test_support::slurp(dir.file("r.json"));
  const double energy_kwh = json_number(json, "energy_to_train_kwh");
  const double wall_s = json_number(json, "wall_clock_s_mean");
  const double time_s = json_number(json, "time_to_train_s");
  ASSERT_GT(wall_s, time_s);  // failures cost time
  EXPECT_NEAR(energy_kwh, json_number(json, "facility_average_w") * wall_s / 3.6e6, 1e-9 * energy_kwh);
  EXPECT_TRUE(has(r.out, " kWh to train with failures")) << r.out;
}

TEST(FreshUser36Lead, CompareLeavesOutFailuresItsOwnSectionCannotDraw) {
  // 1e15 tokens on one DGX H100: ~430 years failure-free, beyond the failure draws' ~10 years.
  const Result c = run({"compare", "--vary", "workload.training.micro_batch_size=1,2", "--tokens", "1e15"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_TRUE(has(c.out, "not drawn **")) << c.out;
  EXPECT_TRUE(has(c.out, "** workload.training.micro_batch_size=1: failures not drawn: its ")) << c.out;
  EXPECT_TRUE(has(c.out, " days of failure-free training are beyond the failure draws' range")) << c.out;
  // A reliability section the user wrote is still refused with the field to change.
  const traincast::test_support::TempDir dir("fresh_user36_window");
  const std::string f = dir.write("f.textproto", with_failures("1e15"));
  const Result own = run({"compare", f, "--vary", "workload.training.micro_batch_size=1,2"});
  EXPECT_EQ(own.status, 2) << own.out;
  EXPECT_TRUE(has(own.err, "reliability.horizon_s > 0")) << own.err;
}

/// CSV lines split at commas (no quoted commas in the columns read here).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

TEST(FreshUser36Lead, CompareCsvLeavesWhatARowHasNoAnswerForEmpty) {
  const traincast::test_support::TempDir dir("fresh_user36_csv");
  const Result c = run({"compare", kSrc + "/scenarios/default.textproto", kSrc + "/scenarios/models/resnet50.textproto",
                        "--csv", dir.file("c.csv")});
  ASSERT_EQ(c.status, 0) << c.err;
  const auto rows = csv_rows(traincast::test_support::slurp(dir.file("c.csv")));
  ASSERT_EQ(rows.size(), 3U);
  const auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return std::size_t{0};
  };
  const std::vector<std::string>& llm = rows[1];
  const std::vector<std::string>& resnet = rows[2];
  EXPECT_FALSE(llm[col("tokens_per_s")].empty());
  EXPECT_TRUE(llm[col("images_per_s")].empty());
  EXPECT_FALSE(llm[col("days_to_train")].empty());
  EXPECT_FALSE(resnet[col("images_per_s")].empty());
  for (const std::string name :
       {"tokens_per_s", "attention_kernel", "goodput", "days_to_train", "energy_to_train_mwh", "rent_to_train_usd"})
    EXPECT_TRUE(resnet[col(name)].empty()) << name << ": " << resnet[col(name)];
}

TEST(FreshUser36Lead, ValidateRefusesTwoCaseFilesWithTheSameBytes) {
  const traincast::test_support::TempDir dir("fresh_user36_validate");
  const std::string text =
      traincast::test_support::slurp(kSrc + "/scenarios/validation/megatron_sc21_table1.cases.textproto");
  const std::string a = dir.write("a.cases.textproto", text), b = dir.write("b.cases.textproto", text);
  const Result r = run({"validate", a, b});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.err, b + ": the same bytes as " + a)) << r.err;
}

}  // namespace
}  // namespace traincast::cli
