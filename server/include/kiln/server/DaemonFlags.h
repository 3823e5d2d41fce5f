//===- DaemonFlags.h - kilnd's command line ---------------------*- C++ -*-===//
//
// This file declares DaemonFlags and the hand-rolled parser behind kilnd's
// command line; every flag has a default, so kilnd runs with none.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::server {

/// kilnd's settings, defaults filled in.
struct DaemonFlags {
  std::string listen = "127.0.0.1:50051";
  std::string portFile;
  std::string cacheDir;
  std::string localAgents = "cpu";
  std::string agentBinDir;
  unsigned compileWorkers = 1;
  int64_t executeTimeoutS = 300;
  int64_t deviceWaitS = 15;
  int64_t heartbeatMs = 1000;
  std::string logLevel = "info";
  bool help = false;

  /// Agent kinds to spawn locally ("none" and "" give none).
  std::vector<std::string> localAgentKinds() const;
};

/// Defaults that depend on the machine: cache dir under $HOME, agent binary
/// dir beside /proc/self/exe, one compile worker per core.
DaemonFlags defaultDaemonFlags();

/// Parses `--name=value` and `--name value` forms. INVALID_ARGUMENT naming
/// the flag for unknown flags, missing values and malformed numbers.
absl::StatusOr<DaemonFlags> parseDaemonFlags(int argc, const char *const *argv);

/// `kilnd --help`: every flag with its default and one line of doc.
std::string daemonFlagsHelp();

} // namespace kiln::server
