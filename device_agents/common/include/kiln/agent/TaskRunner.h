//===- TaskRunner.h - one Task in, one TaskResult out ---------------------===//
//
// This file declares TaskRunner, the device-independent part of running a
// task: validate it against the manifest, fetch and load the executable
// (cached by executable digest, least recently used unloaded first past a
// cap), resolve resident parameters, decode inputs,
// allocate outputs, run, and return the outputs inline or as uploaded blobs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AlignedBuffer.h"
#include "kiln/agent/BlobCache.h"
#include "kiln/agent/DaemonBlobs.h"
#include "kiln/agent/DeviceBackend.h"
#include "kiln/agent/ExchangeBuffer.h"
#include "kiln/agent/HeldTensors.h"
#include "kiln/agent/ResidentSet.h"
#include "kiln/agent/SharedBufferSpares.h"

#include "kiln/v1/agent.pb.h"
#include "kiln/v1/executor.pb.h"

#include "kiln/common/FramedSocket.h"
#include "kiln/common/TaskSignature.h"

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::agent {

/// The tensors of one task that travel as files over the local link.
struct LocalFiles {
  /// (input index, its file), ascending: the store's file of the blob that
  /// input names, or for an input without a payload the sealed memfd a
  /// co-located client passed.
  std::vector<std::pair<int, UniqueFd>> inputs;
  /// (input index, its bytes), ascending: inputs without a payload that
  /// the caller already copied into this agent's memory (from a direct
  /// channel's exchange buffer). An index is here or in `inputs`, not both.
  std::vector<std::pair<int, AlignedBuffer>> inputCopies;
  /// Outputs over kMaxInlineOutputBytes go in memfds (`outputs`) instead
  /// of being uploaded as blobs.
  bool outputsAsFiles = false;
  /// With outputsAsFiles: the caller maps the files itself (a client on
  /// kilnd's local socket), so outputs go in memfds even when all of them
  /// fit inline: each of kMinCallerFileBytes or more.
  bool callerMapsOutputs = false;
  /// Set by TaskRunner::run: (output index, its memfd), ascending.
  std::vector<std::pair<int, UniqueFd>> outputs;
  /// A direct channel's exchange buffer (null: none) and the region of it
  /// the call gave for outputs, [exchangeBegin, exchangeEnd): outputs that
  /// would travel inline are written there instead, where they fit.
  ExchangeBuffer *exchange = nullptr;
  uint64_t exchangeBegin = 0;
  uint64_t exchangeEnd = 0;
  /// Set by TaskRunner::run: (output index, its offset in `exchange`),
  /// ascending; those outputs carry no payload.
  std::vector<std::pair<int, uint64_t>> exchangeOutputs;
  /// Set by TaskRunner::run: the task's input buffers (mappings of the
  /// input files, copies of inline inputs), for the caller to drop after
  /// sending the result. Unmapping memory the compute threads touched
  /// flushes their TLBs (an IPI each; ~0.1 ms for a 600 KB input on a
  /// 2-core VM), which should not delay the answer.
  std::vector<AlignedBuffer> inputBuffers;
};

/// Runs tasks for one backend. Thread-safe: several tasks may run at once.
class TaskRunner {
public:
  /// Outputs whose total size is at most this travel inline in the result.
  static constexpr int64_t kMaxInlineOutputBytes = 3 << 20;
  /// Over the local link, outputs smaller than this stay inline (up to
  /// kMaxInlineOutputBytes of them) when the others go in memfds.
  static constexpr int64_t kMinSharedOutputBytes = 64 << 10;
  /// For a caller that maps output files itself, outputs from this size go
  /// in memfds when all of them would fit inline (past the inline limit,
  /// kMinSharedOutputBytes applies): written once by the executable, where
  /// inline bytes are copied by this agent, kilnd (in and out) and the
  /// client (docs/architecture.md has the measurement).
  static constexpr int64_t kMinCallerFileBytes = 128 << 10;

  /// Executables kept loaded by default; a partitioned graph is several.
  static constexpr size_t kDefaultMaxLoaded = 256;
  /// Bytes of held tensors (ExecuteRequest.keep_outputs) by default.
  static constexpr int64_t kDefaultHeldBytes = int64_t{2} << 30;

  /// Keeps at most `maxLoaded` executables loaded (at least 1): past it the
  /// least recently used is released (a task still running it keeps it
  /// alive until it finishes) and loads again when next needed.
  /// Holds at most `heldBytes` of tensors that tasks asked to keep, and
  /// `outputSpareBytes` of memfds made ahead for outputs written in place.
  TaskRunner(DeviceBackend &backend, BlobCache &cache, ResidentSet &resident,
             DaemonBlobs &blobs, size_t maxLoaded = kDefaultMaxLoaded,
             int64_t heldBytes = kDefaultHeldBytes,
             int64_t outputSpareBytes = SharedBufferSpares::kDefaultBudgetBytes)
      : backend(backend), cache(cache), resident(resident), blobs(blobs),
        held(heldBytes), outputSpares(outputSpareBytes),
        maxLoaded(maxLoaded ? maxLoaded : 1) {}

  /// Runs `task`. Never fails: a problem becomes the result's code (the
  /// google.rpc.Code numbering absl shares) and message.
  ///
  /// Code is loaded only for a task whose signature `verifier` accepts
  /// (PERMISSION_DENIED otherwise; FAILED_PRECONDITION while there is no
  /// verifier). A loaded executable serves later tasks that carry the same
  /// signature over the same message, without verifying again.
  ///
  /// With `files` (a task from the local link) the inputs it lists are
  /// mapped from their files instead of fetched, and large outputs are left
  /// in memfds for the caller to pass on.
  v1::TaskResult run(const v1::Task &task, LocalFiles *files = nullptr);
  /// The same for a task whose executable record travelled beside it
  /// (the local link's; `task.record` is then unused).
  v1::TaskResult run(const v1::Task &task, const v1::ExecutableRecord &record,
                     LocalFiles *files);

  /// The daemon's task key to verify tasks against (null: none yet).
  void setTaskVerifier(std::shared_ptr<const TaskVerifier> verifier);

  /// Number of executables currently loaded.
  size_t loadedExecutables() const;

  /// The tensors tasks asked this runner's devices to keep.
  const HeldTensors &heldTensors() const { return held; }

  /// The memfds made ahead for outputs that go to the caller as files.
  const SharedBufferSpares &outputFileSpares() const { return outputSpares; }

private:
  absl::Status runTask(const v1::Task &task, const v1::ExecutableRecord &record,
                       v1::TaskResult &result, LocalFiles *files);

  /// The loaded executable for `task` (of `record`), fetching and loading
  /// it on a miss.
  absl::StatusOr<std::shared_ptr<LoadedExecutable>>
  getExecutable(const v1::Task &task, const v1::ExecutableRecord &record,
                v1::Timings &timings);

  /// The resident buffer for parameter `digest`.
  absl::StatusOr<ResidentSet::Buffer> getParameter(const v1::Digest &digest);

  /// The parameter set stored under `digest`: kept from an earlier task, or
  /// read from the blob cache (fetched from the daemon on a miss).
  absl::StatusOr<std::shared_ptr<const v1::ParameterSet>>
  getParameterSet(const v1::Digest &digest);

  /// Host buffer holding input `tensor` (inline bytes, a fetched blob, or
  /// `file` mapped when it is valid).
  absl::StatusOr<AlignedBuffer> decodeInput(const v1::Tensor &tensor,
                                            const UniqueFd *file);

  DeviceBackend &backend;
  BlobCache &cache;
  ResidentSet &resident;
  DaemonBlobs &blobs;
  HeldTensors held;
  SharedBufferSpares outputSpares;

  mutable std::mutex verifierMutex;
  std::shared_ptr<const TaskVerifier> verifier; // guarded by verifierMutex

  /// Parameter sets read so far, by hash; started over when full. A set is
  /// content-addressed, so a kept one never goes stale.
  static constexpr size_t kMaxParameterSets = 256;
  std::mutex setMutex;
  std::unordered_map<std::string, std::shared_ptr<const v1::ParameterSet>>
      parameterSets; // guarded by setMutex

  size_t maxLoaded;
  mutable std::mutex loadMutex;
  /// Loaded executables by key, most recently used first in `recency`.
  struct LoadedEntry {
    std::shared_ptr<LoadedExecutable> executable;
    std::list<std::string>::iterator position;
    /// What was verified when it was loaded.
    std::string signedMessage, signature;
  };
  std::list<std::string> recency;
  std::unordered_map<std::string, LoadedEntry> loaded;
};

using Digests = google::protobuf::RepeatedPtrField<v1::Digest>;

/// Checks `parameters` (a task's own list or its parameter set's) against
/// the manifest: count, digest form and sizes.
absl::Status checkParameters(const Digests &parameters,
                             const v1::ExecutableManifest &manifest);

/// A task's manifest with its symbolic sizes bound from the task's input
/// types (kiln/common/SymbolicSizes.h): every type concrete, and the
/// symbols' values in manifest order, for the entry point.
struct BoundManifest {
  v1::ExecutableManifest manifest;
  std::vector<int64_t> symbolValues;
};

/// Checks that `task` is complete and consistent with its own manifest and
/// with `kind`, before anything is fetched (a parameter set's contents are
/// checked with checkParameters once it is read). `files` (may be null) holds the
/// files of inputs that have no payload. A manifest with symbols is checked
/// as its inputs bind it, which `bound` (may be null) receives.
absl::Status validateTask(const v1::Task &task, std::string_view kind,
                          const LocalFiles *files = nullptr,
                          BoundManifest *bound = nullptr);
/// The same for a task whose executable record is `record`.
absl::Status validateTask(const v1::Task &task,
                          const v1::ExecutableRecord &record,
                          std::string_view kind, const LocalFiles *files,
                          BoundManifest *bound);

} // namespace kiln::agent
