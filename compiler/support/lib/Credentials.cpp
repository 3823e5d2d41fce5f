//===- Credentials.cpp - certificates and bearer tokens -------------------===//
//
// This file implements certificate subject parsing (OpenSSL) and random
// tokens.
//
//===----------------------------------------------------------------------===//
#include "kiln/common/Credentials.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

#include "absl/strings/match.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <memory>

namespace kiln {
namespace {

/// Every value of `nid` in `name`, as UTF-8.
std::vector<std::string> nameEntries(X509_NAME *name, int nid) {
  std::vector<std::string> values;
  for (int index = X509_NAME_get_index_by_NID(name, nid, -1); index >= 0;
       index = X509_NAME_get_index_by_NID(name, nid, index)) {
    ASN1_STRING *data =
        X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
    unsigned char *utf8 = nullptr;
    int length = ASN1_STRING_to_UTF8(&utf8, data);
    if (length < 0)
      continue;
    values.emplace_back(reinterpret_cast<char *>(utf8),
                        static_cast<size_t>(length));
    OPENSSL_free(utf8);
  }
  return values;
}

/// The host part of "host:port", "[v6]:port" or "unix:path" (whole).
std::string hostOf(const std::string &address) {
  if (absl::StartsWith(address, "unix:"))
    return std::string(address);
  std::string host = address;
  if (size_t colon = address.rfind(':'); colon != std::string::npos)
    host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return host;
}

} // namespace

bool isLoopbackAddress(const std::string &address) {
  std::string host = hostOf(address);
  if (absl::StartsWith(host, "unix:") || host == "localhost")
    return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

absl::StatusOr<CertificateSubject> certificateSubject(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> certificate(
      bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr,
      X509_free);
  if (!certificate)
    return absl::InvalidArgumentError(
        "not a PEM X.509 certificate (expected -----BEGIN CERTIFICATE-----)");
  X509_NAME *subject = X509_get_subject_name(certificate.get());
  CertificateSubject result;
  std::vector<std::string> names = nameEntries(subject, NID_commonName);
  if (!names.empty())
    result.commonName = names.back();
  result.organizations = nameEntries(subject, NID_organizationName);
  return result;
}

absl::StatusOr<std::string> randomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char *>(raw.data()),
                 static_cast<int>(raw.size())) != 1)
    return absl::InternalError("the system's random generator failed");
  return absl::BytesToHexString(raw);
}

} // namespace kiln
