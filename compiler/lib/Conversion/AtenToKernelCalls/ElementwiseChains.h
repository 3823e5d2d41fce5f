//===- ElementwiseChains.h - elementwise chains for a kernel library ------===//
//
// This file declares how kiln-convert-aten-to-kernel-calls finds the
// elementwise chains it hands to the acap target's "aie" library: runs of
// aten ops on one static f32 shape, each result read only by the next op,
// as the steps of a kiln_rt_elementwise geometry
// (compiler/runtime/kiln_rt_kernels.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CONVERSION_ATENTOKERNELCALLS_ELEMENTWISECHAINS_H
#define KILN_CONVERSION_ATENTOKERNELCALLS_ELEMENTWISECHAINS_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallVector.h"

#include <vector>

#include "../../../runtime/kiln_rt_kernels.h"

namespace kiln {

/// A chain the library runs as one call: `ops` in program order, one
/// block, each op's result read only by the next op (the last's by
/// anything), all results of one static f32 type, no op in two chains.
/// `inputs` are the distinct tensors of that type the chain reads
/// (registers 0 .. inputs-1), each as the first of the chain's operands
/// that reads it: rewriting one chain may replace a value another reads.
struct ElementwiseChain {
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::SmallVector<mlir::OpOperand *> inputs;
  kiln_rt_elementwise geometry{};
};

/// The maximal chains of `module` of at least `minElements` elements each,
/// in program order. Ops a chain cannot express (broadcasting operands,
/// other element types, functions the library lacks) are left out.
std::vector<ElementwiseChain> findElementwiseChains(mlir::ModuleOp module,
                                                   int64_t minElements);

} // namespace kiln

#endif // KILN_CONVERSION_ATENTOKERNELCALLS_ELEMENTWISECHAINS_H
