//===- AtomicFile.h - whole-file reads and atomic writes --------*- C++ -*-===//
//
// This file declares small POSIX file helpers: atomic replace (temp file,
// fsync, rename, fsync directory) and whole-file reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace kiln::server {

/// Replaces `path` with `bytes` so that readers see the old or the new file,
/// never a partial one. The parent directory must exist.
absl::Status writeFileAtomically(const std::filesystem::path &path,
                                 std::string_view bytes);

/// Reads all of `path`. NOT_FOUND when it does not exist.
absl::StatusOr<std::string> readWholeFile(const std::filesystem::path &path);

/// A name for a temporary file beside `path`, unique within this host.
std::filesystem::path uniqueTempPath(const std::filesystem::path &path);

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
absl::Status writeAll(int fd, std::string_view bytes,
                      const std::filesystem::path &pathForErrors);

/// fsyncs the directory holding `path`, so a rename into it is durable.
void syncParentDirectory(const std::filesystem::path &path);

} // namespace kiln::server
