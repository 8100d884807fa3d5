// The field tables (models/io/scenario_fields.h, report_fields.h): every scalar of the schema has
// exactly one row; a scenario survives the message round trip, to_struct(to_proto(s)) == s, for
// the defaults, a scenario that uses every optional part, and every shipped scenario; every sweep
// metric reads its report field; a sweep point's base-field errors are positioned 1:1.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "models/io/report_fields.h"
#include "models/io/scenario_convert.h"
#include "models/io/scenario_fields.h"
#include "models/io/scenario_io.h"
#include "models/io/sweep_csv.h"
#include "models/io/sweep_point.h"
#include "sweep_files.h"

namespace traincast::io {
namespace {

namespace fs = std::filesystem;
namespace pb = google::protobuf;

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;

/// The singular scalar fields under message `type` as dotted paths, through singular messages.
void collect_scalars(const pb::Descriptor* type, const std::string& prefix, std::vector<std::string>& out) {
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* f = type->field(i);
    if (f->is_repeated()) continue;
    const std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      collect_scalars(f->message_type(), path, out);
    } else {
      out.push_back(path);
    }
  }
}

std::vector<std::string> schema_scalars(const std::string& message) {
  const pb::Descriptor* type = pb::DescriptorPool::generated_pool()->FindMessageTypeByName(message);
  EXPECT_NE(type, nullptr) << message;
  std::vector<std::string> out;
  if (type != nullptr) collect_scalars(type, "", out);
  std::sort(out.begin(), out.end());
  return out;
}

template <typename Rows>
std::vector<std::string> sorted_paths(const Rows& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows) out.emplace_back(row.path);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FieldTables, EveryScenarioScalarHasOneRow) {
  std::vector<std::string> expected = schema_scalars("traincast.proto.Scenario");
  expected.erase(std::remove(expected.begin(), expected.end(), "profile"), expected.end());  // a path, by hand
  EXPECT_EQ(sorted_paths(detail::scenario_fields()), expected);
}

TEST(FieldTables, EveryReportScalarHasOneRow) {
  EXPECT_EQ(sorted_paths(detail::report_fields()), schema_scalars("traincast.proto.Report"));
  EXPECT_THROW(detail::report_field("breakdown.no_such_field"), std::logic_error);
}

/// to_struct(to_proto(s)) with no enum errors.
models::Scenario round_trip(const models::Scenario& s) {
  std::vector<std::string> bad_enums;
  models::Scenario back = detail::through_message(s, bad_enums);
  EXPECT_TRUE(bad_enums.empty());
  return back;
}

TEST(ScenarioRoundTrip, DefaultScenario) {
  const models::Scenario defaults;
  EXPECT_TRUE(round_trip(defaults) == defaults);
}

TEST(ScenarioRoundTrip, EveryOptionalPart) {
  models::Scenario s;
  s.name = "all";
  s.cluster.num_nodes = 4;
  s.cluster.fabric.kind = models::FabricKind::torus;
  s.cluster.fabric.torus_dims = {2, 2};
  s.cluster.fabric.switch_latency_ns = 90;
  s.cluster.collectives.protocol = models::CollectiveProtocol::ll128;
  s.cluster.collectives.min_channels = 4;
  s.cluster.collectives.max_channels = 16;
  s.cluster.nics_per_node = 2;
  s.cluster.pcie_p2p = false;
  s.model.num_experts = 8;
  s.model.moe_top_k = 1;
  s.model.moe_capacity_factor = 1.25;
  s.model.architecture = models::Architecture::encoder;
  s.model.max_position_embeddings = 512;
  s.model.attention_dropout = 0.0;
  s.parallel.cp = 2;
  s.training.lora_rank = 16;
  s.training.lora_target_modules = "all-linear";
  s.offload.optimizer = true;
  s.offload.host_memory_bytes_per_s = 2e11;
  s.storage.emplace().local.raid = models::RaidLevel::raid5;
  s.storage->checkpoint_mode = models::CheckpointMode::asynchronous;
  s.reliability.emplace().failures = {{"gpu", 1e-5, 0.0}, {"node", 0.0, 2e-5}};
  s.reliability->seed = 18446744073709551615ull;
  s.cost.emplace().utilization = 0.5;
  s.data_loader.emplace().numa_binding = models::NumaBinding::socket0;
  s.power.psu_redundant = 1;
  s.power.memory_bound_fraction = 0.3;
  s.power.comm_fraction = 0.2;
  s.thermal.cooling = models::Cooling::liquid;
  s.thermal.gpu_airflow_fraction = {1.0, 0.8};
  s.thermal.start = models::ThermalStart::idle;
  EXPECT_TRUE(round_trip(s) == s);

  models::Scenario resnet;
  resnet.model.family = models::ModelFamily::resnet;
  resnet.model.num_layers = 50;
  resnet.model.image_size = 160;
  resnet.parallel.dp_bucket_bytes = 1e6;  // written, so the ResNet default does not replace it
  EXPECT_TRUE(round_trip(resnet) == resnet);

  // A mixed cluster (node groups, one with a GPU override) with an uneven pipeline split.
  models::Scenario mixed;
  mixed.cluster.node_groups = {{"dgx_a100", 2, ""}, {"dgx_h100", 1, "H100-SXM5-80GB"}};
  mixed.cluster.node_template = "dgx_a100";
  mixed.cluster.num_nodes = 3;
  mixed.parallel.pp = 2;
  mixed.parallel.pipeline_stage_layers = {3, 5};
  EXPECT_TRUE(round_trip(mixed) == mixed);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(ScenarioRoundTrip, EveryShippedScenario) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(kSourceDir + "/scenarios")) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !ends_with(name, ".textproto")) continue;
    if (ends_with(name, ".sweep.textproto") || ends_with(name, ".cases.textproto")) continue;
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int checked = 0;
  for (const fs::path& file : files) {
    models::Scenario s;
    try {
      s = load_scenario_file(file.string());
    } catch (const ScenarioError& e) {
      // Cluster-only files (nccl-tests, chakra, explain) have no workload to round-trip.
      if (std::string(e.what()).find("the file describes only a cluster") != std::string::npos) continue;
      ADD_FAILURE() << file << ": " << e.what();
      continue;
    }
    EXPECT_TRUE(round_trip(s) == s) << file;
    ++checked;
  }
  EXPECT_GE(checked, 35);  // as of this test: 35 of the 62 files have a workload
}

TEST(SweepMetrics, EveryMetricReadsTheReport) {
  models::Sweep sweep =
      test_support::load(test_support::kBase + "axis { path: \"workload.parallel.tp\" values: \"1\" }\n");
  sweep.metrics = sweep_metric_names();
  SweepOutcome outcome;
  outcome.report.num_gpus = 8;
  outcome.report.events = 18446744073709551615ull;
  outcome.report.memory.peak_bytes_per_gpu = 3.0 * 1024 * 1024 * 1024;
  outcome.report.cost.payback_never = true;
  outcome.report.cost.payback_years = 7.0;  // not shown: owning never pays back
  const std::string row = sweep_csv_row(sweep, 0, outcome);
  // time_to_train_s (7th) empty: no training time (0 would read as "at once").
  std::string expected_start = "0,1,ok,0,0,0,0,0,0,,0,0,0,0,0,0,0,0,0,0,3,0,0,0,0,0,8,0,18446744073709551615,,0,";
  EXPECT_EQ(row.substr(0, expected_start.size()), expected_start);
  // No cost section: capex, the costs to train, payback and break-even empty (0 would read as
  // "free" or "pays back at once": neither side is priced).
  EXPECT_NE(row.find(",,,,,,,\n"), std::string::npos) << row;
}

TEST(SweepPoint, PointErrorsArePositionedWhereTheirFieldWasWritten) {
  // 15 heads do not divide hidden_size 1024: an error about a field of the inline base, positioned
  // in the sweep file's line 1; the axis value's own error at that value (line 2; text positions name
  // a field, so `values: "3"` is at `values`). Before session
  // 42 they read "<sweep point>:1:1: " and "--set: ".
  std::string base = test_support::kBase;
  base.replace(base.find("num_attention_heads: 16"), 23, "num_attention_heads: 15");
  const std::string axis = "axis { path: \"workload.parallel.tp\" values: \"3\" }\n";
  const models::Sweep sweep = test_support::load(base + axis);
  try {
    sweep_point_scenario(sweep, 0);
    FAIL();
  } catch (const ScenarioError& e) {
    ASSERT_FALSE(e.errors().empty());
    for (const std::string& line : e.errors()) EXPECT_EQ(line.rfind("t.sweep.textproto:", 0), 0u) << line;
    EXPECT_TRUE(std::any_of(e.errors().begin(), e.errors().end(), [](const std::string& line) {
      return line.rfind("t.sweep.textproto:1:", 0) == 0 && line.find(": workload.model.") != std::string::npos;
    })) << e.what();
    const std::string at_value =
        "t.sweep.textproto:2:" + std::to_string(axis.find("values") + 1) + ": workload.parallel.tp: ";
    EXPECT_TRUE(std::any_of(e.errors().begin(), e.errors().end(), [&](const std::string& line) {
      return line.rfind(at_value, 0) == 0;
    })) << e.what();
  }
  // A Sweep made in code has no positions: the origins of before.
  models::Sweep bare = sweep;
  bare.base_source.reset();
  try {
    sweep_point_scenario(bare, 0);
    FAIL();
  } catch (const ScenarioError& e) {
    for (const std::string& line : e.errors())
      EXPECT_TRUE(line.rfind("<sweep point>:1:1: ", 0) == 0 || line.rfind("--set: ", 0) == 0) << line;
  }
}

}  // namespace
}  // namespace traincast::io
