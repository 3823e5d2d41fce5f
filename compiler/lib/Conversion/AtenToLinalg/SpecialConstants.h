//===- SpecialConstants.h - constants the special functions share ---------===//
//
// This file defines the f64 constants that the special functions' bodies
// (SpecialFunctions.cpp, IncompleteGamma.cpp, BesselFunctions.cpp,
// OrthogonalPolynomials.cpp) share.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <limits>

namespace kiln::aten::special {

constexpr double kPi = 3.14159265358979323846;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
/// Cephes' MACHEP (2^-53): where the series and fractions stop.
constexpr double kMachEp = 1.11022302462515654042e-16;
constexpr double kEulerGamma = 0.57721566490153286061;

} // namespace kiln::aten::special
