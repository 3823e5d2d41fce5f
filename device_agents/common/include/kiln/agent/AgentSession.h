//===- AgentSession.h - the agent's side of Agent.Connect -----------------===//
//
// This file declares AgentSession: dial the daemon, register the backend's
// devices, heartbeat from a dedicated thread, run tasks on a worker pool and
// stream their results back; reconnect with capped exponential backoff.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/BlobCache.h"
#include "kiln/agent/DaemonBlobs.h"
#include "kiln/agent/DaemonChannel.h"
#include "kiln/agent/DeviceBackend.h"
#include "kiln/agent/LocalLinkServer.h"
#include "kiln/agent/ResidentSet.h"
#include "kiln/agent/TaskRunner.h"

#include "kiln/v1/agent.grpc.pb.h"

#include "absl/status/statusor.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::agent {

/// Everything an agent process is configured with.
struct AgentOptions {
  /// host:port of kilnd.
  std::string daemonAddress;
  /// Stable id sent in RegisterAgent.
  std::string agentId;
  /// Local blob cache directory.
  std::filesystem::path cacheDir;
  /// Byte budget of resident parameter buffers.
  int64_t residentBytes = int64_t{4} << 30;
  /// Tasks run at once; the session uses at least one per device.
  int taskThreads = 1;
  /// Executables kept loaded (TaskRunner's least-recently-used cap).
  size_t maxLoadedExecutables = 256;
  /// Byte budget of the tensors callers ask devices to keep
  /// (ExecuteRequest.keep_outputs), per daemon served.
  int64_t heldTensorBytes = TaskRunner::kDefaultHeldBytes;
  /// Bytes of output memfds made ahead (SharedBufferSpares), per daemon.
  int64_t outputSpareBytes = SharedBufferSpares::kDefaultBudgetBytes;
  /// How direct channels poll for their clients' next calls
  /// (DirectChannels; by default they never do).
  DirectPoll directPoll;
  /// PEM file of the daemon's task key (its <cache-dir>/keys/
  /// task-public-key.pem); empty: trust the key the daemon sends when the
  /// agent registers (logged as a warning: a man in the middle could send
  /// his own).
  std::filesystem::path taskVerifyKey;
  /// TLS and the bearer token the agent dials kilnd with.
  DaemonCredentials credentials;
  /// The local link kilnd passed (--local-link-fd); -1: none.
  int localLinkFd = -1;
  /// First reconnect delay; doubles per failed attempt up to maxBackoff.
  std::chrono::milliseconds initialBackoff{100};
  std::chrono::milliseconds maxBackoff{5000};
};

/// What the sessions of one agent process share when it serves several
/// daemons (kilnd replicas): the blob cache on disk and the resident
/// parameters, both by digest, so a weight both replicas send is fetched and
/// kept once.
struct AgentStores {
  /// Opens the blob cache in options.cacheDir, with options.residentBytes
  /// of resident parameters.
  static absl::StatusOr<std::shared_ptr<AgentStores>>
  open(const AgentOptions &options);

  std::unique_ptr<BlobCache> cache;
  ResidentSet resident;

  explicit AgentStores(std::unique_ptr<BlobCache> cache, int64_t residentBytes)
      : cache(std::move(cache)), resident(residentBytes) {}
};

/// One agent process's connection to one daemon. run() serves until stop().
class AgentSession {
public:
  /// Asks `backend` for its devices and dials options.daemonAddress; opens
  /// the stores unless given ones another session shares. `backend` must
  /// outlive the session.
  static absl::StatusOr<std::unique_ptr<AgentSession>>
  create(AgentOptions options, DeviceBackend &backend,
         std::shared_ptr<AgentStores> stores = nullptr);
  ~AgentSession();

  /// Connects, registers and serves tasks, reconnecting whenever the stream
  /// breaks or the daemon is not up; returns OK once stop() was called.
  absl::Status run();

  /// Makes run() return soon: cancels the stream and any backoff wait.
  /// Thread-safe; tasks already running finish first.
  void stop();

  /// Times the daemon acknowledged a registration (1 per stream).
  int64_t registrations() const { return registrationCount.load(); }

  const AgentOptions &options() const { return opts; }

private:
  class Connection;

  AgentSession(AgentOptions options, DeviceBackend &backend,
               std::shared_ptr<grpc::Channel> channel,
               std::shared_ptr<AgentStores> stores,
               std::vector<v1::Device> devices);

  /// One Connect stream from dial to end. Sets `registered` when the daemon
  /// acknowledged the registration.
  absl::Status serveOnce(bool &registered);

  AgentOptions opts;
  DeviceBackend &backend;
  std::vector<v1::Device> devices;
  /// --task-verify-key, when given (then the daemon's key is ignored).
  std::shared_ptr<const TaskVerifier> configuredKey;
  /// The token of the last registration: presented when reconnecting.
  std::string sessionToken;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Agent::Stub> agentStub;
  std::shared_ptr<AgentStores> stores;
  GrpcDaemonBlobs blobs;
  TaskRunner runner;

  std::mutex stopMutex;
  std::condition_variable stopWake;
  bool stopping = false;
  grpc::ClientContext *currentContext = nullptr;
  std::atomic<int64_t> registrationCount{0};
  /// Serves the local link once the first registration is acknowledged (the
  /// task key is known by then); lives as long as the session.
  std::unique_ptr<LocalLinkServer> localLink;
};

} // namespace kiln::agent
