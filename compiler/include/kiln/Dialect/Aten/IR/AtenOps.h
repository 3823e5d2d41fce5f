//===- AtenOps.h - ATen dialect operations --------------------------------===//
//
// This file declares the operations of the `aten` dialect.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Dialect/Aten/IR/AtenDialect.h"
#include "kiln/Dialect/Aten/IR/Limits.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <string>

#define GET_OP_CLASSES
#include "kiln/Dialect/Aten/IR/AtenOps.h.inc"

namespace kiln::aten {

/// The largest n aten.lu_factor, linalg_solve and cholesky take. Their
/// scalar loops (Factorisations.cpp) do O(n^3) work per matrix with no
/// blocking; past a few hundred a call takes seconds.
inline constexpr int64_t kMaxLuOrder = 512;

/// The longest dim a scan (cumsum, cumprod, cummax, cummin, logcumsumexp)
/// takes as one triangular reduction over (i, j <= i) pairs, parallel and
/// vectorised but O(n^2) per line; longer ones lower to a loop over the dim
/// carrying the running values, O(n).
inline constexpr int64_t kMaxTriangularScan = 128;

/// The most (bag, index, column) triples of aten.embedding_bag's masked
/// window (max mode needs it; sum and mean multiply by the mask past it).
inline constexpr int64_t kMaxEmbeddingBagWindow = int64_t{1} << 26;

/// Why aten.embedding_bag's decomposition does not take `bags` bags of
/// `count` indices into rows of `width` in `mode` (its (bag, index) mask
/// is a constant-table-sized comparison, its gathered rows a tensor, max
/// mode's window bounded), or nullopt when it does. The verifier refuses
/// such shapes; the importer answers UNIMPLEMENTED first.
std::optional<std::string> embeddingBagBeyondBounds(int64_t bags, int64_t count,
                                                    int64_t width, int64_t mode);

/// Whether the uncut output of a transposed convolution padded past
/// dilation * (kernel - 1) (DecomposeTransposedConvolution.cpp) would pass
/// kMaxTensorElements: `output` is the cropped result's shape (N, C,
/// spatial...), `kernel`, `padding` and `dilation` one entry per spatial
/// dim. Entries a verifier would refuse (kernel < 1, padding < 0,
/// dilation < 1) count as not widening; every product is checked.
bool uncutTransposedConvolutionTooLarge(llvm::ArrayRef<int64_t> output,
                                        llvm::ArrayRef<int64_t> kernel,
                                        llvm::ArrayRef<int64_t> padding,
                                        llvm::ArrayRef<int64_t> dilation);

/// aten.embedding_bag's modes.
enum EmbeddingBagMode : int64_t {
  kEmbeddingBagSum = 0,
  kEmbeddingBagMean = 1,
  kEmbeddingBagMax = 2
};

/// The type aten.group_norm and aten.batch_stats_norm compute their
/// statistics in for an input of `element`: f32 for f16/bf16, as eager's
/// CPU kernels do; the input's type otherwise.
inline mlir::Type normStatisticsType(mlir::Type element) {
  return element.isF16() || element.isBF16()
             ? mlir::Float32Type::get(element.getContext())
             : element;
}

} // namespace kiln::aten
