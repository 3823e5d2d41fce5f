//===- BuildId.cpp - identity of this compiler build ----------------------===//
//
// This file implements compilerBuildId(): Kiln's version, a hash of the
// running executable (so any change to the compiler's code changes it) and
// the LLVM version. The CPU code is generated for is not part of it: it is
// in the (resolved) compile options, so every compile key names it.
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

namespace kiln::compiler {
namespace {

std::string hashOfRunningExecutable() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  if (!in)
    return "unknown";
  Sha256 sha;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    sha.update(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
  }
  return sha.finishHex().substr(0, 16);
}

} // namespace

const std::string &compilerBuildId() {
  static const std::string id = [] {
    return absl::StrCat("kiln-", kiln::kVersion, "+", hashOfRunningExecutable(),
                        "/llvm-", LLVM_VERSION_STRING);
  }();
  return id;
}

std::vector<std::string> supportedTargets() { return targetNames(); }

} // namespace kiln::compiler
