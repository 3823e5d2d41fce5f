//===- Digest.h - SHA-256 content addresses -------------------------------===//
//
// This file declares helpers for kiln.v1.Digest: computing, validating and
// formatting SHA-256 content addresses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/tensor.pb.h"

#include "absl/status/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kiln {

/// Incremental SHA-256 over chunks of bytes.
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;

  void update(std::string_view bytes);
  /// Lower-case hex of the hash of everything passed to update().
  std::string finishHex();

private:
  struct State;
  std::unique_ptr<State> state;
};

/// Checks a blob's bytes against its digest as they stream past.
class DigestVerifier {
public:
  explicit DigestVerifier(v1::Digest digest) : digest(std::move(digest)) {}

  /// A blob of `size` bytes whose hash nobody gave (an in-transit upload
  /// kilnd names).
  struct Unnamed {
    int64_t size;
  };
  /// Checks the size only; finish() sets the hash to the SHA-256 seen.
  explicit DigestVerifier(Unnamed blob);

  /// Accounts for `chunk`; DATA_LOSS once more bytes than the digest's size
  /// have been seen.
  absl::Status update(std::string_view chunk);
  /// DATA_LOSS unless exactly the digest's size, with its SHA-256, was seen.
  absl::Status finish();
  int64_t bytesSeen() const { return seen; }
  /// The digest checked; a naming verifier's has its hash after finish().
  const v1::Digest &expected() const { return digest; }

private:
  v1::Digest digest;
  bool namesIt = false;
  int64_t seen = 0;
  Sha256 sha;
};

/// Hex SHA-256 of `bytes`.
std::string sha256Hex(std::string_view bytes);

/// The digest of `bytes`.
v1::Digest digestOf(std::string_view bytes);

/// OK when `digest` has a 64-char lower-case hex hash and a size >= 0;
/// INVALID_ARGUMENT naming the problem otherwise.
absl::Status validateDigest(const v1::Digest &digest);

/// "sha256:<hash>/<size>", for logs and error messages.
std::string formatDigest(const v1::Digest &digest);

/// "blob sha256:<hash>/<size>", or "an unnamed upload of <size> bytes" for
/// a digest without a hash (one kilnd names), for messages.
std::string describeBlob(const v1::Digest &digest);

/// The largest ParameterSet blob (ExecuteRequest.parameter_set) kilnd and the
/// agents read: about 220,000 parameters.
inline constexpr int64_t kMaxParameterSetBytes = 16 << 20;

} // namespace kiln
