//===- RecordCache.h - executable records parsed once per link -*- C++ -*-===//
//
// This file declares RecordCache: the executable records that arrive beside
// the local link's tasks as bytes (LocalTask.record), each parsed once.
// Every call of a model carries the same record (its manifest lists every
// parameter: 244 for mobilenet_v3_small); parsing and freeing it per call
// cost about 6 % of the agent's time on a mobilenet call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/executable.pb.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <memory>
#include <mutex>
#include <string>

namespace kiln::agent {

/// Parsed records by their serialized bytes. Bytes are compared, not
/// trusted by a name: a record that differs in any byte is parsed anew.
/// Holds at most kKept records; when full it starts over (a record still in
/// use stays alive through its shared_ptr). Thread-safe.
class RecordCache {
public:
  static constexpr size_t kKept = 32;

  /// The record `bytes` serialize; INVALID_ARGUMENT when they do not parse.
  absl::StatusOr<std::shared_ptr<const v1::ExecutableRecord>>
  get(const std::string &bytes);

  /// Records parsed so far (for tests: a hit parses nothing).
  size_t parses() const;

private:
  mutable std::mutex mutex;
  absl::flat_hash_map<std::string, std::shared_ptr<const v1::ExecutableRecord>>
      kept;
  size_t parsed = 0;
};

} // namespace kiln::agent
