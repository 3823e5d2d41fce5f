//===- Digest.cpp - SHA-256 content addresses -----------------------------===//
//
// This file implements SHA-256 hashing (OpenSSL EVP) and digest validation.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/Digest.h"

#include "absl/strings/str_cat.h"

#include <openssl/evp.h>

namespace kiln {

struct Sha256::State {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state(std::make_unique<State>()) {
  EVP_DigestInit_ex(state->ctx, EVP_sha256(), nullptr);
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(state->ctx, bytes.data(), bytes.size());
}

std::string Sha256::finishHex() {
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(state->ctx, hash, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(length * 2, '0');
  for (unsigned int i = 0; i < length; ++i) {
    hex[2 * i] = kHex[hash[i] >> 4];
    hex[2 * i + 1] = kHex[hash[i] & 0xf];
  }
  return hex;
}

DigestVerifier::DigestVerifier(Unnamed blob) : namesIt(true) {
  digest.set_size_bytes(blob.size);
}

absl::Status DigestVerifier::update(std::string_view chunk) {
  seen += static_cast<int64_t>(chunk.size());
  if (seen > digest.size_bytes())
    return absl::DataLossError(
        absl::StrCat(describeBlob(digest), " is longer than its digest says (", seen,
                     " bytes so far)"));
  sha.update(chunk);
  return absl::OkStatus();
}

absl::Status DigestVerifier::finish() {
  if (seen != digest.size_bytes())
    return absl::DataLossError(
        absl::StrCat(describeBlob(digest), " has ", seen, " bytes"));
  std::string hash = sha.finishHex();
  if (namesIt) {
    digest.set_hash(std::move(hash));
    return absl::OkStatus();
  }
  if (hash != digest.hash())
    return absl::DataLossError(
        absl::StrCat(describeBlob(digest), " has SHA-256 ", hash));
  return absl::OkStatus();
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 sha;
  sha.update(bytes);
  return sha.finishHex();
}

v1::Digest digestOf(std::string_view bytes) {
  v1::Digest digest;
  digest.set_hash(sha256Hex(bytes));
  digest.set_size_bytes(static_cast<int64_t>(bytes.size()));
  return digest;
}

absl::Status validateDigest(const v1::Digest &digest) {
  const std::string &hash = digest.hash();
  bool hexOk = hash.size() == 64;
  for (char c : hash)
    hexOk = hexOk && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!hexOk)
    return absl::InvalidArgumentError(absl::StrCat(
        "digest hash '", hash.substr(0, 80),
        "' is not a 64-character lower-case hex SHA-256"));
  if (digest.size_bytes() < 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "digest ", hash, " has negative size ", digest.size_bytes()));
  return absl::OkStatus();
}

std::string formatDigest(const v1::Digest &digest) {
  return absl::StrCat("sha256:", digest.hash(), "/", digest.size_bytes());
}

std::string describeBlob(const v1::Digest &digest) {
  if (digest.hash().empty())
    return absl::StrCat("an unnamed upload of ", digest.size_bytes(), " bytes");
  return absl::StrCat("blob ", formatDigest(digest));
}

} // namespace kiln
