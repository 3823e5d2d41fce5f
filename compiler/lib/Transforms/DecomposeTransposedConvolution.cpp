//===- DecomposeTransposedConvolution.cpp - padding past the kernel -------===//
//
// This file implements the decomposition of a transposed aten.convolution
// whose padding exceeds dilation * (kernel - 1) along some dim (eager's
// "negative effective padding"; convolution_backward's input gradient of a
// convolution padded past its kernel is one). Padding a transposed
// convolution crops its output; the convolution is computed with padding
// min(p, dilation * (kernel - 1)), which the lowering takes, and the rest
// is cropped by an aten.slice. The bias is added to every position of the
// uncut output, so it stays on the convolution.
//
//===----------------------------------------------------------------------===//
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/Limits.h"

#include <algorithm>

using namespace mlir;
namespace aten = kiln::aten;

namespace {

struct DecomposeCroppingTransposedConvolution
    : OpRewritePattern<aten::ConvolutionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::ConvolutionOp op,
                                PatternRewriter &r) const override {
    if (!op.getTransposed())
      return failure();
    auto resultType = cast<RankedTensorType>(op.getType());
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    int64_t rank = resultType.getRank();
    ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
    // The uncut output must be a tensor this compiler forms (the importer
    // refuses larger ones as UNIMPLEMENTED); that also bounds every extent
    // below by 2^40.
    if (!resultType.hasStaticShape() || !wType.hasStaticShape() ||
        kernel.size() + 2 != static_cast<size_t>(rank) ||
        kiln::aten::uncutTransposedConvolutionTooLarge(
            resultType.getShape(), kernel, op.getPadding(), op.getDilation()))
      return failure();
    SmallVector<int64_t> padding, widened(resultType.getShape()), cut(rank, 0);
    bool crops = false;
    for (int64_t i = 2; i < rank; ++i) {
      int64_t p = op.getPadding()[i - 2], d = op.getDilation()[i - 2], k = kernel[i - 2];
      if (k < 1 || p < 0 || d < 1)
        return failure(); // the verifier's to refuse
      // The uncut extent is at most 2^40, so is p - kept.
      __int128 reach = static_cast<__int128>(d) * (k - 1);
      int64_t kept = static_cast<int64_t>(std::min<__int128>(p, reach));
      padding.push_back(kept);
      cut[i] = p - kept;
      crops |= cut[i] > 0;
      widened[i] += 2 * cut[i];
    }
    if (!crops)
      return failure();
    Location loc = op.getLoc();
    Value uncut = r.create<aten::ConvolutionOp>(
        loc, resultType.clone(widened), op.getInput(), op.getWeight(),
        op.getBias(), op.getStrideAttr(), r.getDenseI64ArrayAttr(padding),
        op.getDilationAttr(), op.getOutputPaddingAttr(), op.getTransposedAttr(),
        op.getGroupsAttr());
    r.replaceOpWithNewOp<aten::SliceOp>(op, resultType, uncut,
                                        r.getDenseI64ArrayAttr(cut),
                                        r.getDenseI64ArrayAttr(SmallVector<int64_t>(rank, 1)));
    return success();
  }
};

} // namespace

void kiln::populateTransposedConvolutionDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeCroppingTransposedConvolution>(patterns.getContext());
}
