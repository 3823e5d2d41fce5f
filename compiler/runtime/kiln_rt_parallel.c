/*===- kiln_rt_parallel.c - parallel loops on the loading process's threads -===
 *
 * Code generated with parallel loops calls kiln_rt_parallel_for with an
 * outlined loop body (kiln-outline-parallel-loops). The artifact carries no
 * thread library: the process that loads it may hand it a thread pool through
 * the exported kiln_rt_set_thread_pool, and until one does (or when the
 * loader is not Kiln's cpu agent: a test harness, ctypes) every parallel loop
 * runs on the calling thread. Each artifact keeps its own pool pointer
 * (hidden symbols), so two loaded artifacts never share state.
 *
 * The loader's pool is a `struct kiln_rt_thread_pool` it keeps alive while
 * the artifact is loaded. Its parallel_for(pool, task, context, count) must
 * call task(context, begin, end) over disjoint ranges that together cover
 * [0, count) exactly once, and return only after every call has returned.
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>

typedef void (*kiln_rt_task)(void *context, int64_t begin, int64_t end);

struct kiln_rt_thread_pool {
  void (*parallel_for)(struct kiln_rt_thread_pool *pool, kiln_rt_task task,
                       void *context, int64_t count);
};

static struct kiln_rt_thread_pool *installed_pool;

/* Installs `pool` for every later call (null: back to the calling thread).
 * The loader calls it right after loading, before any call into the
 * artifact. */
__attribute__((visibility("default"))) void
kiln_rt_set_thread_pool(struct kiln_rt_thread_pool *pool) {
  __atomic_store_n(&installed_pool, pool, __ATOMIC_RELEASE);
}

__attribute__((visibility("hidden"))) void
kiln_rt_parallel_for(kiln_rt_task task, void *context, int64_t count) {
  if (count <= 0)
    return;
  struct kiln_rt_thread_pool *pool =
      __atomic_load_n(&installed_pool, __ATOMIC_ACQUIRE);
  if (pool && count > 1)
    pool->parallel_for(pool, task, context, count);
  else
    task(context, 0, count);
}
