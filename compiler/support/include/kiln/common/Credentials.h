//===- Credentials.h - certificates and bearer tokens -----------*- C++ -*-===//
//
// This file declares what kilnd and the agents share about credentials: the
// subject of an X.509 certificate (an agent's id and a caller's role come
// from it), random bearer tokens, and the metadata a token travels in.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// The gRPC metadata key bearer tokens travel in ("authorization: Bearer T").
inline constexpr const char *kAuthorizationMetadataKey = "authorization";

/// The certificate O (organization) that gives each role.
inline constexpr const char *kAgentsOrganization = "kiln:agents";
inline constexpr const char *kAdminsOrganization = "kiln:admins";
inline constexpr const char *kUsersOrganization = "kiln:users";

/// The subject names Kiln reads from a certificate.
struct CertificateSubject {
  /// CN: the identity (an agent's id, a user's name).
  std::string commonName;
  /// Every O: the groups, which carry Kiln roles ("kiln:agents").
  std::vector<std::string> organizations;
};

/// The subject of the first certificate in `pem`. INVALID_ARGUMENT when it
/// holds no PEM certificate.
absl::StatusOr<CertificateSubject> certificateSubject(std::string_view pem);

/// Whether the host of `address` ("127.0.0.1:50051", "[::1]:0",
/// "localhost:1", "unix:/path") can only be reached from this machine.
bool isLoopbackAddress(const std::string &address);

/// `bytes` random bytes from the system's CSPRNG, as lowercase hex;
/// INTERNAL when the generator fails.
absl::StatusOr<std::string> randomHex(size_t bytes);

} // namespace kiln
