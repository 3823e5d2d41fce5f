//===- ExecutableNamespace.h - the executables kilnd made -----------------===//
//
// This file declares ExecutableNamespace, the list of ExecutableRecords that
// kilnd itself compiled. The content store holds blobs anyone may upload;
// only digests listed here are executables.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/tensor.pb.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "absl/container/flat_hash_map.h"

#include <filesystem>
#include <mutex>
#include <memory>

namespace kiln::server {

/// Digests of the ExecutableRecords kilnd wrote, one file per executable
/// (<dir>/<hash[0:2]>/<hash>, holding the record's size). Only kilnd writes
/// here (the compile cache, after storing a record it compiled), and Execute
/// runs only digests listed here: a blob a client uploads is never read as
/// an ExecutableRecord, so it can never name an artifact for an agent to
/// load.
class ExecutableNamespace {
public:
  /// Opens (creating if needed) the namespace in `dir`.
  static absl::StatusOr<std::unique_ptr<ExecutableNamespace>>
  open(const std::filesystem::path &dir);

  /// Lists `executable` (idempotent; atomic).
  absl::Status add(const v1::Digest &executable);

  /// Whether kilnd made `executable`: hash and size both match an entry.
  bool contains(const v1::Digest &executable) const;

private:
  explicit ExecutableNamespace(std::filesystem::path dir)
      : dir(std::move(dir)) {}
  std::filesystem::path entryPath(const std::string &hash) const;

  std::filesystem::path dir;
  /// Entries seen (added or read): every Execute asks, and entries are never
  /// removed, so a hit costs no file system call.
  mutable std::mutex mutex;
  mutable absl::flat_hash_map<std::string, int64_t> known; // hash -> size
};

} // namespace kiln::server
