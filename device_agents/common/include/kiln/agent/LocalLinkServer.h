//===- LocalLinkServer.h - tasks from kilnd over the local link -----------===//
//
// This file declares LocalLinkServer: the agent's end of the local link
// kilnd makes when it starts an agent itself (--local-link-fd). Tasks come
// as kiln.worker.LocalTask frames whose blob inputs are the store's files,
// mapped instead of fetched; results go back as LocalResult frames with
// large outputs in memfds instead of uploaded blobs. Registration and
// heartbeats stay on Agent.Connect.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/TaskRunner.h"

#include "kiln/common/FramedSocket.h"
#include "kiln/common/WorkerPool.h"

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace kiln::agent {

class LocalLinkServer {
public:
  /// Serves tasks from `socket` on `threads` workers, through `runner`
  /// (which must outlive the server), from a reader thread started here.
  /// `onEnd` runs (on that thread) if the link ends while the server is not
  /// being destroyed: kilnd closed it or it broke, and no task can come.
  LocalLinkServer(UniqueFd socket, TaskRunner &runner, unsigned threads,
                  std::function<void()> onEnd);
  /// Stops reading and waits for the tasks already running.
  ~LocalLinkServer();

private:
  void readLoop();
  void serve(std::shared_ptr<std::string> frame,
             std::shared_ptr<std::vector<UniqueFd>> files);

  FramedSocket link;
  TaskRunner &runner;
  std::function<void()> onEnd;
  std::atomic<bool> stopping{false};
  std::unique_ptr<WorkerPool> pool;
  std::thread reader;
};

} // namespace kiln::agent
