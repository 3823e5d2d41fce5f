//===- Daemon.cpp - kilnd's lifecycle -------------------------------------===//
//
// This file implements runDaemon: start the server, write the port file,
// supervise local agents, wait for a signal and shut down cleanly.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/Daemon.h"
#include "kiln/server/api/CompilerService.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Credentials.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"
#include "kiln/server/compile/CompileWorker.h"
#include "kiln/server/daemon/KilnServer.h"
#include "kiln/server/daemon/LocalAgents.h"
#include "kiln/server/daemon/MetricsHttpServer.h"
#include "kiln/server/api/ServerMetrics.h"
#include "kiln/server/api/TokenFile.h"

#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <map>
#include <pthread.h>
#include <thread>

namespace kiln::server {

namespace {
sigset_t shutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}
} // namespace

std::string localDialAddress(const std::string &listen, int port) {
  std::string host = "127.0.0.1";
  if (size_t colon = listen.rfind(':'); colon != std::string::npos) {
    std::string listenHost = listen.substr(0, colon);
    if (listenHost == "[::]" || listenHost == "::")
      host = "[::1]";
    else if (!listenHost.empty() && listenHost != "0.0.0.0")
      host = listenHost;
  }
  return absl::StrCat(host, ":", port);
}

static absl::StatusOr<AccessPolicy>
accessPolicyFromFlags(const DaemonFlags &flags) {
  std::vector<TokenGrant> grants;
  if (!flags.authTokens.empty()) {
    ASSIGN_OR_RETURN(grants, readTokenFile(flags.authTokens));
  }
  return AccessPolicy(std::move(grants), !flags.tlsClientCa.empty());
}

void blockShutdownSignals() {
  sigset_t set = shutdownSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int runDaemon(const DaemonFlags &flags, OptionsResolverFn resolveOptions,
              const std::string &compilerBuildId,
              const std::vector<std::string> &supportedTargets) {
  ServerOptions options;
  options.listenAddress = flags.listen;
  options.tls = ServerTlsFiles{flags.tlsCert, flags.tlsKey, flags.tlsClientCa};
  options.insecure = flags.insecure;
  absl::StatusOr<AccessPolicy> access = accessPolicyFromFlags(flags);
  if (!access.ok()) {
    spdlog::critical("kilnd cannot start: {}",
                     std::string(access.status().message()));
    return 1;
  }
  options.access = *std::move(access);
  // With credentials required, kilnd gives each local agent a token of its
  // own (role agent, named after its id, loopback only); with TLS they dial
  // a plaintext loopback port, since they hold no certificate.
  std::map<std::string, std::string> localAgentTokens;
  if (options.access.enabled())
    for (const std::string &kind : flags.localAgentKinds()) {
      absl::StatusOr<std::string> token = randomHex(32);
      if (!token.ok()) {
        spdlog::critical("kilnd cannot start: {}",
                         std::string(token.status().message()));
        return 1;
      }
      options.access.grant(TokenGrant{absl::StrCat("local-", kind),
                                      Role::Agent, sha256Hex(*token),
                                      /*localOnly=*/true});
      localAgentTokens[kind] = *token;
    }
  options.localAgentPort = !flags.localAgentKinds().empty();
  options.cacheDir = flags.cacheDir;
  options.localSocket = flags.localSocket;
  options.taskSigningKey = flags.taskSigningKey;
  options.compileWorkers = flags.compileWorkers;
  options.executeTimeout = std::chrono::seconds(flags.executeTimeoutS);
  options.deviceWait = std::chrono::seconds(flags.deviceWaitS);
  for (const std::string &kind : flags.localAgentKinds())
    options.expectedAgentIds.push_back(localAgentId(kind));
  options.heartbeatInterval = std::chrono::milliseconds(flags.heartbeatMs);
  options.cacheCapacityBytes = flags.cacheCapacityBytes;
  options.transitMemoryBytes = flags.transitMemoryBytes;
  options.maxBlobBytes = flags.maxBlobBytes;
  options.blobQuotaBytes = flags.blobQuotaBytes;
  options.cacheSalt = flags.cacheSalt;
  options.remote.url = flags.remoteCache;
  options.remote.instanceName = flags.remoteInstanceName;
  options.remote.tlsCa = flags.remoteTlsCa;
  options.remote.tlsCert = flags.remoteTlsCert;
  options.remote.tlsKey = flags.remoteTlsKey;
  options.remote.timeout = std::chrono::milliseconds(flags.remoteTimeoutMs);
  options.remote.maxBlobBytes = flags.maxBlobBytes;
  // --debug-miscompile (a testing aid) changes the compiler, so its name too.
  std::vector<std::string> miscompiled = flags.debugMiscompileOps();
  if (!miscompiled.empty())
    spdlog::warn("--debug-miscompile: the lowering of {} is deliberately "
                 "wrong (a testing aid; never use it in production)",
                 flags.debugMiscompile);
  CompileWorkerSettings worker;
  worker.binary = flags.compileWorker;
  worker.scratchDir = std::filesystem::path(flags.cacheDir) / "compile-jobs";
  worker.limits.cpuSeconds = flags.compileCpuSeconds;
  worker.limits.memoryBytes = flags.compileMemoryBytes;
  worker.limits.wallTimeout = std::chrono::seconds(flags.compileTimeoutS);
  worker.debugFault = flags.debugCompileFault;
  if (!worker.debugFault.empty())
    spdlog::warn("--debug-compile-fault {}: compile workers will fail on "
                 "purpose (a testing aid; never use it in production)",
                 worker.debugFault);
  if (absl::Status ready = prepareCompileWorkers(worker); !ready.ok()) {
    spdlog::critical("kilnd cannot start: {}", std::string(ready.message()));
    return 1;
  }
  options.importLimits = worker.limits;
  options.compiler =
      withDebugMiscompile(compileInWorkerProcess(worker), miscompiled);
  options.nodeSupport = checkSupportInWorkerProcess(worker);
  options.resolveOptions = std::move(resolveOptions);
  options.compilerBuildId = debugMiscompileBuildId(compilerBuildId, miscompiled);
  options.supportedTargets = supportedTargets;

  absl::StatusOr<std::unique_ptr<KilnServer>> server =
      KilnServer::start(options);
  if (!server.ok()) {
    spdlog::critical("kilnd cannot start: {}",
                     std::string(server.status().message()));
    return 1;
  }
  // /metrics listens before the port file appears, so whoever waits for
  // the port file finds the metrics port file too.
  ServerMetrics &metrics = (*server)->metrics();
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> metricsServer =
      MetricsHttpServer::start(
          flags.metricsListen, [&metrics] { return metrics.registry.render(); },
          [&server] { return (*server)->serving(); });
  if (metricsServer.ok() && !flags.metricsPortFile.empty())
    if (absl::Status status = writeFileAtomically(
            flags.metricsPortFile, absl::StrCat((*metricsServer)->port(), "\n"));
        !status.ok())
      metricsServer = absl::Status(status.code(),
                                   absl::StrCat("--metrics-port-file: ",
                                                status.message()));
  if (!metricsServer.ok()) {
    spdlog::critical("kilnd cannot serve metrics: {}",
                     std::string(metricsServer.status().message()));
    (*server)->shutdown(std::chrono::milliseconds(0));
    return 1;
  }
  spdlog::info("metrics on http://{}/metrics",
               localDialAddress(flags.metricsListen,
                                (*metricsServer)->port()));
  std::string address = localDialAddress(flags.listen, (*server)->port());
  spdlog::info("kilnd listening on {} (bound port {}); cache {}; compiler "
               "build {}; {} compile worker(s)",
               address, (*server)->port(), flags.cacheDir, compilerBuildId,
               flags.compileWorkers);
  if (!flags.portFile.empty()) {
    absl::Status status = writeFileAtomically(
        flags.portFile, absl::StrCat((*server)->port(), "\n"));
    if (!status.ok()) {
      spdlog::critical("cannot write --port-file: {}",
                       std::string(status.message()));
      (*server)->shutdown(std::chrono::milliseconds(0));
      return 1;
    }
  }

  std::string agentAddress =
      (*server)->localAgentPort() != 0
          ? absl::StrCat("127.0.0.1:", (*server)->localAgentPort())
          : address;
  std::vector<LocalAgentSpec> agentSpecs = LocalAgents::plan(
      flags.localAgentKinds(), flags.agentBinDir, agentAddress, flags.cacheDir);
  // Agents log the way kilnd does, and verify tasks with its key. Settings
  // meant for agents kilnd does not run are not theirs.
  for (LocalAgentSpec &spec : agentSpecs) {
    spec.arguments.insert(
        spec.arguments.end(),
        {"--log-format", flags.logFormat, "--task-verify-key",
         taskPublicKeyPath(flags.cacheDir).string()});
    spec.environment = {
        absl::StrCat("KILN_AGENT_TOKEN=", localAgentTokens[spec.kind]),
        "KILN_AGENT_TLS_CA=", "KILN_AGENT_TLS_CERT=", "KILN_AGENT_TLS_KEY="};
  }
  LocalAgents::LinkFn onLink;
  if (flags.localLink)
    onLink = [&server](const std::string &agentId, UniqueFd socket) {
      (*server)->attachLocalLink(agentId, std::move(socket));
    };
  LocalAgents agents(std::move(agentSpecs), std::move(onLink));
  agents.start();

  sigset_t signals = shutdownSignals();
  int signal = 0;
  sigwait(&signals, &signal);
  spdlog::info("kilnd: {} received; draining (new compiles and executions "
               "get UNAVAILABLE; up to {} s for those in flight)",
               strsignal(signal), flags.drainTimeoutS);
  if ((*server)->drain(std::chrono::seconds(flags.drainTimeoutS)))
    spdlog::info("kilnd: drained; shutting down");
  else
    spdlog::warn("kilnd: --drain-timeout-s {} passed with requests still in "
                 "flight; cancelling them",
                 flags.drainTimeoutS);

  // Shutdown blocks until every handler returns; agent streams end when the
  // agents exit (local ones, stopped below) or at the grace deadline.
  std::thread stopper(
      [&] { (*server)->shutdown(std::chrono::milliseconds(3000)); });
  agents.stop();
  stopper.join();
  (*server)->wait();
  spdlog::info("kilnd stopped");
  return 0;
}

} // namespace kiln::server
