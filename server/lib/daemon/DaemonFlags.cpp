//===- DaemonFlags.cpp - kilnd's command line -----------------------------===//
//
// This file implements kilnd's settings on kiln::Settings (CLI11): the
// table of settings with their validators, parsing and --help.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/DaemonFlags.h"

#include "kiln/common/Settings.h"
#include "kiln/common/Status.h"
#include "kiln/server/daemon/ConfigFile.h"
#include "kiln/server/store/CacheSalt.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace kiln::server {

namespace {

constexpr const char *kDescription =
    "kilnd: the Kiln compilation and execution daemon.\n\n"
    "Usage: kilnd [--flag=value ...]\n\n"
    "Every setting below can be given, highest precedence first, as a flag,\n"
    "as an environment variable, or as a key in the YAML file named by\n"
    "--config FILE (or KILN_CONFIG); otherwise its default applies.";

std::string checkCacheSalt(std::string &value) {
  absl::Status status = validateCacheSalt(value);
  return status.ok() ? "" : std::string(status.message());
}

std::string checkCompileFault(std::string &value) {
  bool kind =
      absl::StartsWith(value, "crash:") || absl::StartsWith(value, "oom:");
  if (value.empty() || (kind && !absl::EndsWith(value, ":")))
    return "";
  return absl::StrCat("'", value,
                      "' is not crash:OP or oom:OP (e.g. crash:aten.gelu.default)");
}

std::string checkMiscompileOps(std::string &value) {
  for (absl::string_view op : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    op = absl::StripAsciiWhitespace(op);
    std::vector<absl::string_view> parts = absl::StrSplit(op, '.');
    if (parts.size() != 3 || parts[0].empty() || parts[1].empty() ||
        parts[2].empty())
      return absl::StrCat("'", op, "' is not an op overload name such as "
                                   "aten.gelu.default");
  }
  return "";
}

/// Every kilnd setting, bound to `flags`, in --help order.
void declareSettings(Settings &settings, DaemonFlags &flags) {
  settings.text("listen", flags.listen,
                "host:port to serve gRPC on; port 0 picks a free port");
  settings.text(
      "local-socket", flags.localSocket,
      "Unix socket where clients on this machine Execute with tensors in "
      "memfds (they find it through OpenLocalSession): a path, @name for an "
      "abstract socket, empty for @kiln-<daemon id>, or none");
  settings.boolean(
      "insecure", flags.insecure,
      "allow --listen on an address other machines can reach without TLS "
      "and credentials (logged as a warning; anyone who reaches the port "
      "can run code on the agents)",
      /*isSwitch=*/true);
  settings.text("tls-cert", flags.tlsCert,
                "PEM certificate (chain) of the gRPC port; with --tls-key, "
                "the port speaks only TLS");
  settings.text("tls-key", flags.tlsKey, "PEM private key of --tls-cert");
  settings.text(
      "tls-client-ca", flags.tlsClientCa,
      "PEM CA whose certificates identify clients and agents (mTLS): CN is "
      "the name (an agent's id), O kiln:users, kiln:admins or kiln:agents "
      "the role");
  settings.text(
      "auth-tokens", flags.authTokens,
      "file of bearer-token grants, '<name> <role> sha256:<hex>' per line "
      "(`kiln token new` makes one); with it or --tls-client-ca every call "
      "needs credentials");
  settings.text("port-file", flags.portFile,
                "write the bound port here (atomically) once listening");
  settings.text("cache-dir", flags.cacheDir,
                "content store (cas/) and compile cache (ac/) root");
  settings.text(
      "task-signing-key", flags.taskSigningKey,
      "Ed25519 private key (PEM) kilnd signs every task with; agents load "
      "only signed code (empty: <cache-dir>/keys/task-signing-key.pem, "
      "created on first start)");
  settings.text("local-agents", flags.localAgents,
                "comma list of agent kinds to run as child processes, or "
                "'none'");
  settings.boolean(
      "local-link", flags.localLink,
      "give each local agent a local link (a socketpair): its tasks and "
      "results travel there, and tensors as shared files (the store's blob "
      "files in, memfds out) instead of gRPC blob transfers. false: local "
      "agents work like remote ones",
      /*isSwitch=*/false);
  settings.text("agent-bin-dir", flags.agentBinDir,
                "directory holding kiln-agent-<kind> (default: kilnd's own)");
  settings.integer("compile-workers", flags.compileWorkers, 1u,
                   "compiles that may run at once (default: number of cores)");
  settings.text("compile-worker", flags.compileWorker,
                "the kiln-compile-worker binary every compile runs in, a "
                "process of its own (default: beside kilnd)");
  settings.integer("compile-cpu-seconds", flags.compileCpuSeconds, 1,
                   "CPU-time limit of one compile worker (RLIMIT_CPU; a graph and, "
                   "under CPU fallback, its segments); "
                   "past it the compile is DEADLINE_EXCEEDED");
  settings
      .byteSize("compile-memory-bytes", flags.compileMemoryBytes,
                "address-space limit of one compile worker (RLIMIT_AS); "
                "past it the compile is RESOURCE_EXHAUSTED")
      ->check(CLI::Validator(
          [](std::string &bytes) -> std::string {
            // The byte-size transform has made `bytes` a count.
            if (std::stoll(bytes) >= (int64_t{256} << 20))
              return "";
            return "must be at least 256MiB (the compiler's libraries alone "
                   "map more than 100MiB)";
          },
          "SIZE"));
  settings.integer("compile-timeout-s", flags.compileTimeoutS, 1,
                   "wall-clock limit of one compile worker; it is killed "
                   "past it (DEADLINE_EXCEEDED)");
  settings.integer("execute-timeout-s", flags.executeTimeoutS, 1,
                   "Execute deadline in seconds when the client sets none");
  settings.integer("device-wait-s", flags.deviceWaitS, 0,
                   "seconds Execute waits for a device of its kind to "
                   "register");
  settings.integer("heartbeat-ms", flags.heartbeatMs, 10,
                   "agent heartbeat interval; 3 missed make its devices "
                   "UNHEALTHY");
  settings.integer("drain-timeout-s", flags.drainTimeoutS, 0,
                   "on SIGTERM, seconds to let in-flight compiles/executions "
                   "finish");
  settings.byteSize("cache-capacity-bytes", flags.cacheCapacityBytes,
                    "content-store size cap (LRU eviction past it, never of "
                    "blobs in use); 0 = unlimited");
  settings.byteSize(
      "transit-memory-bytes", flags.transitMemoryBytes,
      "in-transit blobs (Execute inputs uploaded in transit, outputs going "
      "to gRPC clients) held in memory instead of the disk store; blobs read "
      "out in full go first when room is needed; 0 = all on disk");
  settings.byteSize("max-blob-bytes", flags.maxBlobBytes,
                    "largest blob a client may declare in Blobs.Write "
                    "(RESOURCE_EXHAUSTED past it, before anything is "
                    "written); 0 = unlimited");
  settings.byteSize(
      "blob-quota-bytes", flags.blobQuotaBytes,
      "bytes of blobs each authenticated user (role user) may keep in the "
      "store; a Blobs.Write past it is RESOURCE_EXHAUSTED before anything "
      "is written; 0 = unlimited");
  settings
      .text("cache-salt", flags.cacheSalt,
            "salt mixed into compile keys (persisted in <cache-dir>/salt; "
            "empty: keep the persisted one)")
      ->check(CLI::Validator(checkCacheSalt, "SALT"));
  settings.text(
      "remote-cache", flags.remoteCache,
      "shared cache tier: grpc://HOST:PORT or grpcs://HOST:PORT of a Remote "
      "Execution API v2 cache (bazel-remote, Buildbarn); the local store "
      "stays the first tier, and a remote that is down only costs hits");
  settings.text("remote-instance-name", flags.remoteInstanceName,
                "REAPI instance name on --remote-cache (empty: the default)");
  settings.text("remote-tls-ca", flags.remoteTlsCa,
                "PEM CA of the grpcs:// remote's certificate (empty: system "
                "roots)");
  settings.text("remote-tls-cert", flags.remoteTlsCert,
                "PEM client certificate for an mTLS remote (with "
                "--remote-tls-key)");
  settings.text("remote-tls-key", flags.remoteTlsKey,
                "PEM private key of --remote-tls-cert");
  settings.integer("remote-timeout-ms", flags.remoteTimeoutMs, 1,
                   "deadline of each remote-cache call (large blobs get a "
                   "second more per 32 MiB); a failed call marks the remote "
                   "down for a backoff of 1 s doubling to 60 s");
  settings.oneOf("log-level", flags.logLevel,
                 {"trace", "debug", "info", "warn", "error", "critical", "off"},
                 "trace, debug, info, warn, error, critical or off");
  settings.oneOf("log-format", flags.logFormat, {"text", "json"},
                 "text, or json (one object per line: time, level, logger, "
                 "msg, request_id)");
  settings.text("metrics-listen", flags.metricsListen,
                "host:port serving GET /metrics (Prometheus text); port 0 "
                "picks one");
  settings.text("metrics-port-file", flags.metricsPortFile,
                "write the bound metrics port here (atomically) once "
                "listening");
  settings
      .text("debug-compile-fault", flags.debugCompileFault,
            "TESTING AID, never in production: crash:OP or oom:OP (OP such "
            "as aten.gelu.default) makes the compile worker of any graph "
            "with OP segfault or run out of memory on entering codegen (or "
            "the per-node support check), so tests can check that kilnd "
            "survives it")
      ->check(CLI::Validator(checkCompileFault, "FAULT"));
  settings
      .text("debug-miscompile", flags.debugMiscompile,
            "TESTING AID, never in production: comma list of ATen ops (e.g. "
            "aten.gelu.default) whose results the compiler deliberately "
            "perturbs (r*1.01+0.01), so tests can check that verify=True "
            "finds them; part of every compile key")
      ->check(CLI::Validator(checkMiscompileOps, "OPS"));
  settings.fileOption(
      "config", flags.configFile, "KILN_CONFIG",
      [](const std::string &path) { return readConfigFile(path); },
      "YAML file of key: value settings (keys above)");
  settings.commandFlag("-h,--help", flags.help, "print this text and exit");
  settings.commandFlag("--version", flags.version,
                       "print kilnd's version and compiler build, and exit");
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

absl::StatusOr<DaemonFlags> parseDaemonFlags(const std::vector<std::string> &args,
                                             const Environment &env) {
  DaemonFlags flags = defaultDaemonFlags();
  Settings settings("kilnd", kDescription, "KILN_", /*fileKeys=*/true);
  declareSettings(settings, flags);
  RETURN_IF_ERROR(settings.parse(args, env));
  // Compile workers run in their own scratch directory and local agents may
  // too: a relative --cache-dir would name another place for each of them.
  std::error_code error;
  std::filesystem::path cacheDir = std::filesystem::absolute(flags.cacheDir, error);
  if (error)
    return absl::InvalidArgumentError(absl::StrCat(
        "--cache-dir ", flags.cacheDir, ": ", error.message()));
  flags.cacheDir = cacheDir.lexically_normal().string();
  return flags;
}

absl::StatusOr<DaemonFlags> parseDaemonFlags(int argc,
                                             const char *const *argv) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  return parseDaemonFlags(args, processEnvironment());
}

std::string daemonFlagsHelp() {
  DaemonFlags defaults = defaultDaemonFlags();
  Settings settings("kilnd", kDescription, "KILN_", /*fileKeys=*/true);
  declareSettings(settings, defaults);
  return settings.help();
}

} // namespace kiln::server
