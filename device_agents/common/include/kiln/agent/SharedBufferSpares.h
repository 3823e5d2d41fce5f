//===- SharedBufferSpares.h - output memfds made ahead of the call -*- C++ -*-===//
//
// This file declares SharedBufferSpares: memfd buffers, their pages already
// allocated, zeroed and mapped, that a background thread makes between
// calls for the large outputs an executable writes in place (and the agent
// then hands to its caller). Without them the executable's first write to
// each page of a fresh memfd faults: for a 4 MiB output that is ~1.5 ms of a
// 13 ms 1024^3 matmul on a 2-core VM (docs/architecture.md), paid inside
// the run, on the compute threads, under the shmem lock.
//
// A call that takes a buffer of some size asks for another of that size, so
// the spares follow the calls: the second call of a model finds its outputs
// ready. Spares are bounded by a byte budget (the least recently asked size
// goes first) and dropped after a minute unasked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AlignedBuffer.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::agent {

class SharedBufferSpares {
public:
  /// Smaller outputs get no spare: few pages, few faults.
  static constexpr int64_t kMinBytes = int64_t{256} << 10;
  /// Spare bytes one agent keeps by default (--output-spare-bytes).
  static constexpr int64_t kDefaultBudgetBytes = int64_t{256} << 20;
  /// Spares of a size nobody asked for in this long are dropped.
  static constexpr std::chrono::seconds kIdleDrop{60};
  /// Spares (ready or being made) at most: each holds a descriptor, and
  /// the agent's limit of them is the usual 1024.
  static constexpr int kMaxSpares = 64;
  /// Budgets above this are taken as this (sums stay far from overflow).
  static constexpr int64_t kMaxBudgetBytes = int64_t{1} << 46;

  /// Keeps at most `budgetBytes` of spares (0: none; every take() is then
  /// allocateShared()). The thread starts with the first spare asked for.
  explicit SharedBufferSpares(int64_t budgetBytes = kDefaultBudgetBytes);
  /// Stops the thread; the spares are unmapped and closed.
  ~SharedBufferSpares();
  SharedBufferSpares(const SharedBufferSpares &) = delete;
  SharedBufferSpares &operator=(const SharedBufferSpares &) = delete;

  /// A zero-filled shared buffer of `size` bytes (> 0), as
  /// AlignedBuffer::allocateShared makes: a ready spare when there is one,
  /// else a fresh buffer. From kMinBytes, another of the size is then made
  /// in the background, budget permitting.
  absl::StatusOr<AlignedBuffer> take(int64_t size);

  /// Spares ready now, and their bytes.
  size_t readyCount() const;
  int64_t readyBytes() const;
  /// Takes that were served by a ready spare.
  uint64_t hits() const;
  /// Returns once every spare asked for so far is made (or given up).
  void waitIdle() const;

private:
  struct SizeState {
    std::vector<AlignedBuffer> ready;
    int pending = 0; // asked for, not made yet
    std::chrono::steady_clock::time_point lastAsked;
  };

  void refillLoop();
  /// Drops ready spares of sizes other than `keep`, least recently asked
  /// first, until one more spare of `needed` bytes fits the budget and
  /// kMaxSpares; whether it does.
  bool makeRoom(int64_t needed, int64_t keep);
  /// Moves the spares of sizes unasked for kIdleDrop to `doomed`.
  void dropIdle(std::chrono::steady_clock::time_point now);

  const int64_t budgetBytes;
  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  std::map<int64_t, SizeState> sizes;
  std::deque<int64_t> queue; // sizes to make, one entry per spare
  std::vector<AlignedBuffer> doomed; // dropped, for the thread to free
  int64_t readyTotal = 0;
  int64_t pendingTotal = 0;
  int spareCount = 0; // ready + pending
  uint64_t hitCount = 0;
  bool making = false;
  bool stopping = false;
  bool noThread = false; // starting it failed once: no spares
  std::thread thread;
};

} // namespace kiln::agent
