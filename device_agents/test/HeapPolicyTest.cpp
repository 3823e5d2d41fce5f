//===- HeapPolicyTest.cpp - freed buffers stay mapped for the next call ---===//
//
// This file tests retainFreedMemory the way executables use the heap: the
// same large buffers malloc'ed, written and freed call after call. With the
// policy the second call faults in (almost) no new pages. Its own binary,
// since mallopt settings are process-wide.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/HeapPolicy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include <sys/prctl.h>
#include <sys/resource.h>

namespace kiln::agent {
namespace {

long minorFaults() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/// One "call": three buffers of `kBytes` (by default 48 MiB, above glibc's
/// largest mmap threshold), each written through, then freed. Returns the
/// page faults it took.
long oneCall(size_t kBytes = 48u << 20) {
  // Through volatile pointers, so the compiler cannot elide the allocation.
  void *(*volatile allocate)(size_t) = std::malloc;
  void (*volatile release)(void *) = std::free;
  long before = minorFaults();
  void *buffers[3];
  for (void *&buffer : buffers) {
    buffer = allocate(kBytes);
    std::memset(buffer, 1, kBytes);
  }
  for (void *buffer : buffers)
    release(buffer);
  return minorFaults() - before;
}

TEST(HeapPolicyTest, RepeatedCallsReuseMappedPages) {
  // 4 KiB pages only, so the fault counts mean the same on hosts whose
  // transparent huge pages are "always".
  ASSERT_EQ(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
  constexpr long kPages = 3 * (48 << 20) / 4096;
  // glibc's defaults: every call maps and faults the buffers in again.
  oneCall();
  EXPECT_GT(oneCall(), kPages / 2);
  ASSERT_TRUE(retainFreedMemory(1ll << 30).ok());
  oneCall();
  EXPECT_LT(oneCall(), kPages / 20);
}

TEST(HeapPolicyTest, KilndKeepsBuffersUnder32MiBMapped) {
  // In a freshly executed child: the policy is process-wide, and a forked
  // child would inherit the other test's.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
        if (!retainLargeBuffers(256 << 20).ok())
          std::_Exit(2);
        constexpr size_t kBytes = 8u << 20;
        oneCall(kBytes);
        long faults = oneCall(kBytes);
        std::_Exit(faults < static_cast<long>(3 * kBytes / 4096 / 20) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(HeapPolicyTest, NegativeSizesAreRefused) {
  EXPECT_EQ(retainFreedMemory(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(retainLargeBuffers(-1).code(), absl::StatusCode::kInvalidArgument);
}

} // namespace
} // namespace kiln::agent
