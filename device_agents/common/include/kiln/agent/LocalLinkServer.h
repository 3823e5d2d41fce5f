//===- LocalLinkServer.h - tasks from kilnd over the local link -----------===//
//
// This file declares LocalLinkServer: the agent's end of the local link
// kilnd makes when it starts an agent itself (--local-link-fd). Tasks come
// as kiln.worker.LocalTask frames whose blob inputs are the store's files,
// mapped instead of fetched; results go back as LocalResult frames with
// large outputs in memfds instead of uploaded blobs. Registration and
// heartbeats stay on Agent.Connect. A task may bring a direct channel for
// its client (DirectChannels).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/DirectChannels.h"
#include "kiln/agent/RecordCache.h"
#include "kiln/agent/TaskRunner.h"

#include "kiln/common/FramedSocket.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

namespace kiln::agent {

class LocalLinkServer {
public:
  /// Serves tasks from `socket` on `threads` threads started here (at most
  /// that many at once), through `runner` (which must outlive the server).
  /// Leader and followers: one thread at a time reads; the one that
  /// received a frame hands the reading on and runs the task itself, so no
  /// task waits for another thread to wake. `onEnd` runs once (on a
  /// server thread) if the link ends while the server is not being
  /// destroyed: kilnd closed it or it broke, and no task can come.
  /// Direct channels poll as `directPoll` says (DirectChannels).
  LocalLinkServer(UniqueFd socket, TaskRunner &runner, unsigned threads,
                  std::function<void()> onEnd, DirectPoll directPoll = {});
  /// Stops reading and waits for the tasks already running.
  ~LocalLinkServer();

private:
  void serveLoop();
  void serve(const std::string &frame, std::vector<UniqueFd> &files);

  FramedSocket link;
  TaskRunner &runner;
  RecordCache records;
  /// Tasks run at once, the link's and the direct channels' together.
  std::counting_semaphore<> runSlots;
  /// Sockets kilnd handed out with a task (LocalTask.direct_channel).
  DirectChannels directChannels;
  std::function<void()> onEnd;
  std::atomic<bool> stopping{false};
  std::atomic<bool> ended{false}; // a thread reported the link's end
  std::mutex readMutex; // held by the one thread reading the link
  std::vector<std::thread> servers;
};

} // namespace kiln::agent
