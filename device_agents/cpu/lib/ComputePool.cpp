//===- ComputePool.cpp - the threads a cpu agent lends to compiled code ---===//
//
// This file implements ComputePool: loops are queued, split into chunks that
// the caller and the workers claim with an atomic counter, and retired by
// their caller once every chunk has run and no worker still holds them.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/cpu/ComputePool.h"

#include <algorithm>
#include <chrono>

namespace kiln::agent {
namespace {

/// How long a thread spins for the next loop (a worker) or for the last
/// chunks of its own (a caller) before it sleeps: a model's loops come a few
/// microseconds apart, and a futex wake-up costs tens of them.
constexpr std::chrono::microseconds kSpin(50);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until `done()` or kSpin has passed; whether `done()` held.
template <typename Predicate> bool spinUntil(Predicate done) {
  auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done())
      return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline)
      return false;
    relax();
  }
}

} // namespace

/// One parallelFor in flight; lives on its caller's stack.
struct ComputePool::Loop {
  Task task;
  void *context;
  int64_t count;
  int64_t chunks;
  std::atomic<int64_t> nextChunk{0};
  std::atomic<int64_t> chunksDone{0};
  int holders = 0; // workers running its chunks; guarded by mutex
};

ComputePool::ComputePool(int threads) {
  for (int i = 1; i < threads; ++i)
    workers.emplace_back([this] { work(); });
}

ComputePool::~ComputePool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  workAvailable.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

ComputePool::Call::Call(ComputePool &pool) : pool(pool) {
  if (pool.workers.empty())
    return;
  // Workers sleep only while no call is in flight: only the first call wakes
  // them. Taking the lock orders this with a worker's predicate check.
  if (pool.calls.fetch_add(1, std::memory_order_acq_rel) != 0)
    return;
  { std::lock_guard<std::mutex> lock(pool.mutex); }
  pool.workAvailable.notify_all();
}

ComputePool::Call::~Call() {
  if (!pool.workers.empty())
    pool.calls.fetch_sub(1, std::memory_order_acq_rel);
}

void ComputePool::runtimeParallelFor(RuntimeAbi *pool, Task task,
                                     void *context, int64_t count) {
  pool->self->parallelFor(task, context, count);
}

void ComputePool::parallelFor(Task task, void *context, int64_t count) {
  if (count <= 0)
    return;
  if (workers.empty() || count == 1) {
    task(context, 0, count);
    return;
  }
  // A few chunks per thread: a thread the host deschedules holds up one
  // small chunk, not a whole share.
  Loop loop{task, context, count,
            std::min<int64_t>(count, 4 * static_cast<int64_t>(threads()))};
  {
    std::lock_guard<std::mutex> lock(mutex);
    loops.push_back(&loop);
  }
  posted.fetch_add(1, std::memory_order_release);
  workAvailable.notify_all();
  runChunks(loop);
  spinUntil([&] {
    return loop.chunksDone.load(std::memory_order_acquire) == loop.chunks;
  });
  std::unique_lock<std::mutex> lock(mutex);
  loopFinished.wait(lock, [&] {
    return loop.chunksDone.load(std::memory_order_acquire) == loop.chunks &&
           loop.holders == 0;
  });
  loops.erase(std::find(loops.begin(), loops.end(), &loop));
}

void ComputePool::runChunks(Loop &loop) {
  for (;;) {
    int64_t chunk = loop.nextChunk.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= loop.chunks)
      return;
    // Chunk i covers [i * count / chunks, (i + 1) * count / chunks).
    int64_t begin = chunk * loop.count / loop.chunks;
    int64_t end = (chunk + 1) * loop.count / loop.chunks;
    loop.task(loop.context, begin, end);
    if (loop.chunksDone.fetch_add(1, std::memory_order_acq_rel) + 1 ==
        loop.chunks) {
      // Taking the lock orders this with the caller's predicate check.
      { std::lock_guard<std::mutex> lock(mutex); }
      loopFinished.notify_all();
    }
  }
}

ComputePool::Loop *ComputePool::claimableLoop() {
  for (Loop *loop : loops)
    if (loop->nextChunk.load(std::memory_order_relaxed) < loop->chunks)
      return loop;
  return nullptr;
}

void ComputePool::work() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    Loop *loop = claimableLoop();
    if (!loop && !stopping) {
      // Spin (unlocked) for the next loop: in kSpin windows while a call is
      // in flight (yielding between them, so a busy host's other threads
      // still run), and one more window after it. Then sleep.
      uint64_t seen = posted.load(std::memory_order_acquire);
      auto newLoop = [&] {
        return posted.load(std::memory_order_acquire) != seen;
      };
      lock.unlock();
      while (!spinUntil(newLoop) && calls.load(std::memory_order_acquire) > 0)
        std::this_thread::yield();
      lock.lock();
      workAvailable.wait(lock, [&] {
        return stopping || (loop = claimableLoop()) != nullptr ||
               calls.load(std::memory_order_acquire) > 0;
      });
      if (!loop && !stopping)
        continue; // woken by a call: spin for its loops
    }
    if (stopping)
      return;
    // Holding the loop keeps its caller from retiring it while this thread
    // may still touch its counters.
    ++loop->holders;
    lock.unlock();
    runChunks(*loop);
    lock.lock();
    if (--loop->holders == 0)
      loopFinished.notify_all();
  }
}

} // namespace kiln::agent
