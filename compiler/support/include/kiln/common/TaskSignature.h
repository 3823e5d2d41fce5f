//===- TaskSignature.h - kilnd's signatures over the code it sends --------===//
//
// This file declares the Ed25519 keys with which kilnd signs what an agent
// may load (an executable and its artifact), and agents verify it: a
// compromised store, a forged record or a man in the middle cannot make an
// agent load code kilnd did not compile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/agent.pb.h"

#include "absl/status/statusor.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

typedef struct evp_pkey_st EVP_PKEY;

namespace kiln {

/// What kilnd signs for a task: the executable digest, its artifact's
/// digest, the entry symbol and the artifact format, one per line after a
/// version tag. Task ids, devices and inputs are not part of it, so one
/// signature serves every call of an executable.
std::string taskSigningMessage(const v1::Task &task);
/// The same for the executable `executable` whose record is `record`.
std::string taskSigningMessage(const v1::Digest &executable,
                               const v1::ExecutableRecord &record);

/// kilnd's Ed25519 private key.
class TaskSigningKey {
public:
  /// The key in the PEM file at `path`, created (mode 0600) when there is
  /// none.
  static absl::StatusOr<TaskSigningKey> loadOrCreate(
      const std::filesystem::path &path);
  /// A fresh key that lives only in memory (tests).
  static absl::StatusOr<TaskSigningKey> generate();

  /// The 64-byte Ed25519 signature of `message`; INTERNAL when OpenSSL
  /// fails.
  absl::StatusOr<std::string> sign(std::string_view message) const;
  /// The public key, PEM (SubjectPublicKeyInfo), for agents.
  std::string publicKeyPem() const;

private:
  explicit TaskSigningKey(std::shared_ptr<EVP_PKEY> key) : key(std::move(key)) {}
  std::shared_ptr<EVP_PKEY> key;
};

/// An agent's copy of kilnd's public key.
class TaskVerifier {
public:
  /// INVALID_ARGUMENT when `pem` is not an Ed25519 public key.
  static absl::StatusOr<TaskVerifier> fromPem(std::string_view pem);
  static absl::StatusOr<TaskVerifier> fromFile(const std::filesystem::path &path);

  /// OK when `task.signature` is kilnd's signature of taskSigningMessage;
  /// PERMISSION_DENIED naming the executable otherwise.
  absl::Status verify(const v1::Task &task) const;
  /// The same for a task whose executable record is `record`.
  absl::Status verify(const v1::Task &task,
                      const v1::ExecutableRecord &record) const;

private:
  explicit TaskVerifier(std::shared_ptr<EVP_PKEY> key) : key(std::move(key)) {}
  std::shared_ptr<EVP_PKEY> key;
};

} // namespace kiln
