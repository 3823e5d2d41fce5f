//===- KilnServer.h - kilnd's gRPC server, assembled ------------*- C++ -*-===//
//
// This file declares KilnServer: the content store, compile cache, device
// registry, scheduler and the five kiln.v1 services behind one gRPC server,
// plus grpc.health.v1 and server reflection.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/store/CompileCache.h"
#include "kiln/server/store/RemoteCache.h"
#include "kiln/server/compile/CompileSandbox.h"
#include "kiln/server/compile/PlacedCompile.h"
#include "kiln/server/api/ServerTransport.h"

#include "kiln/common/UniqueFd.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace grpc {
class Channel;
} // namespace grpc

namespace kiln::server {

class CacheService;
class ContentStore;
class DeviceRegistry;
struct ServerMetrics;

/// Everything KilnServer needs; main() fills it from the flags.
struct ServerOptions {
  /// host:port to listen on; port 0 picks a free one.
  std::string listenAddress = "127.0.0.1:50051";
  /// TLS on listenAddress (off when tls.cert is empty).
  ServerTlsFiles tls;
  /// Who may call what; the default admits everyone (loopback only).
  AccessPolicy access;
  /// Accept a non-loopback listenAddress without TLS and credentials.
  bool insecure = false;
  /// With TLS on, also listen on a plaintext loopback port for the agents
  /// kilnd runs itself (they hold tokens, not certificates).
  bool localAgentPort = false;
  /// Execute for clients on this machine over a Unix socket with tensors in
  /// memfds: a path, '@name' (abstract), "" for '@kiln-<daemon id>', or
  /// "none".
  std::string localSocket;
  /// Root of the CAS (<cacheDir>/cas) and action cache (<cacheDir>/ac).
  std::filesystem::path cacheDir;
  /// kilnd's task key (Ed25519 PEM); empty for
  /// <cacheDir>/keys/task-signing-key.pem, created when missing. Its public
  /// half is written to taskPublicKeyPath(cacheDir) for local agents.
  std::filesystem::path taskSigningKey;
  /// The sandbox of TorchScript conversions (compile workers have theirs in
  /// `compiler`).
  CompileLimits importLimits;
  /// Threads compiles run on.
  unsigned compileWorkers = 1;
  /// Execute deadline when the client sets none.
  std::chrono::milliseconds executeTimeout{300'000};
  /// How long Execute waits for a device of its kind to register.
  std::chrono::milliseconds deviceWait{15'000};
  /// Ids of the agents kilnd starts itself (--local-agents): until each has
  /// registered, an Execute waits deviceWait for any kind; after that, and
  /// once deviceWait has passed since startup, a kind no agent has served
  /// fails at once.
  std::vector<std::string> expectedAgentIds;
  /// Content-store size cap in bytes (0: unlimited).
  int64_t cacheCapacityBytes = 0;
  /// In-transit blobs the store holds in memory, in bytes (0: on disk).
  int64_t transitMemoryBytes = 0;
  /// Largest blob Blobs.Write accepts (declared size); 0 = unlimited.
  int64_t maxBlobBytes = 0;
  /// Bytes of blobs each authenticated user may keep stored; 0 = no limit.
  int64_t blobQuotaBytes = 0;
  /// Compile-key salt; "" keeps the one persisted in <cacheDir>/salt.
  std::string cacheSalt;
  /// The shared cache tier (remote.url "" for none).
  RemoteCacheOptions remote;
  /// Heartbeat interval agents are told to keep.
  std::chrono::milliseconds heartbeatInterval{1'000};
  /// The compiler, its build id and the targets it supports.
  CompilerFn compiler;
  /// Which nodes a target compiles, for placement (null: nothing falls back).
  NodeSupportFn nodeSupport;
  /// Resolves the machine a request's options select (null: as sent).
  OptionsResolverFn resolveOptions;
  std::string compilerBuildId;
  std::vector<std::string> supportedTargets;
};

/// A running kilnd gRPC server. Thread-safe.
/// Where kilnd writes its task key's public half (PEM), for agents'
/// --task-verify-key: <cacheDir>/keys/task-public-key.pem.
std::filesystem::path taskPublicKeyPath(const std::filesystem::path &cacheDir);

class KilnServer {
public:
  /// Opens the caches, registers the services and starts listening.
  static absl::StatusOr<std::unique_ptr<KilnServer>>
  start(ServerOptions options);
  ~KilnServer();

  /// The port actually bound.
  int port() const { return boundPort; }
  /// The plaintext loopback port for local agents; 0 when there is none
  /// (they use port()).
  int localAgentPort() const { return boundLocalAgentPort; }

  /// Starts draining: new Compile/Execute calls get UNAVAILABLE and health
  /// turns NOT_SERVING; then waits up to `timeout` for the compiles and
  /// executions in flight. True when none is left. Other services (Blobs,
  /// Agent, ...) keep serving so in-flight work can complete.
  bool drain(std::chrono::milliseconds timeout);

  /// False once drain() began (GET /healthz on the metrics port).
  bool serving() const;

  /// Stops accepting calls, gives in-flight ones `grace` to finish, then
  /// cancels the rest. Idempotent.
  void shutdown(std::chrono::milliseconds grace);

  /// Blocks until the server has shut down.
  void wait();

  /// A channel into this server without a socket (fuzz targets, tests); it
  /// carries no transport security and no peer address.
  std::shared_ptr<grpc::Channel> inProcessChannel();

  /// Makes `socket` the local link of agent `agentId`, an agent kilnd
  /// started (LocalAgents); replaces the link of an earlier process.
  void attachLocalLink(const std::string &agentId, UniqueFd socket);

  ContentStore &contentStore();
  DeviceRegistry &deviceRegistry();
  /// kilnd's metrics, for the /metrics endpoint.
  ServerMetrics &metrics();
  CacheService &cacheService();

private:
  struct State;
  explicit KilnServer(std::unique_ptr<State> state);
  /// Registers the scrape-time readers of cache, store and registry numbers.
  static void addMetricCollectors(State &state);
  /// Starts the local Execute socket unless options.localSocket is "none".
  static absl::Status startLocalSocket(const ServerOptions &options,
                                       State &state);

  std::unique_ptr<State> state;
  int boundPort = 0;
  int boundLocalAgentPort = 0;
};

} // namespace kiln::server
