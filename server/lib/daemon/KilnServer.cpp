//===- KilnServer.cpp - kilnd's gRPC server, assembled --------------------===//
//
// This file implements KilnServer: wiring stores, scheduler and services into
// a grpc::Server with health checking, reflection and message size limits.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/KilnServer.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Credentials.h"
#include "kiln/common/Status.h"
#include "kiln/common/Version.h"
#include "kiln/server/api/AgentService.h"
#include "kiln/server/api/BlobService.h"
#include "kiln/server/store/CacheSalt.h"
#include "kiln/server/api/CacheService.h"
#include "kiln/server/api/CompilerService.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/server/sched/DeviceRegistry.h"
#include "kiln/server/api/DaemonService.h"
#include "kiln/server/api/DevicesService.h"
#include "kiln/server/api/DrainGate.h"
#include "kiln/server/api/ExecutorService.h"
#include "kiln/server/api/LocalExecuteServer.h"
#include "kiln/server/api/RetryPushback.h"
#include "kiln/server/sched/Scheduler.h"
#include "kiln/server/sched/TaskRecord.h"
#include "kiln/server/api/ServerMetrics.h"

#include "absl/strings/str_cat.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include "grpc/health/v1/health.pb.h"

#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include <mutex>

namespace kiln::server {

namespace {
// Blob chunks are 1 MiB and inline tensors stay below 4 MiB; the overhead
// leaves room for the envelope around a full 4 MiB payload.
constexpr int kMaxMessageBytes = 4 * 1024 * 1024 + 64 * 1024;
// How long an OpenLocalSession ticket opens connections.
constexpr std::chrono::minutes kLocalTicketTtl{10};
} // namespace

/// Declaration order is construction order; the grpc::Server is last so it
/// stops before anything its handlers use is destroyed.
struct KilnServer::State {
  AccessPolicy access;
  ServerMetrics metrics;
  std::unique_ptr<ContentStore> store;
  std::unique_ptr<ExecutableNamespace> executables;
  std::unique_ptr<TaskRecords> taskRecords;
  std::unique_ptr<RemoteCache> remote;
  std::unique_ptr<CompileCache> cache;
  std::unique_ptr<DeviceRegistry> registry;
  std::unique_ptr<Scheduler> scheduler;
  DrainGate drainGate;
  std::unique_ptr<CompilerService> compilerService;
  std::unique_ptr<ExecutorService> executorService;
  std::unique_ptr<BlobService> blobService;
  std::unique_ptr<DevicesService> devicesService;
  std::unique_ptr<DaemonService> daemonService;
  /// Random, per process: Daemon.GetInfo and the local socket's name.
  std::string daemonId;
  LocalLinks localLinks;
  std::unique_ptr<AgentService> agentService;
  std::unique_ptr<CacheService> cacheService;
  std::unique_ptr<LocalSessions> localSessions;
  std::unique_ptr<LocalExecuteServer> localExecute;
  std::once_flag shutdownOnce;
  std::unique_ptr<grpc::Server> server;
};

std::filesystem::path
taskPublicKeyPath(const std::filesystem::path &cacheDir) {
  return cacheDir / "keys" / "task-public-key.pem";
}

KilnServer::KilnServer(std::unique_ptr<State> state)
    : state(std::move(state)) {}

KilnServer::~KilnServer() { shutdown(std::chrono::milliseconds(0)); }

absl::StatusOr<std::unique_ptr<KilnServer>>
KilnServer::start(ServerOptions options) {
  if (!options.compiler)
    return absl::InvalidArgumentError("KilnServer needs a compiler");
  bool tls = options.tls.enabled();
  RETURN_IF_ERROR(checkListenAddress(options.listenAddress, tls,
                                     options.access.enabled(),
                                     options.insecure));
  if (!isLoopbackAddress(options.listenAddress) &&
      !(tls && options.access.enabled()))
    spdlog::warn("--insecure: listening on {} {}; anyone who reaches it can "
                 "run code on the agents",
                 options.listenAddress,
                 tls ? "without credentials" : "without TLS");
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   serverCredentials(options.tls));
  auto state = std::make_unique<State>();
  state->access = std::move(options.access);
  ASSIGN_OR_RETURN(state->store, ContentStore::open(options.cacheDir / "cas",
                                                   options.cacheCapacityBytes,
                                                   options.transitMemoryBytes));
  std::filesystem::path keyPath =
      options.taskSigningKey.empty()
          ? options.cacheDir / "keys" / "task-signing-key.pem"
          : options.taskSigningKey;
  absl::StatusOr<TaskSigningKey> key = TaskSigningKey::loadOrCreate(keyPath);
  if (!key.ok())
    return absl::Status(key.status().code(),
                        absl::StrCat("--task-signing-key: ",
                                     key.status().message()));
  state->taskRecords = std::make_unique<TaskRecords>(*std::move(key));
  // A key from elsewhere (--task-signing-key, a Helm Secret) leaves the
  // cache's keys/ folder uncreated.
  std::filesystem::path publicKey = taskPublicKeyPath(options.cacheDir);
  RETURN_IF_ERROR(createParentDirectory(publicKey));
  RETURN_IF_ERROR(
      writeFileAtomically(publicKey, state->taskRecords->publicKeyPem()));
  ASSIGN_OR_RETURN(state->executables,
                   ExecutableNamespace::open(options.cacheDir / "executables"));
  ASSIGN_OR_RETURN(state->cache,
                   CompileCache::open(*state->store, *state->executables,
                                      options.cacheDir / "ac",
                                      options.compiler,
                                      options.compilerBuildId,
                                      options.compileWorkers));
  ASSIGN_OR_RETURN(std::string salt, loadCacheSalt(options.cacheDir / "salt",
                                                  options.cacheSalt));
  state->cache->setSalt(salt);
  if (!options.remote.url.empty()) {
    ASSIGN_OR_RETURN(state->remote, RemoteCache::connect(options.remote));
    state->cache->setRemote(state->remote.get());
    spdlog::info("remote cache: {} (instance '{}') is the second tier",
                 options.remote.url, options.remote.instanceName);
  }
  state->registry =
      std::make_unique<DeviceRegistry>(options.heartbeatInterval);
  state->registry->expectAgents(options.expectedAgentIds, options.deviceWait);
  state->registry->startHeartbeatMonitor();
  state->scheduler =
      std::make_unique<Scheduler>(*state->registry, options.deviceWait);
  state->compilerService = std::make_unique<CompilerService>(
      *state->store, *state->cache, options.nodeSupport,
      options.resolveOptions, *state->registry, options.supportedTargets,
      state->drainGate, state->metrics, state->access, options.importLimits);
  state->executorService = std::make_unique<ExecutorService>(
      *state->store, *state->executables, *state->taskRecords, *state->scheduler,
      options.executeTimeout, state->drainGate, state->metrics, state->access);
  state->blobService =
      std::make_unique<BlobService>(*state->store, state->metrics,
                                    state->access, options.maxBlobBytes,
                                    options.blobQuotaBytes);
  state->blobService->setRemote(state->remote.get());
  addMetricCollectors(*state);
  state->devicesService =
      std::make_unique<DevicesService>(*state->registry, state->access);
  ASSIGN_OR_RETURN(state->daemonId, randomHex(16));
  v1::DaemonInfo info;
  info.set_version(kVersion);
  info.set_compiler_build_id(options.compilerBuildId);
  info.set_daemon_id(state->daemonId);
  for (const std::string &target : options.supportedTargets)
    info.add_compile_targets(target);
  info.set_client_protocol_version(kClientProtocolVersion);
  state->daemonService = std::make_unique<DaemonService>(std::move(info), state->access);
  state->metrics.registry.addBuildAndProcessMetrics(kVersion, options.compilerBuildId);
  state->agentService = std::make_unique<AgentService>(
      *state->registry, state->taskRecords->publicKeyPem(), state->access,
      state->localLinks);
  state->cacheService = std::make_unique<CacheService>(
      *state->store, *state->cache, options.cacheDir / "salt", state->access,
      [compiler = state->compilerService.get()](const v1::CompileRequest &request) {
        return compiler->effectiveOptions(request);
      });

  RETURN_IF_ERROR(startLocalSocket(options, *state));

  grpc::EnableDefaultHealthCheckService(true);
  // grpc++'s health service carries no protobuf descriptor; referencing
  // Kiln's copy of grpc.health.v1 links it in, so reflection can describe
  // the service (grpcurl ... grpc.health.v1.Health/Check with no .proto).
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0, localAgentPort = 0;
  builder.AddListeningPort(options.listenAddress, credentials, &port);
  bool wantLocalAgentPort = options.localAgentPort && tls;
  if (wantLocalAgentPort)
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &localAgentPort);
  builder.experimental().SetInterceptorCreators(retryPushbackInterceptors());
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(state->compilerService.get());
  builder.RegisterService(state->executorService.get());
  builder.RegisterService(state->blobService.get());
  builder.RegisterService(state->devicesService.get());
  builder.RegisterService(state->daemonService.get());
  builder.RegisterService(state->agentService.get());
  builder.RegisterService(state->cacheService.get());
  state->server = builder.BuildAndStart();
  if (!state->server || port == 0 ||
      (wantLocalAgentPort && localAgentPort == 0))
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on '", options.listenAddress,
        "' (address in use or malformed? use host:port, port 0 for any)"));
  auto server = std::unique_ptr<KilnServer>(new KilnServer(std::move(state)));
  server->boundPort = port;
  server->boundLocalAgentPort = localAgentPort;
  return server;
}

bool KilnServer::drain(std::chrono::milliseconds timeout) {
  state->drainGate.beginDrain();
  if (grpc::HealthCheckServiceInterface *health =
          state->server->GetHealthCheckService())
    health->SetServingStatus(false);
  return state->drainGate.waitIdle(std::chrono::steady_clock::now() + timeout);
}

bool KilnServer::serving() const { return !state->drainGate.draining(); }

void KilnServer::shutdown(std::chrono::milliseconds grace) {
  std::call_once(state->shutdownOnce, [&] {
    // New Executes stop waiting for devices; then in-flight calls get
    // `grace`, after which gRPC cancels them (ending agent streams, which
    // fails their tasks so no handler waits forever).
    if (state->localExecute)
      state->localExecute->beginShutdown(); // no new local calls
    state->registry->shutdown();
    state->server->Shutdown(std::chrono::system_clock::now() + grace);
    // gRPC's end of the agents' streams failed the tasks local calls wait on.
    if (state->localExecute)
      state->localExecute->stop();
  });
}

void KilnServer::wait() { state->server->Wait(); }

void KilnServer::attachLocalLink(const std::string &agentId, UniqueFd socket) {
  ContentStore &store = *state->store;
  state->localLinks.set(std::make_shared<LocalAgentLink>(
      agentId, std::move(socket),
      [&store](const v1::Digest &digest) { return store.openBlob(digest); }));
}

absl::Status KilnServer::startLocalSocket(const ServerOptions &options,
                                          State &s) {
  if (options.localSocket == "none")
    return absl::OkStatus();
  const std::string &daemonId = s.daemonId;
  std::string path = options.localSocket.empty()
                         ? absl::StrCat("@kiln-", daemonId)
                         : options.localSocket;
  s.localSessions = std::make_unique<LocalSessions>(path, daemonId,
                                                    kLocalTicketTtl);
  ASSIGN_OR_RETURN(s.localExecute,
                   LocalExecuteServer::start(path, *s.localSessions,
                                             *s.executorService,
                                             options.executeTimeout));
  s.executorService->setLocalSessions(s.localSessions.get());
  spdlog::info("local clients: Execute over unix socket {}", path);
  return absl::OkStatus();
}

ServerMetrics &KilnServer::metrics() { return state->metrics; }

void KilnServer::addMetricCollectors(State &s) {
  // Counters kept elsewhere are mirrored at scrape time: each grows by what
  // its source grew since the last scrape.
  auto mirror = [](Counter &counter, double total) {
    counter.inc(total - counter.value());
  };
  s.metrics.registry.addCollector([&s, mirror] {
    CompileCache::Stats cache = s.cache->stats();
    mirror(s.metrics.cacheHits.labels(), static_cast<double>(cache.hits));
    mirror(s.metrics.cacheMisses.labels(), static_cast<double>(cache.compiles));
    StoreIndex::Stats store = s.store->index().stats();
    s.metrics.cacheBytes.labels().set(static_cast<double>(store.blobBytes));
    TransitBlobs::Stats transit = s.store->transitStats();
    s.metrics.transitBytes.labels().set(static_cast<double>(transit.bytes));
    mirror(s.metrics.transitDropped.labels(), static_cast<double>(transit.dropped));
    mirror(s.metrics.transitSpilled.labels(), static_cast<double>(transit.spilled));
    mirror(s.metrics.cacheEvictions.labels(),
           static_cast<double>(store.evictedBlobs));
    s.metrics.agentsConnected.labels().set(
        static_cast<double>(s.registry->agentCount()));
    if (s.remote) {
      RemoteCache::Stats remote = s.remote->stats();
      s.metrics.remoteUp.labels().set(s.remote->up() ? 1 : 0);
      mirror(s.metrics.remoteRequests.labels({"hit"}), static_cast<double>(remote.hits));
      mirror(s.metrics.remoteRequests.labels({"miss"}), static_cast<double>(remote.misses));
      mirror(s.metrics.remoteRequests.labels({"error"}), static_cast<double>(remote.errors));
      mirror(s.metrics.remoteBytes.labels({"read"}), static_cast<double>(remote.bytesRead));
      mirror(s.metrics.remoteBytes.labels({"written"}),
             static_cast<double>(remote.bytesWritten));
      mirror(s.metrics.remoteCorrupt.labels(), static_cast<double>(remote.corruptBlobs));
    }
  });
}

std::shared_ptr<grpc::Channel> KilnServer::inProcessChannel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return state->server->InProcessChannel(args);
}

ContentStore &KilnServer::contentStore() { return *state->store; }

DeviceRegistry &KilnServer::deviceRegistry() { return *state->registry; }

CacheService &KilnServer::cacheService() { return *state->cacheService; }

} // namespace kiln::server
