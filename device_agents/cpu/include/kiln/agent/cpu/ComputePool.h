//===- ComputePool.h - the threads a cpu agent lends to compiled code -----===//
//
// This file declares ComputePool, which runs the parallel loops of the
// artifacts the cpu agent loads (kiln_rt_parallel_for in the target runtime,
// compiler/runtime/kiln_rt_parallel.c) on threads the agent owns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::agent {

/// A fixed set of worker threads that split the iterations of parallel
/// loops with the thread that calls parallelFor. Several callers (the
/// agent's task threads) may run loops at once; each loop finishes before
/// its parallelFor returns.
class ComputePool {
public:
  /// One range of a loop: iterations [begin, end).
  using Task = void (*)(void *context, int64_t begin, int64_t end);

  /// A pool of `threads` threads in all: the caller and `threads - 1`
  /// workers (1: every loop runs on the calling thread).
  explicit ComputePool(int threads);
  ~ComputePool();
  ComputePool(const ComputePool &) = delete;
  ComputePool &operator=(const ComputePool &) = delete;

  int threads() const { return static_cast<int>(workers.size()) + 1; }

  /// Calls task(context, begin, end) over disjoint ranges covering
  /// [0, count) once each, on the caller and the workers, and returns when
  /// all have returned.
  void parallelFor(Task task, void *context, int64_t count);

  /// Keeps the workers awake (spinning, yielding to other runnable threads)
  /// from construction to destruction: a call into generated code runs its
  /// parallel loops back to back, and a worker woken from sleep for each
  /// call's first loop costs tens of microseconds. Between calls they sleep.
  class Call {
  public:
    explicit Call(ComputePool &pool);
    ~Call();
    Call(const Call &) = delete;
    Call &operator=(const Call &) = delete;

  private:
    ComputePool &pool;
  };

  /// The pool as the artifact runtime's `struct kiln_rt_thread_pool *`, for
  /// its exported kiln_rt_set_thread_pool.
  void *runtimeHandle() { return &abi; }

private:
  struct Loop;
  /// Layout of the runtime's struct kiln_rt_thread_pool, then the pool.
  struct RuntimeAbi {
    void (*parallelFor)(RuntimeAbi *pool, Task task, void *context,
                        int64_t count);
    ComputePool *self;
  };

  static void runtimeParallelFor(RuntimeAbi *pool, Task task, void *context,
                                 int64_t count);
  /// Runs chunks of `loop` until none is left unclaimed.
  void runChunks(Loop &loop);
  Loop *claimableLoop();
  void work();

  RuntimeAbi abi{&ComputePool::runtimeParallelFor, this};
  std::mutex mutex;
  std::condition_variable workAvailable;
  std::condition_variable loopFinished;
  std::deque<Loop *> loops; // guarded by mutex
  /// Loops posted so far: what spinning workers watch.
  std::atomic<uint64_t> posted{0};
  /// Calls in flight (Call objects alive): workers do not sleep meanwhile.
  std::atomic<int> calls{0};
  bool stopping = false;    // guarded by mutex
  std::vector<std::thread> workers;
};

} // namespace kiln::agent
