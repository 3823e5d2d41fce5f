//===- ComplexPairs.h - complex tensors as (real, imaginary) pairs --------===//
//
// This file declares the builders the complex handlers share. Kiln carries
// a complex64 (complex128) tensor of shape S as the f32 (f64) tensor S + [2]
// of its (real, imaginary) pairs (ComplexHandlers.cpp says why).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <set>
#include <string>

namespace kiln {

/// Arithmetic on real tensors of one type (a complex value's parts).
class PartMath {
public:
  PartMath(NodeImporter &n, mlir::RankedTensorType type) : n(n), type(type) {}

  mlir::Value add(mlir::Value x, mlir::Value y) {
    return n.b().create<aten::AddOp>(n.loc(), type, x, y, one()).getResult();
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return n.b().create<aten::SubOp>(n.loc(), type, x, y, one()).getResult();
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return n.b().create<aten::MulOp>(n.loc(), type, x, y).getResult();
  }
  mlir::Value div(mlir::Value x, mlir::Value y) {
    return n.b().create<aten::DivOp>(n.loc(), type, x, y).getResult();
  }
  mlir::Value neg(mlir::Value x) { return n.b().create<aten::NegOp>(n.loc(), type, x).getResult(); }
  mlir::Value exp(mlir::Value x) { return n.b().create<aten::ExpOp>(n.loc(), type, x).getResult(); }
  mlir::Value scale(mlir::Value x, double c) { return mul(x, number(c)); }
  /// A real function by aten.pointwise name ("sin", "atan2", ...).
  mlir::Value fn(llvm::StringRef name, mlir::ValueRange xs) { return pointwise(n, type, name, xs); }
  mlir::Value test(llvm::StringRef name, mlir::ValueRange xs) {
    return pointwise(n, type.clone(n.b().getI1Type()), name, xs);
  }
  mlir::Value where(mlir::Value cond, mlir::Value x, mlir::Value y) { return fn("where", {cond, x, y}); }
  mlir::Value number(double c) { return n.constant(type.getElementType(), c); }

private:
  mlir::FloatAttr one() { return n.b().getF64FloatAttr(1.0); }
  NodeImporter &n;
  mlir::RankedTensorType type;
};

/// A complex value as its two parts.
struct Parts {
  mlir::Value re, im;
};

/// |z| without overflow or underflow in the squares: m sqrt((a/m)^2 +
/// (b/m)^2), m = max(|a|, |b|); 0 for m = 0, inf for an infinite part.
mlir::Value modulus(PartMath &m, Parts z);

/// Entries [start, start + count) of dim `dim` of `x`.
mlir::Value sliceAlong(NodeImporter &n, mlir::Value x, int64_t dim, int64_t start,
                       int64_t count);


/// The shape of a pair tensor's complex values (without the pair dim).
llvm::ArrayRef<int64_t> complexShape(mlir::Value pairs);
/// The rank of a pair tensor's complex values.
int64_t complexRank(mlir::Value pairs);

/// The real (imaginary) parts of `pairs`, of its complex shape.
mlir::Value realPart(NodeImporter &n, mlir::Value pairs);
mlir::Value imagPart(NodeImporter &n, mlir::Value pairs);
/// (re, im) of shape S as pairs S + [2].
mlir::Value pack(NodeImporter &n, mlir::Value re, mlir::Value im);
/// A real value `v` (shape S) as pairs (v, 0) of element `element`.
mlir::Value realAsPairs(NodeImporter &n, mlir::Value v, mlir::Type element);
/// A real value of shape S viewed as S + [1], to scale pairs.
mlir::Value asColumn(NodeImporter &n, mlir::Value v);
/// True where a complex value is nonzero (either part): a bool tensor of
/// the complex shape, what torch's truth of a complex number is.
mlir::Value complexIsNonZero(NodeImporter &n, mlir::Value pairs);
/// The complex product of pairs `x` and `y`, broadcast to pairs `type`.
mlir::Value complexProduct(NodeImporter &n, mlir::RankedTensorType type, mlir::Value x,
                           mlir::Value y);
/// The product of pairs `x` along complex dim `dim` (left with extent 1):
/// the first half times the second until one entry is left (the products
/// of c10::complex, in a different order than eager's loop).
mlir::Value productAlong(NodeImporter &n, mlir::Value x, int64_t dim);
/// Pairs `x` expanded to pairs `type` (leading dims added, dims of 1
/// broadcast); `x` itself when it has that shape.
mlir::Value expandPairs(NodeImporter &n, mlir::Value x, mlir::RankedTensorType type);

/// The complex quotient x / y of pairs broadcast to pairs `type`, as
/// c10::complex divides: Smith's scaling by the divisor's larger part.
mlir::Value complexQuotient(NodeImporter &n, mlir::RankedTensorType type, mlir::Value x,
                            mlir::Value y);
/// The pairs [2] of `c`, of element `element`.
mlir::Value complexConstant(NodeImporter &n, mlir::Type element, std::complex<double> c);
/// Pairs times the complex number `c`.
mlir::Value scaleComplex(NodeImporter &n, mlir::Value pairs, std::complex<double> c);

/// Argument `name` as pairs of `element`: a complex tensor as it is, a
/// complex number as its pair, a real tensor or number as (x, 0).
absl::StatusOr<mlir::Value> pairsOf(NodeImporter &n, const std::string &name,
                                    mlir::Type element);
/// Argument `name`, which must be a complex tensor (pairs of rank >= 1
/// with a last dim of 2).
absl::StatusOr<mlir::Value> complexArgument(NodeImporter &n, const std::string &name);
/// Result 0's type and its pair element type (f32 or f64); error when the
/// result is not complex.
absl::StatusOr<std::pair<mlir::RankedTensorType, mlir::Type>> pairResult(NodeImporter &n);

/// Registers the ops that run as their real form on each part
/// (ComplexParts.cpp) where `table` has no form yet; returns those ops.
std::set<std::string> addComplexPartHandlers(OpHandlerTable &table);
/// Registers the complex products and elementary functions
/// (ComplexMath.cpp).
void addComplexMathHandlers(OpHandlerTable &table);
/// Registers linalg_eig, whose results are complex, and the linear
/// algebra of complex matrices (ComplexLinalgHandlers.cpp).
void addComplexLinalgHandlers(OpHandlerTable &table);
/// Registers _fft_c2c, _fft_r2c and _fft_c2r (FourierTransforms.cpp).
void addFourierTransformHandlers(OpHandlerTable &table);
/// True for the complex forms that take symbolic sizes beside static
/// complex values: the ops that read only a complex value's truth, whose
/// real handler then does the work (nonzero of a complex tensor), and
/// masked_select and index.Tensor, whose complex results may have a
/// data-dependent row count (index.Tensor's only by one boolean mask; its
/// handler refuses other forms of symbolic size).
bool complexFormTakesSymbolicSizes(const std::string &op);
/// True for the ops complexHandlers() runs by addComplexPartHandlers registers: their real import
/// applies its rules for tensors with no elements to each part.
bool complexPartsTakeEmptyTensors(const std::string &op);

} // namespace kiln
