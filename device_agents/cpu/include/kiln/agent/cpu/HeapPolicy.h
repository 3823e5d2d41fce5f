//===- HeapPolicy.h - keep freed memory for the next call -----------------===//
//
// This file declares retainFreedMemory: how the cpu agent makes glibc's
// allocator keep the buffers executables free, so that the next call reuses
// pages already mapped instead of mmap, page faults and munmap every call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/status.h"

#include <cstdint>

namespace kiln::agent {

/// Makes every malloc come from the main heap (one arena, no mmap'd chunks)
/// and lets up to `retainBytes` of freed memory stay mapped between calls.
/// Call before any other thread starts. An executable's intermediate
/// buffers are malloc'ed and freed on every call; with glibc's defaults each
/// large one was a fresh mmap whose pages faulted in again (15% of resnet18's
/// time in the agent). INVALID_ARGUMENT for a negative size; INTERNAL when
/// glibc refuses a setting.
absl::Status retainFreedMemory(int64_t retainBytes);

} // namespace kiln::agent
