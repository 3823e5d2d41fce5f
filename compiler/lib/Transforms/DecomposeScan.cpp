//===- DecomposeScan.cpp - running extrema and logcumsumexp ---------------===//
//
// This file implements the decompositions of aten.cummax, aten.cummin and
// aten.logcumsumexp as triangular reductions (the way cumsum lowers):
// along the scanned dim of length L, x is expanded to (i, j) pairs
// (L x L), entries with j > i are masked out, and reductions over j give
// the results. Only dims of at most kMaxTriangularScan: longer ones lower
// to a loop over the dim (AtenToLinalg/Scans.cpp).
//
//  - cummax/cummin: one aten.amax (aten.amin) gives the values; the index
//    is PyTorch's: the last j <= i holding the extremum (the scan updates
//    on ties, `x >= best`), or once a NaN has been seen the last NaN so far
//    (NaN propagates).
//  - logcumsumexp: a log-sum-exp over each masked row, shifted by the row's
//    maximum (0 where it is infinite, so that all -inf gives -inf and +inf
//    gives +inf); f32 and f64 accumulate in f64, f16 and bf16 in f32, as
//    eager's CPU kernel does. Not of complex parts, at any length: their
//    imaginary parts are eager's only in eager's order of steps (Scans.cpp).
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <limits>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// `shape` with dim `d` replaced by `a, b`.
SmallVector<int64_t> splitDim(ArrayRef<int64_t> shape, int64_t d, int64_t a,
                              int64_t b) {
  SmallVector<int64_t> out(shape.take_front(d));
  out.append({a, b});
  out.append(shape.begin() + d + 1, shape.end());
  return out;
}

/// A (rows, cols, 1 x trailing) constant whose entry (i, j) is at(i, j).
template <typename T, typename F>
Value grid(PatternRewriter &rewriter, Location loc, int64_t rows, int64_t cols,
           Type element, int64_t trailing, F at) {
  SmallVector<int64_t> shape = {rows, cols};
  shape.append(trailing, 1);
  auto type = RankedTensorType::get(shape, element);
  SmallVector<T> data;
  data.reserve(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      data.push_back(static_cast<T>(at(i, j)));
  return rewriter.create<aten::ConstantOp>(
      loc, type, DenseElementsAttr::get(type, ArrayRef<T>(data)));
}

/// The scan's input as a tensor of rank 1 or more (a 0-d one as [1]).
Value atLeast1d(AtenBuilder &b, Value self) {
  return typeOf(self).getRank() == 0 ? b.view(self, {1}) : self;
}

/// cummax (`Max`) or cummin: (values, indices).
template <typename ScanOp, typename ReduceOp>
struct DecomposeCumExtremum : OpRewritePattern<ScanOp> {
  using OpRewritePattern<ScanOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    Value self = atLeast1d(b, op.getSelf());
    RankedTensorType type = typeOf(self);
    Type element = type.getElementType();
    SmallVector<int64_t> shape(type.getShape());
    int64_t dim = op.getDimAttr().getInt();
    int64_t length = shape[dim];
    if (length > aten::kMaxTriangularScan)
      return rewriter.notifyMatchFailure(op, "lowered as a loop (Scans.cpp)");
    int64_t trailing = static_cast<int64_t>(shape.size()) - dim - 1;
    auto pairType =
        RankedTensorType::get(splitDim(shape, dim, length, length), element);
    auto boolPair = pairType.clone(rewriter.getI1Type());
    auto i64Pair = pairType.clone(rewriter.getI64Type());

    // xj[.., i, j, ..] = x[.., j, ..] and xi[.., i, j, ..] = x[.., i, ..].
    Value xj = rewriter.create<aten::ExpandOp>(
        op.getLoc(), pairType, b.view(self, splitDim(shape, dim, 1, length)));
    Value xi = b.view(self, splitDim(shape, dim, length, 1));
    Value seen = grid<bool>(rewriter, op.getLoc(), length, length,
                            rewriter.getI1Type(), trailing,
                            [](int64_t i, int64_t j) { return j <= i; });
    // Unseen entries read x[i], which is always in the window.
    Value window = b.pointwise(pairType, "where", {seen, xj, xi});
    auto reduced = rewriter.getDenseI64ArrayAttr({dim + 1});
    auto keepdim = rewriter.getBoolAttr(false);
    Value values = rewriter.create<ReduceOp>(op.getLoc(), type, window, reduced,
                                             keepdim);

    // Last seen j whose x equals the extremum (or is NaN when it is NaN).
    Value best = b.view(values, splitDim(shape, dim, length, 1));
    Value hit = b.pointwise(boolPair, "eq", {xj, best});
    if (isa<FloatType>(element)) {
      auto boolBest = typeOf(best).clone(rewriter.getI1Type());
      Value bothNan = b.pointwise(boolPair, "logical_and",
                                  {b.pointwise(boolPair, "isnan", {xj}),
                                   b.pointwise(boolBest, "isnan", {best})});
      hit = b.pointwise(boolPair, "logical_or", {hit, bothNan});
    }
    hit = b.pointwise(boolPair, "logical_and", {hit, seen});
    Value j = grid<int64_t>(rewriter, op.getLoc(), 1, length,
                            rewriter.getI64Type(), trailing,
                            [](int64_t, int64_t j) { return j; });
    Value none = b.constant(rewriter.getI64Type(), -1.0);
    Value candidates = b.pointwise(i64Pair, "where", {hit, j, none});
    Value indices = rewriter.create<aten::AmaxOp>(
        op.getLoc(), type.clone(rewriter.getI64Type()), candidates, reduced,
        keepdim);
    ArrayRef<int64_t> outShape = typeOf(op.getValues()).getShape();
    rewriter.replaceOp(op, {b.view(values, outShape), b.view(indices, outShape)});
    return success();
  }
};

struct DecomposeLogCumSumExp : OpRewritePattern<aten::LogCumSumExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::LogCumSumExpOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getComplex())
      return rewriter.notifyMatchFailure(op, "complex: a loop in eager's order (Scans.cpp)");
    AtenBuilder b(rewriter, op.getLoc());
    RankedTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    // Eager's CPU kernel accumulates f32 in double; f16 and bf16 in f32.
    Type compute = element.isF32() || element.isF64() ? rewriter.getF64Type()
                                                      : rewriter.getF32Type();
    Value x = b.convert(atLeast1d(b, op.getSelf()), compute);
    SmallVector<int64_t> shape(typeOf(x).getShape());
    int64_t dim = op.getDimAttr().getInt();
    int64_t length = shape[dim];
    if (length > aten::kMaxTriangularScan)
      return rewriter.notifyMatchFailure(op, "lowered as a loop (Scans.cpp)");
    int64_t trailing = static_cast<int64_t>(shape.size()) - dim - 1;
    auto pairType =
        RankedTensorType::get(splitDim(shape, dim, length, length), compute);
    Value xj = rewriter.create<aten::ExpandOp>(
        op.getLoc(), pairType, b.view(x, splitDim(shape, dim, 1, length)));
    Value seen = grid<bool>(rewriter, op.getLoc(), length, length,
                            rewriter.getI1Type(), trailing,
                            [](int64_t i, int64_t j) { return j <= i; });
    Value window = b.pointwise(
        pairType, "where",
        {seen, xj, b.constant(compute, -std::numeric_limits<double>::infinity())});
    auto reduced = rewriter.getDenseI64ArrayAttr({dim + 1});
    auto keptType = pairType.clone(splitDim(shape, dim, length, 1));
    Value top = rewriter.create<aten::AmaxOp>(op.getLoc(), keptType, window,
                                              reduced, rewriter.getBoolAttr(true));
    Value shift = b.pointwise(
        keptType, "where",
        {b.pointwise(keptType.clone(rewriter.getI1Type()), "isinf", top),
         b.constant(compute, 0.0), top});
    Value centred = b.sub(compute, window, shift);
    Value terms = rewriter.create<aten::ExpOp>(op.getLoc(), pairType, centred);
    Value sums = rewriter.create<aten::SumOp>(op.getLoc(), keptType, terms,
                                              reduced, rewriter.getBoolAttr(true));
    Value logs = b.pointwise(keptType, "log", sums);
    Value out = b.view(b.add(compute, logs, shift), type.getShape());
    rewriter.replaceOp(op, b.convert(out, element));
    return success();
  }
};

} // namespace

void kiln::populateScanDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeCumExtremum<aten::CummaxOp, aten::AmaxOp>,
               DecomposeCumExtremum<aten::CumminOp, aten::AminOp>,
               DecomposeLogCumSumExp>(patterns.getContext());
}
