//===- AccessPolicy.cpp - who may call which kilnd RPC --------------------===//
//
// This file implements the access gate: client protocol versions, bearer
// tokens (kept as SHA-256 hashes), certificate roles and the table of the
// roles each RPC admits.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/AccessPolicy.h"

#include "kiln/common/Credentials.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Logging.h"
#include "kiln/common/Status.h"
#include "kiln/server/api/GrpcStatus.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kiln::server {
namespace {

using MethodRoles = std::vector<std::pair<std::string, std::vector<Role>>>;

const MethodRoles &methodTable() {
  // Admin includes User, so User rows admit admins too.
  static const MethodRoles table = {
      {"kiln.v1.Compiler/Compile", {Role::User}},
      {"kiln.v1.Executor/Execute", {Role::User}},
      {"kiln.v1.Executor/OpenLocalSession", {Role::User}},
      {"kiln.v1.Executor/Release", {Role::User}},
      {"kiln.v1.Blobs/FindMissing", {Role::User, Role::Agent}},
      {"kiln.v1.Blobs/Write", {Role::User, Role::Agent}},
      {"kiln.v1.Blobs/Read", {Role::User, Role::Agent}},
      {"kiln.v1.Devices/ListDevices", {Role::User}},
      {"kiln.v1.Daemon/GetInfo", {Role::User}},
      {"kiln.v1.Cache/GetCacheStats", {Role::User}},
      {"kiln.v1.Cache/ExplainMiss", {Role::User}},
      {"kiln.v1.Cache/CollectGarbage", {Role::Admin}},
      {"kiln.v1.Cache/SetCacheSalt", {Role::Admin}},
      {"kiln.v1.Agent/Connect", {Role::Agent}},
  };
  return table;
}

bool admits(const std::vector<Role> &roles, Role role) {
  for (Role allowed : roles)
    if (allowed == role || (allowed == Role::User && role == Role::Admin))
      return true;
  return false;
}

const char *proofName(Proof proof) {
  switch (proof) {
  case Proof::Token:
    return "token";
  case Proof::Certificate:
    return "certificate";
  case Proof::None:
    break;
  }
  return "no credentials";
}

/// A gRPC peer ("ipv4:127.0.0.1:5", "ipv6:%5B::1%5D:5", "unix:...") on
/// this machine, by the same rule as every loopback check in Kiln.
bool isLoopbackPeer(const std::string &peer) {
  std::string address = peer;
  for (const char *scheme : {"ipv4:", "ipv6:"})
    if (absl::StartsWith(address, scheme))
      address = address.substr(5);
  absl::StrReplaceAll({{"%5B", "["}, {"%5D", "]"}}, &address);
  return isLoopbackAddress(address);
}

std::string metadataValue(const grpc::ServerContext &context,
                          const char *key) {
  const auto &metadata = context.client_metadata();
  auto found = metadata.find(key);
  if (found == metadata.end())
    return "";
  return std::string(found->second.data(), found->second.size());
}

bool usesTls(const grpc::ServerContext &context) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (!auth)
    return false;
  for (const grpc::string_ref &type :
       auth->FindPropertyValues("transport_security_type"))
    if (type == "ssl")
      return true;
  return false;
}

/// The role a verified certificate's O grants; PERMISSION_DENIED for none.
absl::StatusOr<Principal> certificatePrincipal(std::string_view pem) {
  absl::StatusOr<CertificateSubject> parsed = certificateSubject(pem);
  if (!parsed.ok())
    return absl::UnauthenticatedError(absl::StrCat(
        "the client certificate cannot be read: ", parsed.status().message()));
  CertificateSubject subject = *std::move(parsed);
  Principal principal{subject.commonName, Role::User, Proof::Certificate};
  const auto &groups = subject.organizations;
  auto has = [&](const char *group) {
    return std::find(groups.begin(), groups.end(), group) != groups.end();
  };
  if (has(kAgentsOrganization))
    principal.role = Role::Agent;
  else if (has(kAdminsOrganization))
    principal.role = Role::Admin;
  else if (has(kUsersOrganization))
    principal.role = Role::User;
  else
    return absl::PermissionDeniedError(absl::StrCat(
        "the client certificate CN=", subject.commonName,
        " carries no Kiln role: its subject needs O=", kUsersOrganization, ", ",
        kAdminsOrganization, " or ", kAgentsOrganization));
  if (principal.name.empty())
    return absl::PermissionDeniedError(
        "the client certificate has no CN (the caller's name)");
  return principal;
}

} // namespace

const char *roleName(Role role) {
  switch (role) {
  case Role::User:
    return "user";
  case Role::Admin:
    return "admin";
  case Role::Agent:
    return "agent";
  }
  return "?";
}

AccessPolicy::AccessPolicy(std::vector<TokenGrant> grants,
                           bool clientCertificates)
    : clientCertificates(clientCertificates) {
  for (TokenGrant &entry : grants)
    grant(std::move(entry));
}

void AccessPolicy::grant(TokenGrant entry) {
  std::string key = entry.sha256;
  tokens[key] = std::move(entry);
}

absl::StatusOr<Principal>
AccessPolicy::authenticate(const grpc::ServerContext &context) const {
  if (!enabled())
    return Principal{};
  std::string authorization =
      metadataValue(context, kAuthorizationMetadataKey);
  if (!authorization.empty()) {
    constexpr absl::string_view kBearer = "bearer ";
    if (authorization.size() <= kBearer.size() ||
        !absl::EqualsIgnoreCase(authorization.substr(0, kBearer.size()),
                                kBearer))
      return absl::UnauthenticatedError(
          "the authorization metadata is not 'Bearer <token>'");
    std::string token(absl::StripAsciiWhitespace(
        absl::string_view(authorization).substr(kBearer.size())));
    auto found = tokens.find(sha256Hex(token));
    if (found == tokens.end() ||
        (found->second.localOnly && !isLoopbackPeer(context.peer())))
      return absl::UnauthenticatedError(
          "the bearer token is not one this kilnd accepts (revoked, mistyped "
          "or from another deployment?)");
    return Principal{found->second.name, found->second.role, Proof::Token};
  }
  if (clientCertificates && usesTls(context)) {
    std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
    std::vector<grpc::string_ref> certificates =
        auth->FindPropertyValues("x509_pem_cert");
    // The TLS layer verified the chain against --tls-client-ca.
    if (!certificates.empty() && auth->IsPeerAuthenticated())
      return certificatePrincipal(
          std::string_view(certificates[0].data(), certificates[0].size()));
  }
  return absl::UnauthenticatedError(
      "kilnd requires credentials: a bearer token (metadata 'authorization: "
      "Bearer <token>') or a client certificate signed by its client CA");
}

grpc::Status AccessPolicy::admit(const grpc::ServerContext &context,
                                 std::string_view method,
                                 Principal *caller) const {
  std::string protocol = metadataValue(context, kClientProtocolMetadataKey);
  int version = 0;
  if (!protocol.empty() &&
      (!absl::SimpleAtoi(protocol, &version) ||
       version < kMinClientProtocolVersion || version > kClientProtocolVersion))
    return toGrpcStatus(
        absl::FailedPreconditionError(absl::StrCat(
            "this client speaks Kiln client protocol ", protocol,
            "; this kilnd speaks protocols ", kMinClientProtocolVersion,
            " to ", kClientProtocolVersion,
            ": use a client from the same Kiln release")),
        currentRequestId());
  absl::StatusOr<Principal> principal = authenticate(context);
  if (!principal.ok()) {
    spdlog::warn("{} from {} refused: {}", method, context.peer(),
                 std::string(principal.status().message()));
    return toGrpcStatus(principal.status(), currentRequestId());
  }
  const MethodRoles &table = methodTable();
  auto rule = std::find_if(table.begin(), table.end(),
                           [&](const auto &row) { return row.first == method; });
  if (rule == table.end())
    return toGrpcStatus(absl::InternalError(absl::StrCat(
                            "kilnd has no access rule for ", std::string(method))),
                        currentRequestId());
  // Auth off: every caller holds every role.
  if (enabled() && !admits(rule->second, principal->role)) {
    std::vector<std::string> needed;
    for (Role role : rule->second)
      needed.emplace_back(roleName(role));
    absl::Status denied = absl::PermissionDeniedError(absl::StrCat(
        std::string(method), " needs the role ", absl::StrJoin(needed, " or "), "; '",
        principal->name, "' (", proofName(principal->proof), ") has the role ",
        roleName(principal->role)));
    spdlog::warn("{} from {} refused: {}", method, context.peer(),
                 std::string(denied.message()));
    return toGrpcStatus(denied, currentRequestId());
  }
  if (caller)
    *caller = *std::move(principal);
  return grpc::Status::OK;
}

std::vector<std::pair<std::string, std::vector<Role>>>
AccessPolicy::methodRoles() {
  return methodTable();
}

} // namespace kiln::server
