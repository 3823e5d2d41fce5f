//===- WorkerPool.cpp - a fixed set of threads running queued jobs --------===//
//
// This file implements WorkerPool.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/WorkerPool.h"

#include <algorithm>

namespace kiln {

WorkerPool::WorkerPool(unsigned threads) {
  threads = std::max(1u, threads);
  workers.reserve(threads);
  for (unsigned i = 0; i < threads; ++i)
    workers.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wakeup.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

void WorkerPool::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    jobs.push_back(std::move(job));
  }
  wakeup.notify_one();
}

size_t WorkerPool::queued() const {
  std::lock_guard<std::mutex> lock(mutex);
  return jobs.size();
}

void WorkerPool::run() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wakeup.wait(lock, [this] { return stopping || !jobs.empty(); });
      if (jobs.empty())
        return; // stopping and drained
      job = std::move(jobs.front());
      jobs.pop_front();
    }
    job();
  }
}

} // namespace kiln
