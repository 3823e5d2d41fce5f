//===- TaskRecord.h - what every task of one executable carries -*- C++ -*-===//
//
// This file declares TaskRecord, the part of a task that is the same for
// every call of an executable (its record and kilnd's signature), made once
// and shared by the calls instead of copied into each, and TaskRecords,
// kilnd's bounded set of them, which signs each with the task key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/TaskSignature.h"
#include "kiln/v1/agent.pb.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::server {

/// An executable's record as its tasks carry it. Immutable.
class TaskRecord {
public:
  /// `record` is the one agents get (manifest and artifact digest, no stage
  /// dumps); `signature` is kilnd's over taskSigningMessage(executable,
  /// record).
  TaskRecord(std::shared_ptr<const v1::ExecutableRecord> record,
             std::string signature);

  const v1::ExecutableRecord &record() const { return *shared; }
  const v1::ExecutableManifest &manifest() const { return shared->manifest(); }
  const std::string &signature() const { return signed_; }
  /// The CPU features a device must report to take the task (the
  /// manifest's list, parsed once).
  const std::vector<std::string> &requiredFeatures() const { return features; }

  /// Sets `task.record` and `task.signature` (copies: for a link that sends
  /// the task as a message).
  void fill(v1::Task &task) const;

  /// A serialized Task with only `signature` set. Appended to the
  /// serialization of the rest of a task it completes the task (a parser
  /// merges what comes later) but for its record, which the local link
  /// sends beside the task as recordBytes(): neither end copies, serializes
  /// or parses the manifest per call.
  const std::string &signatureFragment() const { return signatureBytes; }
  /// The record, serialized once.
  const std::string &recordBytes() const { return serializedRecord; }

private:
  std::shared_ptr<const v1::ExecutableRecord> shared;
  std::string signed_;
  std::vector<std::string> features;
  std::string signatureBytes, serializedRecord;
};

/// kilnd's TaskRecords by executable digest, each signed once. A record is
/// content-addressed, so a kept one never goes stale; when full, the set
/// starts over. Thread-safe.
class TaskRecords {
public:
  explicit TaskRecords(TaskSigningKey key) : key(std::move(key)) {}

  /// The TaskRecord of `executable`, whose record (as agents get it) is
  /// `record`: kept, or signed now (INTERNAL when signing fails; not kept).
  absl::StatusOr<std::shared_ptr<const TaskRecord>>
  get(const v1::Digest &executable,
      std::shared_ptr<const v1::ExecutableRecord> record);

  /// The key agents verify with (PEM public key).
  std::string publicKeyPem() const { return key.publicKeyPem(); }

private:
  /// As many as RecordCache keeps: each holds a record and its
  /// serialization (a manifest can be megabytes for a large graph).
  static constexpr size_t kKept = 256;
  TaskSigningKey key;
  std::mutex mutex;
  absl::flat_hash_map<std::string, std::shared_ptr<const TaskRecord>>
      kept; // by executable hash; guarded by mutex
};

} // namespace kiln::server
