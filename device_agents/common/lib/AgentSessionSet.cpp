//===- AgentSessionSet.cpp - one agent, several kilnd replicas ------------===//
//
// This file implements AgentSessionSet: a session and a thread per kilnd
// address, started and stopped as the served list changes, and the DNS
// resolution of a headless Service's replicas.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentSessionSet.h"


#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <spdlog/spdlog.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>

namespace kiln::agent {

absl::StatusOr<std::vector<std::string>> resolveDaemons(const std::string &hostPort) {
  size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == hostPort.size())
    return absl::InvalidArgumentError(
        absl::StrCat("'", hostPort, "' is not HOST:PORT"));
  std::string host = hostPort.substr(0, colon);
  std::string port = hostPort.substr(colon + 1);
  int portNumber = 0;
  if (!absl::SimpleAtoi(port, &portNumber) || portNumber <= 0 || portNumber > 65535)
    return absl::InvalidArgumentError(
        absl::StrCat("'", hostPort, "': '", port, "' is not a port"));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  int error = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (error != 0)
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", host, ": ", ::gai_strerror(error)));
  std::set<std::string> addresses;
  for (addrinfo *a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(a->ai_addr)->sin_addr,
                  text, sizeof text);
      addresses.insert(absl::StrCat(text, ":", portNumber));
    } else if (a->ai_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(a->ai_addr)->sin6_addr,
                  text, sizeof text);
      addresses.insert(absl::StrCat("[", text, "]:", portNumber));
    }
  }
  ::freeaddrinfo(found);
  return std::vector<std::string>(addresses.begin(), addresses.end());
}

AgentSessionSet::AgentSessionSet(AgentOptions options, DeviceBackend &backend,
                                 std::shared_ptr<AgentStores> stores)
    : options(std::move(options)), backend(backend), stores(std::move(stores)) {}

AgentSessionSet::~AgentSessionSet() {
  stop();
  (void)wait();
}

absl::Status AgentSessionSet::serve(const std::vector<std::string> &addresses) {
  std::vector<Served> leaving;
  absl::Status result;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (stopping)
      return absl::OkStatus();
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (std::find(addresses.begin(), addresses.end(), it->first) == addresses.end()) {
        spdlog::info("leaving daemon {}: no longer among the replicas", it->first);
        it->second.session->stop();
        leaving.push_back(std::move(it->second));
        it = sessions.erase(it);
      } else {
        ++it;
      }
    }
    for (const std::string &address : addresses) {
      if (sessions.contains(address))
        continue;
      AgentOptions sessionOptions = options;
      sessionOptions.daemonAddress = address;
      absl::StatusOr<std::unique_ptr<AgentSession>> created =
          AgentSession::create(sessionOptions, backend, stores);
      if (!created.ok()) {
        result = created.status();
        break;
      }
      std::unique_ptr<AgentSession> session = *std::move(created);
      spdlog::info("{} agent {} serving daemon {} (cache {})", backend.kind(),
                   options.agentId, address, options.cacheDir.string());
      Served &served = sessions[address];
      served.session = std::move(session);
      AgentSession *running = served.session.get();
      served.thread = std::thread([this, running, address] {
        absl::Status status = running->run();
        if (!status.ok())
          spdlog::error("session with {} ended: {}", address, status.ToString());
        std::lock_guard<std::mutex> lock(mutex);
        if (!status.ok() && failure.ok())
          failure = status;
        // Ended by itself (not left by serve() nor stopped by stop()): the
        // agent ends, as it did with one daemon.
        auto it = sessions.find(address);
        if (!stopping && it != sessions.end() && it->second.session.get() == running)
          sessionEnded = true;
        changed.notify_all();
      });
    }
  }
  for (Served &served : leaving)
    served.thread.join();
  return result;
}

absl::Status AgentSessionSet::followService(const std::string &service,
                                            std::chrono::milliseconds refresh) {
  std::vector<std::string> last;
  while (true) {
    absl::StatusOr<std::vector<std::string>> addresses = resolveDaemons(service);
    if (addresses.ok() && *addresses != last) {
      spdlog::info("--daemon-service {}: {} replica(s)", service, addresses->size());
      if (absl::Status served = serve(*addresses); !served.ok())
        return served;
      last = *addresses;
    } else if (!addresses.ok()) {
      if (absl::IsInvalidArgument(addresses.status()))
        return addresses.status();
      spdlog::warn("--daemon-service {}: {}; keeping the {} replica(s) served",
                   service, std::string(addresses.status().message()), last.size());
    }
    std::unique_lock<std::mutex> lock(mutex);
    if (changed.wait_for(lock, refresh,
                         [&] { return stopping || sessionEnded || !failure.ok(); }))
      return absl::OkStatus();
  }
}

absl::Status AgentSessionSet::wait() {
  std::map<std::string, Served> all;
  absl::Status result;
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return stopping || sessionEnded || !failure.ok(); });
    stopping = true;
    for (auto &[address, served] : sessions)
      served.session->stop();
    all.swap(sessions);
    result = failure;
  }
  for (auto &[address, served] : all)
    if (served.thread.joinable())
      served.thread.join();
  return result;
}

void AgentSessionSet::stop() {
  std::lock_guard<std::mutex> lock(mutex);
  stopping = true;
  for (auto &[address, served] : sessions)
    served.session->stop();
  changed.notify_all();
}

std::vector<std::string> AgentSessionSet::addresses() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::string> out;
  for (const auto &[address, served] : sessions)
    out.push_back(address);
  return out;
}

} // namespace kiln::agent
