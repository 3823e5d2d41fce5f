//===- AlignedBuffer.cpp - 64-byte aligned host buffers -------------------===//
//
// This file implements AlignedBuffer with std::aligned_alloc, mmap and
// memfd_create.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AlignedBuffer.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

// Linux 5.14; glibc names it from 2.35.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace kiln::agent {

uint64_t AlignedBuffer::nextSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void AlignedBuffer::reset() {
  if (mappedLength)
    ::munmap(bytes, mappedLength);
  else
    std::free(bytes);
  if (memfd >= 0)
    ::close(memfd);
  bytes = nullptr;
  length = 0;
  mappedLength = 0;
  memfd = -1;
}

AlignedBuffer::~AlignedBuffer() { reset(); }

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept
    : bytes(std::exchange(other.bytes, nullptr)),
      length(std::exchange(other.length, 0)),
      mappedLength(std::exchange(other.mappedLength, 0)),
      memfd(std::exchange(other.memfd, -1)),
      serialNumber(std::exchange(other.serialNumber, nextSerial())) {}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  if (this != &other) {
    reset();
    bytes = std::exchange(other.bytes, nullptr);
    length = std::exchange(other.length, 0);
    mappedLength = std::exchange(other.mappedLength, 0);
    memfd = std::exchange(other.memfd, -1);
    serialNumber = std::exchange(other.serialNumber, nextSerial());
  }
  return *this;
}

absl::StatusOr<AlignedBuffer> AlignedBuffer::mapFile(int fd, int64_t size) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
    return absl::FailedPreconditionError(
        "the file passed for a tensor is not a regular file");
  if (info.st_size != size)
    return absl::FailedPreconditionError(
        absl::StrCat("the file passed for a tensor of ", size, " bytes holds ",
                     info.st_size));
  if (size == 0)
    return allocate(0);
  void *memory = ::mmap(nullptr, static_cast<size_t>(size),
                        PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (memory == MAP_FAILED)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot map a tensor file of ", size, " bytes: ", std::strerror(errno)));
  AlignedBuffer buffer;
  buffer.bytes = static_cast<uint8_t *>(memory);
  buffer.length = size;
  buffer.mappedLength = static_cast<size_t>(size);
  return buffer;
}

absl::StatusOr<AlignedBuffer> AlignedBuffer::allocateShared(int64_t size,
                                                            bool populate) {
  if (size <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot share a buffer of ", size, " bytes"));
  int fd = ::memfd_create("kiln-tensor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return absl::ResourceExhaustedError(
        absl::StrCat("memfd_create: ", std::strerror(errno)));
  AlignedBuffer buffer;
  buffer.memfd = fd;
  if (::ftruncate(fd, size) != 0)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot size a shared tensor of ", size, " bytes: ", std::strerror(errno)));
  // Fresh memfd pages read as zero: no memset. To populate, the pages are
  // allocated (and zeroed) first as a file operation, outside this
  // process's memory-map lock, then mapped in steps: each step holds that
  // lock (for reading) only briefly, so the call path's mmap and munmap
  // never wait long behind a background thread.
  if (populate && ::fallocate(fd, 0, 0, size) != 0)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate the pages of a shared tensor of ", size, " bytes: ",
        std::strerror(errno)));
  void *memory = ::mmap(nullptr, static_cast<size_t>(size),
                        PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot map a shared tensor of ", size, " bytes: ", std::strerror(errno)));
  buffer.bytes = static_cast<uint8_t *>(memory);
  buffer.length = size;
  buffer.mappedLength = static_cast<size_t>(size);
  constexpr size_t kPopulateStep = size_t{2} << 20;
  for (size_t at = 0; populate && at < buffer.mappedLength; at += kPopulateStep) {
    size_t length = std::min(kPopulateStep, buffer.mappedLength - at);
    if (::madvise(buffer.bytes + at, length, MADV_POPULATE_WRITE) == 0)
      continue;
    if (errno != EINVAL) // out of memory, where a write would be a SIGBUS
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot map the pages of a shared tensor of ", size,
                       " bytes: ", std::strerror(errno)));
    // Before Linux 5.14: a write per page maps it all the same (the pages
    // are allocated already).
    long page = ::sysconf(_SC_PAGESIZE);
    for (size_t offset = at; offset < buffer.mappedLength;
         offset += static_cast<size_t>(page))
      static_cast<volatile uint8_t *>(memory)[offset] = 0;
    break;
  }
  return buffer;
}

namespace {

/// `size` bytes of heap memory, aligned, with `prefix` (at most `size`
/// bytes) copied to the start and every other byte, the rounding included,
/// zero: nothing is written twice.
absl::StatusOr<uint8_t *> alignedHeap(int64_t size, std::string_view prefix) {
  if (size < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot allocate a buffer of ", size, " bytes"));
  // aligned_alloc wants a multiple of the alignment, and never zero.
  constexpr size_t alignment = AlignedBuffer::kAlignment;
  size_t rounded =
      (static_cast<size_t>(size) + alignment - 1) / alignment * alignment;
  if (rounded == 0)
    rounded = alignment;
  auto *memory = static_cast<uint8_t *>(std::aligned_alloc(alignment, rounded));
  if (!memory)
    return absl::ResourceExhaustedError(
        absl::StrCat("out of host memory allocating ", size, " bytes"));
  if (!prefix.empty())
    std::memcpy(memory, prefix.data(), prefix.size());
  std::memset(memory + prefix.size(), 0, rounded - prefix.size());
  return memory;
}

} // namespace

absl::StatusOr<AlignedBuffer> AlignedBuffer::allocate(int64_t size) {
  return withPrefix(size, {});
}

absl::StatusOr<AlignedBuffer> AlignedBuffer::copyOf(std::string_view bytes) {
  return withPrefix(static_cast<int64_t>(bytes.size()), bytes);
}

absl::StatusOr<AlignedBuffer> AlignedBuffer::withPrefix(int64_t size,
                                                        std::string_view prefix) {
  absl::StatusOr<uint8_t *> memory = alignedHeap(size, prefix);
  if (!memory.ok())
    return memory.status();
  AlignedBuffer buffer;
  buffer.bytes = *memory;
  buffer.length = size;
  return buffer;
}

} // namespace kiln::agent
