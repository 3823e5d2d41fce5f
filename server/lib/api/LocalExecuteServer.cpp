//===- LocalExecuteServer.cpp - Execute over kilnd's local socket ---------===//
//
// This file implements LocalExecuteServer: the listener, one thread per
// connection, the hello and the Execute frames.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/LocalExecuteServer.h"

#include "kiln/common/FrameFiles.h"
#include "kiln/common/Logging.h"
#include "kiln/common/Status.h"
#include "kiln/server/api/GrpcStatus.h"
#include "kiln/server/api/RequestScope.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <cerrno>
#include <cstring>

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace kiln::server {

namespace {

/// The address of `path` ('@name': abstract) and its length.
absl::StatusOr<std::pair<sockaddr_un, socklen_t>>
socketAddress(const std::string &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path)
    return absl::InvalidArgumentError(absl::StrCat(
        "--local-socket '", path, "': a socket path needs 1 to ",
        sizeof address.sun_path - 1, " characters"));
  std::memcpy(address.sun_path, path.data(), path.size());
  if (path[0] == '@')
    address.sun_path[0] = '\0'; // abstract: no file, no trailing NUL
  return std::make_pair(address, static_cast<socklen_t>(
                                     offsetof(sockaddr_un, sun_path) + path.size()));
}

/// Sends a reply frame (with `files`); failures end the connection later.
void reply(FramedSocket &socket, const v1::LocalReply &message,
           const std::vector<int> &files = {}) {
  std::string bytes;
  if (!message.SerializeToString(&bytes))
    return;
  if (absl::Status sent = socket.send(bytes, files); !sent.ok())
    spdlog::debug("local socket: reply not sent: {}",
                  std::string(sent.message()));
}

/// Waits until the client has read everything sent to it (SIOCOUTQ: the
/// bytes still queued); false after `timeout`. A client reads its reply
/// before it sends the next frame, so the wait is for that frame (or a
/// hang-up), not a fixed nap: a client that turns around at once is not
/// held up. It rechecks every kRecheck meanwhile (a client that read and
/// then idles), and naps between checks only for one that sent without
/// reading.
bool awaitReplyRead(int fd, std::chrono::seconds timeout) {
  constexpr std::chrono::milliseconds kRecheck{10};
  constexpr std::chrono::microseconds kNap{200};
  auto until = std::chrono::steady_clock::now() + timeout;
  bool sentUnread = false; // a frame waits while the reply is unread
  while (true) {
    int queued = 0;
    if (::ioctl(fd, SIOCOUTQ, &queued) != 0 || queued == 0)
      return true;
    auto now = std::chrono::steady_clock::now();
    if (now >= until)
      return false;
    if (sentUnread) {
      std::this_thread::sleep_for(kNap); // poll would return at once
      continue;
    }
    auto wait = std::min<std::chrono::steady_clock::duration>(until - now, kRecheck);
    pollfd readable{fd, POLLIN, 0};
    sentUnread =
        ::poll(&readable, 1,
               static_cast<int>(
                   std::chrono::ceil<std::chrono::milliseconds>(wait).count())) > 0;
  }
}

void replyError(FramedSocket &socket, const absl::Status &status,
                std::string_view requestId) {
  grpc::Status mapped = toGrpcStatus(status, requestId);
  v1::LocalReply message;
  message.set_code(static_cast<int32_t>(mapped.error_code()));
  message.set_message(mapped.error_message());
  reply(socket, message);
}

} // namespace

absl::StatusOr<std::unique_ptr<LocalExecuteServer>>
LocalExecuteServer::start(const std::string &path, LocalSessions &sessions,
                          ExecutorService &executor,
                          std::chrono::milliseconds executeTimeout) {
  absl::StatusOr<std::pair<sockaddr_un, socklen_t>> address =
      socketAddress(path);
  RETURN_IF_ERROR(address.status());
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid())
    return absl::InternalError(
        absl::StrCat("local socket: socket: ", std::strerror(errno)));
  bool abstract = path[0] == '@';
  struct stat existing {};
  if (!abstract && ::lstat(path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode))
      return absl::FailedPreconditionError(absl::StrCat(
          "--local-socket '", path, "' exists and is not a socket"));
    // A socket a previous kilnd left behind; one a live kilnd serves is not
    // taken over.
    UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (probe.valid() &&
        ::connect(probe.get(), reinterpret_cast<sockaddr *>(&address->first),
                  address->second) == 0)
      return absl::FailedPreconditionError(absl::StrCat(
          "--local-socket '", path, "' is served by another process"));
    ::unlink(path.c_str());
  }
  if (::bind(listener.get(), reinterpret_cast<sockaddr *>(&address->first),
             address->second) != 0)
    return absl::UnavailableError(absl::StrCat(
        "--local-socket '", path, "': cannot bind: ", std::strerror(errno)));
  // Tickets admit callers, so any local user may connect (as to loopback).
  if (!abstract && ::chmod(path.c_str(), 0666) != 0)
    return absl::InternalError(absl::StrCat(
        "--local-socket '", path, "': chmod: ", std::strerror(errno)));
  if (::listen(listener.get(), 64) != 0)
    return absl::InternalError(absl::StrCat(
        "--local-socket '", path, "': listen: ", std::strerror(errno)));
  auto server = std::unique_ptr<LocalExecuteServer>(new LocalExecuteServer(
      std::move(listener), path, sessions, executor, executeTimeout));
  struct stat bound {};
  if (!abstract && ::lstat(path.c_str(), &bound) == 0) {
    server->fileDevice = bound.st_dev;
    server->fileInode = bound.st_ino;
  }
  return server;
}

LocalExecuteServer::LocalExecuteServer(UniqueFd listener, std::string path,
                                       LocalSessions &sessions,
                                       ExecutorService &executor,
                                       std::chrono::milliseconds executeTimeout)
    : listener(std::move(listener)), path(std::move(path)), sessions(sessions),
      executor(executor), executeTimeout(executeTimeout) {
  acceptor = std::thread([this] { acceptLoop(); });
}

LocalExecuteServer::~LocalExecuteServer() { stop(); }

void LocalExecuteServer::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping)
      return;
    stopping = true;
    for (Connection &connection : connections)
      connection.socket->shutdown();
  }
  // Wakes the blocked accept().
  ::shutdown(listener.get(), SHUT_RDWR);
  if (acceptor.joinable())
    acceptor.join();
  // No thread adds connections now.
  for (Connection &connection : connections)
    if (connection.thread.joinable())
      connection.thread.join();
  struct stat current {};
  if (path[0] != '@' && ::lstat(path.c_str(), &current) == 0 &&
      current.st_dev == fileDevice && current.st_ino == fileInode)
    ::unlink(path.c_str());
}

void LocalExecuteServer::beginShutdown() {
  shuttingDown = true;
  // Wakes the blocked accept(); connections notice before their next frame.
  ::shutdown(listener.get(), SHUT_RDWR);
}

void LocalExecuteServer::acceptLoop() {
  while (true) {
    UniqueFd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) {
      int error = errno;
      if (error == EINTR || error == ECONNABORTED)
        continue;
      if (shuttingDown)
        return;
      if (error == EMFILE || error == ENFILE || error == ENOBUFS ||
          error == ENOMEM) {
        // Out of descriptors or memory for now: the pending connections
        // wait in the backlog.
        spdlog::warn("local socket {}: accept: {}; retrying", path,
                     std::strerror(error));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (!stopping)
        spdlog::error("local socket {}: accept: {}; no more local clients",
                      path, std::strerror(error));
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping || shuttingDown)
      return;
    // Threads that finished are joined here, so they never pile up.
    for (auto it = connections.begin(); it != connections.end();) {
      if (!it->done.load()) {
        ++it;
        continue;
      }
      it->thread.join();
      it = connections.erase(it);
    }
    auto socket = std::make_unique<FramedSocket>(std::move(client));
    if (connections.size() >= kMaxConnections) {
      replyError(*socket,
                 absl::ResourceExhaustedError(absl::StrCat(
                     "kilnd serves ", kMaxConnections,
                     " local connections at once; use gRPC or retry")),
                 "");
      continue;
    }
    Connection &connection = connections.emplace_back();
    connection.socket = std::move(socket);
    connection.thread = std::thread([this, &connection] {
      serve(connection);
      connection.socket->shutdown();
      connection.done = true;
    });
  }
}

bool LocalExecuteServer::admit(FramedSocket &socket) {
  // The whole hello within kHelloTimeout, small and with no files: a peer
  // without a ticket holds no thread, memory or descriptors for long.
  socket.limitFrames(kMaxHelloBytes, 0);
  socket.setReceiveDeadline(std::chrono::steady_clock::now() + kHelloTimeout);
  std::string bytes;
  std::vector<UniqueFd> files;
  if (!socket.receive(bytes, files).ok())
    return false;
  v1::LocalClientFrame frame;
  if (!frame.ParseFromString(bytes) || !frame.has_hello()) {
    replyError(socket,
               absl::InvalidArgumentError(
                   "the local socket's first frame must be a LocalHello "
                   "(kiln.v1.LocalClientFrame) with no files"),
               "");
    return false;
  }
  if (absl::Status admitted = sessions.redeem(frame.hello().ticket());
      !admitted.ok()) {
    replyError(socket, admitted, "");
    return false;
  }
  v1::LocalReply welcome;
  welcome.set_daemon_id(sessions.daemonId());
  reply(socket, welcome);
  socket.limitFrames(kMaxClientFrameBytes, FramedSocket::kMaxFiles);
  return true;
}

void LocalExecuteServer::serve(Connection &connection) {
  FramedSocket &socket = *connection.socket;
  // A reply the client does not read fails after kReplyTimeout.
  timeval sendLimit{static_cast<time_t>(kReplyTimeout.count()), 0};
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_SNDTIMEO, &sendLimit,
               sizeof sendLimit);
  if (!admit(socket))
    return;
  std::string bytes;
  std::vector<UniqueFd> files;
  v1::LocalClientFrame frame;
  while (true) {
    // One reply in flight: the next frame is taken once the client has
    // read the last reply (its files included).
    if (!awaitReplyRead(socket.fd(), kReplyTimeout))
      return;
    socket.setReceiveDeadline(std::chrono::steady_clock::now() + kIdleTimeout);
    absl::Status received = socket.receive(bytes, files);
    if (!received.ok()) {
      if (!absl::IsUnavailable(received) && !absl::IsDeadlineExceeded(received))
        spdlog::warn("local socket: {}; closing the connection",
                     std::string(received.message()));
      return;
    }
    if (shuttingDown) {
      replyError(socket,
                 absl::UnavailableError("kilnd is shutting down; retry on "
                                        "another kilnd or after its restart"),
                 "");
      return;
    }
    if (!frame.ParseFromString(bytes) || !frame.has_execute()) {
      replyError(socket,
                 absl::InvalidArgumentError(
                     "after the hello, the local socket takes LocalExecute "
                     "frames (kiln.v1.LocalClientFrame.execute)"),
                 "");
      return;
    }
    execute(socket, *frame.mutable_execute(), files);
  }
}

void LocalExecuteServer::execute(FramedSocket &socket, v1::LocalExecute &call,
                                 std::vector<UniqueFd> &files) {
  auto start = ExecutorService::Clock::now();
  std::string requestId = requestIdOrNew(call.request_id());
  ScopedRequestId logContext(requestId);
  if (call.exchange_inputs_size() != 0 || call.exchange_output_bytes() != 0) {
    replyError(socket,
               absl::InvalidArgumentError(
                   "exchange buffers belong to direct channels; kilnd's "
                   "local socket takes inputs inline or in sealed memfds"),
               requestId);
    return;
  }
  // Closed when this returns, after the reply: the client closes its
  // descriptors once sent, so this is the last reference and freeing the
  // pages is off the call's path.
  absl::StatusOr<IndexedFiles> paired = pairFrameFiles(
      call.file_inputs(), call.request().inputs_size(), files);
  if (!paired.ok()) {
    replyError(socket, paired.status(), requestId);
    return;
  }
  TensorFiles inputFiles = *std::move(paired);
  auto timeout =
      call.timeout_ms() > 0
          ? std::min<std::chrono::milliseconds>(
                std::chrono::milliseconds(call.timeout_ms()), kMaxCallTimeout)
          : executeTimeout;
  auto deadline = start + timeout;
  v1::LocalReply answer;
  TensorFiles outputFiles;
  // The agent gets one end with the task; the client the other, if the
  // agent serves it. Both of kilnd's descriptors close after the reply.
  std::optional<std::pair<UniqueFd, UniqueFd>> channel;
  DirectChannelOffer offer;
  if (call.open_direct()) {
    if (absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair = FramedSocket::pair();
        pair.ok()) {
      channel = *std::move(pair);
      offer.agentEnd = channel->first.get();
    } else {
      spdlog::warn("local socket: no direct channel: {}",
                   std::string(pair.status().message()));
    }
  }
  absl::Status status = executor.run(
      *call.mutable_request(), inputFiles, start, deadline,
      *answer.mutable_response(), &outputFiles, channel ? &offer : nullptr);
  if (!status.ok()) {
    replyError(socket, status, requestId);
    return;
  }
  std::vector<int> fds;
  for (const auto &[index, file] : outputFiles) {
    answer.add_file_outputs(static_cast<uint32_t>(index));
    fds.push_back(file.get());
  }
  // Past the frame's file limit the channel is dropped (the agent's thread
  // ends when kilnd's end closes).
  if (offer.opened && fds.size() < FramedSocket::kMaxFiles) {
    answer.set_direct_channel(true);
    fds.push_back(channel->second.get());
  }
  reply(socket, answer, fds);
}

} // namespace kiln::server
