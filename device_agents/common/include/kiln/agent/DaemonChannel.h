//===- DaemonChannel.h - the agent's channel to kilnd ----------*- C++ -*-===//
//
// This file declares how an agent dials kilnd: plaintext, or TLS with a CA
// bundle and (for mTLS) a client certificate, plus a bearer token sent on
// every call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <grpcpp/channel.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

namespace kiln::agent {

/// How the agent proves itself to kilnd, and checks kilnd.
struct DaemonCredentials {
  /// PEM CA bundle kilnd's certificate must chain to; empty: plaintext.
  std::filesystem::path tlsCa;
  /// PEM certificate and key the agent presents (mTLS); both or neither.
  std::filesystem::path tlsCert;
  std::filesystem::path tlsKey;
  /// Bearer token sent as `authorization: Bearer <token>` on every call.
  std::string token;
  /// The name kilnd's certificate must carry; empty: the host dialed (an
  /// agent that dials replicas by IP checks them against their Service's
  /// name instead).
  std::string tlsServerName;
};

/// A channel to `address`. INVALID_ARGUMENT naming the flag when a file
/// cannot be read, when only one of cert and key is given, or when a
/// certificate is given without a CA.
absl::StatusOr<std::shared_ptr<grpc::Channel>>
dialDaemon(const std::string &address, const DaemonCredentials &credentials,
           std::chrono::milliseconds maxBackoff);

} // namespace kiln::agent
