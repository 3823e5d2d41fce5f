//===- SealedFile.h - tensors in sealed memfds ----------------------*- C++ -*-===//
//
// This file declares the check every process makes before it maps a tensor
// file another process passed it: a memfd sealed so that its sender can
// neither change the bytes while they are read nor shrink the file under a
// mapping (which would fault the reader with SIGBUS).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/status.h"

#include <cstdint>

namespace kiln {

/// The seals a tensor file must carry: F_SEAL_WRITE | F_SEAL_GROW |
/// F_SEAL_SHRINK.
int requiredTensorFileSeals();

/// OK when `fd` is a readable regular file of exactly `size` bytes, with
/// no holes, carrying requiredTensorFileSeals(); INVALID_ARGUMENT saying
/// which part is wrong otherwise.
absl::Status checkSealedTensorFile(int fd, int64_t size);

/// Adds requiredTensorFileSeals() to a memfd made with MFD_ALLOW_SEALING
/// (its writable shared mappings must be gone); INTERNAL on failure.
absl::Status sealTensorFile(int fd);

} // namespace kiln
