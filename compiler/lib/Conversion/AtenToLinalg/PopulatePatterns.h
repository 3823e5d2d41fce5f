//===- PopulatePatterns.h - ATen-to-linalg pattern groups -----------------===//
//
// This file declares one populate function per group of ATen-to-linalg
// conversion patterns; AtenToLinalg.cpp assembles them into the pass.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Transforms/DialectConversion.h"

namespace kiln::aten {

/// constant, add, sub, mul, div, neg, relu, tanh, sigmoid, exp, gelu.
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
/// mm, addmm, bmm.
void populateLinearPatterns(mlir::RewritePatternSet &patterns);
/// sum, mean, softmax.
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
/// native_layer_norm.
void populateNormalizationPatterns(mlir::RewritePatternSet &patterns);
/// view, permute, expand.
void populateDataMovementPatterns(mlir::RewritePatternSet &patterns);
/// nonzero and boolean_mask: result sizes the run computes (DataDependent.cpp).
void populateDataDependentPatterns(mlir::RewritePatternSet &patterns);

/// aten.pointwise: every function of the pointwise table.
void populatePointwisePatterns(mlir::RewritePatternSet &patterns);
/// convolution (1-3 spatial dims, groups, transposed).
void populateConvolutionPatterns(mlir::RewritePatternSet &patterns);
/// max_pool, avg_pool.
void populatePoolingPatterns(mlir::RewritePatternSet &patterns);
/// grid_sample (bilinear, nearest, bicubic; zeros, border, reflection).
void populateGridSamplePatterns(mlir::RewritePatternSet &patterns);
/// slice, cat, index_select, gather, arange.
void populateIndexingPatterns(mlir::RewritePatternSet &patterns);
/// prod, amax, amin, any, all, var, arg_reduce, cumsum.
void populateReductionFamilyPatterns(mlir::RewritePatternSet &patterns);

/// sort (stable: rank counting up to 256 elements a row, a merge sort past
/// that; Sorting.cpp).
void populateSortingPatterns(mlir::RewritePatternSet &patterns);

/// cummax, cummin and logcumsumexp along a dim longer than
/// kMaxTriangularScan, as a loop over the dim (Scans.cpp).
void populateScanPatterns(mlir::RewritePatternSet &patterns);

/// lu_factor, lu_permutation, linalg_solve, triangular_solve, qr, geqrf,
/// householder_product, ormqr and cholesky as LAPACK's unblocked routines
/// in scalar loops (Factorisations.cpp).
void populateFactorisationPatterns(mlir::RewritePatternSet &patterns);
/// svdvals and svd as one-sided Jacobi rotations in scalar loops
/// (Jacobi.cpp).
void populateJacobiPatterns(mlir::RewritePatternSet &patterns);
/// eigvalsh and eigh as a Householder tridiagonalisation and implicit QL
/// steps in scalar loops (SymmetricEigen.cpp).
void populateSymmetricEigenPatterns(mlir::RewritePatternSet &patterns);
/// aten.hermitian_eigenvectors: complex Gram-Schmidt over the embedding's
/// eigenvectors (HermitianEigenvectors.cpp).
void populateHermitianEigenvectorPatterns(mlir::RewritePatternSet &patterns);
/// aten.complex_singular_vectors: complex Gram-Schmidt over the embedding's
/// singular vector pairs (ComplexSingularVectors.cpp).
void populateComplexSingularVectorPatterns(mlir::RewritePatternSet &patterns);
/// eigvals of real matrices as dgebal's balancing, a Householder
/// reduction to Hessenberg form and Francis double-shift QR sweeps in
/// scalar loops (GeneralEigen.cpp).
void populateGeneralEigenPatterns(mlir::RewritePatternSet &patterns);

/// aten.eigvals and aten.eig of complex pairs, as zgeev (ComplexEigen.cpp).
void populateComplexEigenPatterns(mlir::RewritePatternSet &patterns);
/// ldl_factor as dsytf2's Bunch-Kaufman pivoting in scalar loops
/// (BunchKaufman.cpp).
void populateBunchKaufmanPatterns(mlir::RewritePatternSet &patterns);
/// aten.matrix_exp (MatrixExp.cpp).
void populateMatrixExpPatterns(mlir::RewritePatternSet &patterns);

} // namespace kiln::aten
