//===- MachineCode.h - LLVM IR to object code and shared objects ----------===//
//
// This file declares the LLVM back-end steps shared by targets: optimise and
// emit object code for a triple/CPU/features, and link a shared object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <string>
#include <string_view>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::compiler {

struct MachineCodeRequest {
  std::string triple;
  std::string cpu;
  std::string features;
  int optLevel = 3;
};

/// Runs LLVM's optimisation pipeline at `optLevel` on `module` and emits an
/// object file; fills `assembly` with the assembly when non-null.
absl::StatusOr<std::string> emitObjectCode(llvm::Module &module,
                                           const MachineCodeRequest &request,
                                           std::string *assembly);

/// Links one object file into an ELF shared object with ld.lld (the linker
/// found at build time, or $KILN_LLD), recording libm and libc as needed.
absl::StatusOr<std::string> linkSharedObject(std::string_view object);

} // namespace kiln::compiler
