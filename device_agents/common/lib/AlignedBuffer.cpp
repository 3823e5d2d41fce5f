//===- AlignedBuffer.cpp - 64-byte aligned host buffers -------------------===//
//
// This file implements AlignedBuffer with std::aligned_alloc.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AlignedBuffer.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>
#include <cstring>
#include <utility>

namespace kiln::agent {

AlignedBuffer::~AlignedBuffer() { std::free(bytes); }

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept
    : bytes(std::exchange(other.bytes, nullptr)),
      length(std::exchange(other.length, 0)) {}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  if (this != &other) {
    std::free(bytes);
    bytes = std::exchange(other.bytes, nullptr);
    length = std::exchange(other.length, 0);
  }
  return *this;
}

absl::StatusOr<AlignedBuffer> AlignedBuffer::allocate(int64_t size) {
  if (size < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot allocate a buffer of ", size, " bytes"));
  // aligned_alloc wants a multiple of the alignment, and never zero.
  size_t rounded = (static_cast<size_t>(size) + kAlignment - 1) / kAlignment *
                   kAlignment;
  if (rounded == 0)
    rounded = kAlignment;
  void *memory = std::aligned_alloc(kAlignment, rounded);
  if (!memory)
    return absl::ResourceExhaustedError(
        absl::StrCat("out of host memory allocating ", size, " bytes"));
  std::memset(memory, 0, rounded);
  AlignedBuffer buffer;
  buffer.bytes = static_cast<uint8_t *>(memory);
  buffer.length = size;
  return buffer;
}

absl::StatusOr<AlignedBuffer> AlignedBuffer::copyOf(std::string_view bytes) {
  absl::StatusOr<AlignedBuffer> buffer =
      allocate(static_cast<int64_t>(bytes.size()));
  if (buffer.ok() && !bytes.empty())
    std::memcpy(buffer->data(), bytes.data(), bytes.size());
  return buffer;
}

} // namespace kiln::agent
