//===- RemoteCache.h - the shared cache tier on REAPI v2 --------*- C++ -*-===//
//
// This file declares RemoteCache: kilnd's client of a Remote Execution API
// (v2) server used as a shared cache (bazel-remote, Buildbarn, any REAPI
// cache): ActionCache entries keyed by compile key, blobs in the CAS, large
// blobs over ByteStream. Every blob read is checked against its digest
// before it is returned. A remote that fails is marked down and retried
// with backoff (RemoteHealth); callers treat "down" as "not there".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/tensor.pb.h"

#include "absl/status/statusor.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace grpc {
class Channel;
} // namespace grpc

namespace kiln::server {

/// How to reach the remote tier (kilnd --remote-cache and friends).
struct RemoteCacheOptions {
  /// grpc://HOST:PORT (plaintext) or grpcs://HOST:PORT (TLS).
  std::string url;
  /// REAPI instance name ("" for the server's default instance).
  std::string instanceName;
  /// PEM files: the CA the server's certificate chains to (grpcs; empty
  /// for the system roots), and a client certificate and key for mTLS.
  std::string tlsCa, tlsCert, tlsKey;
  /// Deadline of each remote call.
  std::chrono::milliseconds timeout{10000};
  /// Largest blob read from the remote (kilnd's --max-blob-bytes; 0: no
  /// cap): an entry naming a larger one is unusable, not an allocation.
  int64_t maxBlobBytes = int64_t{16} << 30;
  /// Backoff after a failure: first wait, doubling up to the cap.
  std::chrono::milliseconds minBackoff{1000};
  std::chrono::milliseconds maxBackoff{60000};
};

/// Whether the remote is believed reachable, and when to try it again. A
/// failure marks it down for a backoff that doubles with each further
/// failure; while down, calls are not made at all, so a dead or slow
/// remote costs one deadline per backoff period, never one per request.
class RemoteHealth {
public:
  RemoteHealth(std::chrono::milliseconds minBackoff,
               std::chrono::milliseconds maxBackoff)
      : minBackoff(minBackoff), maxBackoff(maxBackoff) {}

  /// True when a call may be made now (up, or the backoff has passed); a
  /// check that makes no call.
  bool mayCall() const;
  /// mayCall() for a call about to be made: while down, only the first
  /// caller after the backoff gets true (the probe), so a dead remote costs
  /// one deadline per backoff period however many requests arrive.
  bool tryCall();
  /// Records a call that reached the server.
  void succeeded();
  /// Records a call that could not (`why` goes in the log line).
  void failed(const absl::Status &why);
  bool up() const;

private:
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds minBackoff, maxBackoff;
  mutable std::mutex mutex;
  bool isUp = true;
  std::chrono::milliseconds backoff{0};
  Clock::time_point retryAt{};
};

/// One entry of the remote action cache: named output blobs.
using RemoteOutputs = std::map<std::string, v1::Digest>;

/// Who is compiling a key, until when (a compile lease in the shared tier).
struct RemoteLease {
  std::string holder;
  std::chrono::system_clock::time_point expires;
};

class RemoteCache {
public:
  /// Checks `options` (INVALID_ARGUMENT naming the flag) and makes the
  /// channel. Does not wait for the server: a remote that is down at start
  /// is only a remote that is down.
  static absl::StatusOr<std::unique_ptr<RemoteCache>>
  connect(const RemoteCacheOptions &options);
  ~RemoteCache();

  /// The outputs stored under compile key `key`; nullopt for a miss.
  /// UNAVAILABLE while the remote is down.
  absl::StatusOr<std::optional<RemoteOutputs>> getAction(const std::string &key);
  /// Stores `outputs` under `key`. Every blob they name must already be in
  /// the remote CAS (writeBlobs first).
  absl::Status putAction(const std::string &key, const RemoteOutputs &outputs);

  /// The compile lease stored for `key` (nullopt: none), and storing one.
  /// A lease is an action-cache entry of its own (the Command
  /// "kiln-compile-lease KEY"), whose ExecutedActionMetadata names the
  /// holder (worker) and the expiry (worker_completed_timestamp). REAPI has
  /// no compare-and-swap: the last write wins, which CompileCache's lease
  /// protocol allows for.
  absl::StatusOr<std::optional<RemoteLease>> getLease(const std::string &key);
  absl::Status putLease(const std::string &key, const RemoteLease &lease);

  /// The blob's bytes, checked against `digest` (DATA_LOSS when they do
  /// not match; NOT_FOUND when the remote lacks it).
  absl::StatusOr<std::string> readBlob(const v1::Digest &digest);
  /// Uploads the blobs the remote lacks (FindMissingBlobs, then
  /// BatchUpdateBlobs or ByteStream by size). Idempotent.
  absl::Status writeBlobs(const std::vector<std::pair<v1::Digest, std::string>> &blobs);
  /// Uploads `blobs`, which the caller knows the remote lacks (no
  /// FindMissingBlobs first): BatchUpdateBlobs or ByteStream by size.
  absl::Status uploadBlobs(const std::vector<std::pair<v1::Digest, std::string>> &blobs);
  /// The blobs of `digests` the remote lacks (FindMissingBlobs).
  absl::StatusOr<std::vector<v1::Digest>>
  findMissing(const std::vector<v1::Digest> &digests);

  bool up() const { return health.up(); }
  /// Whether a call would be made now (up, or due for a retry).
  bool mayCall() const { return health.mayCall(); }

  struct Stats {
    uint64_t hits = 0, misses = 0, errors = 0;
    uint64_t bytesRead = 0, bytesWritten = 0;
    uint64_t actionsWritten = 0;
    uint64_t corruptBlobs = 0; ///< Blobs whose bytes did not match.
  };
  Stats stats() const;
  /// Counts a blob that passed the transport's checks but was unusable to
  /// the caller (an entry naming a record that does not parse).
  void countCorrupt() { corrupt.fetch_add(1); }

private:
  RemoteCache(RemoteCacheOptions options, std::shared_ptr<grpc::Channel> channel);

  /// Runs `call` unless the remote is down; records its outcome in health.
  /// A NOT_FOUND or other answer from the server counts as reachable.
  template <typename Fn> absl::Status guarded(const char *what, Fn &&call);

  absl::StatusOr<std::string> readByteStream(const v1::Digest &digest);
  absl::Status writeByteStream(const v1::Digest &digest, const std::string &bytes);

  struct Stubs;
  RemoteCacheOptions options;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<Stubs> stubs;
  RemoteHealth health;
  /// Largest BatchUpdateBlobs/BatchReadBlobs request the server takes.
  int64_t maxBatchBytes;
  std::atomic<uint64_t> hits{0}, misses{0}, errors{0}, bytesRead{0},
      bytesWritten{0}, actionsWritten{0}, corrupt{0};
};

class ContentStore;

/// Copies into `store` each blob of `wanted` that the remote holds, every one
/// checked against its digest; returns the digests still missing (all of
/// them while the remote is down). What a replica does before it asks a
/// client to upload weights another replica already shared.
std::vector<v1::Digest> fillFromRemote(ContentStore &store, RemoteCache &remote,
                                       const std::vector<v1::Digest> &wanted);

/// Uploads each blob of `digests` that `store` holds and the remote lacks,
/// one at a time. Failures are logged, not returned.
void publishToRemote(ContentStore &store, RemoteCache &remote,
                     const std::vector<v1::Digest> &digests);

/// The hex digest of the REAPI Action a compile key stands for. Kiln uses
/// the action cache as Bazel's remote caching does, as a map from action
/// to outputs: the Action's Command names the key ("kiln-compile KEY") and
/// is never executed.
std::string remoteActionHash(const std::string &compileKey);

} // namespace kiln::server
