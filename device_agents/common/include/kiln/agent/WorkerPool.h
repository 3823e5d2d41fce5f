//===- WorkerPool.h - a fixed pool of task threads ------------------------===//
//
// This file declares WorkerPool, the threads tasks run on, so that the stream
// reader and the heartbeat thread never wait for a long-running executable.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::agent {

/// Runs submitted jobs on `threads` threads, first in first out. The
/// destructor finishes the queued jobs and joins.
class WorkerPool {
public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  void submit(std::function<void()> job);

private:
  void work();

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
  std::vector<std::thread> threads;
};

} // namespace kiln::agent
