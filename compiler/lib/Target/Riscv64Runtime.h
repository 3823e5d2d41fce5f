//===- Riscv64Runtime.h - the runtime object linked into riscv64 code -----===//
//
// This file declares the riscv64 runtime: a relocatable object (PIC, medany,
// lp64d, hidden symbols) defining the compiler-rt routines LLVM calls for
// half and bfloat16 conversions, which rv64gc has no instructions for and no
// riscv64 libc or libgcc on Debian provides.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

namespace kiln::compiler {

/// The object file's bytes.
std::string_view riscv64RuntimeObject();

} // namespace kiln::compiler
