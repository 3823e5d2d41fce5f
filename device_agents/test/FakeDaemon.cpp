//===- FakeDaemon.cpp - an in-process kilnd stand-in for agent tests ------===//
//
// This file implements FakeDaemon's Agent.Connect, Blobs.Read and Blobs.Write.
//
//===----------------------------------------------------------------------===//
#include "FakeDaemon.h"

#include "TestSupport.h"
#include "kiln/common/AgentProtocol.h"

#include "kiln/common/Digest.h"

#include "absl/strings/str_cat.h"

namespace kiln::agent::test {
namespace {
/// Only a guard against hanging tests; waits end on state changes.
constexpr std::chrono::seconds kGuard{30};
} // namespace

FakeDaemon::FakeDaemon(int64_t heartbeatIntervalMs)
    : heartbeatIntervalMs(heartbeatIntervalMs) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(static_cast<v1::Agent::Service *>(this));
  builder.RegisterService(static_cast<v1::Blobs::Service *>(this));
  server = builder.BuildAndStart();
  addr = "127.0.0.1:" + std::to_string(port);
}

FakeDaemon::~FakeDaemon() {
  dropConnection();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

v1::Digest FakeDaemon::addBlob(const std::string &bytes) {
  v1::Digest digest = digestOf(bytes);
  std::lock_guard<std::recursive_mutex> lock(mutex);
  blobs[digest.hash()] = bytes;
  return digest;
}

std::string FakeDaemon::blob(const std::string &hash) {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  auto it = blobs.find(hash);
  return it == blobs.end() ? "" : it->second;
}

bool FakeDaemon::sendTask(const v1::Task &task) {
  std::unique_lock<std::recursive_mutex> lock(mutex);
  if (!changed.wait_for(lock, kGuard, [this] { return currentStream; }))
    return false;
  v1::DaemonMessage message;
  *message.mutable_task() = task;
  if (signTasks)
    signTask(*message.mutable_task());
  return currentStream->Write(message);
}

void FakeDaemon::dropConnection() {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  if (currentContext)
    currentContext->TryCancel();
}

bool FakeDaemon::waitFor(const std::function<bool()> &done) {
  std::unique_lock<std::recursive_mutex> lock(mutex);
  return changed.wait_for(lock, kGuard, done);
}

std::vector<v1::RegisterAgent> FakeDaemon::registrations() {
  return registered;
}
int FakeDaemon::heartbeats() {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  return heartbeatCount;
}
std::vector<v1::TaskResult> FakeDaemon::results() {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  return taskResults;
}
int FakeDaemon::blobReads() {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  return reads;
}
int FakeDaemon::blobWrites() {
  std::lock_guard<std::recursive_mutex> lock(mutex);
  return writes;
}

grpc::Status FakeDaemon::Connect(
    grpc::ServerContext *context,
    grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage> *stream) {
  v1::AgentMessage message;
  if (!stream->Read(&message) || !message.has_register_())
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "first message must be RegisterAgent");
  v1::DaemonMessage reply;
  reply.mutable_registered()->set_heartbeat_interval_ms(heartbeatIntervalMs);
  reply.mutable_registered()->set_task_public_key(taskKey().publicKeyPem());
  reply.mutable_registered()->set_protocol_version(kAgentProtocolVersion);
  {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    reply.mutable_registered()->set_session_token(
        absl::StrCat("token-", registered.size() + 1));
  }
  {
    // Publish the stream only after the reply, so sendTask cannot overtake it.
    std::lock_guard<std::recursive_mutex> lock(mutex);
    stream->Write(reply);
    registered.push_back(message.register_());
    currentContext = context;
    currentStream = stream;
  }
  changed.notify_all();
  while (stream->Read(&message)) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (message.has_heartbeat())
      ++heartbeatCount;
    else if (message.has_result())
      taskResults.push_back(message.result());
    changed.notify_all();
  }
  std::lock_guard<std::recursive_mutex> lock(mutex);
  currentContext = nullptr;
  currentStream = nullptr;
  changed.notify_all();
  return grpc::Status::OK;
}

grpc::Status FakeDaemon::Read(grpc::ServerContext *,
                              const v1::ReadRequest *request,
                              grpc::ServerWriter<v1::ReadResponse> *writer) {
  std::string bytes;
  {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    ++reads;
    auto it = blobs.find(request->digest().hash());
    if (it == blobs.end())
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "blob " + formatDigest(request->digest()) +
                              " is not in the store");
    bytes = it->second;
  }
  constexpr size_t kChunk = 1 << 20;
  for (size_t offset = 0; offset == 0 || offset < bytes.size();
       offset += kChunk) {
    v1::ReadResponse response;
    response.set_data(bytes.substr(offset, kChunk));
    writer->Write(response);
  }
  return grpc::Status::OK;
}

grpc::Status FakeDaemon::Write(grpc::ServerContext *,
                               grpc::ServerReader<v1::WriteRequest> *reader,
                               v1::WriteResponse *response) {
  v1::WriteRequest request;
  v1::Digest digest;
  std::string bytes;
  bool first = true;
  while (reader->Read(&request)) {
    if (first)
      digest = request.digest();
    first = false;
    if (request.offset() != static_cast<int64_t>(bytes.size()))
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad offset");
    if (request.data().size() > (1u << 20))
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "chunk over 1 MiB");
    bytes += request.data();
  }
  if (digestOf(bytes).hash() != digest.hash() ||
      static_cast<int64_t>(bytes.size()) != digest.size_bytes())
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "digest mismatch");
  std::lock_guard<std::recursive_mutex> lock(mutex);
  ++writes;
  blobs[digest.hash()] = bytes;
  response->set_committed_size(static_cast<int64_t>(bytes.size()));
  changed.notify_all();
  return grpc::Status::OK;
}

} // namespace kiln::agent::test
