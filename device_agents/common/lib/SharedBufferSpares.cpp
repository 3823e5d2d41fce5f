//===- SharedBufferSpares.cpp - output memfds made ahead of the call ------===//
//
// This file implements SharedBufferSpares with one background thread, in
// SCHED_IDLE (it runs on cores the compute threads leave idle), that makes
// the spares asked for
// (AlignedBuffer::allocateShared with populate) and frees the ones dropped,
// so that neither happens on a call's path.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/SharedBufferSpares.h"

#include <algorithm>
#include <new>
#include <optional>
#include <system_error>
#include <utility>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kiln::agent {

namespace {

/// How often the thread wakes without work, to drop idle spares.
constexpr std::chrono::seconds kSweepInterval{10};
/// Nice value of the thread where SCHED_IDLE is refused.
constexpr int kNice = 19;

} // namespace

SharedBufferSpares::SharedBufferSpares(int64_t budgetBytes)
    : budgetBytes(std::clamp<int64_t>(budgetBytes, 0, kMaxBudgetBytes)) {}

SharedBufferSpares::~SharedBufferSpares() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  if (thread.joinable())
    thread.join();
}

absl::StatusOr<AlignedBuffer> SharedBufferSpares::take(int64_t size) {
  if (size < kMinBytes || size > budgetBytes)
    return AlignedBuffer::allocateShared(size);
  std::optional<AlignedBuffer> spare;
  {
    std::lock_guard<std::mutex> lock(mutex);
    // Idle spares are the thread's to drop (every kSweepInterval), not the
    // call's.
    SizeState &state = sizes[size];
    state.lastAsked = std::chrono::steady_clock::now();
    if (!state.ready.empty()) {
      spare.emplace(std::move(state.ready.back()));
      state.ready.pop_back();
      readyTotal -= size;
      --spareCount;
      ++hitCount;
    }
    if (!thread.joinable() && !stopping && !noThread) {
      try {
        thread = std::thread([this] { refillLoop(); });
      } catch (const std::system_error &) {
        noThread = true; // a process limit: fresh buffers from now on
      }
    }
    if (thread.joinable() && makeRoom(size, size)) {
      queue.push_back(size); // first: it is what may throw
      ++state.pending;
      pendingTotal += size;
      ++spareCount;
    }
  }
  changed.notify_all();
  if (spare)
    return std::move(*spare);
  return AlignedBuffer::allocateShared(size);
}

void SharedBufferSpares::refillLoop() {
  // SCHED_IDLE: the thread runs where a core has nothing else to do, so
  // it does not preempt compute threads (whose barriers would then wait
  // for the preempted one). Failing that, a high nice value.
  sched_param idle{};
  if (::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &idle) != 0)
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)),
                        kNice);
  std::unique_lock<std::mutex> lock(mutex);
  auto lastSweep = std::chrono::steady_clock::now();
  for (;;) {
    changed.wait_for(lock, kSweepInterval, [&] {
      return stopping || !queue.empty() || !doomed.empty();
    });
    if (stopping)
      return;
    // Every kSweepInterval, busy or not: spares of sizes no call asks for
    // any more go (to `doomed`, freed next).
    if (auto now = std::chrono::steady_clock::now(); now - lastSweep >= kSweepInterval) {
      dropIdle(now);
      lastSweep = now;
    }
    if (!doomed.empty()) {
      std::vector<AlignedBuffer> freeing = std::move(doomed);
      doomed.clear();
      lock.unlock();
      freeing.clear(); // unmapped and closed outside the lock
      lock.lock();
      continue;
    }
    if (queue.empty())
      continue;
    int64_t size = queue.front();
    queue.pop_front();
    making = true;
    lock.unlock();
    absl::StatusOr<AlignedBuffer> made =
        AlignedBuffer::allocateShared(size, /*populate=*/true);
    lock.lock();
    making = false;
    pendingTotal -= size;
    --spareCount;
    auto found = sizes.find(size);
    if (found != sizes.end()) {
      --found->second.pending;
      // Out of memory: the call that asked gets a fresh buffer next time.
      if (made.ok()) {
        try {
          found->second.ready.push_back(std::move(*made));
          readyTotal += size;
          ++spareCount;
        } catch (const std::bad_alloc &) {
          // Not kept: freed with `made`.
        }
      }
    }
    changed.notify_all();
  }
}

bool SharedBufferSpares::makeRoom(int64_t needed, int64_t keep) {
  while (readyTotal + pendingTotal + needed > budgetBytes ||
         spareCount + 1 > kMaxSpares) {
    auto oldest = sizes.end();
    for (auto it = sizes.begin(); it != sizes.end(); ++it)
      if (it->first != keep && !it->second.ready.empty() &&
          (oldest == sizes.end() ||
           it->second.lastAsked < oldest->second.lastAsked))
        oldest = it;
    if (oldest == sizes.end())
      return false;
    for (AlignedBuffer &buffer : oldest->second.ready)
      doomed.push_back(std::move(buffer));
    readyTotal -= oldest->first * static_cast<int64_t>(oldest->second.ready.size());
    spareCount -= static_cast<int>(oldest->second.ready.size());
    oldest->second.ready.clear();
  }
  return true;
}

void SharedBufferSpares::dropIdle(std::chrono::steady_clock::time_point now) {
  for (auto it = sizes.begin(); it != sizes.end();) {
    SizeState &state = it->second;
    if (now - state.lastAsked < kIdleDrop) {
      ++it;
      continue;
    }
    for (AlignedBuffer &buffer : state.ready)
      doomed.push_back(std::move(buffer));
    readyTotal -= it->first * static_cast<int64_t>(state.ready.size());
    spareCount -= static_cast<int>(state.ready.size());
    state.ready.clear();
    it = state.pending ? std::next(it) : sizes.erase(it);
  }
}

size_t SharedBufferSpares::readyCount() const {
  std::lock_guard<std::mutex> lock(mutex);
  size_t count = 0;
  for (const auto &[size, state] : sizes)
    count += state.ready.size();
  return count;
}

int64_t SharedBufferSpares::readyBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return readyTotal;
}

uint64_t SharedBufferSpares::hits() const {
  std::lock_guard<std::mutex> lock(mutex);
  return hitCount;
}

void SharedBufferSpares::waitIdle() const {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return stopping || (queue.empty() && !making); });
}

} // namespace kiln::agent
