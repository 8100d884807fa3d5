// Upper bounds of the workload's size fields (new-user test: train_tokens = 1e30 was accepted and
// printed a 1.6e20-day training). Bounds and their sources: scenarios/README.md, workload.training.
// And of the input files themselves: read_input_file stops after kMaxInputBytes + 1 bytes.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <string>
#include <thread>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"
#include "tests/support/fixtures.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

// A small valid scenario (one DGX H100, DP 8); `training` is the body of its training block.
std::string with_training(const std::string& training) {
  return "cluster { node_template: \"dgx_h100\" }\n"
         "workload {\n"
         "  model { num_layers: 2 hidden_size: 256 num_attention_heads: 4 vocab_size: 1000 seq_length: 128 }\n"
         "  parallel { dp: 8 }\n"
         "  training { " +
         training + " }\n}\n";
}

// In a file, one line per hexadecimal number, floating-point field or integer (protobuf's own
// "expect a decimal number, got: 0x1" for the floating-point one was printed before it, session 37).
TEST(InputBounds, HexadecimalNumbersGetOneLineEach) {
  EXPECT_EQ(errors_of("power { pue: 0x1 }\ncluster { num_nodes: 0x2 }\n"),
            (std::vector<std::string>{
                "t.textproto:1:14: power.pue: 0x1 is hexadecimal (expected a decimal number, e.g. 1)",
                "t.textproto:2:22: cluster.num_nodes: 0x2 is hexadecimal (expected a decimal number, e.g. 2)"}));
}

TEST(InputBounds, TrainTokensAboveTheLargestPublishedRunsTimesTwentyEight) {
  // Line 5: "  training { " puts the first field at column 14.
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: 1e30")),
            std::vector<std::string>{
                "t.textproto:5:35: workload.training.train_tokens: got 1e30 (expected 0 for no token budget, or a "
                "whole number of tokens from 1 to 1e15: about 28x "
                "the largest published pretraining runs: Qwen3 36T tokens (Qwen3 Technical Report 2025), Llama 3 "
                "15.6T (Meta 2024))"});
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: 1.0000001e15")).size(), 1u);
  // Infinity (and a negative count) get the same message: one range for every refused value.
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: inf")),
            std::vector<std::string>{
                "t.textproto:5:35: workload.training.train_tokens: got inf (expected 0 for no "
                "token budget, or a whole number of tokens from 1 to 1e15: about 28x the largest published pretraining "
                "runs: Qwen3 36T tokens (Qwen3 Technical Report 2025), Llama 3 15.6T (Meta 2024))"});
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: -1")).size(), 1u);
  // A fraction of a token (it was taken and printed as 1.0B).
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: 1000000000.5")).size(), 1u);
  EXPECT_EQ(load_scenario_text(with_training("global_batch_size: 8 train_tokens: 1.5e9"), "t.textproto", Format::text)
                .training.train_tokens,
            1.5e9);
}

TEST(InputBounds, TrainTokensAtTheBoundLoad) {
  const models::Scenario s =
      load_scenario_text(with_training("global_batch_size: 8 train_tokens: 1e15"), "t.textproto", Format::text);
  EXPECT_EQ(s.training.train_tokens, 1e15);
}

TEST(InputBounds, GlobalAndMicroBatchAtMostTwoToTheTwentyFour) {
  // 2^25 = 33554432 sequences (a multiple of dp = 8), and a micro-batch of 2^25.
  EXPECT_EQ(errors_of(with_training("global_batch_size: 33554432 micro_batch_size: 33554432")),
            (std::vector<std::string>{
                "t.textproto:5:14: workload.training.global_batch_size: got 33554432 (expected an integer from 1 to "
                "16777216: about 200x the largest published global batches: 81,920 images for ResNet-50 (Yamazaki et "
                "al. 2019), 2,048 x 8,192-token sequences for Llama 3 405B (Meta 2024))",
                "t.textproto:5:42: workload.training.micro_batch_size: got 33554432 (expected an integer from 1 to "
                "16777216: about 200x the largest published global batches: 81,920 images for ResNet-50 (Yamazaki et "
                "al. 2019), 2,048 x 8,192-token sequences for Llama 3 405B (Meta 2024))"}));
  // 2^24 = 16777216 (divisible by 8) loads.
  EXPECT_EQ(load_scenario_text(with_training("global_batch_size: 16777216"), "t.textproto", Format::text)
                .training.global_batch_size,
            16777216);
}

// A file with no end and no NUL (a FIFO fed text forever, as a pipe from `yes` would be): read
// until kMaxInputBytes + 1 bytes, then refused with its path, instead of until memory runs out.
TEST(InputBounds, EndlessTextFromAFifoIsRefusedAfterTheLimit) {
  const traincast::test_support::TempDir dir("InputBoundsFifo");
  const std::string fifo = dir.file("endless.textproto");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);  // the writer sees EPIPE when the reader gives up
  std::size_t written = 0;
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string line(4096, 'a');
    for (;;) {
      const ssize_t n = ::write(fd, line.data(), line.size());
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  try {
    read_input_file(fifo);
    ADD_FAILURE() << "an endless input was read to its end";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()),
              fifo + ": input too large (more than 67108864 bytes; expected at most 67108864, 64 MiB)");
  }
  writer.join();
  sigaction(SIGPIPE, &old, nullptr);
  EXPECT_GT(written, kMaxInputBytes);
  EXPECT_LT(written, kMaxInputBytes + (std::size_t{1} << 20));  // the reader stopped: the pipe's buffer at most
}

}  // namespace
}  // namespace traincast::io
