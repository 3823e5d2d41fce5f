//===- BuildId.cpp - identity of this compiler build ----------------------===//
//
// This file implements compilerBuildId(): Kiln's version, a hash of the
// running executable (so any change to the compiler's code changes it) and
// the LLVM version; and compilerBuildIdWithWorker(), the id of a daemon
// whose compiles run in another executable, which hashes that one too. The
// CPU code is generated for is not part of it: it is in the (resolved)
// compile options, so every compile key names it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/Compile.h"
#include "kiln/Target/Target.h"
#include "kiln/common/Digest.h"
#include "kiln/common/Version.h"

#include "absl/strings/str_cat.h"
#include "llvm/Config/llvm-config.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace kiln::compiler {
namespace {

/// The first 16 hex digits of the SHA-256 of a file, or "" when it cannot
/// be read.
std::string hashOfFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "";
  Sha256 sha;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    sha.update(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
  }
  return sha.finishHex().substr(0, 16);
}

const std::string &hashOfRunningExecutable() {
  static const std::string hash = hashOfFile("/proc/self/exe");
  return hash;
}

std::string buildIdFromHash(const std::string &hash) {
  return absl::StrCat("kiln-", kiln::kVersion, "+", hash.empty() ? "unknown" : hash,
                      "/llvm-", LLVM_VERSION_STRING);
}

} // namespace

const std::string &compilerBuildId() {
  static const std::string id = buildIdFromHash(hashOfRunningExecutable());
  return id;
}

std::string compilerBuildIdWithWorker(const std::string &worker) {
  std::string workerHash = hashOfFile(worker);
  if (workerHash.empty() || hashOfRunningExecutable().empty())
    return compilerBuildId();
  Sha256 sha;
  sha.update(hashOfRunningExecutable());
  sha.update(workerHash);
  return buildIdFromHash(sha.finishHex().substr(0, 16));
}

std::vector<std::string> supportedTargets() { return targetNames(); }

} // namespace kiln::compiler
