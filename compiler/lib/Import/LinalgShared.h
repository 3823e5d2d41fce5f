//===- LinalgShared.h - what the real and complex linalg handlers share ---===//
//
// This file declares the builders LinalgHandlers.cpp (real matrices) and
// ComplexLinalgHandlers.cpp (complex ones, as pairs) share: one LU
// factorisation of a batch, the checks of a matrix input's size, batches
// flattened, transposed and broadcast, LU factors unpacked, permutation
// and identity matrices, and results as the node declares them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <optional>
#include <string>
#include <utility>

namespace kiln::linalg {

using Values = llvm::SmallVector<mlir::Value>;

/// The largest n the factorisation loops take.
constexpr int64_t kMaxOrder = aten::kMaxLuOrder;

/// One aten.lu_factor's results and U's diagonal.
struct Factorisation {
  mlir::Value lu;       ///< (B, m, n), or complex pairs (B, m, n, 2): L below the diagonal (unit), U on and above.
  mlir::Value pivots;   ///< (B, k) i64, k = min(m, n): 0-based rows swapped with each step's row.
  mlir::Value odd;      ///< (B, 1) i1: an odd number of row swaps.
  mlir::Value diagonal; ///< (B, k), or pairs (B, k, 2): U's diagonal.
};

/// getrf on `a` (B, m, n), or zgetf2 on complex pairs (B, m, n, 2): one
/// aten.lu_factor, and U's diagonal ((B, k), or (B, k, 2) pairs).
Factorisation factorise(NodeImporter &n, mlir::Value a);
/// getrf on the (..., m, n) real matrices of `a`, as one (B, m, n) batch.
Factorisation factoriseMatrices(NodeImporter &n, mlir::Value a);

/// The (rows, cols) of a real (..., m, n) input; error unless f32 or f64
/// with m and n from 1 to kMaxOrder. `what` names the op's results.
absl::StatusOr<std::pair<int64_t, int64_t>> matrixSize(NodeImporter &n, mlir::Value a,
                                                       const std::string &what);
/// The order n of a real (..., n, n) input, as matrixSize checks it.
absl::StatusOr<int64_t> squareOrder(NodeImporter &n, mlir::Value a, const std::string &what);
/// The `pivot` flag and A's type of a real LU node: pivoted (eager's CPU
/// kernel has no other), f32 or f64 matrices of at most kMaxOrder.
absl::Status checkPivotedLu(NodeImporter &n, mlir::Value a);

/// `v` (..., r, c) with its last two dims swapped; with `trailing` dims
/// after the matrix dims (1 for complex pairs), r and c swapped.
mlir::Value transposed(NodeImporter &n, mlir::Value v, int64_t trailing = 0);
/// `v` (..., r, c) viewed as one (N, r, c) batch; with `trailing` dims
/// after the matrix dims (1 for complex pairs), (N, r, c, <those dims>).
mlir::Value flatBatch(NodeImporter &n, mlir::Value v, int64_t trailing = 0);
/// `v` (..., last `kept` dims) expanded to the batch dims `batch` followed
/// by its last `kept` dims; `v` itself when it has that shape.
mlir::Value expandBatch(NodeImporter &n, mlir::Value v, llvm::ArrayRef<int64_t> batch,
                        int64_t kept);
/// One solve (aten.linalg_solve, or what `solve` builds from the flat
/// (N, n, n) and (N, n, k) batches) of a (..., n, n) against rhs
/// (..., n, k) over their broadcast batch, in that batch's shape.
absl::StatusOr<mlir::Value>
solveBatch(NodeImporter &n, mlir::Value a, mlir::Value rhs,
           llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> solve = nullptr);

/// X with A X = b (`direct`), or with op(A) X = b where `flip` gives
/// op(M) (M's transpose, or its conjugate transpose), for A = P L U packed
/// in `lu` (..., n, n, <trailing dims>: 1 for complex pairs) with its
/// 1-based `pivots` (..., n); b is (..., n, k, <trailing dims>) and the
/// LU's batch broadcasts against b's. In b's broadcast shape.
absl::StatusOr<mlir::Value> solveWithLu(NodeImporter &n, mlir::Value lu, mlir::Value pivots,
                                        mlir::Value b, int64_t order, bool direct,
                                        llvm::function_ref<mlir::Value(mlir::Value)> flip,
                                        int64_t trailing);
/// linalg_cholesky_ex's (L, info) for `a` (..., n, n, <trailing dims>: 1
/// for complex pairs): one aten.cholesky of a's lower triangle, or for
/// `upper` of flip(a)'s (flip the transpose, or the conjugate transpose),
/// whose factor is flipped back.
absl::StatusOr<Values> choleskyResults(NodeImporter &n, mlir::Value a, bool upper,
                                       llvm::function_ref<mlir::Value(mlir::Value)> flip,
                                       int64_t trailing);
/// The LU and 1-based int32 pivots results at `luIndex` and luIndex + 1,
/// in their declared shapes (null for a result the node leaves out).
absl::StatusOr<Values> luResults(NodeImporter &n, const Factorisation &f, int luIndex);
/// getrf's info of `f`: the 1-based step of U's first zero pivot, 0 for
/// none, (N) i64; a complex pivot is zero where both its parts are.
mlir::Value zeroPivotInfo(NodeImporter &n, const Factorisation &f);
/// lu_factor's LU, 1-based pivots and info for the flat (B, m, n) batch
/// (or complex pairs (B, m, n, 2)), as results `first` to first + 2
/// declare them (null where the node leaves one out).
absl::StatusOr<Values> factorisationResults(NodeImporter &n, mlir::Value batch, int first);
/// The packed (B, m, n) LU unpacked, k = min(m, n): L (B, m, k), unit
/// lower trapezoidal; U (B, k, n), upper trapezoidal; complex pairs
/// (B, m, n, 2) part by part (L's imaginary part has a zero diagonal).
std::pair<mlir::Value, mlir::Value> unpackFactors(NodeImporter &n, mlir::Value lu);
/// (P, L, U) as results 0 to 2 from the flat packed LU `lu` (B, m, n), or
/// complex pairs (B, m, n, 2), and its row order `perm` (B, m) i64: P
/// one-hot in the LU's form; P is empty where `perm` is null, L and U
/// where `unpackData` is false (lu_unpack's flags, as eager's).
absl::StatusOr<Values> unpackedResults(NodeImporter &n, mlir::Value lu, mlir::Value perm,
                                       bool unpackData);
/// The row order (B, rows) i64 of 1-based int pivots (..., k), as getrf
/// and lu_factor give them (k = `order` swaps; rows = k when not given);
/// error unless the pivots are integers, k per matrix of the batch.
absl::StatusOr<mlir::Value> rowOrder(NodeImporter &n, mlir::Value pivots, int64_t batch,
                                     int64_t order, std::optional<int64_t> rows = std::nullopt);
/// The row order (B, m) i64 that `f`'s row swaps leave (getrf's P).
mlir::Value rowOrderOf(NodeImporter &n, const Factorisation &f);
/// P (B, m, m) in `element` from a row order (B, m) i64: P[perm[i], i] = 1.
mlir::Value permutationMatrix(NodeImporter &n, mlir::Value perm, mlir::Type element);
/// The (order, order) identity in `element`.
mlir::Value identityMatrix(NodeImporter &n, int64_t order, mlir::Type element);

/// legacy triangular_solve's second result: A broadcast to its declared
/// shape (null when left out), real or complex pairs alike.
absl::StatusOr<mlir::Value> clonedCoefficient(NodeImporter &n, mlir::Value a);
/// `v` in result `i`'s declared element type and shape; null when the node
/// leaves the result out.
absl::StatusOr<mlir::Value> asResult(NodeImporter &n, mlir::Value v, int i);
/// `v` as result `i` declares it, or null when the node leaves it out.
absl::StatusOr<mlir::Value> readResult(NodeImporter &n, mlir::Value v, int i);
/// A result of no elements of the declared type; null when left out.
absl::StatusOr<mlir::Value> emptyResult(NodeImporter &n, int i);

/// QR of matrices (..., m, n) of `size` (m, n), real (`trailing` 0) or
/// complex pairs (..., m, n, 2; `trailing` 1), each one aten op of the
/// flattened batch: linalg_qr's (Q, R) by its mode ("r" leaves Q empty),
/// geqrf's (a, tau), householder_product's H_0 ... H_{k-1} of reflectors
/// `a` and scales `tau`, and ormqr's Q C, Q^H C, C Q or C Q^H (the right-hand
/// forms from the left on `adjointOf(C)`: C's transpose, or its conjugate
/// transpose for pairs).
absl::StatusOr<Values> qrResults(NodeImporter &n, mlir::Value a,
                                 std::pair<int64_t, int64_t> size, int64_t trailing);
absl::StatusOr<Values> geqrfResults(NodeImporter &n, mlir::Value a,
                                    std::pair<int64_t, int64_t> size, int64_t trailing);
absl::StatusOr<Values> householderProductResult(NodeImporter &n, mlir::Value a, mlir::Value tau,
                                                std::pair<int64_t, int64_t> size,
                                                int64_t trailing);
absl::StatusOr<Values> ormqrResult(NodeImporter &n, mlir::Value a, mlir::Value tau,
                                   mlir::Value c, std::pair<int64_t, int64_t> size,
                                   int64_t trailing,
                                   llvm::function_ref<mlir::Value(mlir::Value)> adjointOf);

/// linalg_eig(A) -> (eigenvalues, eigenvectors), both complex, of a real
/// A or a complex one as pairs (ComplexLinalgHandlers.cpp; both handler
/// tables take it).
absl::StatusOr<Values> linalgEig(NodeImporter &n);

} // namespace kiln::linalg
