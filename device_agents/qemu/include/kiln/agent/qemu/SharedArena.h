//===- SharedArena.h - memory the agent and a guest runner both map ------===//
//
// This file declares SharedArena: a memfd mapped into the agent, that the
// guest runner under qemu-riscv64 maps too. Tensors are copied in and out of
// it, never through files or pipes. Its first page is control (the plugin's
// instruction counter); buffers are placed after it, 64-byte aligned.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>

namespace kiln::agent::qemu {

class SharedArena {
public:
  /// A memfd of `bytes` (rounded up to pages, at least the control page).
  static absl::StatusOr<SharedArena> create(uint64_t bytes);

  SharedArena(SharedArena &&other) noexcept;
  SharedArena &operator=(SharedArena &&other) noexcept;
  SharedArena(const SharedArena &) = delete;
  SharedArena &operator=(const SharedArena &) = delete;
  ~SharedArena();

  /// Grows the memfd and the agent's mapping to at least `bytes`; the guest
  /// must remap (KILN_RUNNER_MAP) before it uses the new size.
  absl::Status grow(uint64_t bytes);

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  uint8_t *at(uint64_t offset) { return base_ + offset; }

  /// Offset layout for one call: buffers of `sizes` bytes after the control
  /// page, each 64-byte aligned. Returns the bytes the layout needs.
  static uint64_t layout(const uint64_t *sizes, size_t count, uint64_t *offsets);

private:
  SharedArena(int fd, uint8_t *base, uint64_t size)
      : fd_(fd), base_(base), size_(size) {}
  void release();

  int fd_ = -1;
  uint8_t *base_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace kiln::agent::qemu
