//===- DaemonFlags.cpp - kilnd's command line -----------------------------===//
//
// This file implements kilnd's flag table, parser and --help text.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/DaemonFlags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

namespace kiln::server {

namespace {

struct FlagSpec {
  const char *name;
  std::function<std::string(const DaemonFlags &)> showDefault;
  const char *doc;
  std::function<absl::Status(DaemonFlags &, const std::string &)> set;
};

template <typename T>
absl::Status parseNumber(const std::string &flag, const std::string &text,
                         T minimum, T &out) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < static_cast<int64_t>(minimum))
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " needs an integer >= ", minimum, ", got '",
                     text, "'"));
  out = static_cast<T>(value);
  return absl::OkStatus();
}

const std::vector<FlagSpec> &flagTable() {
  static const std::vector<FlagSpec> table = {
      {"listen", [](const DaemonFlags &f) { return f.listen; },
       "host:port to serve gRPC on; port 0 picks a free port",
       [](DaemonFlags &f, const std::string &v) {
         f.listen = v;
         return absl::OkStatus();
       }},
      {"port-file", [](const DaemonFlags &f) { return f.portFile; },
       "write the bound port here (atomically) once listening",
       [](DaemonFlags &f, const std::string &v) {
         f.portFile = v;
         return absl::OkStatus();
       }},
      {"cache-dir", [](const DaemonFlags &f) { return f.cacheDir; },
       "content store (cas/) and compile cache (ac/) root",
       [](DaemonFlags &f, const std::string &v) {
         f.cacheDir = v;
         return absl::OkStatus();
       }},
      {"local-agents", [](const DaemonFlags &f) { return f.localAgents; },
       "comma list of agent kinds to run as child processes, or 'none'",
       [](DaemonFlags &f, const std::string &v) {
         f.localAgents = v;
         return absl::OkStatus();
       }},
      {"agent-bin-dir", [](const DaemonFlags &f) { return f.agentBinDir; },
       "directory holding kiln-agent-<kind> (default: kilnd's own)",
       [](DaemonFlags &f, const std::string &v) {
         f.agentBinDir = v;
         return absl::OkStatus();
       }},
      {"compile-workers",
       [](const DaemonFlags &f) { return std::to_string(f.compileWorkers); },
       "compiles that may run at once (default: number of cores)",
       [](DaemonFlags &f, const std::string &v) {
         return parseNumber("compile-workers", v, 1u, f.compileWorkers);
       }},
      {"execute-timeout-s",
       [](const DaemonFlags &f) { return std::to_string(f.executeTimeoutS); },
       "Execute deadline in seconds when the client sets none",
       [](DaemonFlags &f, const std::string &v) {
         return parseNumber("execute-timeout-s", v, int64_t{1},
                            f.executeTimeoutS);
       }},
      {"device-wait-s",
       [](const DaemonFlags &f) { return std::to_string(f.deviceWaitS); },
       "seconds Execute waits for a device of its kind to register",
       [](DaemonFlags &f, const std::string &v) {
         return parseNumber("device-wait-s", v, int64_t{0}, f.deviceWaitS);
       }},
      {"heartbeat-ms",
       [](const DaemonFlags &f) { return std::to_string(f.heartbeatMs); },
       "agent heartbeat interval; 3 missed make its devices UNHEALTHY",
       [](DaemonFlags &f, const std::string &v) {
         return parseNumber("heartbeat-ms", v, int64_t{10}, f.heartbeatMs);
       }},
      {"log-level", [](const DaemonFlags &f) { return f.logLevel; },
       "trace, debug, info, warn, error, critical or off",
       [](DaemonFlags &f, const std::string &v) {
         static const char *kLevels[] = {"trace", "debug",    "info", "warn",
                                         "error", "critical", "off"};
         for (const char *level : kLevels)
           if (v == level) {
             f.logLevel = v;
             return absl::OkStatus();
           }
         return absl::InvalidArgumentError(
             absl::StrCat("--log-level: unknown level '", v, "'"));
       }},
  };
  return table;
}

} // namespace

std::vector<std::string> DaemonFlags::localAgentKinds() const {
  std::vector<std::string> kinds;
  for (absl::string_view kind : absl::StrSplit(localAgents, ',')) {
    kind = absl::StripAsciiWhitespace(kind);
    if (!kind.empty() && kind != "none")
      kinds.emplace_back(kind);
  }
  return kinds;
}

DaemonFlags defaultDaemonFlags() {
  DaemonFlags flags;
  const char *home = std::getenv("HOME");
  flags.cacheDir = absl::StrCat(home && *home ? home : "/tmp",
                                "/.cache/kiln/daemon");
  std::error_code error;
  std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", error);
  flags.agentBinDir = error ? "." : self.parent_path().string();
  flags.compileWorkers = std::max(1u, std::thread::hardware_concurrency());
  return flags;
}

absl::StatusOr<DaemonFlags> parseDaemonFlags(int argc,
                                             const char *const *argv) {
  DaemonFlags flags = defaultDaemonFlags();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument '", arg, "' (kilnd takes only --flags)"));
    std::string name = arg.substr(2);
    std::string value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    const FlagSpec *spec = nullptr;
    for (const FlagSpec &candidate : flagTable())
      if (name == candidate.name)
        spec = &candidate;
    if (!spec)
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '--", name, "' (see kilnd --help)"));
    if (!hasValue) {
      if (i + 1 >= argc)
        return absl::InvalidArgumentError(
            absl::StrCat("flag '--", name, "' needs a value"));
      value = argv[++i];
    }
    if (absl::Status status = spec->set(flags, value); !status.ok())
      return status;
  }
  return flags;
}

std::string daemonFlagsHelp() {
  DaemonFlags defaults = defaultDaemonFlags();
  std::string text =
      "kilnd: the Kiln compilation and execution daemon.\n\n"
      "Usage: kilnd [--flag=value ...]\n\nFlags:\n";
  for (const FlagSpec &spec : flagTable()) {
    std::string shown = spec.showDefault(defaults);
    absl::StrAppend(&text, "  --", spec.name, " (default: ",
                    shown.empty() ? "none" : shown, ")\n      ", spec.doc,
                    "\n");
  }
  absl::StrAppend(&text, "  --help\n      print this text and exit\n");
  return text;
}

} // namespace kiln::server
