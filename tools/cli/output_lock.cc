// OutputLock and AppendFile (output_lock.h): flock(2) on `<file>.lock` with the holder's name, and
// appends of whole rows.

#include "tools/cli/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <utility>

#include "tools/cli/cli_util.h"

namespace traincast::cli {

namespace {

std::string holder_line(const std::string& command) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return "pid " + std::to_string(getpid()) + " host " + host + " started " + when + " command " + command + "\n";
}

/// The lock file's holder line without its newline ("" when unreadable or empty).
std::string read_holder(int fd) {
  std::string text;
  char buf[1024];
  ssize_t n = 0;
  off_t at = 0;
  while ((n = pread(fd, buf, sizeof buf, at)) > 0 && text.size() < 4096) {
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  if (const std::size_t nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  return text;
}

bool same_file(int fd, const std::string& path) {
  struct stat a {};
  struct stat b {};
  return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

OutputLock::OutputLock(const std::string& path, const std::string& command, std::ostream& err)
    // The real file's path: a symlink or another spelling of the same file takes the same lock.
    : lock_path_(std::filesystem::weakly_canonical(std::filesystem::path(path)).string() + ".lock") {
  // A holder that releases removes the file; a process that opened it just before must then lock
  // the new one, hence the check that the locked file is still the one at the path.
  // The output's own directory first, named as `run --json` names it (the lock file beside it
  // would otherwise be the one named).
  // A directory at the path is named as one (the lock beside it would be taken first, and the
  // refusal would then say "file exists").
  refuse_non_file_output(path);
  std::error_code ec;
  // A bare file name ("results.csv") lies in the working directory.
  std::filesystem::path dir = std::filesystem::path(lock_path_).parent_path();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(path + ": " +
                     (std::filesystem::exists(dir, ec) ? dir.string() + " is a file, not a directory"
                                                       : "directory " + dir.string() + " does not exist"));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      // The output's path first, as check_output_path names it: the lock file is ours, not the user's.
      // ENOENT in an existing directory: a file system without new files (/proc).
      const std::string why = errno == ENOENT ? std::string("it takes no new files") : std::strerror(errno);
      std::string msg = path;
      msg.append(": cannot write in ").append(dir.string()).append(" (").append(why);
      msg.append(") (expected a writable directory; the lock file ").append(lock_path_).append(" goes there too)");
      throw UsageError(msg);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EWOULDBLOCK) {
        const std::string holder = read_holder(fd);
        ::close(fd);
        throw UsageError(path + ": another traincast is writing it (" +
                         (holder.empty() ? std::string("holder not recorded yet") : holder) + "; lock " + lock_path_ +
                         ") (expected one writer per file: wait for it to finish or stop it, then --resume)");
      }
      ::close(fd);
      if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS) {
        err << "warning: " << lock_path_ << ": this file system has no flock (" << std::strerror(e)
            << "): a second writer of " << path << " would not be refused\n";
        return;
      }
      throw UsageError(lock_path_ + ": cannot lock (" + std::strerror(e) + ")");
    }
    if (!same_file(fd, lock_path_)) {
      ::close(fd);  // released and removed by its holder meanwhile: lock the new one
      continue;
    }
    const std::string line = holder_line(command);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
      const int e = errno;
      ::close(fd);
      throw UsageError(lock_path_ + ": cannot record the lock's holder (" + std::strerror(e) + ")");
    }
    fd_ = fd;
    return;
  }
  throw UsageError(lock_path_ + ": the lock file kept being replaced (expected one writer per file)");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still held: the next writer locks a new file
  ::close(fd_);
}

AppendFile::AppendFile(const std::string& path, bool truncate) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (fd_ < 0) throw UsageError(path + ": cannot write (" + std::strerror(errno) + ")");
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

AppendFile::AppendFile(AppendFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

AppendFile& AppendFile::operator=(AppendFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void AppendFile::write(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(path_ + ": write failed (" + std::strerror(errno) + ")");
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace traincast::cli
