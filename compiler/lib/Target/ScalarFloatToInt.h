//===- ScalarFloatToInt.h - float-to-int conversions kept scalar ----------===//
//
// This file declares keepFloatToIntScalar, the riscv64 target's guard
// against Debian 12's qemu-riscv64 (7.2), which aborts on every RVV
// conversion with static round-towards-zero.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::compiler {

/// Rewrites every fptosi and fptoui of `module` (scalar, or a fixed vector
/// lane by lane) into the RISC-V scalar `fcvt.{w,wu,l,lu}.{s,d} rd, rs, rtz`
/// as inline assembly, which no vectorizer touches. LLVM lowers a vector
/// fptosi to `vfcvt/vfwcvt/vfncvt.rtz`, and qemu-riscv64 7.2 dies on those
/// (decode_save_opc: Assertion 'ctx->insn_start != NULL'). Half and
/// bfloat16 sources are widened to f32 first (exactly); results narrower
/// than 32 bits are truncated from the 32-bit conversion, which is the same
/// for every in-range value (out of range, LLVM's result is poison anyway).
/// Returns how many conversions it rewrote. rv64 with F and D only.
int keepFloatToIntScalar(llvm::Module &module);

} // namespace kiln::compiler
