//===- Decompositions.h - the pattern families of kiln-decompose-aten -----===//
//
// This file declares the pattern families kiln-decompose-aten applies, one
// per composite op family, each in its own file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// aten.quantize, aten.dequantize and aten.fake_quantize in elementwise aten ops
/// (DecomposeQuantize.cpp).
void populateQuantizeDecompositions(mlir::RewritePatternSet &patterns);

/// aten.searchsorted as a broadcast comparison counted over each row
/// (DecomposeSearch.cpp).
void populateSearchDecompositions(mlir::RewritePatternSet &patterns);

/// aten.cummax, aten.cummin and aten.logcumsumexp as triangular reductions
/// (DecomposeScan.cpp).
void populateScanDecompositions(mlir::RewritePatternSet &patterns);

/// aten.vector_norm as abs, a power and a reduction; aten.cdist as one
/// product or a vector_norm of differences; aten.group_norm and
/// aten.batch_stats_norm as a mean, a variance and pointwise ops
/// (DecomposeNorm.cpp).
void populateNormDecompositions(mlir::RewritePatternSet &patterns);

/// aten.unique as a stable sort, a comparison of neighbours, a cumulative
/// sum, two scatters and two boolean masks (DecomposeUnique.cpp).
void populateUniqueDecompositions(mlir::RewritePatternSet &patterns);

/// aten.trilinear as one product and one aten.bmm (DecomposeTrilinear.cpp).
void populateTrilinearDecompositions(mlir::RewritePatternSet &patterns);

/// aten.adaptive_avg_pool and aten.adaptive_max_pool as plain pools, or
/// over gathered windows (DecomposeAdaptivePool.cpp).
void populateAdaptivePoolDecompositions(mlir::RewritePatternSet &patterns);

/// aten.fractional_max_pool as windows gathered from starts eager's way
/// (DecomposeFractionalMaxPool.cpp).
void populateFractionalPoolDecompositions(mlir::RewritePatternSet &patterns);

/// aten.segment_reduce as a segment-membership mask and a masked reduction
/// (DecomposeSegmentReduce.cpp).
void populateSegmentReduceDecompositions(mlir::RewritePatternSet &patterns);

/// aten.embedding_bag as a bag-membership mask and a masked sum or maximum
/// over the gathered rows; aten.embedding_renorm as row norms and a scale
/// (DecomposeEmbedding.cpp).
void populateEmbeddingDecompositions(mlir::RewritePatternSet &patterns);

/// A transposed aten.convolution padded past dilation * (kernel - 1) as
/// one padded up to it and a slice (DecomposeTransposedConvolution.cpp).
void populateTransposedConvolutionDecompositions(mlir::RewritePatternSet &patterns);

/// aten.convolution_backward as a transposed convolution, a grouped
/// convolution and a sum (DecomposeConvolutionBackward.cpp).
void populateConvolutionBackwardDecompositions(mlir::RewritePatternSet &patterns);

/// aten.max_pool_backward as a gather over the windows that can cover each
/// input position, or a scatter-add (DecomposePoolBackward.cpp).
void populatePoolBackwardDecompositions(mlir::RewritePatternSet &patterns);

/// aten.histc and aten.histogram as scatter-adds into their bins
/// (DecomposeHistogram.cpp).
void populateHistogramDecompositions(mlir::RewritePatternSet &patterns);

/// aten.scatter_reduce (PyTorch's whole scatter family) as the primitive
/// aten.scatter, slices and pointwise ops (DecomposeScatter.cpp).
void populateScatterDecompositions(mlir::RewritePatternSet &patterns);

/// aten.topk and aten.kthvalue as a stable aten.sort and slices
/// (DecomposeSelection.cpp).
void populateSelectionDecompositions(mlir::RewritePatternSet &patterns);

/// aten.repeat as a view, one expand and a view (DecomposeRepeat.cpp).
void populateRepeatDecompositions(mlir::RewritePatternSet &patterns);

/// aten.upsample_separable as two products with constant weight tables
/// (DecomposeUpsample.cpp).
void populateUpsampleDecompositions(mlir::RewritePatternSet &patterns);

} // namespace kiln
