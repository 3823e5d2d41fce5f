//===- FakeDaemon.h - an in-process kilnd stand-in for agent tests --------===//
//
// This file declares FakeDaemon: Agent.Connect and Blobs.Read/Write on a real
// loopback gRPC server bound to port 0, recording what the agent sends.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/agent.grpc.pb.h"
#include "kiln/v1/blobs.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::agent::test {

class FakeDaemon : public v1::Agent::Service, public v1::Blobs::Service {
public:
  /// Starts serving on 127.0.0.1:<some free port>.
  explicit FakeDaemon(int64_t heartbeatIntervalMs);
  ~FakeDaemon() override;

  std::string address() const { return addr; }

  /// Adds a blob to the store and returns its digest.
  v1::Digest addBlob(const std::string &bytes);
  /// The stored bytes of `hash` ("" when absent).
  std::string blob(const std::string &hash);

  /// Sends `task` on the current stream (waits for one to be registered),
  /// signed with test::taskKey() (sent as the task key at registration)
  /// while signTasks holds. Registrations get session tokens "token-<n>".
  bool sendTask(const v1::Task &task);
  std::atomic<bool> signTasks{true};

  /// Ends the current stream from the daemon's side.
  void dropConnection();

  /// Waits (up to a generous guard time) until `done()` holds, re-checking on
  /// every message the agent sends. Returns whether it held.
  bool waitFor(const std::function<bool()> &done);

  // What the agent sent so far (snapshots; usable inside waitFor()).
  std::vector<v1::RegisterAgent> registrations();
  int heartbeats();
  std::vector<v1::TaskResult> results();
  int blobReads();
  int blobWrites();

  grpc::Status Connect(
      grpc::ServerContext *context,
      grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage> *stream)
      override;
  grpc::Status Read(grpc::ServerContext *context,
                    const v1::ReadRequest *request,
                    grpc::ServerWriter<v1::ReadResponse> *writer) override;
  grpc::Status Write(grpc::ServerContext *context,
                     grpc::ServerReader<v1::WriteRequest> *reader,
                     v1::WriteResponse *response) override;

private:
  const int64_t heartbeatIntervalMs;
  std::unique_ptr<grpc::Server> server;
  std::string addr;

  // Recursive so that the accessors can be called inside waitFor().
  std::recursive_mutex mutex;
  std::condition_variable_any changed;
  grpc::ServerContext *currentContext = nullptr;
  grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage> *currentStream =
      nullptr;
  std::vector<v1::RegisterAgent> registered;
  int heartbeatCount = 0;
  std::vector<v1::TaskResult> taskResults;
  std::map<std::string, std::string> blobs;
  int reads = 0;
  int writes = 0;
};

} // namespace kiln::agent::test
