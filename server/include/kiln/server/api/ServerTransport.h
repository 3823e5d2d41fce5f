//===- ServerTransport.h - how kilnd's client port is secured --*- C++ -*-===//
//
// This file declares kilnd's TLS server credentials (with optional client
// certificates) and the rule for where kilnd may listen: without TLS and
// credentials, loopback only, unless --insecure says otherwise.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"
#include "kiln/common/Credentials.h"

#include <grpcpp/security/server_credentials.h>

#include <filesystem>
#include <memory>
#include <string>

namespace kiln::server {

/// PEM files of --tls-cert, --tls-key and --tls-client-ca.
struct ServerTlsFiles {
  std::filesystem::path cert;
  std::filesystem::path key;
  /// CA that signs client and agent certificates; empty: none are asked for.
  std::filesystem::path clientCa;

  bool enabled() const { return !cert.empty(); }
};

/// TLS credentials from `files` (client certificates requested and verified
/// against clientCa when one is given, not required: token holders have
/// none), or plaintext ones when TLS is off. INVALID_ARGUMENT naming the flag
/// for an unreadable file, a cert without a key or a client CA without TLS.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>>
serverCredentials(const ServerTlsFiles &files);

/// OK when kilnd may listen on `address`: a loopback address, or TLS with
/// credentials. Otherwise FAILED_PRECONDITION naming what is missing, unless
/// `insecure` (--insecure) accepts the risk; the caller logs a warning then.
absl::Status checkListenAddress(const std::string &address, bool tls,
                                bool credentials, bool insecure);

} // namespace kiln::server
