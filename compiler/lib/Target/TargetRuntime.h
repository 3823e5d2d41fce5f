//===- TargetRuntime.h - the runtime object linked into every artifact ----===//
//
// This file declares Kiln's target runtime: a relocatable object per
// architecture (PIC, hidden symbols) defining the compiler-rt routines LLVM
// calls for half and bfloat16 conversions. Neither rv64gc nor x86 before
// AVX-512 BF16 has instructions for all of them, and the hosts' libraries
// do not reliably provide them (Debian 12's libgcc_s lacks __truncsfbf2;
// riscv64 libc, libgcc and picolibc lack the half ones), so every artifact
// carries its own copy and depends on nothing the host may lack.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

namespace kiln::compiler {

/// The riscv64 runtime object (rv64gc, lp64d, medany).
std::string_view riscv64RuntimeObject();

/// The x86-64 runtime object (baseline x86-64: runs on every x86-64 CPU).
std::string_view x86_64RuntimeObject();

/// The aarch64 runtime object (armv8-a: the Versal's Cortex-A72 and later).
std::string_view aarch64RuntimeObject();

} // namespace kiln::compiler
