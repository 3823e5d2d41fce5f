//===- DecomposePoolBackward.cpp - max pooling's gradient as a gather -----===//
//
// This file implements the decomposition of aten.max_pool_backward: each
// input position sums the gradients of the outputs that picked it. As a
// gather over the J windows that can cover it (their saved index equal to
// its own position), in eager's order of outputs; a geometry whose table
// would pass 2^24 entries, whose gathered windows would pass 2^28 elements,
// or whose kernel or dilation passes 4096 takes a scatter-add over the whole
// plane instead.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/Limits.h"

#include <algorithm>
#include <vector>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// The most elements of the gather's intermediates (its tables hold at
/// most aten::kMaxConstantTable entries).
constexpr int64_t kMaxGathered = int64_t{1} << 28;

/// The output positions whose windows can cover each input position of a
/// pooling plane: J candidates per input position (the most windows that
/// overlap along every dim), in ascending output order, with the position
/// and whether it exists.
struct PoolCandidates {
  int64_t count = 1;            // J
  std::vector<int64_t> source;  // [inPlane * J]: flat output position (0 if none)
  std::vector<bool> exists;     // [inPlane * J]
};

PoolCandidates poolCandidates(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                              ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  size_t dims = in.size();
  // Along dim d, output o covers input i when o*s - p <= i <= o*s - p + span.
  SmallVector<int64_t> span(dims), perDim(dims);
  PoolCandidates c;
  for (size_t d = 0; d < dims; ++d) {
    span[d] = (kernel[d] - 1) * dilation[d];
    perDim[d] = span[d] / stride[d] + 1;
    c.count *= perDim[d];
  }
  int64_t inPlane = ShapedType::getNumElements(in);
  c.source.reserve(inPlane * c.count);
  c.exists.reserve(inPlane * c.count);
  SmallVector<int64_t> at(dims, 0), pick(dims, 0);
  for (int64_t i = 0; i < inPlane; ++i) {
    for (int64_t rest = i, d = dims - 1; d >= 0; --d) {
      at[d] = rest % in[d];
      rest /= in[d];
    }
    for (int64_t k = 0; k < c.count; ++k) {
      for (int64_t rest = k, d = dims - 1; d >= 0; --d) {
        pick[d] = rest % perDim[d];
        rest /= perDim[d];
      }
      int64_t flat = 0;
      bool inside = true;
      for (size_t d = 0; d < dims; ++d) {
        // The first window that can reach at[d], then the next ones.
        int64_t reach = at[d] + padding[d] - span[d];
        int64_t first = reach <= 0 ? -((-reach) / stride[d]) : (reach + stride[d] - 1) / stride[d];
        int64_t o = first + pick[d];
        inside = inside && o >= 0 && o < out[d] && o * stride[d] <= at[d] + padding[d];
        flat = flat * out[d] + std::clamp<int64_t>(o, 0, out[d] - 1);
      }
      c.source.push_back(inside ? flat : 0);
      c.exists.push_back(inside);
    }
  }
  return c;
}

/// The number of windows that can cover one input position (the verifier
/// checked the geometry), saturating past aten::kMaxConstantTable; nullopt for a kernel or
/// dilation past 4096, whose spans the tables do not take.
std::optional<int64_t> windowsPerPosition(aten::MaxPoolBackwardOp op) {
  __int128 windows = 1;
  for (size_t d = 0; d < op.getKernel().size(); ++d) {
    int64_t k = op.getKernel()[d], s = op.getStride()[d], dl = op.getDilation()[d];
    if (k > 4096 || dl > 4096)
      return std::nullopt;
    windows = std::min<__int128>(windows * (((k - 1) * dl) / s + 1), aten::kMaxConstantTable + 1);
  }
  return static_cast<int64_t>(windows);
}

struct DecomposeMaxPoolBackward : OpRewritePattern<aten::MaxPoolBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::MaxPoolBackwardOp op,
                                PatternRewriter &r) const override {
    AtenBuilder b(r, op.getLoc());
    RankedTensorType type = typeOf(op.getSelf()), dyType = typeOf(op.getGradOutput());
    Type element = type.getElementType();
    int64_t spatial = op.getKernel().size();
    int64_t leading = type.getRank() - spatial;  // (N, C) or, unbatched, (C)
    ArrayRef<int64_t> inDims = type.getShape().drop_front(leading);
    ArrayRef<int64_t> outDims = dyType.getShape().drop_front(leading);
    int64_t images = ShapedType::getNumElements(type.getShape().take_front(leading));
    int64_t inPlane = ShapedType::getNumElements(inDims);
    int64_t outPlane = ShapedType::getNumElements(outDims);
    Value flatIndices = b.view(op.getIndices(), {images, outPlane});
    Value flatDy = b.view(op.getGradOutput(), {images, outPlane});
    auto planes = RankedTensorType::get({images, inPlane}, element);
    // The gather's tables hold inPlane * J entries and its intermediates
    // images * inPlane * J elements; past either bound, the scatter.
    std::optional<int64_t> windows = windowsPerPosition(op);
    if (!windows || outPlane == 0 || *windows > aten::kMaxConstantTable / std::max<int64_t>(inPlane, 1) ||
        static_cast<__int128>(images) * inPlane * *windows > kMaxGathered) {
      Value zeros = b.constant(DenseElementsAttr::get(planes, r.getZeroAttr(element)));
      Value dx = r.create<aten::ScatterOp>(op.getLoc(), planes, zeros, flatIndices, flatDy,
                                           r.getI64IntegerAttr(1), r.getStringAttr("sum"));
      r.replaceOp(op, b.view(dx, type.getShape()));
      return success();
    }
    PoolCandidates c = poolCandidates(inDims, outDims, op.getKernel(), op.getStride(),
                                      op.getPadding(), op.getDilation());
    Type i64 = r.getI64Type(), i1 = r.getI1Type();
    Value source = b.constant(DenseElementsAttr::get(
        RankedTensorType::get({inPlane * c.count}, i64), ArrayRef<int64_t>(c.source)));
    SmallVector<bool> exists(c.exists.begin(), c.exists.end());
    Value present = b.constant(DenseElementsAttr::get(
        RankedTensorType::get({1, inPlane, c.count}, i1), ArrayRef<bool>(exists)));
    Value position = b.positions({1, inPlane, 1});
    auto gather = [&](Value v) {
      Value picked = r.create<aten::IndexSelectOp>(
          op.getLoc(), typeOf(v).clone({images, inPlane * c.count}), v, source,
          r.getI64IntegerAttr(1));
      return b.view(picked, {images, inPlane, c.count});
    };
    auto pairs = RankedTensorType::get({images, inPlane, c.count}, i1);
    Value hit = b.pointwise(pairs, "logical_and",
                            {b.pointwise(pairs, "eq", {gather(flatIndices), position}),
                             present});
    Value grads = gather(flatDy);
    Value picked =
        b.pointwise(typeOf(grads), "where", {hit, grads, b.constant(element, 0.0)});
    r.replaceOp(op, b.view(b.sum(planes, picked, {2}), type.getShape()));
    return success();
  }
};

} // namespace

void kiln::populatePoolBackwardDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeMaxPoolBackward>(patterns.getContext());
}
