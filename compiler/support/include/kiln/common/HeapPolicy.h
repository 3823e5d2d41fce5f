//===- HeapPolicy.h - keep freed memory for the next call -----------------===//
//
// This file declares how Kiln's processes make glibc's allocator keep large
// freed buffers mapped, so that the next call reuses pages already mapped
// instead of mmap, page faults and munmap every call: retainFreedMemory for
// the cpu agent (executables' buffers), retainLargeBuffers for kilnd (the
// messages and tensors of each request).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/status.h"

#include <cstdint>

namespace kiln {

/// Makes every malloc come from the main heap (one arena, no mmap'd chunks)
/// and lets up to `retainBytes` of freed memory stay mapped between calls.
/// Call before any other thread starts. An executable's intermediate
/// buffers are malloc'ed and freed on every call; with glibc's defaults each
/// large one was a fresh mmap whose pages faulted in again (15% of resnet18's
/// time in the agent). INVALID_ARGUMENT for a negative size; INTERNAL when
/// glibc refuses a setting.
absl::Status retainFreedMemory(int64_t retainBytes);

/// For a process with many request threads (kilnd): allocations up to 32 MiB
/// (glibc's largest mmap threshold) come from the heaps instead of fresh
/// mmaps, and up to `retainBytes` of freed memory stays mapped. Without it
/// every inline tensor over 128 KiB in a request or reply was a fresh mmap,
/// page faults and an munmap: 1.2 ms of a 588 KiB call. Keeps the per-thread
/// arenas. INVALID_ARGUMENT for a negative size; INTERNAL when glibc refuses.
absl::Status retainLargeBuffers(int64_t retainBytes);

} // namespace kiln
