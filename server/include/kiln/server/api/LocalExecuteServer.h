//===- LocalExecuteServer.h - Execute over kilnd's local socket -----*- C++ -*-===//
//
// This file declares LocalExecuteServer: Execute for clients on kilnd's own
// machine, over a Unix socket with tensors in sealed memfds passed alongside
// each frame (FramedSocket, SCM_RIGHTS) instead of inside gRPC messages.
// A big tensor crosses from the client to the agent and back without a copy
// in kilnd, and a call costs a frame each way instead of an HTTP/2 exchange.
//
// A connection first presents a ticket from OpenLocalSession (LocalSessions),
// then sends LocalExecutes one at a time. Each runs through
// ExecutorService::run, the path gRPC's Execute takes, so validation,
// scheduling, metrics and logs are the same.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/FramedSocket.h"
#include "kiln/server/api/ExecutorService.h"
#include "kiln/server/api/LocalSessions.h"

#include "absl/status/statusor.h"

#include <atomic>
#include <chrono>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::server {

class LocalExecuteServer {
public:
  /// Connections served at once; more are answered RESOURCE_EXHAUSTED.
  static constexpr size_t kMaxConnections = 128;
  /// The largest frame a client may send (tensor bytes travel in files).
  static constexpr uint64_t kMaxClientFrameBytes = uint64_t{8} << 20;
  /// How long a new connection has to present its ticket.
  static constexpr std::chrono::seconds kHelloTimeout{10};

  /// Listens on `path`: a filesystem path (an old socket there is
  /// replaced; the file is mode 0666, as tickets admit callers) or '@name',
  /// an abstract socket. `executeTimeout` bounds calls that set none.
  static absl::StatusOr<std::unique_ptr<LocalExecuteServer>>
  start(const std::string &path, LocalSessions &sessions,
        ExecutorService &executor, std::chrono::milliseconds executeTimeout);

  /// Stops accepting, ends every connection and joins their threads.
  ~LocalExecuteServer();
  void stop();

private:
  struct Connection {
    std::unique_ptr<FramedSocket> socket;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  LocalExecuteServer(UniqueFd listener, std::string path,
                     LocalSessions &sessions, ExecutorService &executor,
                     std::chrono::milliseconds executeTimeout);
  void acceptLoop();
  void serve(Connection &connection);
  /// Answers one LocalExecute frame.
  void execute(FramedSocket &socket, v1::LocalExecute &call,
               std::vector<UniqueFd> &files);

  UniqueFd listener;
  std::string path;
  LocalSessions &sessions;
  ExecutorService &executor;
  std::chrono::milliseconds executeTimeout;
  std::thread acceptor;
  std::mutex mutex;
  bool stopping = false;              // guarded by mutex
  std::list<Connection> connections;  // guarded by mutex
};

} // namespace kiln::server
