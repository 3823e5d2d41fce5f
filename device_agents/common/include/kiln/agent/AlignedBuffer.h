//===- AlignedBuffer.h - 64-byte aligned host buffers ---------------------===//
//
// This file declares AlignedBuffer, the owning host buffer every agent hands
// to an executable: parameters, inputs and outputs are all 64-byte aligned.
// Besides heap memory it can hold a mapping of a file kilnd passed over the
// local link (an input) or of a memfd it will pass back (an output).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln::agent {

/// A buffer whose data() is aligned to kAlignment bytes: heap memory, or a
/// file mapping (page aligned). Move-only.
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

  /// Allocates a buffer holding a copy of `bytes` (not zeroed first).
  static absl::StatusOr<AlignedBuffer> copyOf(std::string_view bytes);

  /// Maps the first `size` bytes of the regular file `fd` copy-on-write:
  /// writes through data() never reach the file. FAILED_PRECONDITION when
  /// the file's size is not `size`. `fd` stays the caller's.
  static absl::StatusOr<AlignedBuffer> mapFile(int fd, int64_t size);

  /// A zero-filled buffer in a memfd of its own (sealable), mapped shared:
  /// its bytes can be handed to another process as file(). With
  /// `populate`, every page is allocated and mapped before it returns (one
  /// call into the kernel, where writing a fresh mapping faults per page).
  static absl::StatusOr<AlignedBuffer> allocateShared(int64_t size,
                                                      bool populate = false);

  /// The memfd behind an allocateShared() buffer; -1 otherwise.
  int file() const { return memfd; }

  uint8_t *data() { return bytes; }
  const uint8_t *data() const { return bytes; }
  int64_t size() const { return length; }
  /// Names this buffer's storage for the life of the process: never 0, and
  /// never given to another buffer (a move carries it along). A buffer no
  /// one writes (a resident parameter) keeps its bytes as long as its
  /// serial, so what was derived from them may be cached under it.
  uint64_t serial() const { return serialNumber; }
  std::string_view view() const {
    return {reinterpret_cast<const char *>(bytes), static_cast<size_t>(length)};
  }

private:
  /// `size` bytes starting with a copy of `prefix` (at most `size` bytes),
  /// the rest zero.
  static absl::StatusOr<AlignedBuffer> withPrefix(int64_t size,
                                                  std::string_view prefix);
  void reset();

  uint8_t *bytes = nullptr;
  int64_t length = 0;
  /// Bytes mapped at `bytes` (0: heap memory from aligned_alloc).
  size_t mappedLength = 0;
  int memfd = -1;
  uint64_t serialNumber = nextSerial();

  static uint64_t nextSerial();
};

} // namespace kiln::agent
