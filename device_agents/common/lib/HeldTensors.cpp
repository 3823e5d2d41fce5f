//===- HeldTensors.cpp - outputs an agent keeps for later tasks -----------===//
//
// This file implements HeldTensors.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/HeldTensors.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>

#include <sys/random.h>

namespace kiln::agent {
namespace {

/// "held-" and 128 random bits: a handle is the capability to read the
/// tensor, so it must not be guessable.
absl::StatusOr<std::string> newHandle() {
  unsigned char bits[16];
  size_t got = 0;
  while (got < sizeof bits) {
    ssize_t n = ::getrandom(bits + got, sizeof bits - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return absl::InternalError(
          absl::StrCat("getrandom: ", std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  return absl::StrCat(
      "held-", absl::BytesToHexString(absl::string_view(
                   reinterpret_cast<const char *>(bits), sizeof bits)));
}

} // namespace

absl::StatusOr<HeldTensors::Held>
HeldTensors::find(const std::string &handle) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = held.find(handle);
  if (it == held.end())
    return absl::FailedPreconditionError(absl::StrCat(
        "held tensor '", handle,
        "' is not on this device (released, or its agent restarted)"));
  return it->second;
}

absl::StatusOr<std::vector<std::string>> HeldTensors::holdAll(
    std::vector<std::pair<AlignedBuffer, v1::TensorType>> tensors) {
  int64_t adding = 0;
  for (const auto &[buffer, type] : tensors)
    adding += static_cast<int64_t>(buffer.size());
  std::vector<std::string> handles;
  for (size_t i = 0; i < tensors.size(); ++i) {
    absl::StatusOr<std::string> handle = newHandle();
    if (!handle.ok())
      return handle.status();
    handles.push_back(*std::move(handle));
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (bytes + adding > budget)
    return absl::ResourceExhaustedError(absl::StrCat(
        "keeping ", tensors.size(), " outputs (", adding,
        " bytes) would take the tensors held on this device to ",
        bytes + adding, " bytes, over the agent's --held-tensor-bytes ",
        budget, "; release held tensors first"));
  for (size_t i = 0; i < tensors.size(); ++i)
    held.emplace(handles[i],
                 Held{std::make_shared<const AlignedBuffer>(
                          std::move(tensors[i].first)),
                      std::move(tensors[i].second)});
  bytes += adding;
  return handles;
}

void HeldTensors::release(const std::string &handle) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = held.find(handle);
  if (it == held.end())
    return;
  bytes -= static_cast<int64_t>(it->second.buffer->size());
  held.erase(it);
}

int64_t HeldTensors::heldBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return bytes;
}

size_t HeldTensors::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return held.size();
}

} // namespace kiln::agent
