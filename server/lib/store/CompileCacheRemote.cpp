//===- CompileCacheRemote.cpp - the compile cache's second tier -----------===//
//
// This file implements the CompileCache members that use the shared tier: a
// local miss answered from the remote (every blob checked, then stored
// locally before use), and publishing what this kilnd compiled or holds so
// that other replicas hit it.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CompileCache.h"

#include "kiln/common/Credentials.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

namespace kiln::server {

namespace {

/// How long a compile lease lasts. Not renewed: a compile that takes longer
/// lets the waiting replicas compile too.
constexpr std::chrono::seconds kLeaseTtl{300};
/// The pause between writing a lease and reading it back: a replica that
/// wrote at nearly the same moment has its write land meanwhile, and the
/// last writer (whom both then read) compiles.
constexpr std::chrono::milliseconds kLeaseSettle{50};
/// How often a waiting replica looks for the holder's entry.
constexpr std::chrono::milliseconds kLeasePoll{100};

/// The names of a compile's outputs in its remote ActionResult.
constexpr const char *kRecordOutput = "kiln/executable_record";
constexpr const char *kArtifactOutput = "kiln/artifact";
/// The StageDumpSet of the executable, when a compile recorded one.
constexpr const char *kStagesOutput = "kiln/stages";

/// The blobs of `set` (the set itself, then each dump) as stored in
/// `store`; nullopt when one is gone.
std::optional<std::vector<std::pair<v1::Digest, std::string>>>
stageBlobs(const ContentStore &store, const v1::StageDumpSet &set) {
  std::vector<std::pair<v1::Digest, std::string>> blobs;
  std::string bytes = set.SerializeAsString();
  blobs.emplace_back(digestOf(bytes), std::move(bytes));
  for (const v1::StageDump &stage : set.stages()) {
    absl::StatusOr<std::string> text = store.read(stage.blob());
    if (!text.ok())
      return std::nullopt;
    blobs.emplace_back(stage.blob(), *std::move(text));
  }
  return blobs;
}

} // namespace

void CompileCache::setRemote(RemoteCache *remote) {
  this->remote = remote;
  if (leaseHolder.empty()) {
    absl::StatusOr<std::string> id = randomHex(8);
    leaseHolder = id.ok() ? *id : "kilnd";
  }
}

std::optional<CompileOutcome> CompileCache::leaseOrWait(const std::string &key) {
  using Clock = std::chrono::system_clock;
  if (!remote || !remote->mayCall())
    return std::nullopt;
  absl::StatusOr<std::optional<RemoteLease>> lease = remote->getLease(key);
  if (!lease.ok())
    return std::nullopt;
  auto held = [&](const std::optional<RemoteLease> &l) {
    return l && l->holder != leaseHolder && l->expires > Clock::now();
  };
  if (!held(*lease)) {
    if (!remote->putLease(key, {leaseHolder, Clock::now() + kLeaseTtl}).ok())
      return std::nullopt;
    std::this_thread::sleep_for(kLeaseSettle);
    lease = remote->getLease(key);
    if (!lease.ok() || !held(*lease)) {
      std::lock_guard<std::mutex> lock(publishedMutex);
      leasesHeld.insert(key);
      return std::nullopt; // ours: compile
    }
  }
  spdlog::info("remote cache: replica {} is compiling {}; waiting for its entry",
               (*lease)->holder, key);
  // Bounded here too: a lease's expiry is another machine's clock, or
  // whatever bytes the remote holds.
  auto giveUp = std::chrono::steady_clock::now() + kLeaseTtl;
  while (true) {
    std::this_thread::sleep_for(kLeasePoll);
    if (std::chrono::steady_clock::now() >= giveUp) {
      spdlog::warn("remote cache: waited {} s for {}'s entry; compiling here",
                   kLeaseTtl.count(), key);
      return std::nullopt;
    }
    absl::StatusOr<std::optional<RemoteOutputs>> entry = remote->getAction(key);
    if (!entry.ok())
      return std::nullopt; // the remote went down: compile here
    if (*entry)
      return useRemoteEntry(key, **entry); // an unusable one is compiled here
    absl::StatusOr<std::optional<RemoteLease>> now = remote->getLease(key);
    if (!now.ok() || !held(*now)) {
      // Released: the holder stored its entry just before, or failed.
      if (std::optional<CompileOutcome> theirs = fetchRemote(key))
        return theirs;
      spdlog::info("remote cache: the lease on {} ended without an entry; "
                   "compiling here", key);
      return std::nullopt;
    }
  }
}

void CompileCache::releaseLease(const std::string &key) {
  {
    std::lock_guard<std::mutex> lock(publishedMutex);
    if (leasesHeld.erase(key) == 0)
      return; // never ours: another replica's lease must stay
  }
  if (remote && remote->mayCall())
    (void)remote->putLease(key, {leaseHolder, std::chrono::system_clock::now()});
}

std::optional<CompileOutcome> CompileCache::fetchRemote(const std::string &key) {
  if (!remote)
    return std::nullopt;
  absl::StatusOr<std::optional<RemoteOutputs>> entry = remote->getAction(key);
  if (!entry.ok() || !*entry)
    return std::nullopt; // down (RemoteHealth logged it) or a miss
  return useRemoteEntry(key, **entry);
}

std::optional<CompileOutcome>
CompileCache::useRemoteEntry(const std::string &key, const RemoteOutputs &outputs) {
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
  if (auto stages = outputs.find(kStagesOutput); stages != outputs.end())
    fetchRemoteStages(key, outcome->executable, stages->second);
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

void CompileCache::fetchRemoteStages(const std::string &key,
                                     const v1::Digest &executable,
                                     const v1::Digest &setDigest) {
  auto skip = [&](const std::string &why) {
    spdlog::warn("remote cache: the stage dumps of {} are unusable ({}); they "
                 "will be recorded here when asked for", key, why);
  };
  absl::StatusOr<std::string> setBytes = remote->readBlob(setDigest);
  v1::StageDumpSet set;
  if (!setBytes.ok() || !set.ParseFromString(*setBytes))
    return skip(setBytes.ok() ? "the set does not parse"
                              : std::string(setBytes.status().message()));
  if (set.executable().hash() != executable.hash())
    return skip("they describe another executable");
  std::vector<compiler::StageDump> dumps;
  for (const v1::StageDump &stage : set.stages()) {
    absl::StatusOr<std::string> text = remote->readBlob(stage.blob());
    if (!text.ok())
      return skip(std::string(text.status().message()));
    dumps.push_back({stage.stage(), *std::move(text)});
  }
  if (absl::StatusOr<v1::StageDumpSet> stored =
          storeStages(key, executable, dumps, set.artifact_matches());
      !stored.ok())
    skip(std::string(stored.status().message()));
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
  std::optional<v1::StageDumpSet> stages = lookupStages(key, outcome.executable);
  std::optional<std::vector<std::pair<v1::Digest, std::string>>> stageBytes;
  if (stages)
    stageBytes = stageBlobs(store, *stages);
  if (*existing) {
    auto record = (*existing)->find(kRecordOutput);
    if (record != (*existing)->end() && record->second.hash() == outcome.executable.hash()) {
      // Ours already; add the stage dumps when it lacks them and we have some.
      if (stageBytes && !(*existing)->contains(kStagesOutput)) {
        RemoteOutputs outputs = **existing;
        outputs[kStagesOutput] = stageBytes->front().first;
        absl::Status status = remote->writeBlobs(*stageBytes);
        if (status.ok())
          status = remote->putAction(key, outputs);
        if (!status.ok())
          spdlog::warn("remote cache: cannot publish the stage dumps of {}: {}", key,
                       status.ToString());
      }
      publishedNow();
      return std::nullopt;
    }
    std::optional<CompileOutcome> theirs = useRemoteEntry(key, **existing);
    if (theirs)
      spdlog::info("remote cache: {} was stored by another replica first; "
                   "using its executable {} instead of {}",
                   key, formatDigest(theirs->executable),
                   formatDigest(outcome.executable));
    else
      publishedNow(); // theirs is unusable: ours serves, and we stop asking
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
  std::vector<std::pair<v1::Digest, std::string>> blobs = {
      {outcome.executable, *recordBytes}, {record->artifact(), *artifact}};
  RemoteOutputs outputs = {{kRecordOutput, outcome.executable},
                           {kArtifactOutput, record->artifact()}};
  if (stageBytes) {
    outputs[kStagesOutput] = stageBytes->front().first;
    blobs.insert(blobs.end(), stageBytes->begin(), stageBytes->end());
  }
  absl::Status status = remote->writeBlobs(blobs);
  if (status.ok())
    status = remote->putAction(key, outputs);
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
