//===- DecomposeNorm.cpp - aten.vector_norm -------------------------------===//
//
// This file implements the decomposition of aten.vector_norm
// (linalg_vector_norm): |x| in the result's float type, then by order
// ord = +-inf a max (min) of |x|; 0 a count of the nonzero elements; 1 a
// sum of |x|; 2 the square root of a sum of x*x; otherwise
// (sum |x|^ord)^(1/ord) through pow.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <cmath>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// A `ReduceOp` of `v` over the norm's dims, in its result type.
template <typename ReduceOp>
Value reduce(PatternRewriter &rewriter, aten::VectorNormOp op, Value v) {
  return rewriter.create<ReduceOp>(op.getLoc(), op.getResult().getType(), v,
                                   op.getDimsAttr(),
                                   rewriter.getBoolAttr(op.getKeepdim()));
}

struct DecomposeVectorNorm : OpRewritePattern<aten::VectorNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::VectorNormOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    RankedTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    double ord = op.getOrd().convertToDouble();
    auto full = typeOf(op.getSelf()).clone(element);
    Value x = b.pointwise(full, "abs", op.getSelf());
    auto sum = [&](Value v) { return reduce<aten::SumOp>(rewriter, op, v); };
    Value result;
    if (std::isinf(ord)) {
      result = ord > 0 ? reduce<aten::AmaxOp>(rewriter, op, x)
                       : reduce<aten::AminOp>(rewriter, op, x);
    } else if (ord == 0.0) {
      Value nonzero = b.pointwise(full.clone(rewriter.getI1Type()), "ne",
                                  {x, b.constant(element, 0.0)});
      result = sum(b.pointwise(full, "copy", nonzero));
    } else if (ord == 1.0) {
      result = sum(x);
    } else if (ord == 2.0) {
      result = b.pointwise(type, "sqrt", sum(b.mul(element, x, x)));
    } else {
      Value powered = b.pointwise(full, "pow", {x, b.constant(element, ord)});
      result = b.pointwise(type, "pow", {sum(powered), b.constant(element, 1.0 / ord)});
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::populateNormDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeVectorNorm>(patterns.getContext());
}
