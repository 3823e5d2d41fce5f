//===- DaemonFlags.cpp - kilnd's command line -----------------------------===//
//
// This file implements kilnd's flag table, parser and --help text.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/DaemonFlags.h"

#include "kiln/common/ByteSize.h"

#include "kiln/server/store/CacheSalt.h"
#include "kiln/server/daemon/ConfigFile.h"
#include "kiln/common/Status.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <thread>
#include <unistd.h>

namespace kiln::server {

namespace {

struct FlagSpec {
  const char *name;
  std::function<std::string(const DaemonFlags &)> showDefault;
  const char *doc;
  std::function<absl::Status(DaemonFlags &, const std::string &)> set;
  /// A switch: `--name` alone means `--name=true`.
  bool isSwitch = false;
};

absl::Status parseBool(const std::string &flag, const std::string &text,
                       bool &out) {
  std::string lower = absl::AsciiStrToLower(text);
  if (lower == "true" || lower == "1" || lower == "yes")
    out = true;
  else if (lower == "false" || lower == "0" || lower == "no")
    out = false;
  else
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " needs true or false, got '", text, "'"));
  return absl::OkStatus();
}

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

/// A byte size flag ("20GiB", "512MiB", "0"), via kiln::parseByteSize.
/// A byte count as --help shows its default: whole GiB as "<n>GiB".
std::string byteSizeText(int64_t bytes) {
  return bytes != 0 && bytes % (int64_t{1} << 30) == 0
             ? absl::StrCat(bytes >> 30, "GiB")
             : std::to_string(bytes);
}

absl::Status parseByteSizeFlag(const std::string &flag, const std::string &text,
                               int64_t &out) {
  absl::StatusOr<int64_t> size = parseByteSize(text);
  if (!size.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " needs a byte size such as 20GiB, 512MiB "
                                 "or 0, got '", text, "'"));
  out = *size;
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
      {"local-socket", [](const DaemonFlags &f) { return f.localSocket; },
       "Unix socket where clients on this machine Execute with tensors in "
       "memfds (they find it through OpenLocalSession): a path, @name for an "
       "abstract socket, empty for @kiln-<daemon id>, or none",
       [](DaemonFlags &f, const std::string &v) {
         f.localSocket = v;
         return absl::OkStatus();
       }},
      {"insecure",
       [](const DaemonFlags &f) { return f.insecure ? "true" : "false"; },
       "allow --listen on an address other machines can reach without TLS "
       "and credentials (logged as a warning; anyone who reaches the port "
       "can run code on the agents)",
       [](DaemonFlags &f, const std::string &v) {
         return parseBool("insecure", v, f.insecure);
       },
       /*isSwitch=*/true},
      {"tls-cert", [](const DaemonFlags &f) { return f.tlsCert; },
       "PEM certificate (chain) of the gRPC port; with --tls-key, the port "
       "speaks only TLS",
       [](DaemonFlags &f, const std::string &v) {
         f.tlsCert = v;
         return absl::OkStatus();
       }},
      {"tls-key", [](const DaemonFlags &f) { return f.tlsKey; },
       "PEM private key of --tls-cert",
       [](DaemonFlags &f, const std::string &v) {
         f.tlsKey = v;
         return absl::OkStatus();
       }},
      {"tls-client-ca", [](const DaemonFlags &f) { return f.tlsClientCa; },
       "PEM CA whose certificates identify clients and agents (mTLS): CN is "
       "the name (an agent's id), O kiln:users, kiln:admins or kiln:agents "
       "the role",
       [](DaemonFlags &f, const std::string &v) {
         f.tlsClientCa = v;
         return absl::OkStatus();
       }},
      {"auth-tokens", [](const DaemonFlags &f) { return f.authTokens; },
       "file of bearer-token grants, '<name> <role> sha256:<hex>' per line "
       "(`kiln token new` makes one); with it or --tls-client-ca every call "
       "needs credentials",
       [](DaemonFlags &f, const std::string &v) {
         f.authTokens = v;
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
      {"task-signing-key", [](const DaemonFlags &f) { return f.taskSigningKey; },
       "Ed25519 private key (PEM) kilnd signs every task with; agents load "
       "only signed code (empty: <cache-dir>/keys/task-signing-key.pem, "
       "created on first start)",
       [](DaemonFlags &f, const std::string &v) {
         f.taskSigningKey = v;
         return absl::OkStatus();
       }},
      {"local-agents", [](const DaemonFlags &f) { return f.localAgents; },
       "comma list of agent kinds to run as child processes, or 'none'",
       [](DaemonFlags &f, const std::string &v) {
         f.localAgents = v;
         return absl::OkStatus();
       }},
      {"local-link",
       [](const DaemonFlags &f) { return f.localLink ? "true" : "false"; },
       "give each local agent a local link (a socketpair): its tasks and "
       "results travel there, and tensors as shared files (the store's blob "
       "files in, memfds out) instead of gRPC blob transfers. false: local "
       "agents work like remote ones",
       [](DaemonFlags &f, const std::string &v) {
         return parseBool("local-link", v, f.localLink);
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
      {"compile-worker", [](const DaemonFlags &f) { return f.compileWorker; },
       "the kiln-compile-worker binary every compile runs in, a process of "
       "its own (default: beside kilnd)",
       [](DaemonFlags &f, const std::string &v) {
         f.compileWorker = v;
         return absl::OkStatus();
       }},
      {"compile-cpu-seconds",
       [](const DaemonFlags &f) { return std::to_string(f.compileCpuSeconds); },
       "CPU-time limit of one compile (RLIMIT_CPU of its worker); past it the "
       "compile is DEADLINE_EXCEEDED",
       [](DaemonFlags &f, const std::string &v) {
         return parseNumber("compile-cpu-seconds", v, int64_t{1},
                            f.compileCpuSeconds);
       }},
      {"compile-memory-bytes",
       [](const DaemonFlags &f) { return byteSizeText(f.compileMemoryBytes); },
       "address-space limit of one compile (RLIMIT_AS of its worker); past it "
       "the compile is RESOURCE_EXHAUSTED",
       [](DaemonFlags &f, const std::string &v) {
         absl::Status status =
             parseByteSizeFlag("compile-memory-bytes", v, f.compileMemoryBytes);
         if (status.ok() && f.compileMemoryBytes < (int64_t{256} << 20))
           return absl::InvalidArgumentError(
               "--compile-memory-bytes must be at least 256MiB (the compiler's "
               "libraries alone map more than 100MiB)");
         return status;
       }},
      {"compile-timeout-s",
       [](const DaemonFlags &f) { return std::to_string(f.compileTimeoutS); },
       "wall-clock limit of one compile; its worker is killed past it "
       "(DEADLINE_EXCEEDED)",
       [](DaemonFlags &f, const std::string &v) {
         return parseNumber("compile-timeout-s", v, int64_t{1},
                            f.compileTimeoutS);
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
      {"drain-timeout-s",
       [](const DaemonFlags &f) { return std::to_string(f.drainTimeoutS); },
       "on SIGTERM, seconds to let in-flight compiles/executions finish",
       [](DaemonFlags &f, const std::string &v) {
         return parseNumber("drain-timeout-s", v, int64_t{0}, f.drainTimeoutS);
       }},
      {"cache-capacity-bytes",
       [](const DaemonFlags &f) { return byteSizeText(f.cacheCapacityBytes); },
       "content-store size cap (LRU eviction past it, never of blobs in "
       "use); 0 = unlimited",
       [](DaemonFlags &f, const std::string &v) {
         return parseByteSizeFlag("cache-capacity-bytes", v, f.cacheCapacityBytes);
       }},
      {"max-blob-bytes",
       [](const DaemonFlags &f) { return byteSizeText(f.maxBlobBytes); },
       "largest blob a client may declare in Blobs.Write (RESOURCE_EXHAUSTED "
       "past it, before anything is written); 0 = unlimited",
       [](DaemonFlags &f, const std::string &v) {
         return parseByteSizeFlag("max-blob-bytes", v, f.maxBlobBytes);
       }},
      {"blob-quota-bytes",
       [](const DaemonFlags &f) { return byteSizeText(f.blobQuotaBytes); },
       "bytes of blobs each authenticated user (role user) may keep in the "
       "store; a Blobs.Write past it is RESOURCE_EXHAUSTED before anything "
       "is written; 0 = unlimited",
       [](DaemonFlags &f, const std::string &v) {
         return parseByteSizeFlag("blob-quota-bytes", v, f.blobQuotaBytes);
       }},
      {"cache-salt", [](const DaemonFlags &f) { return f.cacheSalt; },
       "salt mixed into compile keys (persisted in <cache-dir>/salt; empty: "
       "keep the persisted one)",
       [](DaemonFlags &f, const std::string &v) {
         if (absl::Status status = validateCacheSalt(v); !status.ok())
           return absl::InvalidArgumentError(
               absl::StrCat("--cache-salt: ", status.message()));
         f.cacheSalt = v;
         return absl::OkStatus();
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
      {"log-format", [](const DaemonFlags &f) { return f.logFormat; },
       "text, or json (one object per line: time, level, logger, msg, "
       "request_id)",
       [](DaemonFlags &f, const std::string &v) {
         if (v != "text" && v != "json")
           return absl::InvalidArgumentError(absl::StrCat(
               "--log-format: '", v, "' is not one of text, json"));
         f.logFormat = v;
         return absl::OkStatus();
       }},
      {"metrics-listen", [](const DaemonFlags &f) { return f.metricsListen; },
       "host:port serving GET /metrics (Prometheus text); port 0 picks one",
       [](DaemonFlags &f, const std::string &v) {
         f.metricsListen = v;
         return absl::OkStatus();
       }},
      {"metrics-port-file",
       [](const DaemonFlags &f) { return f.metricsPortFile; },
       "write the bound metrics port here (atomically) once listening",
       [](DaemonFlags &f, const std::string &v) {
         f.metricsPortFile = v;
         return absl::OkStatus();
       }},
      {"debug-compile-fault",
       [](const DaemonFlags &f) { return f.debugCompileFault; },
       "TESTING AID, never in production: crash:OP or oom:OP (OP such as "
       "aten.gelu.default) makes the compile worker of any graph with OP "
       "segfault or run out of memory on entering codegen (or the "
       "per-node support check), so tests can check that kilnd survives it",
       [](DaemonFlags &f, const std::string &v) {
         bool kind = absl::StartsWith(v, "crash:") || absl::StartsWith(v, "oom:");
         if (!v.empty() && (!kind || absl::EndsWith(v, ":")))
           return absl::InvalidArgumentError(absl::StrCat(
               "--debug-compile-fault: '", v,
               "' is not crash:OP or oom:OP (e.g. crash:aten.gelu.default)"));
         f.debugCompileFault = v;
         return absl::OkStatus();
       }},
      {"debug-miscompile", [](const DaemonFlags &f) { return f.debugMiscompile; },
       "TESTING AID, never in production: comma list of ATen ops (e.g. "
       "aten.gelu.default) whose results the compiler deliberately perturbs "
       "(r*1.01+0.01), so tests can check that verify=True finds them; part "
       "of every compile key",
       [](DaemonFlags &f, const std::string &v) {
         for (absl::string_view op : absl::StrSplit(v, ',', absl::SkipEmpty())) {
           op = absl::StripAsciiWhitespace(op);
           std::vector<absl::string_view> parts = absl::StrSplit(op, '.');
           if (parts.size() != 3 || parts[0].empty() || parts[1].empty() ||
               parts[2].empty())
             return absl::InvalidArgumentError(absl::StrCat(
                 "--debug-miscompile: '", op, "' is not an op overload name "
                 "such as aten.gelu.default"));
         }
         f.debugMiscompile = v;
         return absl::OkStatus();
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

std::vector<std::string> DaemonFlags::debugMiscompileOps() const {
  std::vector<std::string> ops;
  for (absl::string_view op : absl::StrSplit(debugMiscompile, ',')) {
    op = absl::StripAsciiWhitespace(op);
    if (!op.empty())
      ops.emplace_back(op);
  }
  return ops;
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
  flags.compileWorker =
      (std::filesystem::path(flags.agentBinDir) / "kiln-compile-worker")
          .string();
  flags.compileWorkers = std::max(1u, std::thread::hardware_concurrency());
  return flags;
}

namespace {

/// KILN_CACHE_DIR for cache-dir.
std::string envName(const std::string &flag) {
  std::string name = absl::StrCat("KILN_", flag);
  for (char &c : name)
    c = c == '-' ? '_' : absl::ascii_toupper(c);
  return name;
}

/// cache_dir for cache-dir.
std::string yamlKey(const std::string &flag) {
  std::string key = flag;
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

const FlagSpec *findFlag(const std::string &name) {
  for (const FlagSpec &spec : flagTable())
    if (name == spec.name)
      return &spec;
  return nullptr;
}

/// Applies one value; errors from a source other than the command line say
/// where the value came from instead of "--flag".
absl::Status apply(DaemonFlags &flags, const FlagSpec &spec,
                   const std::string &value, const std::string &source) {
  absl::Status status = spec.set(flags, value);
  if (status.ok() || source.empty())
    return status;
  absl::string_view message = status.message();
  std::string flag = absl::StrCat("--", spec.name);
  if (absl::ConsumePrefix(&message, flag))
    absl::ConsumePrefix(&message, ":");
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": ", absl::StripAsciiWhitespace(message)));
}

struct CommandLineFlag {
  const FlagSpec *spec;
  std::string value;
};

} // namespace

Environment processEnvironment() {
  Environment env;
  for (char **entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    if (size_t eq = text.find('='); eq != std::string::npos)
      env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
}

absl::StatusOr<DaemonFlags> parseDaemonFlags(const std::vector<std::string> &args,
                                             const Environment &env) {
  DaemonFlags flags = defaultDaemonFlags();
  // The command line is read first (to find --config) and applied last.
  std::vector<CommandLineFlag> commandLine;
  std::string configFile;
  if (auto it = env.find("KILN_CONFIG"); it != env.end())
    configFile = it->second;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
      continue;
    }
    if (arg == "--version") {
      flags.version = true;
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
    const FlagSpec *spec = findFlag(name);
    if (!spec && name != "config")
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '--", name, "' (see kilnd --help)"));
    if (!hasValue && spec && spec->isSwitch) {
      value = "true";
    } else if (!hasValue) {
      if (i + 1 >= args.size())
        return absl::InvalidArgumentError(
            absl::StrCat("flag '--", name, "' needs a value"));
      value = args[++i];
    }
    if (spec)
      commandLine.push_back({spec, value});
    else
      configFile = value;
  }

  if (!configFile.empty()) {
    absl::StatusOr<std::vector<ConfigSetting>> settings =
        readConfigFile(configFile);
    if (!settings.ok())
      return absl::InvalidArgumentError(settings.status().message());
    for (const ConfigSetting &setting : *settings) {
      const FlagSpec *spec = nullptr;
      for (const FlagSpec &candidate : flagTable())
        if (setting.key == yamlKey(candidate.name))
          spec = &candidate;
      std::string at = absl::StrCat(configFile, ":", setting.line, ": key '",
                                    setting.key, "'");
      if (!spec)
        return absl::InvalidArgumentError(absl::StrCat(
            at, " is unknown (keys are the flag names with underscores, "
                "e.g. cache_dir; see kilnd --help)"));
      RETURN_IF_ERROR(apply(flags, *spec, setting.value, at));
    }
    flags.configFile = configFile;
  }
  for (const FlagSpec &spec : flagTable()) {
    std::string name = envName(spec.name);
    if (auto it = env.find(name); it != env.end())
      RETURN_IF_ERROR(apply(flags, spec, it->second,
                            absl::StrCat("environment variable ", name)));
  }
  for (const CommandLineFlag &flag : commandLine)
    RETURN_IF_ERROR(apply(flags, *flag.spec, flag.value, ""));
  return flags;
}

absl::StatusOr<DaemonFlags> parseDaemonFlags(int argc,
                                             const char *const *argv) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  return parseDaemonFlags(args, processEnvironment());
}

std::string daemonFlagsHelp() {
  DaemonFlags defaults = defaultDaemonFlags();
  std::string text =
      "kilnd: the Kiln compilation and execution daemon.\n\n"
      "Usage: kilnd [--flag=value ...]\n\n"
      "Every setting below can be given, highest precedence first, as a "
      "flag,\nas an environment variable, or as a key in the YAML file named "
      "by\n--config FILE (or KILN_CONFIG); otherwise its default applies.\n\n"
      "Settings:\n";
  for (const FlagSpec &spec : flagTable()) {
    std::string shown = spec.showDefault(defaults);
    absl::StrAppend(&text, "  --", spec.name, "  [env ", envName(spec.name),
                    ", yaml ", yamlKey(spec.name), "] (default: ",
                    shown.empty() ? "none" : shown, ")\n      ", spec.doc,
                    "\n");
  }
  absl::StrAppend(&text,
                  "  --config FILE  [env KILN_CONFIG] (default: none)\n"
                  "      YAML file of key: value settings (keys above)\n"
                  "  --help\n      print this text and exit\n"
                  "  --version\n      print kilnd's version and compiler build, and exit\n");
  return text;
}

} // namespace kiln::server
