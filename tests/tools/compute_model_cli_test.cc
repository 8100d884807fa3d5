// How compute was timed, said where a reader looks: the run report's `Compute` line and JSON
// `compute` object, `plan`'s warning for attention_kernel under training_fit, and `compare`'s
// refusal to judge a kernel-model run against training_fit's validated error band.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/compare.h"

namespace traincast::cli {
namespace {

using test_support::Result;
using test_support::run;
using test_support::slurp;

class ComputeModelCli : public traincast::test_support::TempDirTest {};

TEST_F(ComputeModelCli, RunReportNamesTheComputeModelAndAttentionKernel) {
  const Result fit = run({"run", "--json", path("fit.json")});
  ASSERT_EQ(fit.status, 0) << fit.err;
  EXPECT_EQ(fit.out.find("Compute    "), std::string::npos) << "the default prints no Compute line";
  const std::string fit_json = slurp(path("fit.json"));
  EXPECT_NE(fit_json.find("\"compute_model\": \"training_fit\""), std::string::npos) << fit_json;
  EXPECT_NE(fit_json.find("\"attention_kernel\": \"flash2\""), std::string::npos);
  EXPECT_NE(fit_json.find("\"profile\": \"\""), std::string::npos);

  const Result kernel = run({"run", "--json", path("k.json"), "--set", "workload.training.compute_model=kernel",
                             "--set", "workload.training.attention_kernel=cudnn"});
  ASSERT_EQ(kernel.status, 0) << kernel.err;
  EXPECT_NE(kernel.out.find("Compute    kernel model (GEMM tile model, framework efficiency 0.730), attention cudnn\n"),
            std::string::npos)
      << kernel.out;
  const std::string k_json = slurp(path("k.json"));
  EXPECT_NE(k_json.find("\"compute_model\": \"kernel\""), std::string::npos) << k_json;
  EXPECT_NE(k_json.find("\"attention_kernel\": \"cudnn\""), std::string::npos);

  // cudnn asked for on a GPU without cuDNN constants (A100): FA2's ran, and the report says so.
  const Result a100 =
      run({"run", "--json", path("a.json"), "--set", "cluster.node_template=dgx_a100", "--set",
           "workload.training.compute_model=kernel", "--set", "workload.training.attention_kernel=cudnn"});
  ASSERT_EQ(a100.status, 0) << a100.err;
  EXPECT_NE(a100.out.find("framework efficiency 0.730), attention flash2\n"), std::string::npos) << a100.out;
  EXPECT_NE(slurp(path("a.json")).find("\"attention_kernel\": \"flash2\""), std::string::npos);

  const Result unfused = run({"run", "--json", path("u.json"), "--set", "workload.training.flash_attention=false"});
  ASSERT_EQ(unfused.status, 0) << unfused.err;
  EXPECT_NE(slurp(path("u.json")).find("\"attention_kernel\": \"\""), std::string::npos);
}

// `--profile ""` is refused, not read as "no --profile" (fresh-user finding).
TEST(ComputeModelCliProfile, EmptyProfileNameIsRefused) {
  const Result r = run({"run", "--profile", ""});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--profile: empty file name (expected a calibration profile file)"), std::string::npos) << r.err;
}

// An output path under a file says that the file is not a directory (it said "does not exist").
TEST_F(ComputeModelCli, OutputUnderAFileSaysItIsNotADirectory) {
  { std::ofstream(path("file.json")) << "{}"; }
  const Result r = run({"run", "--json", path("file.json") + "/out.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(path("file.json") + " is a file, not a directory"), std::string::npos) << r.err;
}

// Equal costs per token are said to be the same, not "0 % less" (fresh-user finding).
TEST(ComputeModelCliCompare, EqualCostIsTheSameCostNotZeroPercentLess) {
  const Result r = run({"compare", "--vary", "power.gpu_power_limit_w=700,699", "--tokens", "1e9"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("for the same cost per token (within 0.5 %, rent and own, TCO)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("for 0 %"), std::string::npos) << r.out;
  // Both sides on the default compute model: no "compute model" row (the table as before).
  EXPECT_EQ(r.out.find("compute model"), std::string::npos) << r.out;
}

// A side on the kernel model gets a "compute model" row naming it and its attention kernel, as
// `run`'s Compute line does (fresh-user finding: compare named the model only in its verdict).
TEST_F(ComputeModelCli, KernelSideGetsAComputeModelRow) {
  const Result r = run({"compare", "--vary", "workload.training.compute_model=training_fit,kernel", "--tokens", "1e9",
                        "--csv", path("c.csv")});
  ASSERT_EQ(r.status, 0) << r.err;
  // CSV: the model and kernel per row, and why the kernel row's band is 0 (fresh-user finding).
  std::istringstream csv(slurp(path("c.csv")));
  std::string header, fit_row, kernel_row;
  std::getline(csv, header);
  std::getline(csv, fit_row);
  std::getline(csv, kernel_row);
  EXPECT_NE(header.find(",compute_model,attention_kernel,"), std::string::npos) << header;
  // model_error_band_absent, then (session 43) pue_note, empty here.
  EXPECT_EQ(header.substr(header.rfind(",model_error_band_absent,")), ",model_error_band_absent,pue_note");
  EXPECT_NE(fit_row.find(",training_fit,flash2,"), std::string::npos) << fit_row;
  EXPECT_EQ(fit_row.substr(fit_row.size() - 2), ",,") << fit_row;  // a band: nothing absent; no PUE note
  EXPECT_NE(kernel_row.find(",kernel,flash2,"), std::string::npos) << kernel_row;
  EXPECT_NE(kernel_row.find("compute_model kernel has no gated error band"), std::string::npos) << kernel_row;
  const std::size_t at = r.out.find("\ncompute model ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find("training_fit"), std::string::npos) << line;
  EXPECT_NE(line.find("kernel, attention flash2"), std::string::npos) << line;
}

// An enum name in another case gets the name (fresh-user finding: "KERNEL" had no suggestion).
TEST(ComputeModelCliProfile, EnumInAnotherCaseIsSuggested) {
  const Result r = run({"run", "--set", "workload.training.compute_model=KERNEL"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("did you mean \"kernel\"?"), std::string::npos) << r.err;
}

TEST(ComputeModelCliPlan, PlanWarnsThatCudnnHasNoEffectUnderTrainingFit) {
  const Result r = run({"plan", "--set", "workload.training.attention_kernel=cudnn", "--max-simulations", "1"});
  EXPECT_NE(r.err.find("warning: --set: workload.training.attention_kernel cudnn has no effect with compute_model "
                       "training_fit"),
            std::string::npos)
      << r.status << "\n"
      << r.err;
  const Result kernel = run({"plan", "--set", "workload.training.attention_kernel=cudnn", "--set",
                             "workload.training.compute_model=kernel", "--max-simulations", "1"});
  EXPECT_EQ(kernel.err.find("attention_kernel cudnn has no effect"), std::string::npos) << kernel.err;
  // The plan says which compute model ranked the layouts (the default says nothing, as `run`).
  EXPECT_NE(kernel.out.find("Compute    kernel model (workload.training.compute_model: kernel)\n"), std::string::npos)
      << kernel.out;
  EXPECT_EQ(r.out.find("Compute    "), std::string::npos) << r.out;
}

// The gated error bands are training_fit's (docs/accuracy.md); a kernel-model run has none.
TEST(ComputeModelCliCompare, KernelModelHasNoGatedErrorBand) {
  EXPECT_GT(model_error_band("H100-SXM5-80GB").cases, 0);
  // A mixed cluster takes the widest of its GPUs' bands (was the first GPU's alone), or none.
  const ErrorBand a100 = model_error_band("A100-SXM4-80GB"), h100 = model_error_band("H100-SXM5-80GB");
  const ErrorBand mixed = model_error_band("A100-SXM4-80GB + H100-SXM5-80GB");
  EXPECT_EQ(mixed.mape_pct, std::max(a100.mape_pct, h100.mape_pct));
  EXPECT_EQ(mixed.cases, a100.cases + h100.cases);
  EXPECT_EQ(mixed.source, a100.source + "; " + h100.source);
  EXPECT_EQ(model_error_band("A100-SXM4-80GB + H20").cases, 0);
  const ErrorBand kernel = model_error_band("H100-SXM5-80GB", "kernel");
  EXPECT_EQ(kernel.cases, 0);
  EXPECT_EQ(kernel.absent,
            "compute_model kernel has no gated error band; docs/accuracy.md gives its development figures");
  EXPECT_EQ(model_error_band("H20").absent,
            "H20 has no validated error band: no CTest-gated published training run on it "
            "(scenarios/validation/*.cases; the development sources' figures, if it has any, are in "
            "docs/accuracy.md)");
  const Result r = run({"compare", "--vary", "power.gpu_power_limit_w=700,650", "--set",
                        "workload.training.compute_model=kernel", "--tokens", "1e9"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("not judged against model error (compute_model kernel has no gated error band"),
            std::string::npos)
      << r.out;
  // The "Model error" block gives the same reason (fresh-user finding: it said "no published
  // training run on this GPU" for an H100 that has ten).
  EXPECT_NE(r.out.find("H100-SXM5-80GB: none: compute_model kernel has no gated error band"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace traincast::cli
