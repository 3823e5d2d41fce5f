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

#include <sys/types.h>

namespace kiln::server {

class LocalExecuteServer {
public:
  /// Connections served at once; more are answered RESOURCE_EXHAUSTED.
  static constexpr size_t kMaxConnections = 128;
  /// The largest frame a client may send (tensor bytes travel in files).
  static constexpr uint64_t kMaxClientFrameBytes = uint64_t{8} << 20;
  /// The largest hello (a ticket; no files).
  static constexpr uint64_t kMaxHelloBytes = 4096;
  /// How long a new connection has to present its ticket, all of it.
  static constexpr std::chrono::seconds kHelloTimeout{10};
  /// A connection with no frame for this long is closed.
  static constexpr std::chrono::minutes kIdleTimeout{10};
  /// How long a reply may wait for the client to read it (and the previous
  /// one to be read before the next frame is taken: one reply in flight).
  static constexpr std::chrono::seconds kReplyTimeout{30};
  /// The longest deadline a client may ask for.
  static constexpr std::chrono::hours kMaxCallTimeout{24};

  /// Listens on `path`: a filesystem path (an old socket there is
  /// replaced unless a live process serves it; the file is mode 0666, as
  /// tickets admit callers) or '@name',
  /// an abstract socket. `executeTimeout` bounds calls that set none.
  static absl::StatusOr<std::unique_ptr<LocalExecuteServer>>
  start(const std::string &path, LocalSessions &sessions,
        ExecutorService &executor, std::chrono::milliseconds executeTimeout);

  /// Stops accepting, ends every connection and joins their threads.
  ~LocalExecuteServer();
  void stop();
  /// Stops accepting connections and frames; calls in flight finish
  /// (kilnd's shutdown begins here, stop() ends it).
  void beginShutdown();

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
  /// Reads the hello and answers it; false when the connection is done.
  bool admit(FramedSocket &socket);
  /// Answers one LocalExecute frame.
  void execute(FramedSocket &socket, v1::LocalExecute &call,
               std::vector<UniqueFd> &files);

  UniqueFd listener;
  std::string path;
  LocalSessions &sessions;
  ExecutorService &executor;
  std::chrono::milliseconds executeTimeout;
  std::thread acceptor;
  /// The socket file's identity (path sockets): removed on stop only if a
  /// later kilnd has not bound the path since.
  dev_t fileDevice = 0;
  ino_t fileInode = 0;
  std::atomic<bool> shuttingDown{false};
  std::mutex mutex;
  bool stopping = false;              // guarded by mutex
  std::list<Connection> connections;  // guarded by mutex
};

} // namespace kiln::server
