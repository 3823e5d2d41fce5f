//===- ComputePoolTest.cpp - the cpu agent's pool for parallel loops ------===//
//
// This file tests that ComputePool covers every iteration exactly once, uses
// its workers, serves several callers at once, and parses its flag.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/cpu/ComputePool.h"
#include "kiln/agent/AgentMain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace kiln::agent {
namespace {

/// Counts how often each iteration ran and which threads ran them.
struct Coverage {
  explicit Coverage(int64_t count) : hits(count) {}
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::chrono::microseconds busyPerRange{0};

  static void task(void *context, int64_t begin, int64_t end) {
    auto *self = static_cast<Coverage *>(context);
    ASSERT_LE(0, begin);
    ASSERT_LT(begin, end);
    ASSERT_LE(end, static_cast<int64_t>(self->hits.size()));
    for (int64_t i = begin; i < end; ++i)
      self->hits[i].fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(self->mutex);
      self->threads.insert(std::this_thread::get_id());
    }
    auto until = std::chrono::steady_clock::now() + self->busyPerRange;
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  void expectEachOnce() {
    for (size_t i = 0; i < hits.size(); ++i)
      ASSERT_EQ(hits[i].load(), 1) << "iteration " << i;
  }
};

TEST(ComputePoolTest, EveryIterationRunsExactlyOnce) {
  for (int threads : {1, 2, 3, 8})
    for (int64_t count : {1, 2, 3, 7, 64, 1000, 4099}) {
      ComputePool pool(threads);
      Coverage coverage(count);
      pool.parallelFor(&Coverage::task, &coverage, count);
      SCOPED_TRACE(testing::Message() << threads << " threads, " << count);
      coverage.expectEachOnce();
    }
}

TEST(ComputePoolTest, NothingRunsForAnEmptyLoop) {
  ComputePool pool(4);
  Coverage coverage(0);
  pool.parallelFor(&Coverage::task, &coverage, 0);
  EXPECT_TRUE(coverage.threads.empty());
}

TEST(ComputePoolTest, WorkersShareTheIterations) {
  ComputePool pool(4);
  ASSERT_EQ(pool.threads(), 4);
  Coverage coverage(64);
  coverage.busyPerRange = std::chrono::microseconds(2000);
  pool.parallelFor(&Coverage::task, &coverage, 64);
  coverage.expectEachOnce();
  EXPECT_GE(coverage.threads.size(), 2u)
      << "16 chunks of 2 ms ran on one thread";
  EXPECT_EQ(coverage.threads.count(std::this_thread::get_id()), 1u)
      << "the caller takes part";
}

TEST(ComputePoolTest, OneThreadRunsTheLoopOnTheCaller) {
  ComputePool pool(1);
  Coverage coverage(100);
  pool.parallelFor(&Coverage::task, &coverage, 100);
  coverage.expectEachOnce();
  EXPECT_EQ(coverage.threads,
            std::set<std::thread::id>{std::this_thread::get_id()});
}

/// `callerCount` threads each run `rounds` loops of varying sizes on `pool`;
/// returns how many iterations did not run exactly once.
int concurrentMisses(ComputePool &pool, int callerCount, int rounds) {
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < callerCount; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < rounds; ++round) {
        int64_t count = 1 + (c * 37 + round * 11) % 300;
        Coverage coverage(count);
        pool.parallelFor(&Coverage::task, &coverage, count);
        for (auto &hit : coverage.hits)
          if (hit.load() != 1)
            failures.fetch_add(1);
      }
    });
  for (std::thread &caller : callers)
    caller.join();
  return failures.load();
}

TEST(ComputePoolTest, ConcurrentCallersEachGetTheirWholeLoop) {
  ComputePool pool(3);
  EXPECT_EQ(concurrentMisses(pool, 4, 200), 0);
}

TEST(ComputePoolTest, LoopsBackToBackAndAfterPausesCoverEverything) {
  ComputePool pool(3);
  for (int round = 0; round < 3; ++round) {
    for (int64_t count : {5, 64, 1000}) {
      Coverage coverage(count);
      pool.parallelFor(&Coverage::task, &coverage, count);
      coverage.expectEachOnce();
    }
    // A pause between loops (serial code in between, or the next call),
    // long enough for the team to stop spinning and sleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // The sleeping team wakes and helps. On a loaded machine (ctest -j2 on
    // two cores) a worker may not be scheduled within one 100 ms loop, so
    // up to five loops may pass before one has had two threads; a team that
    // never wakes fails all five.
    size_t mostThreads = 0;
    for (int attempt = 0; attempt < 5 && mostThreads < 2; ++attempt) {
      Coverage coverage(200);
      coverage.busyPerRange = std::chrono::microseconds(500);
      pool.parallelFor(&Coverage::task, &coverage, 200);
      coverage.expectEachOnce();
      mostThreads = std::max(mostThreads, coverage.threads.size());
    }
    EXPECT_GE(mostThreads, 2u);
  }
}

/// What the jobs of ComputePool::run saw.
struct RunLog {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> iterations{0};

  static void job(void *context) {
    auto &log = *static_cast<RunLog *>(context);
    if (log.inside.fetch_add(1) != 0)
      log.overlaps.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(log.mutex);
      log.threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    log.inside.fetch_sub(1);
  }
};

TEST(ComputePoolTest, RunsTakeTurnsOnOneMasterThread) {
  // libgomp keeps a team per thread that starts regions: every caller's
  // work must start from the same thread, never two at once.
  ComputePool pool(2);
  RunLog log;
  std::vector<std::thread> callers;
  std::set<std::thread::id> callerIds;
  std::mutex callerMutex;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      {
        std::lock_guard<std::mutex> lock(callerMutex);
        callerIds.insert(std::this_thread::get_id());
      }
      for (int i = 0; i < 20; ++i)
        pool.run(&RunLog::job, &log);
    });
  for (std::thread &caller : callers)
    caller.join();
  EXPECT_EQ(log.overlaps.load(), 0);
  ASSERT_EQ(log.threads.size(), 1u);
  EXPECT_FALSE(callerIds.count(*log.threads.begin()));
}

TEST(ComputePoolTest, OneThreadRunsOnTheCaller) {
  ComputePool pool(1);
  RunLog log;
  pool.run(&RunLog::job, &log);
  EXPECT_EQ(log.threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ComputePoolTest, LoopsInsideRunCoverEverything) {
  ComputePool pool(3);
  struct Job {
    ComputePool *pool;
    bool ok = true;
  } job{&pool};
  pool.run(
      [](void *context) {
        auto &job = *static_cast<Job *>(context);
        for (int64_t count : {1, 7, 300, 4099}) {
          Coverage coverage(count);
          job.pool->parallelFor(&Coverage::task, &coverage, count);
          for (auto &hit : coverage.hits)
            job.ok = job.ok && hit.load() == 1;
        }
      },
      &job);
  EXPECT_TRUE(job.ok);
}

TEST(ComputePoolTest, ParsesItsThreadCountFlagAsTaskThreadsIs) {
  absl::StatusOr<int> automatic = parseThreadCount("auto");
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_GE(*automatic, 1);
  EXPECT_EQ(*parseThreadCount("6"), 6);
  for (const char *bad : {"0", "-2", "1025", "two", ""}) {
    absl::StatusOr<int> parsed = parseThreadCount(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("auto"), std::string::npos);
  }
}

} // namespace
} // namespace kiln::agent
