//===- CacheSalt.h - the compile-key salt and its file ----------*- C++ -*-===//
//
// This file declares how kilnd validates, loads and persists the salt mixed
// into every compile key (<cache-dir>/salt).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <filesystem>
#include <string>

namespace kiln::server {

/// INVALID_ARGUMENT unless `salt` is at most 256 bytes without newlines.
absl::Status validateCacheSalt(const std::string &salt);

/// The salt in force at startup: `flagSalt` when non-empty (it is then
/// persisted to `file`), else the content of `file`, else "".
absl::StatusOr<std::string> loadCacheSalt(const std::filesystem::path &file,
                                          const std::string &flagSalt);

/// Persists `salt` atomically ("" removes the file).
absl::Status saveCacheSalt(const std::filesystem::path &file,
                           const std::string &salt);

} // namespace kiln::server
