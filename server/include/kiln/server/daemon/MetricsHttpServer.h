//===- MetricsHttpServer.h - GET /metrics over plain HTTP/1.1 ---*- C++ -*-===//
//
// This file declares MetricsHttpServer: a one-thread HTTP/1.1 server on its
// own port that answers GET /metrics with the registry's text and 404 to
// anything else. Slow or garbage clients cannot stall it: connections are
// non-blocking, bounded in size and time, and closed after one answer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace kiln::server {

class MetricsHttpServer {
public:
  /// Produces the body of GET /metrics (called on the server thread).
  using RenderFn = std::function<std::string()>;
  /// Whether kilnd serves (GET /healthz: 200) or drains (503); plain HTTP
  /// probes work where the gRPC port speaks TLS, which kubelet's gRPC
  /// probes cannot.
  using HealthFn = std::function<bool()>;

  /// Binds `listenAddress` (host:port, [v6]:port; port 0 picks a free one)
  /// and starts serving. UNAVAILABLE when it cannot bind, INVALID_ARGUMENT
  /// when the address is malformed.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>>
  start(const std::string &listenAddress, RenderFn render,
        HealthFn health = nullptr);

  /// Stops the thread and closes every socket.
  ~MetricsHttpServer();

  int port() const { return boundPort; }

private:
  MetricsHttpServer(int listenFd, int wakeRead, int wakeWrite, int port,
                    RenderFn render, HealthFn health);
  void serve();

  int listenFd;
  int wakeRead;
  int wakeWrite;
  int boundPort;
  RenderFn render;
  HealthFn health;
  std::atomic<bool> stopping{false};
  std::thread thread;
};

/// The HTTP response (status line, headers, body) for one raw request head;
/// exposed for tests. `render` is called only for GET/HEAD /metrics,
/// `health` only for /healthz (404 without one).
std::string metricsHttpResponse(const std::string &requestHead,
                                const MetricsHttpServer::RenderFn &render,
                                const MetricsHttpServer::HealthFn &health = nullptr);

} // namespace kiln::server
