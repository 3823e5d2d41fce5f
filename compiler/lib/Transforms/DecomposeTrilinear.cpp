//===- DecomposeTrilinear.cpp - aten.trilinear as one batched product -----===//
//
// This file implements the decomposition of aten.trilinear (_trilinear,
// behind F.bilinear): the sum over `sumdim` of i1 * i2 * i3, broadcast.
//
// The broadcast product of all three is never formed. The two inputs whose
// broadcast is smallest are multiplied first, P (for bilinear x1 * x2,
// N x in1 x in2, not the N x out x in1 x in2 that the weight would give);
// the third is Q. They are contracted the way einsum lowers to bmm: a
// summed dim only one side has is summed there first; the other dims are
// batch dims (both sides), left dims (P's only) and right dims (Q's only);
// one aten.bmm of (batch, left, summed) by (batch, summed, right) gives
// them, and a permute puts the result's dims back in order.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <algorithm>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// The broadcast of two shapes of one rank (the verifier checked they do).
SmallVector<int64_t> broadcastShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < a.size(); ++d)
    shape.push_back(a[d] == 1 ? b[d] : a[d]);
  return shape;
}

/// The product of `shape`'s extents over `dims`, saturating past int64.
int64_t extentOf(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  __int128 extent = 1;
  for (int64_t d : dims)
    extent = std::min<__int128>(extent * shape[d], INT64_MAX);
  return static_cast<int64_t>(extent);
}

struct DecomposeTrilinear : OpRewritePattern<aten::TrilinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::TrilinearOp op,
                                PatternRewriter &rewriter) const override {
    AtenBuilder b(rewriter, op.getLoc());
    RankedTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    Value inputs[3] = {op.getI1(), op.getI2(), op.getI3()};
    const int64_t rank = typeOf(inputs[0]).getRank();
    ArrayRef<int64_t> sumdim = op.getSumdim();
    auto summed = [&](int64_t d) { return llvm::is_contained(sumdim, d); };

    // Q = the input whose partners' broadcast is smallest (the last such,
    // the weight of bilinear's i1 * weight * i2 order ties aside).
    int third = -1;
    SmallVector<int64_t> pShape;
    for (int candidate = 2; candidate >= 0; --candidate) {
      SmallVector<int64_t> shape =
          broadcastShape(typeOf(inputs[(candidate + 1) % 3]).getShape(),
                         typeOf(inputs[(candidate + 2) % 3]).getShape());
      auto all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      if (third < 0 || extentOf(shape, all) < extentOf(pShape, all)) {
        third = candidate;
        pShape = shape;
      }
    }
    Value p = b.mul(element, inputs[(third + 1) % 3], inputs[(third + 2) % 3]);
    Value q = inputs[third];
    SmallVector<int64_t> qShape(typeOf(q).getShape());

    // A summed dim only one side has is summed there first (kept as 1).
    auto sumOnOneSide = [&](Value v, SmallVector<int64_t> &shape,
                            ArrayRef<int64_t> other) -> Value {
      SmallVector<int64_t> dims;
      for (int64_t d : sumdim)
        if (shape[d] != 1 && other[d] == 1)
          dims.push_back(d);
      if (dims.empty())
        return v;
      for (int64_t d : dims)
        shape[d] = 1;
      return rewriter.create<aten::SumOp>(op.getLoc(),
                                          RankedTensorType::get(shape, element), v,
                                          rewriter.getDenseI64ArrayAttr(dims),
                                          rewriter.getBoolAttr(true));
    };
    SmallVector<int64_t> pBefore = pShape;
    p = sumOnOneSide(p, pShape, qShape);
    q = sumOnOneSide(q, qShape, pBefore);

    // Batch (both, kept), left (P's), right (Q's), contracted (both,
    // summed). Dims of extent 1 on both sides go to batch.
    SmallVector<int64_t> batch, left, right, contracted;
    for (int64_t d = 0; d < rank; ++d) {
      bool inP = pShape[d] != 1, inQ = qShape[d] != 1;
      if (summed(d)) {
        if (inP && inQ)
          contracted.push_back(d);
        continue; // summed on one side above, or 1 on both
      }
      if (inP && !inQ)
        left.push_back(d);
      else if (inQ && !inP)
        right.push_back(d);
      else
        batch.push_back(d);
    }
    int64_t bExtent = extentOf(pShape, batch);
    int64_t mExtent = extentOf(pShape, left), nExtent = extentOf(qShape, right);
    int64_t kExtent = extentOf(pShape, contracted);

    // `v` as a (e1, e2, e3) matrix stack over the dims `groups` name, in
    // order; the dims not named have extent 1 on this side and go last.
    auto toMatrices = [&](Value v, ArrayRef<ArrayRef<int64_t>> groups,
                          ArrayRef<int64_t> extents) -> Value {
      SmallVector<int64_t> perm;
      for (ArrayRef<int64_t> group : groups)
        perm.append(group.begin(), group.end());
      for (int64_t d = 0; d < rank; ++d)
        if (!llvm::is_contained(perm, d))
          perm.push_back(d);
      return b.view(b.permute(v, perm), extents);
    };
    Value lhs = toMatrices(p, {batch, left, contracted}, {bExtent, mExtent, kExtent});
    Value rhs = toMatrices(q, {batch, contracted, right}, {bExtent, kExtent, nExtent});
    Value product = rewriter.create<aten::BmmOp>(
        op.getLoc(), RankedTensorType::get({bExtent, mExtent, nExtent}, element),
        lhs, rhs);

    // (batch..., left..., right...) back to the result's order: the kept
    // dims in increasing order.
    SmallVector<int64_t> produced(batch);
    produced.append(left.begin(), left.end());
    produced.append(right.begin(), right.end());
    SmallVector<int64_t> producedShape;
    for (int64_t d : produced)
      producedShape.push_back(std::max(pShape[d], qShape[d]));
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      if (!summed(d))
        perm.push_back(llvm::find(produced, d) - produced.begin());
    Value ordered = b.permute(b.view(product, producedShape), perm);
    rewriter.replaceOp(op, b.view(ordered, type.getShape()));
    return success();
  }
};

} // namespace

void kiln::populateTrilinearDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeTrilinear>(patterns.getContext());
}
