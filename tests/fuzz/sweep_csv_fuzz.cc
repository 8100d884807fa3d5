// libFuzzer target: arbitrary bytes as a sweep CSV (io::read_sweep_csv, models/io/sweep_csv.h:
// the reader of `traincast merge` and `sweep --resume`), given as a file (an in-memory memfd, since
// the reader takes a path). The only acceptable outcomes are a SweepCsv that keeps the header's
// promises (points no more than a sweep can have, every row's point < points, in the shard and
// once, complete_bytes within the file) or an io::ScenarioError with at least one message; anything
// else (crash, sanitizer report, other exception, hang) is a bug. Seeds: the sweep CSVs under tests/golden/expected.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "models/io/sweep_csv.h"

namespace {

/// The path of one memfd reused for every input ("/proc/self/fd/N").
const std::string& input_path(int& fd) {
  static int memfd = memfd_create("sweep_csv_fuzz", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(memfd);
  fd = memfd;
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  int fd = -1;
  const std::string& path = input_path(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0) __builtin_trap();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) __builtin_trap();
    done += static_cast<std::size_t>(n);
  }
  try {
    const traincast::io::SweepCsv csv = traincast::io::read_sweep_csv(path);
    if (csv.complete_bytes > size || csv.shard.count == 0 || csv.shard.index >= csv.shard.count) __builtin_trap();
    // As merge and --resume do: one slot per point (a header promising more points than any sweep
    // has must be refused, not allocated).
    std::vector<bool> seen(csv.points);
    for (const auto& row : csv.rows) {
      if (row.point >= csv.points || row.point % csv.shard.count != csv.shard.index) __builtin_trap();
      if (seen[row.point]) __builtin_trap();  // documented: a point twice is an error
      seen[row.point] = true;
    }
  } catch (const traincast::io::ScenarioError& e) {
    if (e.errors().empty()) __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
