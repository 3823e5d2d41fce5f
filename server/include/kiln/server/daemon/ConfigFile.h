//===- ConfigFile.h - reading kilnd's YAML config file ----------*- C++ -*-===//
//
// This file declares readConfigFile: the flat key: value YAML file behind
// `kilnd --config FILE`, read into settings that remember their line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/FileSetting.h"

#include "absl/status/statusor.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::server {

/// One `key: value` of the file. A list value is joined with commas.
using ConfigSetting = kiln::FileSetting;

/// Reads `file`: a YAML mapping of scalar (or list-of-scalar) values.
/// INVALID_ARGUMENT naming file and line on syntax errors, nested values,
/// empty values and duplicate keys; NOT_FOUND when the file is absent.
/// Keys are not checked here.
absl::StatusOr<std::vector<ConfigSetting>>
readConfigFile(const std::filesystem::path &file);

} // namespace kiln::server
