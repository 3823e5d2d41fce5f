//===- CacheSalt.cpp - the compile-key salt and its file ------------------===//
//
// This file implements validating, loading and persisting the compile-key
// salt.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/CacheSalt.h"

#include "kiln/common/Status.h"
#include "kiln/common/AtomicFile.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace kiln::server {

namespace {
constexpr size_t kMaxSaltBytes = 256;
} // namespace

absl::Status validateCacheSalt(const std::string &salt) {
  if (salt.size() > kMaxSaltBytes)
    return absl::InvalidArgumentError(
        absl::StrCat("cache salt has ", salt.size(), " bytes; at most ",
                     kMaxSaltBytes, " are allowed"));
  if (salt.find_first_of("\r\n") != std::string::npos)
    return absl::InvalidArgumentError("cache salt must not contain newlines");
  return absl::OkStatus();
}

absl::StatusOr<std::string> loadCacheSalt(const std::filesystem::path &file,
                                          const std::string &flagSalt) {
  if (!flagSalt.empty()) {
    RETURN_IF_ERROR(validateCacheSalt(flagSalt));
    RETURN_IF_ERROR(saveCacheSalt(file, flagSalt));
    return flagSalt;
  }
  std::error_code error;
  if (!std::filesystem::exists(file, error))
    return std::string();
  ASSIGN_OR_RETURN(std::string text, readWholeFile(file));
  std::string salt(absl::StripSuffix(text, "\n"));
  if (absl::Status status = validateCacheSalt(salt); !status.ok())
    return absl::FailedPreconditionError(
        absl::StrCat("salt file ", file.string(), ": ", status.message()));
  return salt;
}

absl::Status saveCacheSalt(const std::filesystem::path &file,
                           const std::string &salt) {
  if (salt.empty()) {
    std::error_code error;
    std::filesystem::remove(file, error);
    if (error)
      return absl::InternalError(absl::StrCat("cannot remove ", file.string(),
                                              ": ", error.message()));
    return absl::OkStatus();
  }
  return writeFileAtomically(file, absl::StrCat(salt, "\n"));
}

} // namespace kiln::server
