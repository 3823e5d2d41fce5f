//===- MachineCode.h - LLVM IR to object code and shared objects ----------===//
//
// This file declares the LLVM back-end steps shared by targets: optimise and
// emit object code for a triple/CPU/features, and link a shared object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Target/Target.h"

#include "absl/status/statusor.h"

#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::compiler {

/// Runs LLVM's optimisation pipeline at `optLevel` on `module` and emits an
/// object file for `machine`; fills `assembly` with the assembly when
/// non-null.
absl::StatusOr<std::string> emitObjectCode(llvm::Module &module,
                                           const MachineSpec &machine,
                                           int optLevel, std::string *assembly);

/// Links object files into an ELF shared object with ld.lld (the linker
/// found at build time, or $KILN_LLD); `libraryArgs` are extra linker
/// arguments (search paths, -l flags).
absl::StatusOr<std::string>
linkSharedObject(const std::vector<std::string_view> &objects,
                 const std::vector<std::string> &libraryArgs);

/// Links object files into one relocatable object (ld.lld -r).
absl::StatusOr<std::string>
linkRelocatable(const std::vector<std::string_view> &objects);

/// The host's libm and libc, recorded as needed: for host shared objects.
std::vector<std::string> hostLibraries();

} // namespace kiln::compiler
