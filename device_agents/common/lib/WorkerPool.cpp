//===- WorkerPool.cpp - a fixed pool of task threads ----------------------===//
//
// This file implements WorkerPool.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/WorkerPool.h"

#include <algorithm>

namespace kiln::agent {

WorkerPool::WorkerPool(int count) {
  for (int i = 0; i < std::max(count, 1); ++i)
    threads.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &thread : threads)
    thread.join();
}

void WorkerPool::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    jobs.push_back(std::move(job));
  }
  wake.notify_one();
}

void WorkerPool::work() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [this] { return stopping || !jobs.empty(); });
      if (jobs.empty())
        return;
      job = std::move(jobs.front());
      jobs.pop_front();
    }
    job();
  }
}

} // namespace kiln::agent
