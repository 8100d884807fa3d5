// Integer fields name their own range (models/io/int_ranges.h) whichever path catches a value: the
// text and JSON parsers and --set for a value beyond the proto type, the semantic checks for one the
// type holds, a sweep axis for either, and the profile reader.

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "models/io/int_ranges.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "models/io/sweep_loader.h"
#include "scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// 1 DGX H100 node, TP `tp` x PP 1 x DP 4, micro-batch `mb`. Line 4 holds parallel (tp's name at
/// column 14, its value at 18), line 5 training (micro_batch_size's name at column 36, value at 54).
std::string text(const std::string& tp, const std::string& mb = "1") {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: " +
         tp +
         " pp: 1 dp: 4 }\n"
         "  training { global_batch_size: 16 micro_batch_size: " +
         mb +
         " }\n"
         "}\n";
}

/// The same as JSON: "tp" at line 5 column 16 (its value at 22), "micro_batch_size" at line 6
/// column 41 (its value at 61).
std::string json(const std::string& tp, const std::string& mb = "1") {
  return "{\n"
         " \"cluster\": {\"node_template\": \"dgx_h100\", \"num_nodes\": 1},\n"
         " \"workload\": {\n"
         "  \"model\": {\"num_layers\": 8, \"hidden_size\": 1024, \"num_attention_heads\": 16, \"vocab_size\": 32000, "
         "\"seq_length\": 2048},\n"
         "  \"parallel\": {\"tp\": " +
         tp +
         ", \"pp\": 1, \"dp\": 4},\n"
         "  \"training\": {\"global_batch_size\": 16, \"micro_batch_size\": " +
         mb +
         "}\n"
         " }\n"
         "}\n";
}

// tp >= 1 (a tensor-parallel group has at least one GPU), at most what an int32 holds.
constexpr const char* kTpRange = "(expected an integer from 1 to 2147483647)";
// micro_batch_size: 1 to 2^24 = 16777216 (scenarios/README.md, "Limits").
const std::string kMicroBatchRange =
    "(expected an integer from 1 to 16777216: about 200x the largest published global batches: 81,920 images for "
    "ResNet-50 (Yamazaki et al. 2019), 2,048 x 8,192-token sequences for Llama 3 405B (Meta 2024))";

TEST(IntRanges, EveryTableEntryIsAnIntegerFieldOfTheSchema) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const std::vector<std::string> names = detail::int_range_field_names();
  EXPECT_GE(names.size(), 40u);
  for (const std::string& name : names) {
    const google::protobuf::FieldDescriptor* f = pool->FindFieldByName(name);
    ASSERT_NE(f, nullptr) << name;
    const auto t = f->cpp_type();
    EXPECT_TRUE(t == google::protobuf::FieldDescriptor::CPPTYPE_INT32 ||
                t == google::protobuf::FieldDescriptor::CPPTYPE_INT64)
        << name;
    const detail::IntRange r = detail::int_range(f);
    EXPECT_LE(r.minimum, r.maximum) << name;
    if (t == google::protobuf::FieldDescriptor::CPPTYPE_INT32) {
      EXPECT_GE(r.minimum, std::numeric_limits<std::int32_t>::min()) << name;
      EXPECT_LE(r.maximum, std::numeric_limits<std::int32_t>::max()) << name;
    }
  }
}

TEST(IntRanges, TextNamesTheFieldsRangeBeyondTheTypeAndWithinIt) {
  EXPECT_EQ(errors_of(text("99999999999")),
            std::vector<std::string>{"t.textproto:4:18: workload.parallel.tp: invalid value 99999999999 " +
                                     std::string(kTpRange)});
  EXPECT_EQ(errors_of(text("-5")),
            std::vector<std::string>{"t.textproto:4:14: workload.parallel.tp: got -5 " + std::string(kTpRange)});
  EXPECT_EQ(errors_of(text("0")),
            std::vector<std::string>{"t.textproto:4:14: workload.parallel.tp: got 0 " + std::string(kTpRange)});
  EXPECT_EQ(errors_of(text("2", "3000000000")),
            std::vector<std::string>{"t.textproto:5:54: workload.training.micro_batch_size: invalid value 3000000000 " +
                                     kMicroBatchRange});
  // 2^24 + 1: within int32, beyond the field.
  EXPECT_EQ(errors_of(text("2", "16777217")),
            std::vector<std::string>{"t.textproto:5:36: workload.training.micro_batch_size: got 16777217 " +
                                     kMicroBatchRange});
}

// A range error points at the value, as a type error does (session 42: at the key before, 5:16).
TEST(IntRanges, JsonNamesTheFieldsRange) {
  EXPECT_EQ(errors_of(json("99999999999"), Format::json),
            std::vector<std::string>{"t.json:5:22: workload.parallel.tp: invalid value 99999999999 " +
                                     std::string(kTpRange)});
  EXPECT_EQ(errors_of(json("-5"), Format::json),
            std::vector<std::string>{"t.json:5:22: workload.parallel.tp: got -5 " + std::string(kTpRange)});
  EXPECT_EQ(errors_of(json("0"), Format::json),
            std::vector<std::string>{"t.json:5:22: workload.parallel.tp: got 0 " + std::string(kTpRange)});
  EXPECT_EQ(errors_of(json("2", "3000000000"), Format::json),
            std::vector<std::string>{"t.json:6:61: workload.training.micro_batch_size: invalid value 3000000000 " +
                                     kMicroBatchRange});
}

TEST(IntRanges, SetNamesTheFieldsRange) {
  EXPECT_EQ(
      errors_of(text("2"), Format::text, {"workload.parallel.tp=99999999999"}),
      std::vector<std::string>{"--set: workload.parallel.tp: invalid value \"99999999999\" " + std::string(kTpRange)});
  EXPECT_EQ(errors_of(text("2"), Format::text, {"workload.parallel.tp=-5"}),
            std::vector<std::string>{"--set: workload.parallel.tp: got -5 " + std::string(kTpRange)});
  EXPECT_EQ(errors_of(text("2"), Format::text, {"workload.parallel.tp=0"}),
            std::vector<std::string>{"--set: workload.parallel.tp: got 0 " + std::string(kTpRange)});
  EXPECT_EQ(errors_of(text("2"), Format::text, {"workload.training.micro_batch_size=3000000000"}),
            std::vector<std::string>{"--set: workload.training.micro_batch_size: invalid value \"3000000000\" " +
                                     kMicroBatchRange});
}

// Not a number: the field's range too; a field without a table entry keeps its type's range.
TEST(IntRanges, NotANumberAndFieldsWithoutAnEntry) {
  EXPECT_EQ(errors_of(text("2"), Format::text, {"options.iterations=x"}),
            std::vector<std::string>{
                "--set: options.iterations: invalid value \"x\" (expected an integer from 1 to 1000: the simulator's "
                "range)"});
  EXPECT_EQ(errors_of(text("2"), Format::text, {"reliability.seed=-1"}),
            std::vector<std::string>{
                "--set: reliability.seed: invalid value \"-1\" (expected an integer in [0, 18446744073709551615])"});
}

// A quoted value (as in a scenario file, or a shell that kept the quotes): --set takes the bare
// value, and the message says so instead of echoing the quotes twice.
TEST(IntRanges, QuotedSetValuesAskForTheBareValue) {
  EXPECT_EQ(errors_of(text("2"), Format::text, {"workload.training.compute_model=\"kernel\""}),
            std::vector<std::string>{"--set: workload.training.compute_model: invalid value \"kernel\": --set takes "
                                     "the value without quotes (expected workload.training.compute_model=kernel)"});
  EXPECT_EQ(errors_of(text("2"), Format::text, {"workload.parallel.tp='2'"}),
            std::vector<std::string>{"--set: workload.parallel.tp: invalid value '2': --set takes the value without "
                                     "quotes (expected workload.parallel.tp=2)"});
  // Quotes around a value that is wrong anyway: the usual message, the value shown once.
  EXPECT_EQ(errors_of(text("2"), Format::text, {"options.iterations=\"x\""}),
            std::vector<std::string>{"--set: options.iterations: invalid value \"x\" (expected an integer from 1 to "
                                     "1000: the simulator's range)"});
  // Past a double's range as written: named so, not "expected a number".
  for (const std::string v : {"1e-400", "1e400"}) {
    EXPECT_EQ(errors_of(text("2"), Format::text, {"power.pue=" + v}),
              std::vector<std::string>{"--set: power.pue: invalid value \"" + v +
                                       "\": out of range as written (expected 0 or a finite number of magnitude "
                                       "2.2e-308 to 1.8e308: a double holds no larger one, and smaller ones "
                                       "only subnormal, with digits lost)"});
  }
  // A string field would keep the quotes as characters (a template named "\"dgx_a100\"", whose
  // did-you-mean showed the same name): refused with the bare value too.
  EXPECT_EQ(errors_of(text("2"), Format::text, {"cluster.node_template=\"dgx_a100\""}),
            std::vector<std::string>{"--set: cluster.node_template: invalid value \"dgx_a100\": --set takes the "
                                     "value without quotes (expected cluster.node_template=dgx_a100)"});
  EXPECT_EQ(errors_of(text("2"), Format::text, {"name= 'my run' "}),
            std::vector<std::string>{
                "--set: name: invalid value 'my run': --set takes the value without quotes (expected name=my run)"});
}

std::vector<std::string> sweep_errors(const std::string& axes) {
  const std::string sweep =
      "scenario { cluster { node_template: \"dgx_h100\" num_nodes: 1 } workload { model { num_layers: 8 "
      "hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 } training { "
      "global_batch_size: 16 } } }\n" +
      axes;
  try {
    load_sweep_text(sweep, "t.sweep.textproto", Format::text, ".");
  } catch (const ScenarioError& e) {
    return e.errors();
  }
  ADD_FAILURE() << "no ScenarioError for:\n" << sweep;
  return {};
}

TEST(IntRanges, SweepValuesAreRefusedAtTheAxisWithTheFieldsRange) {
  EXPECT_EQ(sweep_errors("axis { path: \"workload.parallel.tp\" values: [\"2\", \"99999999999\"] }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:51: axis[0].values[1]: value \"99999999999\" is not valid "
                                     "for workload.parallel.tp " +
                                     std::string(kTpRange)});
  EXPECT_EQ(sweep_errors("axis { path: \"workload.parallel.tp\" values: [\"2\", \"0\"] }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:51: axis[0].values[1]: value \"0\" is not valid for "
                                     "workload.parallel.tp " +
                                     std::string(kTpRange)});
  EXPECT_EQ(sweep_errors("axis { path: \"workload.training.micro_batch_size\" range { from: 0 to: 2 } }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:51: axis[0].range: value \"0\" is not valid for "
                                     "workload.training.micro_batch_size " +
                                     kMicroBatchRange});
}

std::vector<std::string> profile_errors(const std::string& text) {
  try {
    load_profile_text(text, "p.textproto");
  } catch (const ScenarioError& e) {
    return e.errors();
  }
  ADD_FAILURE() << "no ScenarioError for:\n" << text;
  return {};
}

TEST(IntRanges, ProfileNamesTheFieldsRange) {
  // A collective fit is for a group of at least 2 GPUs.
  EXPECT_EQ(profile_errors("collective { op: \"all_reduce\" num_ranks: 99999999999 }\n"),
            std::vector<std::string>{"p.textproto:1:42: collective[0].num_ranks: invalid value 99999999999 (expected "
                                     "an integer from 2 to 2147483647)"});
  EXPECT_EQ(profile_errors("collective { op: \"all_reduce\" num_ranks: 1 }\n"),
            std::vector<std::string>{
                "p.textproto:1:31: collective[0].num_ranks: got 1 (expected an integer from 2 to 2147483647)"});
}

}  // namespace
}  // namespace traincast::io
