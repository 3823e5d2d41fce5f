//===- Riscv64Runtime.cpp - the runtime object linked into riscv64 code ---===//
//
// This file embeds compiler/runtime/kiln_rt_half.c, compiled for riscv64 at
// build time: the half/bfloat16 conversion routines rv64gc lacks.
//
//===----------------------------------------------------------------------===//
#include "Riscv64Runtime.h"

#include "kiln/Target/Riscv64Runtime.inc"

namespace kiln::compiler {

std::string_view riscv64RuntimeObject() {
  return {reinterpret_cast<const char *>(kRiscv64RuntimeObject),
          sizeof(kRiscv64RuntimeObject)};
}

} // namespace kiln::compiler
