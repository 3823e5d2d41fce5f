//===- ComputePool.h - the threads a cpu agent lends to compiled code -----===//
//
// This file declares ComputePool, which runs the parallel loops of the
// artifacts the cpu agent loads (kiln_rt_parallel_for in the target runtime,
// compiler/runtime/kiln_rt_parallel.c) on the agent's OpenMP threads: the
// same threads oneDNN's kernels run on (OneDnnKernels), so generated loops
// and library calls never compete for the cores.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace kiln::agent {

/// Splits the iterations of parallel loops over `threads` threads: the
/// calling thread and the workers of its OpenMP team (GNU libgomp, which
/// keeps one team per calling thread and lets it spin briefly between
/// loops, as a model's loops come microseconds apart). Each loop finishes
/// before its parallelFor returns.
///
/// The agent calls executables through run(), on the pool's own thread:
/// libgomp keeps a team per thread that starts parallel regions, and once
/// it manages more threads than the host has CPUs it stops spinning between
/// regions, so every region pays a futex wake-up (a 2-thread resnet18 ran
/// at 29 ms instead of 19 once two task threads had their own teams). One
/// master thread keeps one team of `threads`, and calls take turns on it.
class ComputePool {
public:
  /// One range of a loop: iterations [begin, end).
  using Task = void (*)(void *context, int64_t begin, int64_t end);

  /// A pool of `threads` threads in all, the caller included (1: every
  /// loop runs on the calling thread).
  explicit ComputePool(int threads);
  ComputePool(const ComputePool &) = delete;
  ComputePool &operator=(const ComputePool &) = delete;

  ~ComputePool();

  int threads() const { return threadCount; }

  /// Runs fn(context) on the pool's master thread (directly on the caller's
  /// when the pool has one thread) and returns when it has; one at a time.
  void run(void (*fn)(void *context), void *context);

  /// Calls task(context, begin, end) over disjoint ranges covering
  /// [0, count) once each, on the caller and its team, and returns when
  /// all have returned.
  void parallelFor(Task task, void *context, int64_t count);

  /// The pool as the artifact runtime's `struct kiln_rt_thread_pool *`, for
  /// its exported kiln_rt_set_thread_pool.
  void *runtimeHandle() { return &abi; }

private:
  /// Layout of the runtime's struct kiln_rt_thread_pool, then the pool.
  struct RuntimeAbi {
    void (*parallelFor)(RuntimeAbi *pool, Task task, void *context,
                        int64_t count);
    ComputePool *self;
  };

  static void runtimeParallelFor(RuntimeAbi *pool, Task task, void *context,
                                 int64_t count);

  void master();

  RuntimeAbi abi{&ComputePool::runtimeParallelFor, this};
  int threadCount;

  std::mutex turn; // one run() at a time
  std::mutex mutex;
  std::condition_variable changed;
  void (*job)(void *) = nullptr; // guarded by mutex
  void *jobContext = nullptr;    // guarded by mutex
  bool jobDone = false;          // guarded by mutex
  bool stopping = false;         // guarded by mutex
  std::thread masterThread;      // only with more than one thread
};

} // namespace kiln::agent
