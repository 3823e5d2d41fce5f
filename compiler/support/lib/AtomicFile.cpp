//===- AtomicFile.cpp - whole-file reads and atomic writes ----------------===//
//
// This file implements atomic file replacement, the streaming atomic writer
// and whole-file reads.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/AtomicFile.h"

#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {

namespace {
absl::Status ioError(const char *what, const std::filesystem::path &path) {
  int error = errno;
  std::string message =
      absl::StrCat(what, " ", path.string(), ": ", std::strerror(error));
  if (error == ENOSPC || error == EDQUOT)
    return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
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

absl::StatusOr<std::unique_ptr<AtomicFileWriter>>
AtomicFileWriter::create(std::filesystem::path finalPath,
                         std::filesystem::path tempPath, mode_t mode) {
  if (tempPath.empty())
    tempPath = uniqueTempPath(finalPath);
  int fd = ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                  mode);
  if (fd < 0)
    return ioError("cannot create", tempPath);
  return std::unique_ptr<AtomicFileWriter>(
      new AtomicFileWriter(std::move(finalPath), std::move(tempPath), fd));
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path finalPath,
                                   std::filesystem::path tempPath, int fd)
    : target(std::move(finalPath)), temp(std::move(tempPath)), fd(fd) {}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() {
  if (fd < 0)
    return;
  ::close(fd);
  fd = -1;
  ::unlink(temp.c_str());
}

absl::Status AtomicFileWriter::append(std::string_view bytes) {
  if (fd < 0)
    return absl::FailedPreconditionError(
        absl::StrCat(target.string(), " is no longer being written"));
  absl::Status status = writeAll(fd, bytes, temp);
  if (!status.ok())
    discard();
  return status;
}

absl::Status AtomicFileWriter::commit(Durability durability) {
  if (fd < 0)
    return absl::FailedPreconditionError(
        absl::StrCat(target.string(), " is no longer being written"));
  const bool durable = durability == Durability::kDurable;
  absl::Status status;
  if (durable && ::fsync(fd) != 0)
    status = ioError("cannot fsync", temp);
  if (status.ok() && ::close(std::exchange(fd, -1)) != 0)
    status = ioError("cannot close", temp);
  if (status.ok() && ::rename(temp.c_str(), target.c_str()) != 0)
    status = ioError("cannot rename onto", target);
  if (!status.ok()) {
    if (fd >= 0)
      ::close(std::exchange(fd, -1));
    ::unlink(temp.c_str());
    return status;
  }
  if (durable)
    syncParentDirectory(target);
  return absl::OkStatus();
}

absl::Status createParentDirectory(const std::filesystem::path &path) {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error)
    return absl::InternalError(absl::StrCat(
        "cannot create ", path.parent_path().string(), ": ", error.message()));
  return absl::OkStatus();
}

absl::Status writeFileAtomically(const std::filesystem::path &path,
                                 std::string_view bytes, Durability durability,
                                 mode_t mode) {
  ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> writer,
                   AtomicFileWriter::create(path, {}, mode));
  RETURN_IF_ERROR(writer->append(bytes));
  return writer->commit(durability);
}

absl::Status
readDescriptorInChunks(int fd, const std::filesystem::path &pathForErrors,
                       const std::function<absl::Status(std::string_view)> &sink) {
  // A buffer the size of the file, up to 1 MiB, and not zeroed: small files
  // (executable records, read on every Execute) used to pay for zeroing,
  // and faulting in, a fresh 1 MiB buffer per read.
  struct stat info {};
  size_t capacity = 1 << 20;
  if (::fstat(fd, &info) == 0 && info.st_size >= 0)
    capacity = std::clamp<size_t>(static_cast<size_t>(info.st_size), 1, capacity);
  std::unique_ptr<char[]> chunk = std::make_unique_for_overwrite<char[]>(capacity);
  while (true) {
    ssize_t n = ::read(fd, chunk.get(), capacity);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return ioError("cannot read", pathForErrors);
    if (n == 0)
      return absl::OkStatus();
    RETURN_IF_ERROR(sink(std::string_view(chunk.get(), static_cast<size_t>(n))));
  }
}

absl::Status
readFileInChunks(const std::filesystem::path &path,
                 const std::function<absl::Status(std::string_view)> &sink) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return absl::NotFoundError(absl::StrCat(path.string(), " does not exist"));
    return ioError("cannot open", path);
  }
  absl::Status status = readDescriptorInChunks(fd, path, sink);
  ::close(fd);
  return status;
}

absl::StatusOr<std::string> readWholeFile(const std::filesystem::path &path) {
  std::string bytes;
  RETURN_IF_ERROR(readFileInChunks(path, [&](std::string_view chunk) {
    bytes.append(chunk);
    return absl::OkStatus();
  }));
  return bytes;
}

absl::StatusOr<std::string> readFlagFile(const std::filesystem::path &path,
                                         const char *flag) {
  absl::StatusOr<std::string> bytes = readWholeFile(path);
  if (!bytes.ok())
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": cannot read ", path.string(), ": ", bytes.status().message()));
  return bytes;
}

} // namespace kiln
