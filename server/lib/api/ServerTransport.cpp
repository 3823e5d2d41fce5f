//===- ServerTransport.cpp - how kilnd's client port is secured -----------===//
//
// This file implements kilnd's server credentials and its listen rule.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/ServerTransport.h"

#include "kiln/common/AtomicFile.h"

#include "absl/strings/str_cat.h"

#include <string>

namespace kiln::server {

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>>
serverCredentials(const ServerTlsFiles &files) {
  if (!files.enabled()) {
    if (!files.key.empty())
      return absl::InvalidArgumentError("--tls-key needs --tls-cert");
    if (!files.clientCa.empty())
      return absl::InvalidArgumentError(
          "--tls-client-ca needs --tls-cert and --tls-key (client "
          "certificates are only exchanged over TLS)");
    return grpc::InsecureServerCredentials();
  }
  if (files.key.empty())
    return absl::InvalidArgumentError("--tls-cert needs --tls-key");
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  absl::StatusOr<std::string> cert = readFlagFile(files.cert, "--tls-cert");
  if (!cert.ok())
    return cert.status();
  absl::StatusOr<std::string> key = readFlagFile(files.key, "--tls-key");
  if (!key.ok())
    return key.status();
  pair.cert_chain = *std::move(cert);
  pair.private_key = *std::move(key);
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!files.clientCa.empty()) {
    absl::StatusOr<std::string> ca = readFlagFile(files.clientCa, "--tls-client-ca");
    if (!ca.ok())
      return ca.status();
    ssl.pem_root_certs = *std::move(ca);
    // Asked for and verified when sent; token holders send none.
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

absl::Status checkListenAddress(const std::string &address, bool tls,
                                bool credentials, bool insecure) {
  if (isLoopbackAddress(address) || (tls && credentials) || insecure)
    return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "refusing to listen on '", address,
      "', which other machines can reach, ",
      !tls && !credentials ? "without TLS and without credentials"
      : !tls              ? "without TLS (--tls-cert, --tls-key)"
                          : "without credentials (--auth-tokens or "
                            "--tls-client-ca)",
      ": anyone there could run code on the agents. Configure them, listen "
      "on loopback, or pass --insecure to accept the risk"));
}

} // namespace kiln::server
