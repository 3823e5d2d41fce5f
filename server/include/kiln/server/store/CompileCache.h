//===- CompileCache.h - compile key -> executable, on disk ------*- C++ -*-===//
//
// This file declares CompileCache: the action cache mapping compile keys to
// executable digests, the single-flight compile queue in front of the
// compiler, and the bounded worker pool compiles run on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Compiler/Compile.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/server/store/ExecutableNamespace.h"
#include "kiln/server/store/RemoteCache.h"
#include "kiln/common/WorkerPool.h"
#include "kiln/v1/cache.pb.h"
#include "kiln/v1/executable.pb.h"
#include "kiln/v1/placement.pb.h"
#include "kiln/v1/tensor.pb.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::server {

/// The compiler as kilnd sees it; kiln::compiler::compileGraph in production,
/// a fake in tests.
using CompilerFn = std::function<absl::StatusOr<compiler::CompiledExecutable>(
    const v1::Graph &, const compiler::CompileOptions &)>;

/// Makes the machine a request's options select concrete and canonical for a
/// target (kiln::compiler::resolveCompileOptions in production); null keeps
/// options as sent (tests with a fake compiler).
using OptionsResolverFn = std::function<absl::StatusOr<v1::CompileOptions>(
    const std::string &target, const v1::CompileOptions &options)>;

/// What one compile request got.
struct CompileOutcome {
  /// Digest of the ExecutableRecord blob: the executable's identity.
  v1::Digest executable;
  v1::ExecutableManifest manifest;
  /// True when nothing was compiled for this request or its flight.
  bool cacheHit = false;
  /// True when the executable came from the shared tier (--remote-cache):
  /// not on this kilnd's disk, compiled by another replica.
  bool remoteHit = false;
  /// Hex compile key.
  std::string key;
  /// queue_us and compile_us (zero on a hit).
  v1::Timings timings;
  /// Pipeline stage dumps (blobs in the store), when they were asked for.
  /// They are not part of the executable: a request with dump_stages gets
  /// the same executable as one without.
  std::vector<v1::StageDump> stages;
  /// The op report stored in the executable record (the same on a hit).
  v1::OpReport opReport;
};

/// What a compile request adds to (graph, target, options), none of it part
/// of the compile key.
struct CompileHints {
  /// Passed to the compiler (compiler::CompileOptions::placement): a graph
  /// the target lacks ops for may come back with its target segments
  /// compiled, carried by the UNIMPLEMENTED status (PlacedCompile.h).
  std::optional<compiler::PlacementRequest> placement;
  /// On a miss in every tier, this executable is stored instead of calling
  /// the compiler: the compiler made it for this very graph in an earlier
  /// call (a segment compiled along with the graph it was cut from).
  const compiler::CompiledExecutable *precompiled = nullptr;
  /// That compile's wall time, reported as the outcome's compile_us.
  int64_t precompiledUs = 0;
};

/// Compiles through an on-disk cache. An entry is <acDir>/<key>, holding the
/// executable digest; the record and artifact live in the ContentStore. A
/// lookup is a hit only when the record and artifact are both present and
/// intact. Identical concurrent requests share one compile.
///
/// With a RemoteCache (setRemote), the disk is the first tier and the
/// remote the second: a local miss asks the remote, whose entry is
/// downloaded, checked and stored locally before it is used; a compile, and
/// the first local hit of a key the remote was not known to hold, are
/// published to it. A remote that fails or is down is a miss, never an
/// error.
class CompileCache {
public:
  /// Creates the cache over `store`, keeping action-cache entries in `acDir`
  /// and listing every executable it stores (or finds) in `executables`.
  static absl::StatusOr<std::unique_ptr<CompileCache>>
  open(ContentStore &store, ExecutableNamespace &executables,
       const std::filesystem::path &acDir, CompilerFn compiler,
       std::string compilerBuildId, unsigned workers);
  ~CompileCache();

  /// Returns the executable for (graph, target, options), compiling it on the
  /// worker pool when the cache has no valid entry. Compiler errors pass
  /// through unchanged and are not cached. With options.dump_stages the
  /// outcome also carries the stage dumps: those stored beside the entry, or,
  /// for a cached executable without them, those of one pipeline run that
  /// records them (stored for later requests; no new executable).
  absl::StatusOr<CompileOutcome> compile(const v1::Graph &graph,
                                         const std::string &target,
                                         const v1::CompileOptions &options,
                                         const CompileHints &hints = {});

  /// The cache entry for `key`, if present and valid.
  std::optional<CompileOutcome> lookup(const std::string &key) const;

  /// The stage dumps stored for `key`'s executable `executable` (an entry
  /// <acDir>/<key>.stages naming a StageDumpSet), if present, about that
  /// executable, and every dump still in the store.
  std::optional<v1::StageDumpSet> lookupStages(const std::string &key,
                                               const v1::Digest &executable) const;

  /// Where the nodes of a graph that does not compile whole run, as the
  /// capability check found them (a PlacementReport whose nodes carry
  /// placement and reason), stored under the graph's compile key so that a
  /// repeat skips the failing whole-graph compile and the check. Stored
  /// like an executable: the report in the content store, an entry
  /// <acDir>/<key>.placement naming it; a missing or damaged one is a miss.
  std::optional<v1::PlacementReport> lookupPlacement(const std::string &key) const;
  absl::Status storePlacement(const std::string &key,
                              const v1::PlacementReport &placement);

  /// Why (graph, target, options) would miss: its key, whether it is
  /// cached, and the `maxCandidates` nearest cached keys of graphs with the
  /// same name (fewest differing components first), from the key records
  /// kept beside the entries (<acDir>/<key>.why).
  v1::ExplainMissResponse explainMiss(const v1::Graph &graph,
                                      const std::string &target,
                                      const v1::CompileOptions &options,
                                      int maxCandidates) const;

  /// The compile key `compile` uses for (graph, target, options).
  std::string keyFor(const v1::Graph &graph, const std::string &target,
                     const v1::CompileOptions &options) const;

  const std::string &compilerBuildId() const { return buildId; }

  /// Uses `remote` as the second tier (null: local only). Not owned; set
  /// before the first compile.
  void setRemote(RemoteCache *remote);

  /// The salt mixed into every compile key ("" for none).
  std::string salt() const;
  /// Replaces the salt (in memory; the caller persists it) and returns the
  /// previous one. Later lookups use keys under the new salt.
  std::string setSalt(std::string salt);

  /// Action-cache entries on disk (valid or not).
  int64_t entryCount() const;

  /// Counters since this cache object was created.
  struct Stats {
    uint64_t compiles = 0;  ///< Calls into the compiler.
    uint64_t hits = 0;      ///< Requests answered without a compile.
    uint64_t followers = 0; ///< Requests that joined another's flight.
    uint64_t stageRuns = 0; ///< Pipeline runs for a cached executable's dumps.
    uint64_t remoteHits = 0; ///< Local misses the remote tier answered.
    /// Misses stored from an executable the compiler made in an earlier
    /// call (CompileHints::precompiled): neither a hit nor a compile.
    uint64_t precompiledStores = 0;
  };
  Stats stats() const;

private:
  CompileCache(ContentStore &store, ExecutableNamespace &executables,
               std::filesystem::path acDir, CompilerFn compiler,
               std::string buildId, unsigned workers);

  using Result = absl::StatusOr<CompileOutcome>;

  /// Runs the compiler and stores its output; on a worker thread (a
  /// precompiled executable is stored on the caller's).
  /// With `hints.precompiled`, stores that instead of compiling.
  Result compileAndStore(const std::string &key, const v1::Graph &graph,
                         const compiler::CompileOptions &options,
                         const CompileHints &hints);
  /// Runs the compiler for the stage dumps of `hit` (a cached executable
  /// without them) and stores them beside it; on a worker thread.
  Result recordStages(const std::string &key, CompileOutcome hit,
                      const v1::Graph &graph,
                      const compiler::CompileOptions &options);
  /// Writes `dumps` to the store and the <key>.stages entry naming them.
  absl::StatusOr<v1::StageDumpSet>
  storeStages(const std::string &key, const v1::Digest &executable,
              const std::vector<compiler::StageDump> &dumps, bool artifactMatches);
  /// Runs `work` on the pool and waits; its outcome gets the queue time.
  Result onPool(const std::function<Result()> &work);

  /// Writes <acDir>/<key>.why, what the key was computed from, unless there.
  void rememberKey(const std::string &key, const v1::Graph &graph,
                   const std::string &target, const v1::CompileOptions &options);

  /// Lists `executable` and points `key`'s entry at it.
  absl::Status writeEntry(const std::string &key, const v1::Digest &executable);

  // The remote tier (CompileCacheRemote.cpp).
  /// The remote's entry for `key`, downloaded, checked and stored locally;
  /// nullopt when it has none, is down, or holds something unusable.
  std::optional<CompileOutcome> fetchRemote(const std::string &key);
  /// fetchRemote for an entry already read (`outputs`).
  std::optional<CompileOutcome> useRemoteEntry(const std::string &key,
                                               const RemoteOutputs &outputs);
  /// Copies the remote StageDumpSet `setDigest` of `key`'s `executable` and
  /// its dumps into the local tier (each checked); a failure is logged and
  /// leaves the dumps to be recorded here when asked for.
  void fetchRemoteStages(const std::string &key, const v1::Digest &executable,
                         const v1::Digest &setDigest);
  /// Stores `outcome`'s record and artifact (and stage dumps, when recorded)
  /// in the remote CAS and `key`'s
  /// entry naming them, unless the remote already has an entry for `key`;
  /// and `graph`'s parameter blobs, so that other replicas need not ask
  /// their clients for them.
  /// When it names another executable (another replica won the race), that
  /// one replaces ours locally and is returned, so that a key names one
  /// executable on every replica. Failures are logged, never returned.
  std::optional<CompileOutcome> publishRemote(const std::string &key,
                                              const CompileOutcome &outcome,
                                              const v1::Graph &graph);
  /// Before compiling a key no tier holds: takes the key's compile lease in
  /// the shared tier, or, when another replica holds it, waits for that
  /// replica's entry while the lease lasts. Returns its entry, or nullopt to
  /// compile here (the lease is ours, expired or released, or the remote is
  /// down).
  std::optional<CompileOutcome> leaseOrWait(const std::string &key);
  /// Ends our lease on `key` at once (a failed compile: waiters compile).
  void releaseLease(const std::string &key);

  /// publishRemote once per key per process, for local hits (so that what
  /// was compiled while the remote was down reaches it later).
  std::optional<CompileOutcome> publishHitOnce(const std::string &key,
                                               const CompileOutcome &hit,
                                               const v1::Graph &graph);

  ContentStore &store;
  ExecutableNamespace &executables;
  std::filesystem::path acDir;
  CompilerFn compiler;
  std::string buildId;

  std::atomic<uint64_t> compiles{0};
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> followers{0};
  std::atomic<uint64_t> stageRuns{0};
  std::atomic<uint64_t> remoteHits{0};
  std::atomic<uint64_t> precompiledStores{0};
  RemoteCache *remote = nullptr;
  /// This cache's name in compile leases (random, per process).
  std::string leaseHolder;
  std::mutex publishedMutex;
  absl::flat_hash_set<std::string> published;
  /// Keys whose compile lease this cache holds (releaseLease ends only these).
  absl::flat_hash_set<std::string> leasesHeld;
  std::mutex mutex;
  absl::flat_hash_map<std::string, std::shared_future<Result>> flights;
  mutable std::mutex saltMutex;
  std::string keySalt;
  // Last member: destroyed first, so queued compiles finish while the
  // members they use are alive.
  std::unique_ptr<WorkerPool> pool;
};

/// Reads and parses the ExecutableRecord `executable` from `store`.
/// NOT_FOUND when absent, DATA_LOSS when corrupt or unparsable.
absl::StatusOr<v1::ExecutableRecord>
readExecutableRecord(const ContentStore &store, const v1::Digest &executable);

} // namespace kiln::server
