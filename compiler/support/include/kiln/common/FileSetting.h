//===- FileSetting.h - one key: value of a settings file --------*- C++ -*-===//
//
// This file declares FileSetting, what a settings-file reader (kilnd's YAML
// reader) hands kiln::Settings, which names file and line in its errors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace kiln {

/// One `key: value` of a settings file; `line` is 1-based.
struct FileSetting {
  std::string key;
  std::string value;
  int line = 0;
};

} // namespace kiln
