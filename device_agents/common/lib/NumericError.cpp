//===- NumericError.cpp - how far a device's results are from f32 ---------===//
#include "kiln/agent/NumericError.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::agent {

void NumericErrorMeter::add(std::span<const float> device,
                            std::span<const float> reference) {
  const size_t n = std::min(device.size(), reference.size());
  for (size_t i = 0; i < n; ++i) {
    double diff = std::fabs(double(device[i]) - double(reference[i]));
    if (std::isnan(diff))
      diff = std::numeric_limits<double>::infinity();
    maxError = std::max(maxError, diff);
    maxReference = std::max(maxReference, std::fabs(double(reference[i])));
    squares += diff * diff;
    ++count;
  }
}

v1::NumericError NumericErrorMeter::result(const std::string &numericType) const {
  v1::NumericError error;
  error.set_numeric_type(numericType);
  error.set_max_abs_error(maxError);
  error.set_max_abs_reference(maxReference);
  error.set_rms_error(count ? std::sqrt(squares / double(count)) : 0.0);
  return error;
}

} // namespace kiln::agent
