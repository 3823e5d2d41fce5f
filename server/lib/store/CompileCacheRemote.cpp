//===- CompileCacheRemote.cpp - the compile cache's second tier -----------===//
//
// This file implements the CompileCache members that use the shared tier: a
// local miss answered from the remote (every blob checked, then stored
// locally before use), and publishing what this kilnd compiled or holds so
// that other replicas hit it.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CompileCache.h"

#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include <spdlog/spdlog.h>

namespace kiln::server {

namespace {

/// The names of a compile's outputs in its remote ActionResult.
constexpr const char *kRecordOutput = "kiln/executable_record";
constexpr const char *kArtifactOutput = "kiln/artifact";

} // namespace

std::optional<CompileOutcome> CompileCache::fetchRemote(const std::string &key) {
  if (!remote)
    return std::nullopt;
  absl::StatusOr<std::optional<RemoteOutputs>> entry = remote->getAction(key);
  if (!entry.ok() || !*entry)
    return std::nullopt; // down (RemoteHealth logged it) or a miss
  const RemoteOutputs &outputs = **entry;
  auto recordIt = outputs.find(kRecordOutput);
  auto artifactIt = outputs.find(kArtifactOutput);
  auto unusable = [&](const std::string &why) -> std::optional<CompileOutcome> {
    spdlog::warn("remote cache: entry {} is unusable ({}); compiling here",
                 key, why);
    remote->countCorrupt();
    return std::nullopt;
  };
  if (recordIt == outputs.end() || artifactIt == outputs.end())
    return unusable("it does not name an executable record and an artifact");
  absl::StatusOr<std::string> recordBytes = remote->readBlob(recordIt->second);
  if (!recordBytes.ok())
    return absl::IsDataLoss(recordBytes.status())
               ? unusable(std::string(recordBytes.status().message()))
               : std::nullopt;
  v1::ExecutableRecord record;
  if (!record.ParseFromString(*recordBytes))
    return unusable("its executable record does not parse");
  if (record.artifact().hash() != artifactIt->second.hash() ||
      record.artifact().size_bytes() != artifactIt->second.size_bytes())
    return unusable("its record names another artifact than the entry");
  // Pinned before they are written, as a compile's outputs are.
  BlobPins pins = store.pin();
  pins.add(record.artifact());
  pins.add(recordIt->second);
  if (!store.verify(record.artifact()).ok()) {
    absl::StatusOr<std::string> artifact = remote->readBlob(record.artifact());
    if (!artifact.ok())
      return absl::IsDataLoss(artifact.status())
                 ? unusable(std::string(artifact.status().message()))
                 : std::nullopt;
    if (absl::Status written = store.write(record.artifact(), *artifact); !written.ok()) {
      spdlog::warn("remote cache: cannot store artifact of {}: {}", key,
                   written.ToString());
      return std::nullopt;
    }
  }
  absl::Status stored = store.write(recordIt->second, *recordBytes);
  if (stored.ok())
    stored = writeEntry(key, recordIt->second);
  if (!stored.ok()) {
    spdlog::warn("remote cache: cannot store entry {}: {}", key, stored.ToString());
    return std::nullopt;
  }
  std::optional<CompileOutcome> outcome = lookup(key);
  if (!outcome)
    return std::nullopt;
  outcome->remoteHit = true;
  remoteHits.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(publishedMutex);
    published.insert(key);
  }
  spdlog::info("remote cache: {} answered from the shared tier (executable {})",
               key, formatDigest(outcome->executable));
  return outcome;
}

std::optional<CompileOutcome>
CompileCache::publishRemote(const std::string &key, const CompileOutcome &outcome,
                            const v1::Graph &graph) {
  if (!remote)
    return std::nullopt;
  // The weights first: a replica that hits the entry can then serve a
  // client whose weights it has never seen.
  std::vector<v1::Digest> parameters;
  for (const v1::Parameter &parameter : graph.parameters())
    if (parameter.has_digest())
      parameters.push_back(parameter.digest());
  publishToRemote(store, *remote, parameters);
  auto publishedNow = [&] {
    std::lock_guard<std::mutex> lock(publishedMutex);
    published.insert(key);
  };
  // First writer wins: an entry another replica stored stays, and replaces
  // ours here, so that the key names one executable everywhere.
  absl::StatusOr<std::optional<RemoteOutputs>> existing = remote->getAction(key);
  if (!existing.ok())
    return std::nullopt;
  if (*existing) {
    auto record = (*existing)->find(kRecordOutput);
    if (record != (*existing)->end() && record->second.hash() == outcome.executable.hash()) {
      publishedNow();
      return std::nullopt;
    }
    std::optional<CompileOutcome> theirs = fetchRemote(key);
    if (theirs)
      spdlog::info("remote cache: {} was stored by another replica first; "
                   "using its executable {} instead of {}",
                   key, formatDigest(theirs->executable),
                   formatDigest(outcome.executable));
    return theirs;
  }
  absl::StatusOr<v1::ExecutableRecord> record =
      readExecutableRecord(store, outcome.executable);
  absl::StatusOr<std::string> recordBytes = store.read(outcome.executable);
  absl::StatusOr<std::string> artifact =
      record.ok() ? store.read(record->artifact()) : record.status();
  if (!recordBytes.ok() || !artifact.ok()) {
    spdlog::warn("remote cache: cannot publish {}: its blobs are unreadable here",
                 key);
    return std::nullopt;
  }
  absl::Status status = remote->writeBlobs(
      {{outcome.executable, *recordBytes}, {record->artifact(), *artifact}});
  if (status.ok())
    status = remote->putAction(key, {{kRecordOutput, outcome.executable},
                                     {kArtifactOutput, record->artifact()}});
  if (!status.ok()) {
    spdlog::warn("remote cache: cannot publish {}: {}", key, status.ToString());
    return std::nullopt;
  }
  publishedNow();
  return std::nullopt;
}

std::optional<CompileOutcome>
CompileCache::publishHitOnce(const std::string &key, const CompileOutcome &hit,
                             const v1::Graph &graph) {
  if (!remote || !remote->mayCall())
    return std::nullopt;
  {
    std::lock_guard<std::mutex> lock(publishedMutex);
    if (published.contains(key))
      return std::nullopt;
  }
  return publishRemote(key, hit, graph);
}

} // namespace kiln::server
