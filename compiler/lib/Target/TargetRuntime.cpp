//===- TargetRuntime.cpp - the runtime object linked into every artifact --===//
//
// This file embeds compiler/runtime/kiln_rt_half.c, compiled at build time
// for riscv64, x86-64 and aarch64: the half/bfloat16 conversion routines,
// and on x86-64 and aarch64 also the parallel-loop and kernel-library calls.
//
//===----------------------------------------------------------------------===//
#include "TargetRuntime.h"

#include "kiln/Target/Aarch64Runtime.inc"
#include "kiln/Target/Riscv64Runtime.inc"
#include "kiln/Target/X86_64Runtime.inc"

namespace kiln::compiler {

std::string_view riscv64RuntimeObject() {
  return {reinterpret_cast<const char *>(kRiscv64RuntimeObject),
          sizeof(kRiscv64RuntimeObject)};
}

std::string_view x86_64RuntimeObject() {
  return {reinterpret_cast<const char *>(kX86_64RuntimeObject),
          sizeof(kX86_64RuntimeObject)};
}

std::string_view aarch64RuntimeObject() {
  return {reinterpret_cast<const char *>(kAarch64RuntimeObject),
          sizeof(kAarch64RuntimeObject)};
}

} // namespace kiln::compiler
