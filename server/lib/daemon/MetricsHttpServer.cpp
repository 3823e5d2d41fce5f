//===- MetricsHttpServer.cpp - GET /metrics over plain HTTP/1.1 -----------===//
//
// This file implements the metrics HTTP server: a poll() loop over the
// listening socket, a wake pipe for shutdown and up to kMaxConnections
// non-blocking connections, each with a deadline and a size cap.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/daemon/MetricsHttpServer.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace kiln::server {

namespace {

constexpr size_t kMaxRequestBytes = 8192;
constexpr size_t kMaxConnections = 64;
constexpr auto kConnectionTimeout = std::chrono::seconds(5);

using Clock = std::chrono::steady_clock;

struct Connection {
  int fd;
  Clock::time_point deadline;
  std::string in;
  std::string out;
  size_t sent = 0;
  bool answered = false;
};

void setNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
}

std::string response(int code, const char *reason, const std::string &type,
                     const std::string &body, bool withBody) {
  return absl::StrCat("HTTP/1.1 ", code, " ", reason, "\r\nContent-Type: ",
                      type, "\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n\r\n", withBody ? body : "");
}

} // namespace

std::string metricsHttpResponse(const std::string &requestHead,
                                const MetricsHttpServer::RenderFn &render,
                                const MetricsHttpServer::HealthFn &health) {
  size_t lineEnd = requestHead.find("\r\n");
  std::string line = requestHead.substr(0, lineEnd);
  size_t firstSpace = line.find(' ');
  size_t secondSpace = line.find(' ', firstSpace + 1);
  if (firstSpace == std::string::npos || secondSpace == std::string::npos ||
      line.compare(secondSpace + 1, 5, "HTTP/") != 0)
    return response(400, "Bad Request", "text/plain", "bad request\n", true);
  std::string method = line.substr(0, firstSpace);
  std::string target = line.substr(firstSpace + 1, secondSpace - firstSpace - 1);
  std::string path = target.substr(0, target.find('?'));
  bool head = method == "HEAD";
  if ((method == "GET" || head) && path == "/metrics")
    return response(200, "OK", "text/plain; version=0.0.4; charset=utf-8",
                    render(), !head);
  if ((method == "GET" || head) && path == "/healthz" && health)
    return health() ? response(200, "OK", "text/plain", "SERVING\n", !head)
                    : response(503, "Service Unavailable", "text/plain",
                               "NOT_SERVING (draining)\n", !head);
  return response(404, "Not Found", "text/plain",
                  "not found: kilnd serves GET /metrics and /healthz here\n",
                  !head);
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>>
MetricsHttpServer::start(const std::string &listenAddress, RenderFn render,
                         HealthFn health) {
  size_t colon = listenAddress.rfind(':');
  int port = -1;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(listenAddress.substr(colon + 1), &port) || port < 0 ||
      port > 65535)
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics address '", listenAddress, "' is not host:port"));
  std::string host = listenAddress.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                           service.c_str(), &hints, &found);
      rc != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics address '", listenAddress, "': ", gai_strerror(rc)));
  int fd = -1;
  std::string lastError = "no address";
  for (addrinfo *ai = found; ai && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
      continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
      lastError = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0)
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for metrics on '", listenAddress, "': ", lastError));
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &length);
  int boundPort = ntohs(bound.ss_family == AF_INET6
                            ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
  setNonBlocking(fd);
  int pipeFds[2];
  if (pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(fd);
    return absl::InternalError(
        absl::StrCat("metrics server: pipe: ", std::strerror(errno)));
  }
  auto server = std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(
      fd, pipeFds[0], pipeFds[1], boundPort, std::move(render),
      std::move(health)));
  server->thread = std::thread([s = server.get()] { s->serve(); });
  return server;
}

MetricsHttpServer::MetricsHttpServer(int listenFd, int wakeRead, int wakeWrite,
                                     int port, RenderFn render,
                                     HealthFn health)
    : listenFd(listenFd), wakeRead(wakeRead), wakeWrite(wakeWrite),
      boundPort(port), render(std::move(render)), health(std::move(health)) {}

MetricsHttpServer::~MetricsHttpServer() {
  stopping.store(true);
  char byte = 1;
  (void)!write(wakeWrite, &byte, 1);
  if (thread.joinable())
    thread.join();
  close(listenFd);
  close(wakeRead);
  close(wakeWrite);
}

void MetricsHttpServer::serve() {
  std::vector<Connection> connections;
  while (!stopping.load()) {
    // At the connection cap the listening socket is not polled (it would
    // stay readable and spin the loop); the kernel's backlog holds callers.
    short acceptEvents = connections.size() < kMaxConnections ? POLLIN : 0;
    std::vector<pollfd> fds = {{wakeRead, POLLIN, 0},
                               {listenFd, acceptEvents, 0}};
    for (const Connection &c : connections)
      fds.push_back({c.fd, static_cast<short>(c.answered ? POLLOUT : POLLIN), 0});
    if (poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR)
      break;
    if (fds[0].revents)
      break;
    // Serve existing connections first (their pollfds follow the two fixed
    // ones in order), then accept new ones.
    auto now = Clock::now();
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection &c = connections[i];
      short events = fds[i + 2].revents;
      bool done = now > c.deadline || (events & (POLLERR | POLLNVAL));
      if (!done && !c.answered && (events & (POLLIN | POLLHUP))) {
        char buffer[4096];
        ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
        if (n > 0)
          c.in.append(buffer, n);
        size_t headEnd = c.in.find("\r\n\r\n");
        if (headEnd == std::string::npos)
          headEnd = c.in.find("\n\n");
        if (headEnd != std::string::npos) {
          c.out = metricsHttpResponse(c.in, render, health);
          c.answered = true;
        } else if (c.in.size() > kMaxRequestBytes) {
          c.out = metricsHttpResponse("too large", render); // 400
          c.answered = true;
        } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          done = true; // peer closed before a full request
        }
      }
      if (!done && c.answered && c.sent < c.out.size()) {
        ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent,
                         MSG_NOSIGNAL);
        if (n > 0)
          c.sent += n;
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
          done = true;
      }
      if (done || (c.answered && c.sent == c.out.size())) {
        shutdown(c.fd, SHUT_WR);
        close(c.fd);
        c.fd = -1;
      }
    }
    std::erase_if(connections, [](const Connection &c) { return c.fd < 0; });
    if (fds[1].revents & POLLIN) {
      while (connections.size() < kMaxConnections) {
        int fd = accept4(listenFd, nullptr, nullptr,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
          break;
        connections.push_back({fd, Clock::now() + kConnectionTimeout});
      }
    }
  }
  for (Connection &c : connections)
    close(c.fd);
}

} // namespace kiln::server
