//===- ExecutableNamespace.cpp - the executables kilnd made ---------------===//
//
// This file implements ExecutableNamespace with one small file per
// executable, written atomically.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/store/ExecutableNamespace.h"

#include "kiln/common/AtomicFile.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Status.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace kiln::server {

absl::StatusOr<std::unique_ptr<ExecutableNamespace>>
ExecutableNamespace::open(const std::filesystem::path &dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return absl::InternalError(absl::StrCat("cannot create executables dir ",
                                            dir.string(), ": ",
                                            error.message()));
  return std::unique_ptr<ExecutableNamespace>(new ExecutableNamespace(dir));
}

std::filesystem::path
ExecutableNamespace::entryPath(const std::string &hash) const {
  return dir / hash.substr(0, 2) / hash;
}

absl::Status ExecutableNamespace::add(const v1::Digest &executable) {
  RETURN_IF_ERROR(validateDigest(executable));
  if (contains(executable))
    return absl::OkStatus();
  std::filesystem::path path = entryPath(executable.hash());
  RETURN_IF_ERROR(createParentDirectory(path));
  RETURN_IF_ERROR(
      writeFileAtomically(path, absl::StrCat(executable.size_bytes(), "\n")));
  std::lock_guard<std::mutex> lock(mutex);
  known[executable.hash()] = executable.size_bytes();
  return absl::OkStatus();
}

bool ExecutableNamespace::contains(const v1::Digest &executable) const {
  if (!validateDigest(executable).ok())
    return false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(executable.hash()); it != known.end())
      return it->second == executable.size_bytes();
  }
  absl::StatusOr<std::string> entry = readWholeFile(entryPath(executable.hash()));
  int64_t size = -1;
  if (!entry.ok() || !absl::SimpleAtoi(absl::StripSuffix(*entry, "\n"), &size))
    return false;
  std::lock_guard<std::mutex> lock(mutex);
  known[executable.hash()] = size;
  return size == executable.size_bytes();
}

} // namespace kiln::server
