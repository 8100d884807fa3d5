// Chakra .et files: every public example trace in ../shared/data/chakra runs end to end (one test
// per trace set; the set's files are its ranks), the PyTorch JSON trace is refused with its
// reason, export -> bytes -> import -> run reproduces the generated job's step, and truncated or
// garbled files give positioned errors, never crashes.
#include "models/io/chakra_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/collectives/collective_engine.h"
#include "models/executor/chakra_executor.h"
#include "models/executor/chakra_export.h"
#include "models/executor/training_executor.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::io {
namespace {

namespace fs = std::filesystem;
using models::ChakraCollective;
using models::ChakraNodeType;
using models::ChakraRankTrace;

const fs::path kData = fs::path(TRAINCAST_SHARED_DATA_DIR) / "chakra";

/// DGX H100 nodes enough for `ranks` GPUs (rank r on GPU r), non-blocking fat tree.
models::Scenario h100_cluster(int ranks) {
  models::Scenario sc;
  sc.name = "chakra-test";
  sc.cluster.node_template = "dgx_h100";
  sc.cluster.num_nodes = std::max(1, (ranks + 7) / 8);
  return sc;
}

/// Every directory under chakra/ holding .et files: one trace set each.
std::vector<std::string> trace_sets() {
  std::vector<std::string> out;
  if (!fs::is_directory(kData)) return out;
  for (const auto& e : fs::recursive_directory_iterator(kData)) {
    if (!e.is_directory()) continue;
    bool has_et = false;
    for (const auto& f : fs::directory_iterator(e.path())) has_et = has_et || f.path().extension() == ".et";
    if (has_et) out.push_back(fs::relative(e.path(), kData).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

double collective_alone_s(const models::Scenario& sc, models::CollectiveOp op, int n, double bytes) {
  sim::Simulator s;
  sim::FlowNetwork net(s);
  const models::Cluster c(sc.cluster, net);
  models::CollectiveEngine e(s, net, c);
  models::CollectiveCall call;
  call.op = op;
  for (int r = 0; r < n; ++r) call.ranks.push_back(r);
  call.bytes = bytes;
  e.start(call, nullptr, 0);
  s.run();
  return static_cast<double>(s.now().ns()) * 1e-9;
}

class PublicChakraTrace : public ::testing::TestWithParam<std::string> {};

TEST_P(PublicChakraTrace, RunsEndToEnd) {
  const fs::path dir = kData / GetParam();
  const std::vector<ChakraRankTrace> ranks = load_chakra_traces({dir.string()});
  const int n = static_cast<int>(ranks.size());
  // The 512-rank model traces take seconds (DLRM's all-to-all over 512 GPUs is 261,632 flows):
  // CTest runs them under the `slow` label (slow.chakra_public_traces_512_ranks).
  if (n >= 512 && ranks[0].nodes.size() > 1 && std::getenv("TRAINCAST_SLOW_TESTS") == nullptr)
    GTEST_SKIP() << "slow (several seconds): set TRAINCAST_SLOW_TESTS=1 (CTest label `slow` does)";
  const models::Scenario sc = h100_cluster(n);
  const models::ChakraRunReport r = models::simulate_chakra(sc, ranks);
  ASSERT_GT(r.iteration_time_s, 0);
  // The breakdown covers the step exactly.
  double sum = r.compute_s + r.memory_s + r.cpu_s + r.idle_s;
  for (const auto& c : r.comm) sum += c.exposed_s;
  EXPECT_NEAR(sum, r.iteration_time_s, 1e-9 * r.iteration_time_s);
  // No rank can finish before its own GPU compute, which runs one node at a time.
  double max_compute_s = 0;
  for (const ChakraRankTrace& t : ranks) {
    double s = 0;
    for (const auto& node : t.nodes)
      if (node.type == ChakraNodeType::comp && !node.is_cpu_op && node.duration_ns > 0) s += node.duration_ns * 1e-9;
    max_compute_s = std::max(max_compute_s, s);
  }
  EXPECT_GE(r.iteration_time_s, max_compute_s * (1 - 1e-12));
  // A single-collective trace takes exactly what the collective engine gives that call alone.
  const auto& nodes = ranks[0].nodes;
  if (nodes.size() == 1 && nodes[0].type == ChakraNodeType::comm_coll) {
    models::CollectiveOp op = models::CollectiveOp::all_reduce;
    switch (static_cast<ChakraCollective>(nodes[0].comm_type)) {
      case ChakraCollective::all_gather:
        op = models::CollectiveOp::all_gather;
        break;
      case ChakraCollective::reduce_scatter:
        op = models::CollectiveOp::reduce_scatter;
        break;
      case ChakraCollective::all_to_all:
        op = models::CollectiveOp::all_to_all;
        break;
      default:
        break;
    }
    EXPECT_EQ(r.iteration_time_s, collective_alone_s(sc, op, n, nodes[0].comm_size_bytes)) << GetParam();
    ASSERT_EQ(r.comm.size(), 1u);
    EXPECT_EQ(r.comm[0].calls, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, PublicChakraTrace, ::testing::ValuesIn(trace_sets()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string s = param.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PublicChakraTrace);

TEST(ChakraIo, EveryPublicTraceSetIsCovered) {
  if (!fs::is_directory(kData)) GTEST_SKIP() << kData << " not present";
  // 12 microbenchmarks (4 collectives x 3 sizes), 12 ASTRA-sim workload sets (all_reduce and 3
  // models at 3 sizes each), the MLCommons feeder test trace.
  EXPECT_EQ(trace_sets().size(), 25u);
}

TEST(ChakraIo, PyTorchFeederTraceRunsOnOneAndOnEightRanks) {
  const fs::path f = kData / "mlcommons-feeder-test" / "chakra.0.et";
  if (!fs::exists(f)) GTEST_SKIP();
  std::vector<ChakraRankTrace> ranks = load_chakra_traces({f.string()});
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].schema, "1.0.1");
  EXPECT_EQ(ranks[0].nodes.size(), 3664u);
  const models::ChakraRunReport one = models::simulate_chakra(h100_cluster(1), ranks);
  for (int k = 1; k < 8; ++k) {
    ranks.push_back(ranks.front());
    ranks.back().rank = k;
  }
  const models::ChakraRunReport eight = models::simulate_chakra(h100_cluster(8), ranks);
  // 5 all-reduces (102 MB in all) and 2 broadcasts: free on one rank, NVLink traffic on eight,
  // hidden under the 293 ms of GPU compute the trace measured.
  EXPECT_GE(eight.iteration_time_s, one.iteration_time_s);
  EXPECT_TRUE(one.busiest_links.empty());
  EXPECT_FALSE(eight.busiest_links.empty());
  ASSERT_EQ(eight.comm.size(), 2u);
  EXPECT_EQ(eight.comm[0].kind, "all_reduce");
  EXPECT_EQ(eight.comm[0].calls, 5);
  EXPECT_EQ(one.cpu_nodes, 2434);
  EXPECT_GT(one.dropped_deps, 0);
}

TEST(ChakraIo, PyTorchJsonTraceIsRefusedWithItsReason) {
  const fs::path f = kData / "pytorch-et" / "1.0.2-chakra.0.0.4.json";
  if (!fs::exists(f)) GTEST_SKIP();
  try {
    load_chakra_traces({f.string()});
    FAIL() << "a JSON PyTorch execution trace must be refused";
  } catch (const ChakraError& e) {
    EXPECT_NE(std::string(e.what()).find("PyTorch execution trace in JSON"), std::string::npos) << e.what();
  }
}

models::Scenario small_gpt() {
  models::Scenario sc;
  sc.name = "rt";
  sc.cluster.node_template = "dgx_a100";
  sc.model.num_layers = 4;
  sc.model.hidden_size = 2048;
  sc.model.num_attention_heads = 16;
  sc.model.vocab_size = 51200;
  sc.model.seq_length = 2048;
  sc.parallel.tp = 2;
  sc.parallel.pp = 2;
  sc.parallel.dp = 2;
  sc.training.global_batch_size = 8;
  sc.training.micro_batch_size = 1;
  sc.training.precision = models::Precision::fp16;
  sc.options.fold_symmetric = false;
  return sc;
}

std::vector<ChakraRankTrace> exported(const models::Scenario& sc) {
  sim::Simulator s;
  sim::FlowNetwork n(s);
  const models::Cluster c(sc.cluster, n);
  return models::export_training_chakra(models::build_training_graph(sc, c), c.num_gpus());
}

TEST(ChakraIo, RoundTripThroughFilesGivesTheGeneratorsIterationTime) {
  // Sizes are written as whole bytes (comm_size is an integer in et_def.proto) and durations as
  // exact nanoseconds (duration_ns); the generator's gradient buckets are whole bytes here, so the
  // step must agree to the nanosecond.
  const models::Scenario sc = small_gpt();
  const models::Report gen = models::simulate_training(sc);
  std::vector<ChakraRankTrace> back;
  for (const ChakraRankTrace& t : exported(sc)) {
    const std::string bytes = write_chakra_trace(t);
    EXPECT_EQ(bytes, write_chakra_trace(t));  // deterministic
    back.push_back(parse_chakra_trace(bytes, "rt." + std::to_string(t.rank) + ".et", t.rank));
    EXPECT_EQ(back.back().nodes.size(), t.nodes.size() + 1);  // + the process_group:init node
    EXPECT_EQ(back.back().process_groups.size(), t.process_groups.size());
  }
  const models::ChakraRunReport r = models::simulate_chakra(sc, back);
  EXPECT_EQ(r.iteration_time_s, gen.iteration_time_s);
}

std::string small_trace_bytes() {
  ChakraRankTrace t;
  models::ChakraNode a;
  a.id = 1;
  a.name = "gemm";
  a.type = ChakraNodeType::comp;
  a.duration_ns = 12'000;
  models::ChakraNode b;
  b.id = 2;
  b.name = "ar";
  b.type = ChakraNodeType::comm_coll;
  b.comm_type = 0;
  b.comm_size_bytes = 1 << 20;
  b.data_deps = {1};
  b.pg_name = "g";
  t.nodes = {a, b};
  t.process_groups = {{"g", {}}};
  return write_chakra_trace(t);
}

TEST(ChakraIo, TruncationNamesTheByteOffset) {
  const std::string bytes = small_trace_bytes();
  // Cut inside the second message (the metadata message is 7 bytes + prefix).
  try {
    parse_chakra_trace(bytes.substr(0, 12), "x.0.et", 0);
    FAIL();
  } catch (const ChakraError& e) {
    EXPECT_NE(std::string(e.what()).find("x.0.et: byte "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  // Every prefix either parses (cut at a message boundary) or is a ChakraError; never anything else.
  int boundaries = 0;
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    try {
      parse_chakra_trace(bytes.substr(0, cut), "x.0.et", 0);
      ++boundaries;
    } catch (const ChakraError&) {
    }
  }
  EXPECT_EQ(boundaries, 4);  // after metadata, pg node, node 1, node 2 (the last one: the whole file)
}

TEST(ChakraIo, GarbledBytesGiveErrorsNotCrashes) {
  const std::string good = small_trace_bytes();
  std::uint64_t lcg = 12345;
  int parsed = 0, refused = 0;
  for (int k = 0; k < 3000; ++k) {
    std::string b = good;
    for (int flips = 0; flips < 1 + k % 4; ++flips) {
      lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
      b[static_cast<std::size_t>((lcg >> 33) % b.size())] = static_cast<char>(lcg >> 20);
    }
    try {
      const ChakraRankTrace t = parse_chakra_trace(b, "g.0.et", 0);
      ++parsed;
      try {
        models::simulate_chakra(h100_cluster(1), {t});
      } catch (const std::invalid_argument&) {
      }
    } catch (const ChakraError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(parsed + refused, 3000);
}

TEST(ChakraIo, BadNodesNameFileOffsetNodeAndField) {
  auto expect_error = [](const std::string& bytes, const std::string& needle) {
    try {
      parse_chakra_trace(bytes, "bad.0.et", 0);
      ADD_FAILURE() << "expected: " << needle;
    } catch (const ChakraError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  // Hand-encoded messages: [len][GlobalMetadata version "1"] then [len][Node ...].
  const std::string meta = std::string("\x03\x0a\x01\x31", 4);
  // Node id 5, type 8 (STORAGE_NODE).
  expect_error(meta + std::string("\x04\x08\x05\x18\x08", 5),
               "bad.0.et: byte 4: node 5: type STORAGE_NODE (8) is not simulated");
  // Node id 5, type 42.
  expect_error(meta + std::string("\x04\x08\x05\x18\x2a", 5), "type 42 is not a Chakra node type");
  // COMM_COLL without comm_type.
  expect_error(meta + std::string("\x04\x08\x05\x18\x07", 5), "node 5: COMM_COLL_NODE without a comm_type attribute");
  // COMP depending on a missing node 9.
  expect_error(meta + std::string("\x06\x08\x05\x18\x04\x28\x09", 7),
               "node 5: depends on node 9 (data_deps), which is not in the file");
  // comm_size given as a string: attr {name "comm_size" string_val "x"}.
  const std::string attr = std::string("\x0a\x09", 2) + "comm_size" + std::string("\xea\x01\x01", 3) + "x";
  const std::string node = std::string("\x08\x05\x18\x07\x52", 5) + static_cast<char>(attr.size()) + attr;
  expect_error(meta + static_cast<char>(node.size()) + node,
               "node 5: attribute comm_size: expected an integer (got string_val)");
  expect_error(std::string(), "empty file");
}

TEST(ChakraIo, MissingRanksAndFileNamesAreErrors) {
  const fs::path dir = fs::path(::testing::TempDir()) / "chakra_missing_rank";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string bytes = small_trace_bytes();
  for (int r : {0, 1, 3}) std::ofstream(dir / ("t." + std::to_string(r) + ".et"), std::ios::binary) << bytes;
  try {
    load_chakra_traces({(dir / "t").string()});
    FAIL();
  } catch (const ChakraError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 is missing (expected " + (dir / "t").string() + ".2.et"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir / "t.2.et", std::ios::binary) << bytes;
  EXPECT_EQ(load_chakra_traces({(dir / "t").string()}).size(), 4u);
  EXPECT_EQ(load_chakra_traces({dir.string()}).size(), 4u);
  EXPECT_THROW(load_chakra_traces({(dir / "nothing").string()}), ChakraError);
  EXPECT_EQ(chakra_rank_from_path("a/b.17.et"), 17);
  EXPECT_EQ(chakra_rank_from_path("a/b.et"), -1);
}

}  // namespace
}  // namespace traincast::io
