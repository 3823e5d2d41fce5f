//===- NumericError.h - how far a device's results are from f32 -----------===//
//
// This file declares NumericErrorMeter, which devices computing in a
// narrower type than the graph's (mdla's 16-bit fixed point, acap's bf16)
// use to fill DeviceCounters.numeric_error: max and RMS of |device - f32|
// over every compared element, and max |f32|.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/tensor.pb.h"

#include <cstdint>
#include <span>
#include <string>

namespace kiln::agent {

class NumericErrorMeter {
public:
  /// Adds one output: the device's elements against the f32 reference's
  /// (the shorter length of the two). A NaN difference counts as infinite.
  void add(std::span<const float> device, std::span<const float> reference);

  /// The error over everything added, named `numericType` ("q16", ...).
  v1::NumericError result(const std::string &numericType) const;

private:
  double maxError = 0, maxReference = 0, squares = 0;
  int64_t count = 0;
};

} // namespace kiln::agent
