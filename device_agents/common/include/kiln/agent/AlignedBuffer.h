//===- AlignedBuffer.h - 64-byte aligned host buffers ---------------------===//
//
// This file declares AlignedBuffer, the owning host buffer every agent hands
// to an executable: parameters, inputs and outputs are all 64-byte aligned.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::agent {

/// A heap buffer whose data() is aligned to kAlignment bytes. Move-only.
class AlignedBuffer {
public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer &&other) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;

  /// Allocates `size` zero-filled bytes; RESOURCE_EXHAUSTED when the host
  /// cannot provide them. A zero-sized buffer still has a non-null data().
  static absl::StatusOr<AlignedBuffer> allocate(int64_t size);

  /// Allocates a buffer holding a copy of `bytes`.
  static absl::StatusOr<AlignedBuffer> copyOf(std::string_view bytes);

  uint8_t *data() { return bytes; }
  const uint8_t *data() const { return bytes; }
  int64_t size() const { return length; }
  std::string_view view() const {
    return {reinterpret_cast<const char *>(bytes), static_cast<size_t>(length)};
  }

private:
  uint8_t *bytes = nullptr;
  int64_t length = 0;
};

} // namespace kiln::agent
