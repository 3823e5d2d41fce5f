//===- WorkerPool.h - a fixed set of threads running queued jobs -*- C++ -*-===//
//
// This file declares WorkerPool: the daemon's bounded compile pool (gRPC
// threads never do unbounded heavy work) and an agent's task threads (the
// stream reader and heartbeat never wait for a running executable).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {

/// Runs submitted jobs on a fixed number of threads, in submission order.
/// The destructor runs every job already queued, then joins the threads, so
/// anyone waiting on a job's result is always answered.
class WorkerPool {
public:
  /// Starts `threads` workers (at least one).
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  /// Queues `job`; it runs on some worker thread.
  void submit(std::function<void()> job);

  /// Jobs waiting for a worker.
  size_t queued() const;

  /// Number of worker threads.
  size_t size() const { return workers.size(); }

private:
  void run();

  mutable std::mutex mutex;
  std::condition_variable wakeup;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
  std::vector<std::thread> workers;
};

} // namespace kiln
