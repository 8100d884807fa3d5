#pragma once
// One writer per sweep CSV: an advisory lock on `<file>.lock` that names its holder, and an
// append-only file that writes each batch of rows with one write(2), so no row is ever torn.

#include <iosfwd>
#include <string>

namespace traincast::cli {

/// An exclusive flock(2) on `<path>.lock`, held while alive. The lock file records the holder on
/// one line: "pid <pid> host <host> started <UTC time> command <command line>". A lock file
/// whose holder is gone (the kernel drops a dead process's flock) is taken over and rewritten.
/// The file is removed when the lock is released.
class OutputLock {
 public:
  /// Takes the lock for `path`, or throws UsageError "<path>: another traincast is writing it
  /// (<holder line>) (expected one writer per file: ...)" (exit 2) when another process holds it.
  /// `command`: this process's command line, recorded for the next one. A file system without
  /// flock (errno ENOLCK, EOPNOTSUPP, ENOSYS) gets a warning on `err` and no lock; any other
  /// failure to create the lock file throws UsageError "<path>: cannot write in <dir> (<reason>)
  /// ..." naming the path given, not the lock file. A `path` that is a directory (or another
  /// non-regular file) is refused first, as such (refuse_non_file_output).
  OutputLock(const std::string& path, const std::string& command, std::ostream& err);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  /// The lock file's path: `path` + ".lock".
  const std::string& lock_path() const { return lock_path_; }

 private:
  std::string lock_path_;
  int fd_ = -1;
};

/// A file opened for appending (O_APPEND). write() hands each call's bytes to one write(2) (and
/// continues a short write), so whole rows reach the file together. Throws std::runtime_error
/// "<path>: write failed (<reason>)".
class AppendFile {
 public:
  AppendFile() = default;
  /// Opens `path` for appending; with `truncate`, empties it first. Throws UsageError when it
  /// cannot be opened.
  AppendFile(const std::string& path, bool truncate);
  ~AppendFile();
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  void write(const std::string& bytes);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace traincast::cli
