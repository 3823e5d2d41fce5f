//===- SaturatingCast.h - double to int64 without undefined behaviour -----===//
//
// This file defines how Kiln turns a double into an int64 where the value
// may be anything a client sent: truncated toward zero, clamped to int64's
// range, NaN as 0.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln {

/// `value` truncated toward zero, clamped to int64's range (NaN is 0): how
/// a constant of an integer tensor takes a double without undefined
/// behaviour (2^63 - 1, an i64 identity, rounds to 2^63 as a double).
inline int64_t saturatingInt64(double value) {
  if (std::isnan(value))
    return 0;
  if (value >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  if (value < -0x1p63)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

} // namespace kiln
