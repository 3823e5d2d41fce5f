//===- AtomicFile.h - whole-file reads and atomic writes --------*- C++ -*-===//
//
// This file declares small POSIX file helpers shared by kilnd and the agents:
// atomic replace (temp file, fsync, rename, fsync directory), a streaming
// writer that publishes a file the same way, and whole-file reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace kiln {

/// What a committed file must survive. kDurable: fsync the file and its
/// directory before commit() returns. kInTransit: only rename (readers still
/// see all or nothing, but a crash may lose or truncate it: for data that is
/// verified on read and can be sent again, such as tensors of one call).
enum class Durability { kDurable, kInTransit };

/// Creates the folder `path` goes in, and its parents; INTERNAL naming the
/// folder when that fails.
absl::Status createParentDirectory(const std::filesystem::path &path);

/// Replaces `path` with `bytes` so that readers see the old or the new file,
/// never a partial one. The parent directory must exist. The file gets
/// `mode` (less the umask) from its first byte.
absl::Status writeFileAtomically(const std::filesystem::path &path,
                                 std::string_view bytes,
                                 Durability durability = Durability::kDurable,
                                 mode_t mode = 0644);

/// A file written in pieces under a temporary name and published whole by
/// commit(): fsync, rename onto the final path, fsync of its directory (the
/// fsyncs only for Durability::kDurable).
/// Readers see no file or the complete one; an uncommitted file is removed.
class AtomicFileWriter {
public:
  /// Creates `tempPath` (default: a unique name beside `finalPath`, which
  /// must be on the same file system) exclusively, with `mode`.
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>>
  create(std::filesystem::path finalPath, std::filesystem::path tempPath = {},
         mode_t mode = 0644);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

  /// Appends the next piece; INTERNAL (RESOURCE_EXHAUSTED when the disk is
  /// full) on I/O failure.
  absl::Status append(std::string_view bytes);
  /// Publishes the file. After a failure the temporary file is gone.
  absl::Status commit(Durability durability = Durability::kDurable);
  /// Drops the temporary file; later calls fail.
  void discard();

  const std::filesystem::path &finalPath() const { return target; }

private:
  AtomicFileWriter(std::filesystem::path finalPath,
                   std::filesystem::path tempPath, int fd);

  std::filesystem::path target;
  std::filesystem::path temp;
  int fd;
};

/// Reads the open file `fd` from its position to its end in chunks of up to
/// 1 MiB (through a buffer no larger than the file), handing each to `sink`
/// and stopping at the first error it returns; `pathForErrors` names it in
/// messages. Does not close `fd`.
absl::Status
readDescriptorInChunks(int fd, const std::filesystem::path &pathForErrors,
                       const std::function<absl::Status(std::string_view)> &sink);

/// Reads `path` in chunks of up to 1 MiB, handing each to `sink` and stopping
/// at the first error it returns. NOT_FOUND when `path` does not exist.
absl::Status
readFileInChunks(const std::filesystem::path &path,
                 const std::function<absl::Status(std::string_view)> &sink);

/// Reads all of `path`. NOT_FOUND when it does not exist.
absl::StatusOr<std::string> readWholeFile(const std::filesystem::path &path);

/// readWholeFile for a file a flag names: any failure is INVALID_ARGUMENT
/// "<flag>: cannot read <path>: <why>" (a bad command line, not a fault).
absl::StatusOr<std::string> readFlagFile(const std::filesystem::path &path,
                                         const char *flag);

/// A name for a temporary file beside `path`, unique within this host.
std::filesystem::path uniqueTempPath(const std::filesystem::path &path);

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
absl::Status writeAll(int fd, std::string_view bytes,
                      const std::filesystem::path &pathForErrors);

/// fsyncs the directory holding `path`, so a rename into it is durable.
void syncParentDirectory(const std::filesystem::path &path);

} // namespace kiln
