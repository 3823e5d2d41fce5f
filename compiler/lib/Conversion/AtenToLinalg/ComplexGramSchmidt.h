//===- ComplexGramSchmidt.h - pivoted Gram-Schmidt on complex columns -----===//
//
// This file declares the complex Gram-Schmidt with column pivoting that
// turns the real embedding's eigenvectors or singular vectors into complex
// ones (HermitianEigenvectors.cpp, ComplexSingularVectors.cpp): a working
// tensor (rows, columns, 2) of complex columns, a state per column (0 a
// candidate, > 0 taken, with the mark of the pass that took it, < 0 left
// out), and passes of steps over a range of its rows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ScalarLoops.h"

#include "mlir/IR/BuiltinTypes.h"

#include <utility>

namespace kiln::aten {

/// Complex columns of a working tensor (rows, columns, 2) in scalar loops,
/// their entries the rows [begin, end): inner products, norms, projections
/// and scaling read and write those rows alone.
class ComplexColumns {
public:
  ComplexColumns(int64_t begin, int64_t end, mlir::Type element)
      : begin(begin), end(end), element(element) {}

  /// The same columns over other rows.
  ComplexColumns rows(int64_t from, int64_t to) const { return {from, to, element}; }

  mlir::Type elementType() const { return element; }

  mlir::Value part(mlir::OpBuilder &b, mlir::Location l, mlir::Value z, mlir::Value i,
                   mlir::Value c, int64_t which) const;
  mlir::Value put(mlir::OpBuilder &b, mlir::Location l, mlir::Value v, mlir::Value z,
                  mlir::Value i, mlir::Value c, int64_t which) const;

  /// sum |z_c|^2.
  mlir::Value norm2(mlir::OpBuilder &b, mlir::Location l, mlir::Value z, mlir::Value c) const;
  /// z_c -= <z_q, z_c> z_q, where <q, z> = sum conj(q_i) z_i; z_c as it
  /// is where `when` (an i1, if given) is false.
  mlir::Value project(mlir::OpBuilder &b, mlir::Location l, mlir::Value z, mlir::Value q,
                      mlir::Value c, mlir::Value when = {}) const;
  /// z_c * factor.
  mlir::Value scale(mlir::OpBuilder &b, mlir::Location l, mlir::Value z, mlir::Value c,
                    mlir::Value factor) const;
  /// z_c over its norm (a zero column stays zero); as it is where `when`
  /// (an i1, if given) is false.
  mlir::Value normalise(mlir::OpBuilder &b, mlir::Location l, mlir::Value z, mlir::Value c,
                        mlir::Value when = {}) const;

private:
  int64_t begin, end;
  mlir::Type element;
};

/// `work` with rows [first, first + rows) of its columns [0, count) the
/// complex columns of the real embedding's vectors `real` (N, 2 rows,
/// count) of matrix m: its top half the real parts, its bottom half the
/// imaginary ones.
mlir::Value loadEmbeddingColumns(mlir::OpBuilder &b, mlir::Location loc, mlir::Value work,
                                 mlir::Value real, mlir::Value m, int64_t first, int64_t rows,
                                 int64_t count);

/// Whether column c of `state` is taken (> 0) or a candidate (== 0).
mlir::Value isTaken(mlir::OpBuilder &b, mlir::Location l, mlir::Value state, mlir::Value c);
mlir::Value isCandidate(mlir::OpBuilder &b, mlir::Location l, mlir::Value state, mlir::Value c);

/// `z` with each of its `count` columns c updated by `update(z, c)`,
/// which leaves the columns it does not select as they are (masked, not
/// branched on: scf.if nested in scf.for loops that carry tensors costs
/// one-shot bufferization time exponential in the depth).
mlir::Value forColumns(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value z, int64_t count,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::Value)>
        update);

/// `z` with its taken columns normalised over `cols`' rows.
mlir::Value normaliseTaken(mlir::OpBuilder &b, mlir::Location l, const ComplexColumns &cols,
                           mlir::Value z, mlir::Value state, int64_t columns);

/// Every candidate column of `work` with each taken column projected out
/// (the taken ones orthonormal over `cols`' rows).
mlir::Value projectOutTaken(mlir::OpBuilder &b, mlir::Location l, const ComplexColumns &cols,
                            mlir::Value work, mlir::Value state, int64_t columns);

/// Whether a column is preferred (an i1), built inside the pivot search.
using ColumnTest =
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)>;

/// `steps` steps of complex Gram-Schmidt with column pivoting over the
/// candidates of `state` (`columns` of them at most) and `cols`' rows: the
/// candidate with the largest squared norm (a NaN one first, as +inf;
/// before any other, one that `preferred` holds for and that has over half
/// its norm left) is made orthogonal once more to every taken column,
/// normalised, marked `mark` and projected out of the candidates left.
/// Returns (work, state).
std::pair<mlir::Value, mlir::Value> pivotedGramSchmidt(mlir::OpBuilder &b, mlir::Location l,
                                                       const ComplexColumns &cols,
                                                       mlir::Value work, mlir::Value state,
                                                       int64_t columns, mlir::Value steps,
                                                       double mark, ColumnTest preferred = {});

/// `out` (N, rows, k, 2) with, for matrix `m`, the columns of `work` that
/// `state` marks `mark`, in column order, written from position `at` on
/// (an scf.if per column, not nested in other branches):
/// out[m, i, at + j] = work[first + i, c_j] for i in [0, rows). Returns
/// (out, the next position).
std::pair<mlir::Value, mlir::Value> writeMarked(mlir::OpBuilder &b, mlir::Location l,
                                                mlir::Value work, mlir::Value state,
                                                int64_t columns, double mark, mlir::Value out,
                                                mlir::Value m, mlir::Value at, int64_t first,
                                                int64_t rows);

} // namespace kiln::aten
