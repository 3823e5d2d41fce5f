//===- AgentMain.h - the main() every agent binary shares -----------------===//
//
// This file declares agentMain(), which parses the flags every agent takes,
// sets up logging and signal handling, and serves an AgentSession until
// SIGTERM or SIGINT; and the flag parser it is built on (kiln::Settings).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/agent/AgentSession.h"
#include "kiln/agent/DeviceBackend.h"
#include "kiln/common/Environment.h"

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <functional>
#include <memory>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::agent {

/// A backend-specific flag: `--name VALUE` or `--name=VALUE`.
struct AgentFlag {
  std::string name;
  std::string defaultValue;
  std::string help;
  /// Receives the value (the default unless given).
  std::string *value;
  /// Set instead of `value` for a switch (`--name`, no value; or
  /// KILN_AGENT_<NAME>=true): receives whether it was given.
  bool *enabled = nullptr;
};

/// What the command line asked for.
struct AgentCommandLine {
  /// The options of the session with the first daemon; the others differ
  /// only in options.daemonAddress.
  AgentOptions options;
  /// Every --daemon address (a comma list: kilnd replicas), in order.
  std::vector<std::string> daemons;
  /// --daemon-service NAME:PORT: serve every address NAME resolves to (a
  /// headless Service's replicas), re-resolved every serviceRefresh.
  std::string daemonService;
  std::chrono::milliseconds serviceRefresh{10000};
  /// --direct-poll-us auto: options.directPoll is chosen once the backend
  /// says how many host threads one run keeps busy.
  bool directPollAuto = false;
  std::string logLevel = "info";
  /// "text" or "json" (one object per line).
  std::string logFormat = "text";
  bool help = false;
};

/// Parses `args` (without argv[0]) over `env` (KILN_AGENT_<FLAG> variables;
/// flags win). Unknown flags, missing values and bad values are
/// INVALID_ARGUMENT naming the flag or variable; --daemon is required unless
/// --help is given.
absl::StatusOr<AgentCommandLine>
parseAgentFlags(const std::vector<std::string> &args, std::string_view kind,
                const std::vector<AgentFlag> &extraFlags = {},
                const Environment &env = {});

/// The --help text: every flag with its default.
std::string agentUsage(std::string_view program, std::string_view kind,
                       const std::vector<AgentFlag> &extraFlags = {});

/// A thread-count flag's value: "auto" (the CPUs this process may run on,
/// per its affinity mask) or a count from 1 to 1024. INVALID_ARGUMENT
/// otherwise, naming both forms (callers prefix the flag's name).
absl::StatusOr<int> parseThreadCount(absl::string_view value);

/// What --direct-poll-us auto means for `backend` on a process that may run
/// on `cpus` CPUs: polls of DirectChannels::kDefaultPoll, by as many
/// channels at once as one run's host threads leave CPUs free (for the
/// polling threads, and the clients', which poll only when told their
/// agent does); none where they leave none: a poller would take a core
/// from the run, or from the client between calls.
DirectPoll autoDirectPoll(const DeviceBackend &backend, int cpus);

/// The --cache-dir an agent of `kind` uses by default:
/// $XDG_CACHE_HOME/kiln/agent-KIND, ~/.cache/kiln/agent-KIND, or a folder
/// under /tmp.
std::string defaultCacheDir(absl::string_view kind);

using BackendFactory =
    std::function<absl::StatusOr<std::unique_ptr<DeviceBackend>>()>;

/// The whole life of an agent process; returns its exit code: 0 after a
/// clean shutdown, 2 for a bad command line, 1 when it cannot start.
int agentMain(int argc, char **argv, std::string_view kind,
              const BackendFactory &makeBackend,
              const std::vector<AgentFlag> &extraFlags = {});

} // namespace kiln::agent
