//===- AgentSession.cpp - the agent's side of Agent.Connect ---------------===//
//
// This file implements AgentSession: registration, the heartbeat thread, the
// task loop on a worker pool, serialised stream writes and reconnection.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentSession.h"

#include "kiln/common/AgentProtocol.h"

#include "kiln/common/WorkerPool.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <thread>

namespace kiln::agent {

using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::DaemonMessage>;

/// One live Connect stream: writes from the heartbeat thread and the task
/// workers go through write(), one at a time; after close() they are dropped.
class AgentSession::Connection {
public:
  explicit Connection(std::unique_ptr<Stream> stream)
      : stream(std::move(stream)) {}

  /// Sends `message`; false when the stream is closed or broken.
  bool write(const v1::AgentMessage &message) {
    std::lock_guard<std::mutex> lock(writeMutex);
    if (closed)
      return false;
    return stream->Write(message);
  }

  bool read(v1::DaemonMessage &message) { return stream->Read(&message); }

  bool isClosed() {
    std::lock_guard<std::mutex> lock(writeMutex);
    return closed;
  }

  /// Stops writers and the heartbeat loop; waits for a write in progress.
  void close() {
    {
      std::lock_guard<std::mutex> lock(writeMutex);
      closed = true;
    }
    // Taking the heartbeat mutex orders this with the heartbeat thread's
    // predicate check, so the wake-up cannot fall between check and wait.
    { std::lock_guard<std::mutex> lock(heartbeatMutex); }
    closedWake.notify_all();
  }

  /// Sends a Heartbeat every `interval` until close() or a failed write.
  void heartbeatLoop(std::chrono::milliseconds interval) {
    v1::AgentMessage heartbeat;
    heartbeat.mutable_heartbeat();
    std::unique_lock<std::mutex> lock(heartbeatMutex);
    while (!closedWake.wait_for(lock, interval, [this] { return isClosed(); })) {
      if (!write(heartbeat))
        return;
    }
  }

  grpc::Status finish() { return stream->Finish(); }

private:
  std::unique_ptr<Stream> stream;
  std::mutex writeMutex;
  bool closed = false;
  std::mutex heartbeatMutex;
  std::condition_variable closedWake;
};

absl::StatusOr<std::unique_ptr<AgentSession>>
AgentSession::create(AgentOptions options, DeviceBackend &backend,
                     std::shared_ptr<AgentStores> stores) {
  if (options.daemonAddress.empty())
    return absl::InvalidArgumentError("no daemon address given");
  if (options.agentId.empty())
    return absl::InvalidArgumentError("no agent id given");
  if (!stores) {
    ASSIGN_OR_RETURN(stores, AgentStores::open(options));
  }
  std::shared_ptr<const TaskVerifier> configured;
  if (!options.taskVerifyKey.empty()) {
    absl::StatusOr<TaskVerifier> key =
        TaskVerifier::fromFile(options.taskVerifyKey);
    if (!key.ok())
      return absl::Status(key.status().code(),
                          absl::StrCat("--task-verify-key: ",
                                       key.status().message()));
    configured = std::make_shared<const TaskVerifier>(*std::move(key));
  }
  ASSIGN_OR_RETURN(std::vector<v1::Device> devices, backend.describeDevices());
  if (devices.empty()) {
    std::string why = backend.unavailableReason();
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", std::string(backend.kind()), " backend found no devices to offer",
        why.empty() ? "" : ": ", why));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                   dialDaemon(options.daemonAddress, options.credentials,
                              options.maxBackoff));
  auto session = std::unique_ptr<AgentSession>(new AgentSession(
      std::move(options), backend, std::move(channel), std::move(stores),
      std::move(devices)));
  session->configuredKey = configured;
  session->runner.setTaskVerifier(configured);
  return session;
}

absl::StatusOr<std::shared_ptr<AgentStores>>
AgentStores::open(const AgentOptions &options) {
  ASSIGN_OR_RETURN(std::unique_ptr<BlobCache> cache,
                   BlobCache::open(options.cacheDir));
  return std::make_shared<AgentStores>(std::move(cache), options.residentBytes);
}

AgentSession::AgentSession(AgentOptions options, DeviceBackend &backend,
                           std::shared_ptr<grpc::Channel> daemonChannel,
                           std::shared_ptr<AgentStores> sharedStores,
                           std::vector<v1::Device> devices)
    : opts(std::move(options)), backend(backend), devices(std::move(devices)),
      channel(std::move(daemonChannel)),
      agentStub(v1::Agent::NewStub(channel)), stores(std::move(sharedStores)),
      blobs(channel),
      runner(backend, *stores->cache, stores->resident, blobs,
             opts.maxLoadedExecutables, opts.heldTensorBytes,
             opts.outputSpareBytes) {}

AgentSession::~AgentSession() { stop(); }

void AgentSession::stop() {
  std::lock_guard<std::mutex> lock(stopMutex);
  stopping = true;
  if (currentContext)
    currentContext->TryCancel();
  stopWake.notify_all();
}

absl::Status AgentSession::serveOnce(bool &registered) {
  registered = false;
  grpc::ClientContext context;
  {
    std::lock_guard<std::mutex> lock(stopMutex);
    if (stopping)
      return absl::CancelledError("stopping");
    currentContext = &context;
  }
  auto connection =
      std::make_shared<Connection>(agentStub->Connect(&context));
  // The pool is per stream: its destructor waits for this stream's tasks
  // before the stream (and the context they write through) goes away.
  std::optional<WorkerPool> pool;
  std::thread heartbeat;

  auto finish = [&](absl::Status why, bool cancel = true) {
    // Cancel first: it unblocks a write stuck on flow control. A stream the
    // daemon ended itself (a refused registration) is not cancelled, so that
    // Finish reports the daemon's status.
    if (cancel)
      context.TryCancel();
    connection->close();
    if (heartbeat.joinable())
      heartbeat.join();
    pool.reset();
    grpc::Status end = connection->finish();
    {
      std::lock_guard<std::mutex> lock(stopMutex);
      currentContext = nullptr;
    }
    if (!why.ok())
      return why;
    return fromGrpcStatus(end, "Agent.Connect");
  };

  v1::AgentMessage hello;
  v1::RegisterAgent *registration = hello.mutable_register_();
  registration->set_agent_id(opts.agentId);
  registration->set_protocol_version(kAgentProtocolVersion);
  registration->set_session_token(sessionToken);
  registration->set_local_link(opts.localLinkFd >= 0);
  for (const v1::Device &device : devices)
    *registration->add_devices() = device;
  v1::DaemonMessage message;
  if (!connection->write(hello))
    return finish(absl::OkStatus());
  if (!connection->read(message))
    return finish(absl::OkStatus(), /*cancel=*/false);
  if (!message.has_registered())
    return finish(absl::InternalError(
        "the daemon's first message on Agent.Connect was not AgentRegistered"));
  registered = true;
  ++registrationCount;
  sessionToken = message.registered().session_token();
  if (!configuredKey) {
    // No --task-verify-key: the key of the daemon we registered with.
    absl::StatusOr<TaskVerifier> sent =
        TaskVerifier::fromPem(message.registered().task_public_key());
    if (sent.ok()) {
      runner.setTaskVerifier(std::make_shared<const TaskVerifier>(*sent));
      spdlog::warn("verifying tasks with the task key {} sent at "
                   "registration; pass --task-verify-key so that a man in the "
                   "middle cannot substitute his own",
                   opts.daemonAddress);
    } else {
      runner.setTaskVerifier(nullptr);
      spdlog::error("{} sent no usable task key ({}); every task will be "
                    "refused until --task-verify-key is given",
                    opts.daemonAddress, std::string(sent.status().message()));
    }
  }
  int64_t intervalMs = message.registered().heartbeat_interval_ms();
  if (intervalMs <= 0)
    intervalMs = 1000;
  spdlog::info("registered with {} as {} ({} device(s)); heartbeat every {} ms",
               opts.daemonAddress, opts.agentId, devices.size(), intervalMs);

  // At least one worker per device, so every device can be busy at once.
  int workers = std::max(opts.taskThreads, static_cast<int>(devices.size()));
  pool.emplace(workers);
  if (opts.localLinkFd >= 0 && !localLink)
    localLink = std::make_unique<LocalLinkServer>(
        UniqueFd(opts.localLinkFd), runner, static_cast<unsigned>(workers),
        [this] { stop(); }, opts.directPoll);
  heartbeat = std::thread([connection, intervalMs] {
    connection->heartbeatLoop(std::chrono::milliseconds(intervalMs));
  });

  while (connection->read(message)) {
    if (!message.has_task()) {
      spdlog::warn("ignoring an unexpected daemon message on Agent.Connect");
      continue;
    }
    auto task = std::make_shared<v1::Task>(std::move(*message.mutable_task()));
    spdlog::debug("task {} (request {}) received", task->task_id(),
                  task->request_id());
    pool->submit([this, connection, task] {
      // A task queued behind a stream that has since broken is not run: the
      // daemon already failed it over.
      if (connection->isClosed())
        return;
      v1::AgentMessage reply;
      *reply.mutable_result() = runner.run(*task);
      if (!connection->write(reply))
        spdlog::warn("could not return the result of task {}: the stream "
                     "to the daemon is gone",
                     task->task_id());
    });
  }
  return finish(absl::OkStatus());
}

absl::Status AgentSession::run() {
  std::chrono::milliseconds backoff = opts.initialBackoff;
  while (true) {
    bool registered = false;
    absl::Status status = serveOnce(registered);
    std::unique_lock<std::mutex> lock(stopMutex);
    if (stopping)
      return absl::OkStatus();
    if (registered)
      backoff = opts.initialBackoff;
    // A refused registration (another live agent has this id, another
    // protocol version, missing or wrong credentials) is an error someone
    // must fix; it is retried all the same, since the other agent may go
    // away and credentials may be rotated on the daemon's side.
    bool refused = absl::IsAlreadyExists(status) ||
                   absl::IsFailedPrecondition(status) ||
                   absl::IsPermissionDenied(status) ||
                   absl::IsUnauthenticated(status);
    spdlog::log(refused ? spdlog::level::err : spdlog::level::warn,
                "{} daemon {}: {}; retrying in {} ms",
                registered ? "lost the connection to"
                : refused  ? "registration refused by"
                           : "cannot reach",
                opts.daemonAddress,
                status.ok() ? "stream closed" : status.ToString(),
                backoff.count());
    stopWake.wait_for(lock, backoff, [this] { return stopping; });
    if (stopping)
      return absl::OkStatus();
    backoff = std::min(backoff * 2, opts.maxBackoff);
  }
}

} // namespace kiln::agent
