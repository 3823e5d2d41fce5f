//===- HeapPolicy.cpp - keep freed memory for the next call ---------------===//
//
// This file implements the heap policies with glibc's mallopt.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/HeapPolicy.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <climits>

#include <malloc.h>

namespace kiln {

absl::Status retainFreedMemory(int64_t retainBytes) {
  if (retainBytes < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("the memory to retain must be >= 0, got ", retainBytes));
  int trim = static_cast<int>(std::min<int64_t>(retainBytes, INT_MAX));
  // One arena: the main heap grows without the 64 MiB limit of a thread
  // arena, so no request needs mmap. Then no mmap'd chunks at all, and free
  // memory at the top of the heap is returned to the system only beyond
  // `trim` bytes.
  if (mallopt(M_ARENA_MAX, 1) != 1 || mallopt(M_MMAP_MAX, 0) != 1 ||
      mallopt(M_TRIM_THRESHOLD, trim) != 1)
    return absl::InternalError("glibc refused a mallopt setting");
  return absl::OkStatus();
}

absl::Status retainLargeBuffers(int64_t retainBytes) {
  if (retainBytes < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("the memory to retain must be >= 0, got ", retainBytes));
  int trim = static_cast<int>(std::min<int64_t>(retainBytes, INT_MAX));
  constexpr int kLargestMmapThreshold = 32 << 20; // HEAP_MAX_SIZE / 2
  if (mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) != 1 ||
      mallopt(M_TRIM_THRESHOLD, trim) != 1)
    return absl::InternalError("glibc refused a mallopt setting");
  return absl::OkStatus();
}

} // namespace kiln
