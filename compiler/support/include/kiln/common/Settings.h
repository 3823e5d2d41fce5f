//===- Settings.h - a program's settings from flags, env and a file -*- C++ -*-===//
//
// This file declares Settings: kilnd's and every agent's settings on CLI11.
// CLI11 reads the command line, converts and validates values and formats
// --help; Settings adds the two other sources Kiln's programs take, the
// environment and (for kilnd) a YAML file, with one precedence:
//
//   flag > environment variable > file > default
//
// A value that fails validation is INVALID_ARGUMENT naming where it came
// from: the flag, the environment variable, or the file, line and key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/Environment.h"
#include "kiln/common/FileSetting.h"

#include "absl/status/statusor.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Reads the settings file at a path (kilnd: YAML).
using FileSettingsReader =
    std::function<absl::StatusOr<std::vector<FileSetting>>(const std::string &)>;

class Settings {
public:
  /// `program` names the binary in messages ("see kilnd --help"). A setting
  /// --some-name reads the variable <envPrefix>SOME_NAME; with `fileKeys`,
  /// it is also the settings file's key some_name.
  Settings(std::string program, std::string description, std::string envPrefix,
           bool fileKeys);
  Settings(const Settings &) = delete;
  Settings &operator=(const Settings &) = delete;

  /// Settings bound to `target`, whose value on entry is the default.
  /// --name VALUE and --name=VALUE both work; the last one given counts.
  CLI::Option *text(const std::string &name, std::string &target,
                    const std::string &doc);
  /// An integer >= minimum.
  CLI::Option *integer(const std::string &name, int64_t &target,
                       int64_t minimum, const std::string &doc);
  CLI::Option *integer(const std::string &name, unsigned &target,
                       unsigned minimum, const std::string &doc);
  /// A byte size as kiln::parseByteSize reads it ("20GiB", "512MiB", "0").
  CLI::Option *byteSize(const std::string &name, int64_t &target,
                        const std::string &doc);
  /// true/false (also 1/0, yes/no). A switch may also be given as --name
  /// alone, meaning true; a non-switch always takes a value.
  CLI::Option *boolean(const std::string &name, bool &target,
                       const std::string &doc, bool isSwitch);
  /// One of `choices`.
  CLI::Option *oneOf(const std::string &name, std::string &target,
                     const std::vector<std::string> &choices,
                     const std::string &doc);

  /// A flag of the command line only (no variable, no file key): --help and
  /// --version. `names` as CLI11 takes them ("-h,--help").
  CLI::Option *commandFlag(const std::string &names, bool &target,
                           const std::string &doc);
  /// --name FILE names the settings file, read with `reader`; also the
  /// variable `envName` (given on the command line or in the environment).
  void fileOption(const std::string &name, std::string &target,
                  const std::string &envName, FileSettingsReader reader,
                  const std::string &doc);

  /// Reads `args` (argv without argv[0]) and `env` into the bound targets.
  /// Every source is validated, even one a higher source overrides: a bad
  /// variable is reported although a flag wins. Unknown flags, positional
  /// arguments and unknown file keys are errors; variables with the prefix
  /// that name no setting are ignored (scripts keep their own there).
  absl::Status parse(const std::vector<std::string> &args,
                     const Environment &env);

  /// --help: the description, then per setting its flag, variable, file
  /// key, default and doc.
  std::string help() const;

  /// KILN_CACHE_DIR for "cache-dir" with prefix "KILN_".
  std::string envName(const std::string &name) const;
  /// cache_dir for "cache-dir".
  static std::string fileKey(const std::string &name);

private:
  CLI::Option *add(const std::string &name, CLI::Option *option,
                   const std::string &shownDefault);
  absl::Status applyFrom(CLI::Option &option, const std::string &value,
                         const std::string &source);
  /// The first line of an option's --help entry.
  std::string describe(const CLI::Option &option) const;

  std::string program_;
  std::string envPrefix_;
  bool fileKeys_;
  std::unique_ptr<CLI::App> app_;
  /// Settings by name ("cache-dir"), in --help order.
  std::vector<std::string> names_;
  /// Defaults as --help shows them, by flag ("--cache-dir").
  std::map<std::string, std::string> shownDefaults_;
  /// The file option, when there is one.
  std::string *filePath_ = nullptr;
  std::string fileOptionName_;
  std::string fileEnvName_;
  FileSettingsReader readFile_;
};

} // namespace kiln
