// `traincast calibrate fit|validate` on traincast-bench burn samples and `traincast run --profile`
// using the fitted power/thermal overlay, as a user runs them: exit statuses, messages naming the
// file and line, the profile changing the simulated temperature.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;

using test_support::Result;
using test_support::run;

using CalibrateBurnCli = traincast::test_support::TempDirTest;

/// A noise-free burn of one H100 (as traincast-bench writes it): 20 s idle at 80 W, 120 s at
/// 620 W, 40 s idle, power read as NVML's mean over the last second; R 0.05 K/W, C 1,200 J/K (tau 60 s), inlet 30 C,
/// from 40 C; temperatures to 0.01 C. `bad` appends text after the samples.
std::string burn(const std::string& bad = "") {
  std::string s =
      "# traincast-bench measurements\nmachine { gpu_name: \"NVIDIA H100 80GB HBM3\" sm_clock_max_mhz: 1980 }\n";
  double temp = 40;
  for (int i = 0; i < 720; ++i) {
    const double t = -20 + 0.25 * i;
    const bool loaded = t >= 0 && t < 120;
    const double p = loaded ? 620 : 80;
    // NVML's reading: the mean power over the last second (the fraction of [t - 1, t] in the burn).
    const double in_burn = std::max(0.0, std::min(t, 120.0) - std::max(t - 1, 0.0));
    const double reading = 80 + 540 * in_burn;
    char line[200];
    std::snprintf(line, sizeof line,
                  "power { gpu: 0 t_s: %.2f power_w: %.1f temperature_c: %.2f sm_clock_mhz: %d loaded: %s }\n", t,
                  reading, temp, loaded ? 1980 : 345, loaded ? "true" : "false");
    s += line;
    const double ss = 30 + p * 0.05;
    temp = ss + (temp - ss) * std::exp(-0.25 / 60.0);
  }
  return s + bad;
}

TEST_F(CalibrateBurnCli, FitValidateAndRunWithTheProfile) {
  const std::string data = write("burn.textproto", burn());
  const std::string profile = path("p.textproto");
  Result r = run({"calibrate", "fit", data, "--base", "H100-SXM5-80GB", "--out", profile, "--holdout", "odd"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("720 burn samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("burn GPU 0 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("held-out RMS"), std::string::npos) << r.out;
  std::ifstream in(profile);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("power_thermal {"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("points_used: 320"), std::string::npos)
      << text.str();  // -20 .. 59.75 s: up to the middle of the burn

  r = run({"calibrate", "validate", profile, data});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("burn (power vs load, thermal RC)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the rest are held out"), std::string::npos) << r.out;

  // run --profile: the embedded default scenario (8 H100, in thermal steady state) with the
  // fitted R vs the same profile with R 0.09. GPU 0 is first in its airflow lane (inlet = the
  // 25 C supply air): over a periodic steady state mean T = T_in + R x mean P (integrate
  // C dT/dt = P - (T - T_in)/R over the iteration), with the profile's R.
  const std::string fitted = text.str();
  const double r_fit = std::stod(fitted.substr(fitted.find("r_k_per_w: ") + 11));
  EXPECT_NEAR(r_fit, 0.05, 1e-4);  // noise-free data, temperatures printed to 0.01 C
  std::string hot = fitted;
  const std::size_t r_at = hot.find("r_k_per_w: ");
  hot.replace(r_at, hot.find('\n', r_at) - r_at, "r_k_per_w: 0.09");
  const std::string hot_profile = write("hot.textproto", hot);
  for (const auto& [file, r_k_per_w] : {std::pair{profile, r_fit}, std::pair{hot_profile, 0.09}}) {
    const std::string json = path("run.json");
    Result a = run({"run", "--profile", file, "--json", json, "--force"});
    ASSERT_EQ(a.status, 0) << a.err;
    std::ifstream jin(json);
    std::stringstream js;
    js << jin.rdbuf();
    const std::string j = js.str();
    auto after = [&](std::size_t from, const std::string& key) {
      const std::size_t at = j.find(key, from);
      EXPECT_NE(at, std::string::npos) << key;
      return at == std::string::npos ? std::string::npos : at + key.size();
    };
    const double average_c = std::stod(j.substr(after(after(after(0, "\"thermal\""), "\"gpus\""), "\"average_c\": ")));
    const double average_w = std::stod(j.substr(after(after(after(0, "\"power\""), "\"gpus\""), "\"average_w\": ")));
    EXPECT_NEAR(average_c, 25.0 + r_k_per_w * average_w, 0.05) << file;
    EXPECT_GT(average_w, 400);  // loaded: the relation is not trivially met at idle
  }
}

TEST_F(CalibrateBurnCli, MalformedBurnExitsTwoWithTheLine) {
  // Line 723: 2 header lines + 720 samples + this one.
  const std::string data =
      write("bad.textproto", burn("power { gpu: 0 t_s: 500 power_w: 80 temperature_c: -400 loaded: false }\n"));
  Result r = run({"calibrate", "fit", data, "--base", "H100-SXM5-80GB", "--out", path("p.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.textproto:723:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("power[720].temperature_c: got -400"), std::string::npos) << r.err;
  // A second burn block: refused by the fit with its line, exit 2.
  const std::string twice =
      write("twice.textproto", burn("power { gpu: 0 t_s: 500 power_w: 620 temperature_c: 40 loaded: true }\n"));
  r = run({"calibrate", "fit", twice, "--base", "H100-SXM5-80GB", "--out", path("q.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("twice.textproto:723: burn of GPU 0: a second burn block"), std::string::npos) << r.err;
  // Burn samples need a catalog GPU to refer to.
  r = run({"calibrate", "fit", write("ok.textproto", burn()), "--base", "dgx_h100", "--out", path("r.textproto")});
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace traincast::cli
