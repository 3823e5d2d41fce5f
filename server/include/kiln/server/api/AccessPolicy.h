//===- AccessPolicy.h - who may call which kilnd RPC -----------*- C++ -*-===//
//
// This file declares AccessPolicy, the one gate every kilnd handler passes
// first: it checks the client protocol version, authenticates the caller (a
// bearer token, or a TLS client certificate) and authorizes the RPC for the
// caller's role. With no credentials configured every caller is trusted with
// every role, and kilnd serves loopback only (see ServerTransport.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <grpcpp/server_context.h>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::server {

/// What a caller may do. Admin includes User; Agent is the agent plane.
enum class Role { User, Admin, Agent };

/// "user", "admin", "agent".
const char *roleName(Role role);

/// How a caller proved who it is.
enum class Proof { None, Token, Certificate };

/// The authenticated caller.
struct Principal {
  /// The token's name or the certificate's CN; "" when auth is off.
  std::string name;
  Role role = Role::Admin;
  Proof proof = Proof::None;
};

/// One line of the tokens file: a named token with a role.
struct TokenGrant {
  std::string name;
  Role role = Role::User;
  /// Lowercase hex SHA-256 of the token.
  std::string sha256;
  /// Accepted over kilnd's plaintext loopback port only (the tokens kilnd
  /// gives its local agents when the client port uses TLS).
  bool localOnly = false;
};


/// The metadata key a client sends its protocol version in; kilnd answers
/// FAILED_PRECONDITION naming the versions it speaks for any other.
inline constexpr const char *kClientProtocolMetadataKey =
    "kiln-client-protocol";
/// Version 1: the API of kiln.v1 with bearer tokens and TLS.
/// Version 2: adds ExecuteRequest.parameter_set, which a version-1 kilnd
/// would ignore (and then refuse the call for its missing parameters).
/// Version 3: adds in-transit uploads kilnd names (WriteRequest.digest
/// without a hash, WriteResponse.digest), which a version-2 kilnd refuses.
inline constexpr int kClientProtocolVersion = 3;
/// The oldest client protocol kilnd still serves.
inline constexpr int kMinClientProtocolVersion = 1;

class AccessPolicy {
public:
  /// Auth off: every caller is trusted (kilnd then serves loopback only).
  AccessPolicy() = default;

  /// Accepts the tokens of `grants`, and (with `clientCertificates`)
  /// certificates the TLS layer verified against the client CA.
  AccessPolicy(std::vector<TokenGrant> grants, bool clientCertificates);

  /// Adds a grant (kilnd's tokens for its local agents).
  void grant(TokenGrant grant);

  /// Whether any credential is configured; when not, everyone is admitted.
  bool enabled() const { return !tokens.empty() || clientCertificates; }

  /// The caller of `context`: UNAUTHENTICATED without a valid credential,
  /// PERMISSION_DENIED for a certificate carrying no Kiln role.
  absl::StatusOr<Principal> authenticate(const grpc::ServerContext &context) const;

  /// The gate of the RPC `method` ("kiln.v1.Cache/CollectGarbage"):
  /// protocol version, authentication, then the role the method needs.
  /// An OK status sets `*caller` (when not null).
  grpc::Status admit(const grpc::ServerContext &context, std::string_view method,
                     Principal *caller = nullptr) const;

  /// Every RPC kilnd serves behind this gate, with the roles it admits
  /// (tests check that each one is enforced).
  static std::vector<std::pair<std::string, std::vector<Role>>> methodRoles();

private:
  absl::flat_hash_map<std::string, TokenGrant> tokens;
  bool clientCertificates = false;
};

} // namespace kiln::server
