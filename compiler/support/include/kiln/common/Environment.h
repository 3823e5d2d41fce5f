//===- Environment.h - a process environment as a map -----------*- C++ -*-===//
//
// This file declares Environment, the variables settings are read from, so
// that parsers take it as an argument and tests pass their own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <string>

namespace kiln {

/// Environment variables by name.
using Environment = std::map<std::string, std::string>;

/// This process's environment.
Environment processEnvironment();

} // namespace kiln
