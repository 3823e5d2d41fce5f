//===- MetricsRegistryTest.cpp - Prometheus text rendering ----------------===//
//
// This file implements tests for the metrics registry's text exposition and
// the /metrics HTTP server.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/MetricsHttpServer.h"
#include "kiln/server/api/MetricsRegistry.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace kiln::server {
namespace {

TEST(MetricsRegistryTest, RendersTheTextFormatThroughPrometheusCpp) {
  MetricsRegistry registry;
  auto &compiles = registry.counter("kiln_compiles_total",
                                    "Compiles by target\\outcome.\nSecond line.",
                                    {"target", "outcome"});
  auto &depth = registry.gauge("kiln_queue_depth", "Tasks queued.", {"target"});
  auto &latency = registry.histogram("kiln_latency_seconds", "Latency.",
                                     {"device"}, {0.005, 0.5, 2});
  auto &bytes = registry.counter("kiln_bytes_total", "Bytes.");
  compiles.labels({"cpu", "miss"}).inc();
  compiles.labels({"cpu", "hit"}).inc(2);
  compiles.labels({"we\"ird\\\n", "error"}).inc();
  depth.labels({"cpu"}).set(3);
  depth.labels({"cpu"}).dec();
  latency.labels({"d/0"}).observe(0.005); // le is inclusive
  latency.labels({"d/0"}).observe(0.25);
  latency.labels({"d/0"}).observe(100);
  bytes.labels().inc(123456789012);
  bytes.labels().inc(-5); // ignored: counters never go down

  std::string text = registry.render();
  for (const char *line : {
           "# HELP kiln_compiles_total Compiles by target\\\\outcome.\\nSecond line.\n",
           "# TYPE kiln_compiles_total counter\n",
           "kiln_compiles_total{outcome=\"hit\",target=\"cpu\"} 2\n",
           "kiln_compiles_total{outcome=\"miss\",target=\"cpu\"} 1\n",
           "kiln_compiles_total{outcome=\"error\",target=\"we\\\"ird\\\\\\n\"} 1\n",
           "# TYPE kiln_queue_depth gauge\n",
           "kiln_queue_depth{target=\"cpu\"} 2\n",
           "# TYPE kiln_latency_seconds histogram\n",
           "kiln_latency_seconds_bucket{device=\"d/0\",le=\"0.005\"} 1\n",
           "kiln_latency_seconds_bucket{device=\"d/0\",le=\"0.5\"} 2\n",
           "kiln_latency_seconds_bucket{device=\"d/0\",le=\"2\"} 2\n",
           "kiln_latency_seconds_bucket{device=\"d/0\",le=\"+Inf\"} 3\n",
           "kiln_latency_seconds_sum{device=\"d/0\"} 100.255\n",
           "kiln_latency_seconds_count{device=\"d/0\"} 3\n",
           "kiln_bytes_total 123456789012\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << " not in:\n" << text;
}

TEST(MetricsRegistryTest, BuildInfoAndProcessMetrics) {
  MetricsRegistry registry;
  registry.addBuildAndProcessMetrics("9.9.9", "kiln-9.9.9+abc/llvm-19");
  std::string text = registry.render();
  EXPECT_NE(text.find("kiln_build_info{compiler_build_id=\"kiln-9.9.9+abc/llvm-19\","
                      "version=\"9.9.9\"} 1\n"),
            std::string::npos)
      << text;
  // Real values: this process has memory, descriptors and a start time.
  auto valueOf = [&](const std::string &name) {
    size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1.0
                                   : std::stod(text.substr(at + name.size() + 2));
  };
  EXPECT_GT(valueOf("process_resident_memory_bytes"), 1e6) << text;
  EXPECT_GT(valueOf("process_virtual_memory_bytes"), 1e6) << text;
  EXPECT_GE(valueOf("process_open_fds"), 3) << text;
  EXPECT_GE(valueOf("process_max_fds"), valueOf("process_open_fds")) << text;
  EXPECT_GE(valueOf("process_cpu_seconds_total"), 0) << text;
  EXPECT_GT(valueOf("process_start_time_seconds"), 1.6e9) << text;
}

TEST(MetricsRegistryTest, CollectorsRunBeforeEveryRender) {
  MetricsRegistry registry;
  auto &agents = registry.gauge("kiln_agents_connected", "Agents.");
  int calls = 0;
  registry.addCollector([&] { agents.labels().set(++calls); });
  EXPECT_NE(registry.render().find("kiln_agents_connected 1\n"),
            std::string::npos);
  EXPECT_NE(registry.render().find("kiln_agents_connected 2\n"),
            std::string::npos);
}

TEST(MetricsRegistryTest, ConcurrentIncrementsAreNotLost) {
  MetricsRegistry registry;
  auto &counter = registry.counter("kiln_x_total", "X.", {"t"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i)
        counter.labels({"a"}).inc();
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(counter.labels({"a"}).value(), 40000);
}

TEST(MetricsHttpServerTest, AnswersMetricsAnd404AndBadRequests) {
  auto render = [] { return std::string("kiln_up 1\n"); };
  std::string ok = metricsHttpResponse(
      "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", render);
  EXPECT_EQ(ok, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                "charset=utf-8\r\nContent-Length: 10\r\nConnection: "
                "close\r\n\r\nkiln_up 1\n");
  EXPECT_EQ(metricsHttpResponse("GET / HTTP/1.1\r\n\r\n", render).substr(0, 22),
            "HTTP/1.1 404 Not Found");
  EXPECT_EQ(
      metricsHttpResponse("POST /metrics HTTP/1.1\r\n\r\n", render).substr(0, 12),
      "HTTP/1.1 404");
  EXPECT_EQ(metricsHttpResponse("\x01\x02garbage\r\n\r\n", render).substr(0, 12),
            "HTTP/1.1 400");
}

TEST(MetricsHttpServerTest, HealthzFollowsTheServingState) {
  auto render = [] { return std::string(); };
  bool serving = true;
  auto health = [&] { return serving; };
  std::string head = "GET /healthz HTTP/1.1\r\n\r\n";
  EXPECT_EQ(metricsHttpResponse(head, render, health).substr(0, 15),
            "HTTP/1.1 200 OK");
  serving = false;
  std::string draining = metricsHttpResponse(head, render, health);
  EXPECT_EQ(draining.substr(0, 12), "HTTP/1.1 503");
  EXPECT_NE(draining.find("NOT_SERVING"), std::string::npos);
  // Without a health function there is no /healthz.
  EXPECT_EQ(metricsHttpResponse(head, render).substr(0, 12), "HTTP/1.1 404");
}

/// Sends `request` to 127.0.0.1:`port` and returns everything answered.
std::string roundTrip(int port, const std::string &request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
    close(fd);
    return "<connect failed>";
  }
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0)
    answer.append(buffer, n);
  close(fd);
  return answer;
}

TEST(MetricsHttpServerTest, ServesOverLoopbackDespiteASilentClient) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::start("127.0.0.1:0",
                               [] { return std::string("kiln_up 1\n"); });
  ASSERT_TRUE(server.ok()) << server.status();
  int port = (*server)->port();
  ASSERT_GT(port, 0);
  // A client that connects and says nothing must not block others.
  int silent = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(silent, reinterpret_cast<sockaddr *>(&address),
                    sizeof(address)),
            0);
  std::string answer = roundTrip(port, "GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_NE(answer.find("\r\n\r\nkiln_up 1\n"), std::string::npos) << answer;
  EXPECT_NE(roundTrip(port, "GET /nope HTTP/1.1\r\n\r\n").find("404"),
            std::string::npos);
  EXPECT_NE(roundTrip(port, std::string(20000, 'x')).find("400"),
            std::string::npos);
  close(silent);
  server->reset(); // clean shutdown: the thread joins
}

TEST(MetricsHttpServerTest, RejectsMalformedAndBusyAddresses) {
  EXPECT_EQ(MetricsHttpServer::start("nonsense", [] { return ""; })
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  auto first = MetricsHttpServer::start("127.0.0.1:0", [] { return ""; });
  ASSERT_TRUE(first.ok());
  auto second = MetricsHttpServer::start(
      "127.0.0.1:" + std::to_string((*first)->port()), [] { return ""; });
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

} // namespace
} // namespace kiln::server
