#pragma once
// A pipe read as /dev/fd/N, as the shell's <(cat FILE) gives it, for the CLI tests of inputs
// without an extension (fresh_user43_cli_test.cc, fresh_user43c_cli_test.cc).

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace traincast::cli::test_support {

/// A pipe holding `text` (written and closed before the read: it fits the pipe's buffer), read as
/// /dev/fd/N as the shell's <(cat FILE) gives it. Closes its read end when destroyed.
class Pipe {
 public:
  explicit Pipe(const std::string& text) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    read_fd_ = fds[0];
    EXPECT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fds[1]);
  }
  ~Pipe() { close(read_fd_); }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  std::string path() const { return "/dev/fd/" + std::to_string(read_fd_); }

 private:
  int read_fd_ = -1;
};

}  // namespace traincast::cli::test_support
