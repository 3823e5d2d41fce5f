//===- SharedArena.cpp - memory the agent and a guest runner both map ----===//
//
// This file implements SharedArena over memfd_create, ftruncate and mmap.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/qemu/SharedArena.h"

#include "kiln/agent/qemu/RunnerProtocol.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::agent::qemu {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kAlignment = 64;
/// Above the descriptors a child gets by dup2 (see RunnerProcess).
constexpr int kLowestArenaFd = 101;

uint64_t roundUp(uint64_t value, uint64_t to) {
  return (value + to - 1) / to * to;
}

absl::Status errnoError(const char *what) {
  return absl::ResourceExhaustedError(
      absl::StrCat(what, ": ", std::strerror(errno)));
}

} // namespace

absl::StatusOr<SharedArena> SharedArena::create(uint64_t bytes) {
  int raw = ::memfd_create("kiln-qemu-arena", MFD_CLOEXEC);
  if (raw < 0)
    return errnoError("memfd_create for the shared arena");
  int fd = ::fcntl(raw, F_DUPFD_CLOEXEC, kLowestArenaFd);
  ::close(raw);
  if (fd < 0)
    return errnoError("placing the shared arena's descriptor");
  SharedArena arena(fd, nullptr, 0);
  if (absl::Status grown = arena.grow(std::max(bytes, KILN_ARENA_CONTROL_BYTES + kPage));
      !grown.ok())
    return grown;
  return arena;
}

absl::Status SharedArena::grow(uint64_t bytes) {
  uint64_t size = roundUp(bytes, kPage);
  if (size <= size_)
    return absl::OkStatus();
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
    return errnoError(absl::StrCat("growing the shared arena to ", size,
                                   " bytes").c_str());
  void *mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mapped == MAP_FAILED)
    return errnoError("mapping the shared arena");
  if (base_)
    ::munmap(base_, size_);
  base_ = static_cast<uint8_t *>(mapped);
  size_ = size;
  return absl::OkStatus();
}

uint64_t SharedArena::layout(const uint64_t *sizes, size_t count,
                             uint64_t *offsets) {
  uint64_t next = KILN_ARENA_CONTROL_BYTES;
  for (size_t i = 0; i < count; ++i) {
    offsets[i] = next;
    next = roundUp(next + std::max<uint64_t>(sizes[i], 1), kAlignment);
  }
  return next;
}

SharedArena::SharedArena(SharedArena &&other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

SharedArena &SharedArena::operator=(SharedArena &&other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedArena::~SharedArena() { release(); }

void SharedArena::release() {
  if (base_)
    ::munmap(base_, size_);
  if (fd_ >= 0)
    ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
  size_ = 0;
}

} // namespace kiln::agent::qemu
