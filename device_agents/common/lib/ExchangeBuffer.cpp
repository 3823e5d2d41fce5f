//===- ExchangeBuffer.cpp - a direct channel's shared tensor memory -------===//
//
// This file implements ExchangeBuffer.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/ExchangeBuffer.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <fcntl.h>

namespace kiln::agent {

absl::StatusOr<ExchangeBuffer> ExchangeBuffer::create(uint64_t size) {
  if (size == 0 || size > kMaxBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("an exchange buffer of ", size, " bytes: it must hold 1 "
                     "to ", kMaxBytes, " bytes"));
  absl::StatusOr<AlignedBuffer> memory =
      AlignedBuffer::allocateShared(static_cast<int64_t>(size));
  if (!memory.ok())
    return memory.status();
  // The client maps it too: sealed so that it cannot shrink the file under
  // this agent's mapping (SIGBUS) or unseal it later. Writes stay open to
  // both sides.
  if (::fcntl(memory->file(), F_ADD_SEALS,
              F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
    return absl::InternalError(absl::StrCat(
        "cannot seal an exchange buffer: ", std::strerror(errno)));
  return ExchangeBuffer(*std::move(memory));
}

bool ExchangeBuffer::holds(uint64_t offset, uint64_t length) const {
  return offset <= size() && length <= size() - offset;
}

absl::StatusOr<AlignedBuffer> ExchangeBuffer::copyOut(uint64_t offset,
                                                      int64_t length) const {
  if (length < 0 || !holds(offset, static_cast<uint64_t>(length)))
    return absl::InvalidArgumentError(
        absl::StrCat(length, " bytes at offset ", offset, " are not inside "
                     "the channel's exchange buffer of ", size(), " bytes"));
  // One read of bytes the client may be changing: the call sees whatever
  // this copy holds, and nothing reads the shared bytes again.
  return AlignedBuffer::copyOf(
      {reinterpret_cast<const char *>(memory.data() + offset),
       static_cast<size_t>(length)});
}

std::optional<uint64_t> ExchangeBuffer::reserve(uint64_t length,
                                                uint64_t &cursor,
                                                uint64_t end) const {
  constexpr uint64_t align = AlignedBuffer::kAlignment;
  end = std::min(end, size());
  if (cursor > end)
    return std::nullopt;
  // No overflow: cursor <= end <= kMaxBytes.
  uint64_t offset = (cursor + align - 1) / align * align;
  if (offset > end || length > end - offset)
    return std::nullopt;
  cursor = offset + length;
  return offset;
}

void ExchangeBuffer::write(uint64_t offset, std::string_view bytes) {
  std::memcpy(memory.data() + offset, bytes.data(), bytes.size());
}

} // namespace kiln::agent
