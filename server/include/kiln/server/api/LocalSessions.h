//===- LocalSessions.h - tickets for kilnd's local socket -----------*- C++ -*-===//
//
// This file declares LocalSessions: where kilnd's local Execute socket is,
// and the tickets that carry a gRPC caller's admission to it. A caller that
// AccessPolicy admitted to OpenLocalSession gets a ticket; a connection to
// the socket that presents a live ticket may Execute. So the socket admits
// exactly whom the gRPC port admits, whatever its file mode.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/executor.pb.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <chrono>
#include <mutex>
#include <string>

namespace kiln::server {

class LocalSessions {
public:
  using Clock = std::chrono::steady_clock;
  /// Tickets live at most this many at once (the oldest make room).
  static constexpr size_t kMaxTickets = 4096;

  /// `socketPath` as LocalSession.socket_path names it ('@' for an
  /// abstract socket).
  LocalSessions(std::string socketPath, std::string daemonId,
                std::chrono::milliseconds ticketTtl);

  /// A new ticket for the socket.
  absl::StatusOr<v1::LocalSession> open();

  /// OK when `ticket` is live; UNAUTHENTICATED otherwise.
  absl::Status redeem(const std::string &ticket);

  const std::string &socketPath() const { return path; }
  const std::string &daemonId() const { return id; }

private:
  std::string path;
  std::string id;
  std::chrono::milliseconds ttl;
  std::mutex mutex;
  absl::flat_hash_map<std::string, Clock::time_point> expiries; // guarded
};

} // namespace kiln::server
