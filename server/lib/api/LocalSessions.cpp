//===- LocalSessions.cpp - tickets for kilnd's local socket ---------------===//
//
// This file implements LocalSessions.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/LocalSessions.h"

#include "kiln/common/Credentials.h"
#include "kiln/common/Status.h"

#include <algorithm>

namespace kiln::server {

LocalSessions::LocalSessions(std::string socketPath, std::string daemonId,
                             std::chrono::milliseconds ticketTtl)
    : path(std::move(socketPath)), id(std::move(daemonId)), ttl(ticketTtl) {}

absl::StatusOr<v1::LocalSession> LocalSessions::open() {
  ASSIGN_OR_RETURN(std::string ticket, randomHex(32));
  Clock::time_point now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (expiries.size() >= kMaxTickets) {
      absl::erase_if(expiries,
                     [now](const auto &entry) { return entry.second <= now; });
      // All live: the one that expires first goes.
      if (expiries.size() >= kMaxTickets)
        expiries.erase(std::min_element(
            expiries.begin(), expiries.end(), [](const auto &a, const auto &b) {
              return a.second < b.second;
            }));
    }
    expiries[ticket] = now + ttl;
  }
  v1::LocalSession session;
  session.set_socket_path(path);
  session.set_ticket(std::move(ticket));
  session.set_ticket_ttl_ms(ttl.count());
  session.set_daemon_id(id);
  return session;
}

absl::Status LocalSessions::redeem(const std::string &ticket) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = expiries.find(ticket);
  if (it == expiries.end() || it->second <= Clock::now()) {
    if (it != expiries.end())
      expiries.erase(it);
    return absl::UnauthenticatedError(
        "the local socket needs a live ticket from "
        "kiln.v1.Executor/OpenLocalSession (this one is unknown or expired)");
  }
  return absl::OkStatus();
}

} // namespace kiln::server
