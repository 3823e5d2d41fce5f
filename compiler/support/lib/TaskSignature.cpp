//===- TaskSignature.cpp - kilnd's signatures over the code it sends ------===//
//
// This file implements TaskSigningKey and TaskVerifier with OpenSSL's EVP
// Ed25519 (one-shot EVP_DigestSign/EVP_DigestVerify, no prehash).
//
//===----------------------------------------------------------------------===//
#include "kiln/common/TaskSignature.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <sys/stat.h>

namespace kiln {
namespace {

std::shared_ptr<EVP_PKEY> own(EVP_PKEY *key) {
  return std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
}

std::string opensslError() {
  unsigned long code = ERR_get_error();
  if (code == 0)
    return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return text;
}

/// Runs `write` on a memory BIO and returns what it wrote.
template <typename Writer> std::string toPem(Writer write) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || !write(bio.get()))
    return "";
  char *data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(length));
}

std::shared_ptr<EVP_PKEY> readPem(std::string_view pem, bool isPrivate) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  if (!bio)
    return nullptr;
  EVP_PKEY *key =
      isPrivate ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
  if (!key || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    return nullptr;
  }
  return own(key);
}

} // namespace

std::string taskSigningMessage(const v1::Task &task) {
  return taskSigningMessage(task.executable(), task.record());
}

std::string taskSigningMessage(const v1::Digest &executable,
                               const v1::ExecutableRecord &record) {
  const v1::ExecutableManifest &manifest = record.manifest();
  return absl::StrCat("kiln-task-signature/1\n", "executable ",
                      formatDigest(executable), "\n", "artifact ",
                      formatDigest(record.artifact()), "\n", "entry ",
                      manifest.entry_symbol(), "\n", "format ",
                      manifest.format(), "\n");
}

absl::StatusOr<TaskSigningKey> TaskSigningKey::generate() {
  EVP_PKEY *key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (!key)
    return absl::InternalError(
        absl::StrCat("cannot generate an Ed25519 key: ", opensslError()));
  return TaskSigningKey(own(key));
}

absl::StatusOr<TaskSigningKey>
TaskSigningKey::loadOrCreate(const std::filesystem::path &path) {
  if (absl::StatusOr<std::string> pem = readWholeFile(path); pem.ok()) {
    std::shared_ptr<EVP_PKEY> key = readPem(*pem, /*isPrivate=*/true);
    if (!key)
      return absl::InvalidArgumentError(absl::StrCat(
          "task signing key ", path.string(),
          " is not an Ed25519 private key in PEM form"));
    return TaskSigningKey(std::move(key));
  } else if (!absl::IsNotFound(pem.status())) {
    return pem.status();
  }
  absl::StatusOr<TaskSigningKey> fresh = generate();
  if (!fresh.ok())
    return fresh.status();
  std::string privatePem = toPem([&](BIO *bio) {
    return PEM_write_bio_PrivateKey(bio, fresh->key.get(), nullptr, nullptr, 0,
                                    nullptr, nullptr) == 1;
  });
  RETURN_IF_ERROR(createParentDirectory(path));
  // Private from the first byte (kilnd publishes the public half itself).
  RETURN_IF_ERROR(
      writeFileAtomically(path, privatePem, Durability::kDurable, 0600));
  return fresh;
}

absl::StatusOr<std::string>
TaskSigningKey::sign(std::string_view message) const {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(
      EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::string signature(64, '\0');
  size_t length = signature.size();
  if (!context ||
      EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key.get()) !=
          1 ||
      EVP_DigestSign(context.get(),
                     reinterpret_cast<unsigned char *>(signature.data()),
                     &length,
                     reinterpret_cast<const unsigned char *>(message.data()),
                     message.size()) != 1)
    return absl::InternalError("kilnd could not sign a task with its Ed25519 "
                               "key (OpenSSL EVP_DigestSign failed)");
  signature.resize(length);
  return signature;
}

std::string TaskSigningKey::publicKeyPem() const {
  return toPem([&](BIO *bio) { return PEM_write_bio_PUBKEY(bio, key.get()) == 1; });
}

absl::StatusOr<TaskVerifier> TaskVerifier::fromPem(std::string_view pem) {
  std::shared_ptr<EVP_PKEY> key = readPem(pem, /*isPrivate=*/false);
  if (!key)
    return absl::InvalidArgumentError(
        "not an Ed25519 public key in PEM form (-----BEGIN PUBLIC KEY-----)");
  return TaskVerifier(std::move(key));
}

absl::StatusOr<TaskVerifier>
TaskVerifier::fromFile(const std::filesystem::path &path) {
  absl::StatusOr<std::string> pem = readWholeFile(path);
  if (!pem.ok())
    return pem.status();
  absl::StatusOr<TaskVerifier> verifier = fromPem(*pem);
  if (!verifier.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(path.string(), ": ", verifier.status().message()));
  return verifier;
}

absl::Status TaskVerifier::verify(const v1::Task &task) const {
  return verify(task, task.record());
}

absl::Status TaskVerifier::verify(const v1::Task &task,
                                  const v1::ExecutableRecord &record) const {
  std::string message = taskSigningMessage(task.executable(), record);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(
      EVP_MD_CTX_new(), EVP_MD_CTX_free);
  const std::string &signature = task.signature();
  bool valid =
      context && !signature.empty() &&
      EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr,
                           key.get()) == 1 &&
      EVP_DigestVerify(
          context.get(),
          reinterpret_cast<const unsigned char *>(signature.data()),
          signature.size(),
          reinterpret_cast<const unsigned char *>(message.data()),
          message.size()) == 1;
  ERR_clear_error();
  if (valid)
    return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "task for executable ", formatDigest(task.executable()), " (artifact ",
      formatDigest(record.artifact()), ") ",
      signature.empty()
          ? "carries no signature"
          : "carries a signature that does not verify against the daemon's "
            "task key",
      ": refusing to load its code"));
}

} // namespace kiln
