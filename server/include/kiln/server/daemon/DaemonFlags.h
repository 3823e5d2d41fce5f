//===- DaemonFlags.h - kilnd's command line ---------------------*- C++ -*-===//
//
// This file declares DaemonFlags and the parser behind kilnd's command line
// (on kiln::Settings); every flag has a default, so kilnd runs with none.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/common/Environment.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::server {

/// kilnd's settings, defaults filled in.
struct DaemonFlags {
  std::string listen = "127.0.0.1:50051";
  std::string portFile;
  /// Execute for clients on this machine: a socket path, '@name', "" for
  /// an abstract '@kiln-<id>', or "none".
  std::string localSocket;
  /// TLS on the gRPC port (PEM files); empty: plaintext.
  std::string tlsCert;
  std::string tlsKey;
  /// CA of client and agent certificates (mTLS); empty: none asked for.
  std::string tlsClientCa;
  /// Bearer-token grants file; empty: no tokens.
  std::string authTokens;
  /// Allows a non-loopback --listen without TLS and credentials.
  bool insecure = false;
  std::string cacheDir;
  /// Ed25519 private key (PEM) tasks are signed with; "" for
  /// <cacheDir>/keys/task-signing-key.pem, created on first start.
  std::string taskSigningKey;
  std::string localAgents = "cpu";
  bool localLink = true;
  std::string agentBinDir;
  unsigned compileWorkers = 1;
  /// The kiln-compile-worker binary each compile runs in.
  std::string compileWorker;
  /// Limits of one compile worker process.
  int64_t compileCpuSeconds = 600;
  int64_t compileMemoryBytes = int64_t{8} << 30;
  int64_t compileTimeoutS = 900;
  /// Testing aid: "crash" or "oom" makes every compile worker fail so on
  /// entering codegen. Empty (off) by default.
  std::string debugCompileFault;
  int64_t executeTimeoutS = 300;
  int64_t deviceWaitS = 15;
  int64_t heartbeatMs = 1000;
  std::string logLevel = "info";
  /// Seconds SIGTERM waits for in-flight compiles and executions.
  int64_t drainTimeoutS = 30;
  /// Content-store size cap (0: unlimited).
  int64_t cacheCapacityBytes = int64_t{20} << 30;
  /// In-transit blobs held in memory (0: written to disk like the rest).
  int64_t transitMemoryBytes = int64_t{1} << 30;
  /// Largest blob a client may declare in Blobs.Write; 0 = unlimited.
  int64_t maxBlobBytes = int64_t{16} << 30;
  /// Bytes of blobs each authenticated user may keep stored; 0 = unlimited.
  int64_t blobQuotaBytes = 0;
  /// Compile-key salt ("": keep the persisted one).
  std::string cacheSalt;
  /// The shared cache tier: grpc(s)://HOST:PORT of a REAPI v2 server
  /// ("": local only), its instance name, TLS files and call deadline.
  std::string remoteCache;
  std::string remoteInstanceName;
  std::string remoteTlsCa;
  std::string remoteTlsCert;
  std::string remoteTlsKey;
  int64_t remoteTimeoutMs = 10000;
  /// The YAML file the settings were read from ("" for none).
  std::string configFile;
  std::string logFormat = "text";
  std::string metricsListen = "127.0.0.1:9464";
  std::string metricsPortFile;
  /// Testing aid: ATen ops ("aten.gelu.default", comma separated) whose
  /// lowering the compiler deliberately gets wrong. Empty (off) by default.
  std::string debugMiscompile;
  bool help = false;
  /// --version: print the version and compiler build id, then exit.
  bool version = false;

  /// Agent kinds to spawn locally ("none" and "" give none).
  std::vector<std::string> localAgentKinds() const;
  /// The ops named by debugMiscompile (empty: none).
  std::vector<std::string> debugMiscompileOps() const;
};

/// Defaults that depend on the machine: cache dir under $HOME, agent binary
/// dir beside /proc/self/exe, one compile worker per core.
DaemonFlags defaultDaemonFlags();

using kiln::Environment;
using kiln::processEnvironment;

/// kilnd's settings from every source, highest precedence first: flags
/// (`--name=value`, `--name value`), environment (KILN_<NAME> with dashes as
/// underscores, e.g. KILN_CACHE_DIR), the YAML file named by --config or
/// KILN_CONFIG (keys with underscores, e.g. cache_dir), then defaults.
/// INVALID_ARGUMENT naming the flag, variable or file:line for unknown flags
/// or YAML keys, missing values and malformed values. Unknown KILN_*
/// variables are ignored (scripts use some for themselves).
absl::StatusOr<DaemonFlags> parseDaemonFlags(const std::vector<std::string> &args,
                                             const Environment &env);

/// parseDaemonFlags over argv (argv[0] skipped) and the process environment.
absl::StatusOr<DaemonFlags> parseDaemonFlags(int argc, const char *const *argv);

/// `kilnd --help`: every setting with its flag, environment variable, YAML
/// key, default and one line of doc.
std::string daemonFlagsHelp();

} // namespace kiln::server
