//===- ComputePool.cpp - the threads a cpu agent lends to compiled code ---===//
//
// This file implements ComputePool on GNU OpenMP's parallel regions: each
// loop is one region whose threads claim chunks of it with an atomic
// counter.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/cpu/ComputePool.h"

#include <algorithm>
#include <atomic>
#include <utility>

// libgomp's entry point for a parallel region, as GCC's `#pragma omp
// parallel` calls it: fn(data) on `threads` threads (the caller and its
// team), returning when all have returned. Declared here because clang here
// ships no OpenMP runtime of its own, and oneDNN already runs on libgomp.
extern "C" void GOMP_parallel(void (*fn)(void *), void *data,
                              unsigned threads, unsigned flags);

namespace kiln::agent {
namespace {

/// One parallelFor in flight; lives on its caller's stack.
struct Loop {
  ComputePool::Task task;
  void *context;
  int64_t count;
  int64_t chunks;
  std::atomic<int64_t> nextChunk{0};
};

/// Each thread of the region runs chunks until none is left: a thread the
/// host deschedules holds up one small chunk, not a whole share.
void runChunks(void *raw) {
  Loop &loop = *static_cast<Loop *>(raw);
  for (;;) {
    int64_t chunk = loop.nextChunk.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= loop.chunks)
      return;
    // Chunk i covers [i * count / chunks, (i + 1) * count / chunks).
    loop.task(loop.context, chunk * loop.count / loop.chunks,
              (chunk + 1) * loop.count / loop.chunks);
  }
}

} // namespace

ComputePool::ComputePool(int threads) : threadCount(std::max(threads, 1)) {
  if (threadCount > 1)
    masterThread = std::thread([this] { master(); });
}

ComputePool::~ComputePool() {
  if (!masterThread.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  masterThread.join();
}

void ComputePool::run(void (*fn)(void *context), void *context) {
  if (!masterThread.joinable()) {
    fn(context);
    return;
  }
  std::lock_guard<std::mutex> myTurn(turn);
  std::unique_lock<std::mutex> lock(mutex);
  job = fn;
  jobContext = context;
  jobDone = false;
  changed.notify_all();
  changed.wait(lock, [&] { return jobDone; });
}

void ComputePool::master() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    changed.wait(lock, [&] { return stopping || job != nullptr; });
    if (stopping)
      return;
    auto *fn = std::exchange(job, nullptr);
    void *context = jobContext;
    lock.unlock();
    fn(context);
    lock.lock();
    jobDone = true;
    changed.notify_all();
  }
}

void ComputePool::runtimeParallelFor(RuntimeAbi *pool, Task task,
                                     void *context, int64_t count) {
  pool->self->parallelFor(task, context, count);
}

void ComputePool::parallelFor(Task task, void *context, int64_t count) {
  if (count <= 0)
    return;
  if (threadCount == 1 || count == 1) {
    task(context, 0, count);
    return;
  }
  Loop loop{task, context, count,
            std::min<int64_t>(count, 4 * static_cast<int64_t>(threadCount))};
  int64_t threads = std::min<int64_t>(threadCount, count);
  GOMP_parallel(&runChunks, &loop, static_cast<unsigned>(threads), 0);
}

} // namespace kiln::agent
