//===- AtomicFile.cpp - whole-file reads and atomic writes ----------------===//
//
// This file implements atomic file replacement and whole-file reads.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/AtomicFile.h"

#include "absl/strings/str_cat.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::server {

namespace {
absl::Status ioError(const char *what, const std::filesystem::path &path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path.string(), ": ", std::strerror(errno)));
}
} // namespace

std::filesystem::path uniqueTempPath(const std::filesystem::path &path) {
  static std::atomic<uint64_t> counter{0};
  return std::filesystem::path(absl::StrCat(path.string(), ".tmp.", getpid(),
                                            ".", counter.fetch_add(1)));
}

absl::Status writeAll(int fd, std::string_view bytes,
                      const std::filesystem::path &pathForErrors) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return ioError("cannot write", pathForErrors);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

void syncParentDirectory(const std::filesystem::path &path) {
  int dirFd = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd < 0)
    return;
  ::fsync(dirFd);
  ::close(dirFd);
}

absl::Status writeFileAtomically(const std::filesystem::path &path,
                                 std::string_view bytes) {
  std::filesystem::path temp = uniqueTempPath(path);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return ioError("cannot create", temp);
  absl::Status status = writeAll(fd, bytes, temp);
  if (status.ok() && ::fsync(fd) != 0)
    status = ioError("cannot fsync", temp);
  ::close(fd);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0)
    status = ioError("cannot rename onto", path);
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  syncParentDirectory(path);
  return absl::OkStatus();
}

absl::StatusOr<std::string> readWholeFile(const std::filesystem::path &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return absl::NotFoundError(absl::StrCat(path.string(), " does not exist"));
    return ioError("cannot open", path);
  }
  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      absl::Status status = ioError("cannot read", path);
      ::close(fd);
      return status;
    }
    if (n == 0)
      break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return bytes;
}

} // namespace kiln::server
