// What a fresh user found on the command line (session 28): option values with spaces around them
// read as out of int32's range, a directory given as --out called "file exists", an unwritable
// --out named the lock file beside it, the op-limit refusal named no factor of its count, compare's
// verdict set days for different token budgets side by side (and printed "default: default:"), and
// run --json gave train_tokens 0 for the default budget its summary used.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
const std::string kSweep = kSrc + "/scenarios/sweeps/gpt_13b_layout_8x_dgx_h100.sweep.textproto";

using test_support::Result;
using test_support::run;
using test_support::slurp;

class FreshUserCli : public traincast::test_support::TempDirTest {};

// One rule for every numeric option, through the one option parser: spaces around a value are
// refused as such (they read as "outside -2147483648 to 2147483647", a double option included).
TEST(FreshUserCliOptions, ValuesWithSpacesAroundThemAreRefusedAsSuch) {
  const std::string tail = "; see --help for the option's range)\n";
  for (const char* v : {" 2", "2 ", " 2 "}) {
    const Result r = run({"run", "--threads", v});
    EXPECT_EQ(r.status, 2) << v;
    EXPECT_EQ(r.err, std::string("traincast: --threads: got \"") + v +
                         "\" (expected a whole number without spaces "
                         "around it" +
                         tail)
        << v;
  }
  const Result tokens = run({"compare", "--vary", "workload.parallel.tp=1,2", "--tokens", " 5"});
  EXPECT_EQ(tokens.status, 2);
  EXPECT_EQ(tokens.err, "traincast: --tokens: got \" 5\" (expected a number without spaces around it" + tail);
  const Result max_nodes = run({"explain", kSrc + "/scenarios/default.textproto", "--max-nodes", "8 "});
  EXPECT_EQ(max_nodes.status, 2);
  EXPECT_EQ(max_nodes.err,
            "traincast: --max-nodes: got \"8 \" (expected a whole number without spaces around it" + tail);
}

// An integer option says what it takes from its type: digits (1e3 and 1.5 are not), and the int
// range only for digits beyond it.
TEST(FreshUserCliOptions, IntegerOptionsSayWhatTheyTake) {
  const std::string tail = "; see --help for the option's range)\n";
  for (const char* v : {"1e3", "1.5", "abc"}) {
    const Result r = run({"run", "--threads", v});
    EXPECT_EQ(r.status, 2) << v;
    EXPECT_EQ(r.err,
              std::string("traincast: --threads: got \"") + v + "\" (expected a whole number, written in digits" + tail)
        << v;
  }
  const Result big = run({"run", "--threads", "99999999999"});
  EXPECT_EQ(big.status, 2);
  EXPECT_EQ(big.err,
            "traincast: --threads: got \"99999999999\" (expected a whole number in the option's range, not one this "
            "large" +
                tail);
  // A double option is not held to whole numbers by the parser (compare checks --tokens itself).
  const Result inf = run({"compare", "--vary", "workload.parallel.tp=1,2", "--tokens", "1e999"});
  EXPECT_EQ(inf.status, 2);
  EXPECT_EQ(inf.err,
            "traincast: --tokens: got \"1e999\": out of range as written (expected 0 or a finite number of "
            "magnitude 2.2e-308 to 1.8e308: a double holds no larger one, and smaller ones only subnormal, with "
            "digits lost)\n");
}

// sweep --out DIR said "DIR: file exists (pass --resume ..., or --force ...)", and took DIR.lock
// beside it first; run --json DIR said "exists and is not a regular file".
TEST_F(FreshUserCli, OutputPathThatIsADirectoryIsNamedAsOne) {
  const std::string dir = path("results");
  std::filesystem::create_directory(dir);
  const std::string expected = "traincast: " + dir +
                               ": is a directory (expected a file path for the output, not a "
                               "directory)\n";
  const Result sweep = run({"sweep", kSweep, "--out", dir});
  EXPECT_EQ(sweep.status, 2);
  EXPECT_EQ(sweep.err, expected);
  EXPECT_FALSE(std::filesystem::exists(dir + ".lock"));
  const Result forced = run({"sweep", kSweep, "--out", dir, "--force"});
  EXPECT_EQ(forced.err, expected);
  const Result json = run({"run", "--json", dir});
  EXPECT_EQ(json.status, 2);
  EXPECT_EQ(json.err, expected);
  EXPECT_TRUE(std::filesystem::is_directory(dir));  // nothing the user gave is touched
}

// sweep --out in a place nothing can be written named the lock file ("/sys/x.csv.lock: cannot
// create the lock file"), not the path given.
TEST(FreshUserCliOptions, UnwritableOutNamesThePathGivenAndWhy) {
  const Result r = run({"sweep", kSweep, "--out", "/sys/x.csv"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("traincast: /sys/x.csv: cannot write in /sys (", 0), 0u) << r.err;
  const bool why = r.err.find("(Permission denied)") != std::string::npos ||
                   r.err.find("(Read-only file system)") != std::string::npos;
  EXPECT_TRUE(why) << r.err;
  EXPECT_NE(r.err.find("(expected a writable directory; the lock file /sys/x.csv.lock goes there too)"),
            std::string::npos)
      << r.err;
}

// compare of a scenario with its own budget against one on the default: the verdict compared days
// for 1T tokens with days for 160.6B; the footnote read "default: default: 20 tokens per parameter".
TEST_F(FreshUserCli, CompareAcrossDifferentBudgetsComparesPerTokenAndSaysSo) {
  std::string text = slurp(kSrc + "/scenarios/default.textproto");
  const std::size_t at = text.find("    global_batch_size:");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "    train_tokens: 1e12\n");
  const std::string budget = write("budget.textproto", text);
  const Result r = run({"compare", kSrc + "/scenarios/default.textproto", budget});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("budget trains as fast as default (time to train per token: the token budgets differ, "
                       "default 160.6B, budget 1.0T)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("* token budget not in the scenario: default: 20 tokens per parameter (Hoffmann et al. "
                       "2022), the default budget\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("default: default:"), std::string::npos) << r.out;
  // The same budget on both sides: days against days.
  const Result same = run({"compare", budget, "--vary", "power.gpu_power_limit_w=700,650"});
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.out.find("(time to train) for"), std::string::npos) << same.out;
}

// run --json gave train_tokens 0 while its summary trained 160.6B tokens (the default budget).
TEST_F(FreshUserCli, RunJsonGivesTheTokensUsedAndWhereTheyCameFrom) {
  ASSERT_EQ(run({"run", "--json", path("default.json")}).status, 0);
  const std::string json = slurp(path("default.json"));
  EXPECT_NE(json.find("\"train_tokens\": 160638074880"), std::string::npos) << json;
  EXPECT_NE(json.find("\"train_tokens_source\": \"20 tokens per parameter (Hoffmann et al. 2022), the default "
                      "budget\""),
            std::string::npos)
      << json;
  // time_to_train_s is the summary's "To train" time for that budget (it was 0 beside it): whole
  // iterations of the default scenario's 128 x 8,192 tokens.
  const auto number_after = [&json](const std::string& key) {
    const std::size_t at = json.find("\"" + key + "\": ");
    return at == std::string::npos ? -1.0 : std::stod(json.substr(at + key.size() + 4));
  };
  const double iteration_s = number_after("iteration_time_s");
  ASSERT_GT(iteration_s, 0.0) << json;
  EXPECT_NEAR(number_after("time_to_train_s"), std::ceil(160638074880.0 / (128.0 * 8192.0)) * iteration_s,
              1e-9 * number_after("time_to_train_s"))
      << json;
  // So is the rent the summary prints beside it (the cost section said modelled false, 0 USD): the
  // catalog's H100 rent (USD 3.20/GPU-hour, Hyperstack) x 8 GPUs x that time, rent only.
  EXPECT_NEAR(number_after("cloud_cost_to_train_usd"), 3.20 * 8 * number_after("time_to_train_s") / 3600, 1e-6) << json;
  EXPECT_NE(json.find("\"rent_modelled\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"own_modelled\": false"), std::string::npos) << json;
  // A scenario's own cost section, without a budget, gets the to-train figures of the default's.
  ASSERT_EQ(run({"run", "--set", "cost.cloud_price_per_gpu_hour_usd=2", "--json", path("priced.json")}).status, 0);
  const std::string priced = slurp(path("priced.json"));
  const std::size_t rent_at = priced.find("\"cloud_cost_to_train_usd\": ");
  ASSERT_NE(rent_at, std::string::npos) << priced;
  EXPECT_NEAR(std::stod(priced.substr(rent_at + 27)), 2.0 * 8 * number_after("time_to_train_s") / 3600, 1e-6) << priced;
  ASSERT_EQ(run({"run", "--set", "workload.training.train_tokens=1e12", "--json", path("own.json")}).status, 0);
  const std::string own = slurp(path("own.json"));
  EXPECT_NE(own.find("\"train_tokens\": 1000000000000"), std::string::npos) << own;
  EXPECT_NE(own.find("\"train_tokens_source\": \"scenario\""), std::string::npos) << own;
}

// plan marks a layout whose headroom is within the memory model's error (fresh-user finding: a
// layout with 0.8 GiB left was ranked as fitting with no word). The mark follows the JSON's own
// figures: memory_tight when capacity - peak < 12.5 % of the peak.
TEST_F(FreshUserCli, PlanMarksTightMemory) {
  const Result r = run({"plan", "--top", "5", "--json", path("plan.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(! tight: the headroom left is within the memory model's error, +/-12.5 % of the peak"),
            std::string::npos)
      << r.out;
  const std::string json = slurp(path("plan.json"));
  int tight = 0, checked = 0;
  for (std::size_t at = json.find("\"peak_bytes_per_gpu\": "); at != std::string::npos;
       at = json.find("\"peak_bytes_per_gpu\": ", at + 1)) {
    const double peak = std::stod(json.substr(at + 22));
    const std::size_t cap_at = json.find("\"capacity_bytes\": ", at);
    const std::size_t tight_at = json.find("\"memory_tight\": ", at);
    ASSERT_NE(cap_at, std::string::npos);
    ASSERT_NE(tight_at, std::string::npos);
    const double capacity = std::stod(json.substr(cap_at + 18));
    const bool marked = json.compare(tight_at + 16, 4, "true") == 0;
    EXPECT_EQ(marked, capacity - peak < 0.125 * peak) << peak << " of " << capacity;
    tight += marked;
    ++checked;
  }
  EXPECT_GE(checked, 5);
  EXPECT_GE(tight, 1);        // the default's fastest layouts sit near 80 GB
  EXPECT_LT(tight, checked);  // and some do not
  // The default's #1 (mb 2, 74.6 of 79.6 GiB) is tight: the fastest layout beyond the error is named.
  EXPECT_NE(r.out.find("Fastest layout with headroom beyond that error: #2 "), std::string::npos) << r.out;
}

// The tight mark was plan's only: run and compare said "fits" for 5.0 GiB left of 79.6 GiB.
TEST_F(FreshUserCli, RunAndCompareMarkTightMemory) {
  const Result tight = run({"run", "--set", "workload.training.micro_batch_size=2"});
  ASSERT_EQ(tight.status, 0) << tight.err;
  EXPECT_NE(tight.out.find("-> fits, tight: the 5.0 GiB left is within the memory model's error"), std::string::npos)
      << tight.out;
  const Result roomy = run({"run"});
  ASSERT_EQ(roomy.status, 0) << roomy.err;
  EXPECT_NE(roomy.out.find("79.6 GiB  -> fits\n"), std::string::npos) << roomy.out;
  const Result c = run({"compare", "--vary", "workload.training.micro_batch_size=1,2", "--json", path("c.json")});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("5.0 GiB free !\n"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\n! tight: the headroom left is within the memory model's error"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("workload.training.micro_batch_size=2 fits with headroom within the memory model's error (!)"),
            std::string::npos)
      << c.out;
  const std::string json = slurp(path("c.json"));
  EXPECT_NE(json.find("\"memory_tight\": false"), std::string::npos) << json;
  EXPECT_NE(json.find("\"memory_tight\": true"), std::string::npos) << json;
}

// A scenario's own budget on a run that does not fit: the summary said "not feasible" while the
// JSON gave 1.27e6 s, 4.5 MWh to train and drew failures over that training.
TEST_F(FreshUserCli, OutOfMemoryRunHasNoTimeEnergyOrFailuresToTrain) {
  const Result r =
      run({"run", kSrc + "/scenarios/llama3_70b_one_node_oom.textproto", "--set", "workload.training.train_tokens=1e10",
           "--set", "reliability.seed=1", "--json", path("o.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("To train   not feasible"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" to train"), std::string::npos) << r.out;  // no "4 MWh to train"
  const std::string json = slurp(path("o.json"));
  for (const char* zero : {"\"time_to_train_s\": 0,", "\"energy_to_train_kwh\": 0,", "\"interruptions_mean\": 0,"})
    EXPECT_NE(json.find(zero), std::string::npos) << zero << "\n" << json;
}

}  // namespace
}  // namespace traincast::cli
