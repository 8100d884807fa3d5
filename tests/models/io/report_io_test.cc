// Tests of models/io's report writer (report_io.h): report_to_json's keys, values and
// byte-identical output.

#include "models/io/report_io.h"

#include <gtest/gtest.h>

#include <string>

#include "models/spec/report.h"

namespace traincast::io {
namespace {

models::Report sample_report() {
  models::Report r;
  r.scenario = std::string("s");  // not = "s": GCC 12 warns falsely (-Wrestrict) on that in this file
  r.gpu = "H100-SXM5-80GB";
  r.num_gpus = 8;
  r.num_nodes = 1;
  r.tp = 2;
  r.dp = 4;
  r.micro_batches = 32;
  r.iteration_time_s = 1.25;
  r.tokens_per_s = 838860.8;
  r.tflops_per_gpu = 412.5;
  r.mfu = 0.417;
  r.hfu = 0.45;
  r.breakdown.compute_s = 1.0;
  r.breakdown.dp_comm_exposed_s = 0.25;
  r.memory.peak_bytes_per_gpu = 7.5e10;
  r.memory.oom = true;
  r.memory.advice = "use tp 4";
  r.busiest_links.push_back({"nvlink gpu0 to nvswitch", 0.75, 1e10, 4.5e11});
  r.events = 123456789012ull;  // > 2^32: printed as a number, not a string
  return r;
}

TEST(ReportJson, KeysAndValues) {
  const std::string json = report_to_json(sample_report());
  for (const char* key :
       {"\"iteration_time_s\": 1.25", "\"tokens_per_s\": 838860.8", "\"tflops_per_gpu\": 412.5", "\"mfu\": 0.417",
        "\"oom\": true", "\"peak_bytes_per_gpu\": 75000000000", "\"compute_s\": 1", "\"tp_comm_exposed_s\": 0",
        "\"dp_comm_exposed_s\": 0.25", "\"pp_comm_exposed_s\": 0", "\"pipeline_bubble_s\": 0", "\"optimizer_s\": 0",
        "\"breakdown\": {", "\"memory\": {", "\"busiest_links\": [", "\"events\": 123456789012",
        "\"advice\": \"use tp 4\"", "\"name\": \"nvlink gpu0 to nvswitch\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " not in\n" << json;
  }
  EXPECT_EQ(json.back(), '\n');
}

TEST(ReportJson, EveryFieldPrintedEvenWhenZero) {
  const std::string json = report_to_json(models::Report{});
  for (const char* key : {"\"scenario\": \"\"", "\"time_to_train_s\": 0", "\"folded\": false", "\"busiest_links\": []",
                          "\"peak_bytes_per_gpu\": 0", "\"oom\": false", "\"compute_s\": 0"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " not in\n" << json;
  }
}

TEST(ReportJson, ByteIdenticalForIdenticalInput) {
  EXPECT_EQ(report_to_json(sample_report()), report_to_json(sample_report()));
}

}  // namespace
}  // namespace traincast::io
