//===- CompileCache.cpp - compile key -> executable, on disk --------------===//
//
// This file implements CompileCache: action-cache lookups validated against
// the content store, single-flight compiles and storing new executables.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CompileCache.h"

#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"
#include "kiln/common/AtomicFile.h"
#include "kiln/server/store/CompileKey.h"
#include "kiln/server/store/KeyExplanation.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace kiln::server {

namespace {

int64_t microsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now() - start)
      .count();
}

// An action-cache entry is one line: "<hash> <size>\n".
std::string formatEntry(const v1::Digest &digest) {
  return absl::StrCat(digest.hash(), " ", digest.size_bytes(), "\n");
}

std::optional<v1::Digest> parseEntry(absl::string_view text) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(absl::StripSuffix(text, "\n"), ' ');
  v1::Digest digest;
  int64_t size = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &size))
    return std::nullopt;
  digest.set_hash(std::string(parts[0]));
  digest.set_size_bytes(size);
  if (!validateDigest(digest).ok())
    return std::nullopt;
  return digest;
}

/// An entry beside a compile key (<acDir>/<key><suffix>) naming a message in
/// the store: the placement report, the stage dumps.
enum class SideEntry { kAbsent, kDamaged, kRead };

SideEntry readSideEntry(const ContentStore &store, const std::filesystem::path &acDir,
                        const std::string &key, const char *suffix,
                        google::protobuf::MessageLite &message) {
  absl::StatusOr<std::string> entry = readWholeFile(acDir / absl::StrCat(key, suffix));
  if (!entry.ok())
    return SideEntry::kAbsent;
  std::optional<v1::Digest> digest = parseEntry(*entry);
  absl::StatusOr<std::string> bytes =
      digest ? store.read(*digest) : absl::StatusOr<std::string>(
                                         absl::DataLossError("malformed entry"));
  return bytes.ok() && message.ParseFromString(*bytes) ? SideEntry::kRead
                                                       : SideEntry::kDamaged;
}

/// Stores `message` and the entry <acDir>/<key><suffix> naming it; `pins`
/// keeps it (and whatever else the caller pinned) from eviction meanwhile.
absl::Status writeSideEntry(ContentStore &store, const std::filesystem::path &acDir,
                            const std::string &key, const char *suffix,
                            const google::protobuf::MessageLite &message,
                            BlobPins &pins) {
  std::string bytes;
  if (!message.SerializeToString(&bytes))
    return absl::InternalError(absl::StrCat("cannot serialize ", message.GetTypeName()));
  v1::Digest digest = digestOf(bytes);
  pins.add(digest);
  RETURN_IF_ERROR(store.write(digest, bytes));
  return writeFileAtomically(acDir / absl::StrCat(key, suffix), formatEntry(digest));
}

} // namespace

absl::StatusOr<v1::ExecutableRecord>
readExecutableRecord(const ContentStore &store, const v1::Digest &executable) {
  ASSIGN_OR_RETURN(std::string bytes, store.read(executable));
  v1::ExecutableRecord record;
  if (!record.ParseFromString(bytes))
    return absl::DataLossError(absl::StrCat(
        "blob ", formatDigest(executable), " is not an ExecutableRecord"));
  return record;
}

CompileCache::CompileCache(ContentStore &store,
                           ExecutableNamespace &executables,
                           std::filesystem::path acDir, CompilerFn compiler,
                           std::string buildId, unsigned workers)
    : store(store), executables(executables), acDir(std::move(acDir)), compiler(std::move(compiler)),
      buildId(std::move(buildId)),
      pool(std::make_unique<WorkerPool>(workers)) {}

CompileCache::~CompileCache() = default;

absl::StatusOr<std::unique_ptr<CompileCache>>
CompileCache::open(ContentStore &store, ExecutableNamespace &executables,
                   const std::filesystem::path &acDir, CompilerFn compiler,
                   std::string compilerBuildId, unsigned workers) {
  std::error_code error;
  std::filesystem::create_directories(acDir, error);
  if (error)
    return absl::InternalError(absl::StrCat(
        "cannot create action cache ", acDir.string(), ": ", error.message()));
  return std::unique_ptr<CompileCache>(
      new CompileCache(store, executables, acDir, std::move(compiler),
                       std::move(compilerBuildId), workers));
}

std::optional<CompileOutcome>
CompileCache::lookup(const std::string &key) const {
  absl::StatusOr<std::string> entry = readWholeFile(acDir / key);
  if (!entry.ok())
    return std::nullopt;
  std::optional<v1::Digest> executable = parseEntry(*entry);
  if (!executable) {
    spdlog::warn("compile cache: entry {} is malformed; recompiling", key);
    return std::nullopt;
  }
  absl::StatusOr<v1::ExecutableRecord> record =
      readExecutableRecord(store, *executable);
  absl::Status artifact =
      record.ok() ? store.verify(record->artifact()) : record.status();
  // Entries kilnd wrote before it kept the namespace are listed on first
  // use: the action cache, like the namespace, is kilnd's alone.
  if (artifact.ok())
    artifact = executables.add(*executable);
  if (!artifact.ok()) {
    spdlog::warn("compile cache: entry {} is unusable ({}); recompiling", key,
                 std::string(artifact.message()));
    return std::nullopt;
  }
  CompileOutcome outcome;
  outcome.executable = *executable;
  outcome.manifest = record->manifest();
  outcome.opReport = record->op_report();
  outcome.cacheHit = true;
  outcome.key = key;
  return outcome;
}

std::optional<v1::StageDumpSet>
CompileCache::lookupStages(const std::string &key,
                           const v1::Digest &executable) const {
  v1::StageDumpSet set;
  switch (readSideEntry(store, acDir, key, ".stages", set)) {
  case SideEntry::kAbsent:
    return std::nullopt;
  case SideEntry::kDamaged:
    spdlog::warn("compile cache: stage dumps entry {} is unusable; dumping again",
                 key);
    return std::nullopt;
  case SideEntry::kRead:
    break;
  }
  if (set.executable().hash() != executable.hash())
    return std::nullopt; // dumps of an executable the key no longer names
  for (const v1::StageDump &stage : set.stages())
    if (!store.contains(stage.blob()))
      return std::nullopt; // evicted: dump again
  return set;
}

std::optional<v1::PlacementReport>
CompileCache::lookupPlacement(const std::string &key) const {
  v1::PlacementReport placement;
  switch (readSideEntry(store, acDir, key, ".placement", placement)) {
  case SideEntry::kAbsent:
    return std::nullopt;
  case SideEntry::kDamaged:
    spdlog::warn("compile cache: placement entry {} is unusable; checking the "
                 "nodes again", key);
    return std::nullopt;
  case SideEntry::kRead:
    break;
  }
  return placement;
}

absl::Status CompileCache::storePlacement(const std::string &key,
                                          const v1::PlacementReport &placement) {
  BlobPins pins = store.pin();
  return writeSideEntry(store, acDir, key, ".placement", placement, pins);
}

std::string CompileCache::salt() const {
  std::lock_guard<std::mutex> lock(saltMutex);
  return keySalt;
}

std::string CompileCache::setSalt(std::string salt) {
  std::lock_guard<std::mutex> lock(saltMutex);
  std::swap(keySalt, salt);
  return salt;
}

int64_t CompileCache::entryCount() const {
  int64_t count = 0;
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(acDir, error))
    count += entry.is_regular_file() && entry.path().filename().string().size() == 64;
  return count;
}

CompileCache::Stats CompileCache::stats() const {
  return Stats{compiles.load(),  hits.load(),       followers.load(),
               stageRuns.load(), remoteHits.load(), precompiledStores.load()};
}

CompileCache::Result
CompileCache::compileAndStore(const std::string &key, const v1::Graph &graph,
                              const compiler::CompileOptions &options,
                              const CompileHints &hints) {
  auto start = std::chrono::steady_clock::now();
  compiler::CompiledExecutable compiled;
  if (hints.precompiled) {
    precompiledStores.fetch_add(1);
    compiled = *hints.precompiled;
  } else {
    compiles.fetch_add(1);
    ASSIGN_OR_RETURN(compiled, compiler(graph, options));
  }
  v1::ExecutableRecord record;
  *record.mutable_manifest() = std::move(compiled.manifest);
  if (record.manifest().target().empty())
    record.mutable_manifest()->set_target(options.target);
  if (record.manifest().compiler_build_id().empty())
    record.mutable_manifest()->set_compiler_build_id(buildId);
  *record.mutable_op_report() = std::move(compiled.opReport);
  // Pinned before they are written: the write that stores them may push
  // the store past its capacity, and eviction must not take them.
  BlobPins pins = store.pin();
  *record.mutable_artifact() = digestOf(compiled.artifact);
  pins.add(record.artifact());
  RETURN_IF_ERROR(store.write(record.artifact(), compiled.artifact));
  std::string recordBytes;
  if (!record.SerializeToString(&recordBytes))
    return absl::InternalError("cannot serialize ExecutableRecord");
  v1::Digest executable = digestOf(recordBytes);
  pins.add(executable);
  RETURN_IF_ERROR(store.write(executable, recordBytes));
  RETURN_IF_ERROR(writeEntry(key, executable));
  CompileOutcome outcome;
  if (!compiled.stages.empty()) {
    ASSIGN_OR_RETURN(v1::StageDumpSet set,
                     storeStages(key, executable, compiled.stages, true));
    outcome.stages.assign(set.stages().begin(), set.stages().end());
  }
  outcome.executable = executable;
  outcome.manifest = record.manifest();
  outcome.opReport = record.op_report();
  outcome.cacheHit = false;
  outcome.key = key;
  outcome.timings.set_compile_us(
      hints.precompiled ? std::max<int64_t>(hints.precompiledUs, 0) : microsSince(start));
  return outcome;
}

void CompileCache::rememberKey(const std::string &key, const v1::Graph &graph,
                               const std::string &target,
                               const v1::CompileOptions &options) {
  std::filesystem::path path = acDir / absl::StrCat(key, ".why");
  std::error_code error;
  if (std::filesystem::exists(path, error))
    return;
  v1::CompileKeyRecord record =
      describeCompileKey(graph, target, options, buildId, salt());
  if (record.compile_key() != key)
    return; // the salt changed meanwhile
  if (absl::Status written = writeFileAtomically(path, record.SerializeAsString());
      !written.ok())
    spdlog::warn("compile cache: cannot record what key {} is made of: {}", key,
                 written.ToString());
}

v1::ExplainMissResponse CompileCache::explainMiss(const v1::Graph &graph,
                                                  const std::string &target,
                                                  const v1::CompileOptions &options,
                                                  int maxCandidates) const {
  v1::CompileKeyRecord wanted =
      describeCompileKey(graph, target, options, buildId, salt());
  v1::ExplainMissResponse response;
  response.set_compile_key(wanted.compile_key());
  response.set_graph_name(graph.name());
  if (lookup(wanted.compile_key()) || lookupPlacement(wanted.compile_key())) {
    response.set_cached(true);
    return response;
  }
  std::vector<v1::MissCandidate> candidates;
  std::error_code error;
  for (const auto &file : std::filesystem::directory_iterator(acDir, error)) {
    if (file.path().extension() != ".why")
      continue;
    absl::StatusOr<std::string> bytes = readWholeFile(file.path());
    v1::CompileKeyRecord cached;
    if (!bytes.ok() || !cached.ParseFromString(*bytes) ||
        cached.graph_name() != wanted.graph_name() ||
        cached.compile_key() == wanted.compile_key())
      continue;
    v1::MissCandidate candidate;
    candidate.set_compile_key(cached.compile_key());
    if (absl::StatusOr<std::string> entry = readWholeFile(acDir / cached.compile_key());
        entry.ok()) {
      if (std::optional<v1::Digest> executable = parseEntry(*entry))
        *candidate.mutable_executable() = *executable;
    } else if (!std::filesystem::exists(
                   acDir / absl::StrCat(cached.compile_key(), ".placement"), error)) {
      continue; // its entry is gone: nothing cached to be near
    }
    for (v1::KeyDifference &difference : keyDifferences(wanted, cached))
      *candidate.add_differences() = std::move(difference);
    candidates.push_back(std::move(candidate));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const v1::MissCandidate &a, const v1::MissCandidate &b) {
                     return a.differences_size() < b.differences_size();
                   });
  if (maxCandidates <= 0)
    maxCandidates = 3;
  for (int i = 0; i < static_cast<int>(candidates.size()) && i < maxCandidates; ++i)
    *response.add_candidates() = std::move(candidates[i]);
  return response;
}

absl::Status CompileCache::writeEntry(const std::string &key,
                                      const v1::Digest &executable) {
  RETURN_IF_ERROR(executables.add(executable));
  return writeFileAtomically(acDir / key, formatEntry(executable));
}

CompileCache::Result
CompileCache::recordStages(const std::string &key, CompileOutcome hit,
                           const v1::Graph &graph,
                           const compiler::CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  stageRuns.fetch_add(1);
  ASSIGN_OR_RETURN(compiler::CompiledExecutable compiled,
                   compiler(graph, options));
  ASSIGN_OR_RETURN(v1::ExecutableRecord record,
                   readExecutableRecord(store, hit.executable));
  bool matches = digestOf(compiled.artifact).hash() == record.artifact().hash();
  if (!matches)
    spdlog::warn("compile cache: the pipeline run for the stage dumps of {} "
                 "made another artifact than the cached one (a nondeterministic "
                 "compile); the dumps describe that rebuild",
                 formatDigest(hit.executable));
  ASSIGN_OR_RETURN(v1::StageDumpSet set,
                   storeStages(key, hit.executable, compiled.stages, matches));
  hit.stages.assign(set.stages().begin(), set.stages().end());
  hit.timings.set_compile_us(microsSince(start));
  return hit;
}

absl::StatusOr<v1::StageDumpSet>
CompileCache::storeStages(const std::string &key, const v1::Digest &executable,
                          const std::vector<compiler::StageDump> &dumps,
                          bool artifactMatches) {
  v1::StageDumpSet set;
  *set.mutable_executable() = executable;
  set.set_artifact_matches(artifactMatches);
  BlobPins pins = store.pin();
  for (const compiler::StageDump &dump : dumps) {
    v1::StageDump *stage = set.add_stages();
    stage->set_stage(dump.stage);
    *stage->mutable_blob() = digestOf(dump.text);
    pins.add(stage->blob());
    RETURN_IF_ERROR(store.write(stage->blob(), dump.text));
  }
  RETURN_IF_ERROR(writeSideEntry(store, acDir, key, ".stages", set, pins));
  return set;
}

CompileCache::Result
CompileCache::onPool(const std::function<Result()> &work) {
  auto enqueued = std::chrono::steady_clock::now();
  std::promise<Result> done;
  std::future<Result> finished = done.get_future();
  pool->submit([&] {
    int64_t queueUs = microsSince(enqueued);
    Result outcome = work();
    if (outcome.ok())
      outcome->timings.set_queue_us(queueUs);
    done.set_value(std::move(outcome));
  });
  return finished.get();
}

std::string CompileCache::keyFor(const v1::Graph &graph,
                                 const std::string &target,
                                 const v1::CompileOptions &options) const {
  return computeCompileKey(graph, target, options, buildId, salt());
}

absl::StatusOr<CompileOutcome>
CompileCache::compile(const v1::Graph &graph, const std::string &target,
                      const v1::CompileOptions &options,
                      const CompileHints &hints) {
  std::string key = keyFor(graph, target, options);
  const bool wantStages = options.dump_stages();
  // A request for dumps must not settle for a flight that makes none.
  const std::string flightKey = wantStages ? absl::StrCat(key, "+stages") : key;
  std::promise<Result> promise;
  std::shared_future<Result> flight;
  bool leader = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = flights.find(flightKey);
    // A flight that makes the dumps answers a request without them too.
    if (it == flights.end() && !wantStages)
      it = flights.find(absl::StrCat(key, "+stages"));
    if (it != flights.end()) {
      flight = it->second;
    } else {
      flight = promise.get_future().share();
      flights.emplace(flightKey, flight);
      leader = true;
    }
  }
  if (!leader) {
    followers.fetch_add(1);
    return flight.get();
  } // Single flight: the leader's outcome is ours.

  compiler::CompileOptions compileOptions;
  compileOptions.target = target;
  compileOptions.options = normalizeCompileOptions(options);
  compileOptions.dumpStages = wantStages;
  compileOptions.placement = hints.placement;
  Result result = absl::UnknownError("compile did not run");
  std::optional<CompileOutcome> hit = lookup(key);
  if (!hit)
    hit = fetchRemote(key);
  else if (std::optional<CompileOutcome> theirs = publishHitOnce(key, *hit, graph))
    hit = std::move(theirs);
  // No tier has it: one replica compiles it, the others wait for its entry.
  // An executable in hand is stored at once: nothing to wait for.
  if (!hit && !hints.precompiled)
    hit = leaseOrWait(key);
  if (hit) {
    hits.fetch_add(1);
    std::optional<v1::StageDumpSet> stages;
    if (wantStages)
      stages = lookupStages(key, hit->executable);
    if (!wantStages) {
      result = std::move(*hit);
    } else if (stages) {
      hit->stages.assign(stages->stages().begin(), stages->stages().end());
      result = std::move(*hit);
    } else {
      result = onPool([&] { return recordStages(key, *hit, graph, compileOptions); });
      // Other replicas get the dumps with the executable from now on.
      if (result.ok())
        (void)publishRemote(key, *result, graph);
    }
  } else {
    // Storing an executable in hand takes no compile slot.
    result = hints.precompiled
                 ? compileAndStore(key, graph, compileOptions, hints)
                 : onPool([&] { return compileAndStore(key, graph, compileOptions, hints); });
    std::optional<CompileOutcome> adopted;
    if (result.ok())
      adopted = publishRemote(key, *result, graph);
    // Published or failed, the lease has done its work: replicas waiting on
    // it now find the entry, or compile (and fail) themselves.
    releaseLease(key);
    if (adopted) {
      // Another replica's executable: ours was compiled, not used.
      adopted->timings = result->timings;
      adopted->cacheHit = false;
      // Its dumps, when they came with it; else ours (a rebuild's).
      if (!result->stages.empty()) {
        std::optional<v1::StageDumpSet> theirs = lookupStages(key, adopted->executable);
        adopted->stages = theirs ? std::vector<v1::StageDump>(theirs->stages().begin(),
                                                              theirs->stages().end())
                                 : result->stages;
      }
      result = std::move(*adopted);
    }
  }
  if (result.ok())
    rememberKey(key, graph, target, options);
  promise.set_value(result);
  {
    std::lock_guard<std::mutex> lock(mutex);
    flights.erase(flightKey);
  }
  return result;
}

} // namespace kiln::server
