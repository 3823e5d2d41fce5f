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

/// "20GiB", "512M", "1.5GiB", "4k", "1000": a number (digits, optionally a
/// fraction) and an optional unit, case-insensitive, with spaces around it
/// allowed. SI units are powers of 1000 (k, M, G, T, with or without "B"),
/// IEC units powers of 1024 (Ki, Mi, Gi, Ti, with or without "B"); the
/// result must be a whole number of bytes. The same definition as the
/// Python client's kiln.units.parse_size: tests/byte_sizes.tsv holds the
/// cases both are tested against. INVALID_ARGUMENT naming the text when it
/// is not a size or overflows int64.
absl::StatusOr<int64_t> parseByteSize(std::string_view text);

} // namespace kiln
