//===- KernelSites.h - the kernel-library call sites of an LLVM module ----===//
//
// This file declares how the acap target finds the kernel call sites of its
// host code: the constant geometry globals kiln-convert-aten-to-kernel-calls
// gives every kiln_rt_convolution_f32, kiln_rt_matmul_f32 and
// kiln_rt_elementwise_f32 call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "AiePlanner.h"

#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln::compiler::acap {

/// The call sites of `module`, in the module's order, before optimisation
/// has a chance to merge or drop their geometry globals.
std::vector<KernelSite> collectKernelSites(const llvm::Module &module);

} // namespace kiln::compiler::acap
