//===- ConfigFile.cpp - reading kilnd's YAML config file ------------------===//
//
// This file implements readConfigFile on yaml-cpp, turning its exceptions
// into absl::Status with file:line positions.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/ConfigFile.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace kiln::server {

namespace {

std::string where(const std::filesystem::path &file, const YAML::Mark &mark) {
  return absl::StrCat(file.string(), ":", mark.line + 1);
}

absl::StatusOr<std::string> scalarValue(const std::filesystem::path &file,
                                        const std::string &key,
                                        const YAML::Node &value) {
  std::string at = absl::StrCat(where(file, value.Mark()), ": key '", key, "'");
  if (value.IsScalar())
    return value.Scalar();
  if (value.IsSequence()) {
    std::vector<std::string> items;
    for (const YAML::Node &item : value) {
      if (!item.IsScalar())
        return absl::InvalidArgumentError(
            absl::StrCat(at, ": list items must be plain values"));
      items.push_back(item.Scalar());
    }
    return absl::StrJoin(items, ",");
  }
  if (value.IsNull())
    return absl::InvalidArgumentError(absl::StrCat(at, " has no value"));
  return absl::InvalidArgumentError(absl::StrCat(
      at, ": value must be a plain value or a list, not a mapping"));
}

} // namespace

absl::StatusOr<std::vector<ConfigSetting>>
readConfigFile(const std::filesystem::path &file) {
  std::ifstream in(file);
  if (!in)
    return absl::NotFoundError(
        absl::StrCat("cannot read config file ", file.string()));
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception &error) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.string(), ":", error.mark.line + 1, ":",
                     error.mark.column + 1, ": not valid YAML: ", error.msg));
  }
  if (root.IsNull())
    return std::vector<ConfigSetting>{}; // An empty file sets nothing.
  if (!root.IsMap())
    return absl::InvalidArgumentError(absl::StrCat(
        where(file, root.Mark()),
        ": the config file must be a mapping of key: value lines"));
  std::vector<ConfigSetting> settings;
  absl::flat_hash_set<std::string> seen;
  for (const auto &entry : root) {
    if (!entry.first.IsScalar())
      return absl::InvalidArgumentError(absl::StrCat(
          where(file, entry.first.Mark()), ": keys must be plain names"));
    std::string key = entry.first.Scalar();
    int line = entry.first.Mark().line + 1;
    if (!seen.insert(key).second)
      return absl::InvalidArgumentError(absl::StrCat(
          file.string(), ":", line, ": key '", key, "' appears twice"));
    absl::StatusOr<std::string> value = scalarValue(file, key, entry.second);
    if (!value.ok())
      return value.status();
    settings.push_back(ConfigSetting{key, *value, line});
  }
  return settings;
}

} // namespace kiln::server
