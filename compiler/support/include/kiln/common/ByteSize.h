//===- ByteSize.h - parse sizes such as "20GiB" -----------------*- C++ -*-===//
//
// This file declares parseByteSize, used by kilnd's and the agents' flags.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <cstdint>
#include <string_view>

namespace kiln {

/// "20GiB", "512MiB", "4k", "1000": a number with an optional unit K/M/G/T
/// (also KiB/KB, ...; all powers of 1024; case-insensitive). INVALID_ARGUMENT
/// naming the text when it is not one, or overflows int64.
absl::StatusOr<int64_t> parseByteSize(std::string_view text);

} // namespace kiln
