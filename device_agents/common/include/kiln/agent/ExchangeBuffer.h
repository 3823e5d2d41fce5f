//===- ExchangeBuffer.h - a direct channel's shared tensor memory -*- C++ -*-===//
//
// This file declares ExchangeBuffer: a memfd the agent makes for one direct
// channel (kiln.v1.LocalExchange), sealed against growing and shrinking and
// mapped shared by the agent and its client. A call's inputs and outputs
// travel through it instead of through the socket, and no file is made per
// call. The client may write it at any time, so the agent copies each input
// out before the call runs and reads nothing else from it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AlignedBuffer.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::agent {

class ExchangeBuffer {
public:
  /// The largest buffer a channel may ask for. Tensors past it travel in
  /// sealed memfds, whose per-call cost is small beside their size.
  static constexpr uint64_t kMaxBytes = uint64_t{16} << 20;
  /// Tensors from this size travel in sealed memfds even on a channel with
  /// a buffer (inputs by the client's choice, outputs by the agent's). Half
  /// of kMaxBytes, so that an input and an output of nearly this size fit
  /// one buffer. Under it, a copy on each side into pages that every call
  /// reuses beats a memfd, whose fresh pages each call faults in on both
  /// sides: measured on an AMD EPYC VM (2 cores), x * 2 + 1 end to end with
  /// 1 MiB in and out took ~0.2 ms through the buffer against ~1.0-1.5 ms in
  /// memfds, 7 MiB 1.8-3.6 ms against 4.3-8.1 ms (docs/architecture.md).
  static constexpr int64_t kMaxTensorBytes = static_cast<int64_t>(kMaxBytes / 2);

  /// A buffer of `size` bytes, sealed (F_SEAL_GROW | F_SEAL_SHRINK |
  /// F_SEAL_SEAL) so that the client can never fault this agent by resizing
  /// it. INVALID_ARGUMENT for a size of 0 or past kMaxBytes;
  /// RESOURCE_EXHAUSTED when the host cannot provide it.
  static absl::StatusOr<ExchangeBuffer> create(uint64_t size);

  /// The memfd, for the client (the buffer keeps its own descriptor).
  int file() const { return memory.file(); }
  uint64_t size() const { return static_cast<uint64_t>(memory.size()); }

  /// An aligned private copy of the `size` bytes at `offset`;
  /// INVALID_ARGUMENT naming the range when it is not inside the buffer.
  absl::StatusOr<AlignedBuffer> copyOut(uint64_t offset, int64_t size) const;

  /// True when [offset, offset + size) lies inside the buffer (no overflow).
  bool holds(uint64_t offset, uint64_t size) const;

  /// The first AlignedBuffer::kAlignment-aligned offset at or after
  /// `cursor` where `size` bytes end by `end` (at most size()), `cursor`
  /// moved past them; nullopt, and `cursor` unchanged, when they do not fit.
  std::optional<uint64_t> reserve(uint64_t size, uint64_t &cursor,
                                  uint64_t end) const;

  /// Copies `bytes` to `offset`, which reserve() gave for their size.
  void write(uint64_t offset, std::string_view bytes);

private:
  explicit ExchangeBuffer(AlignedBuffer memory) : memory(std::move(memory)) {}

  AlignedBuffer memory;
};

} // namespace kiln::agent
