//===- DecomposeConvolutionBackward.cpp - a convolution's gradients -------===//
//
// This file implements the decomposition of aten.convolution_backward of
// a (non-transposed) convolution. With x (N, C_in, S...), w (C_out,
// C_in/g, K...) and dy (N, C_out, O...):
//   dx = conv_transpose(dy, w), with the output padding that gives back S;
//   dw = conv(x as (C_in/g, g*N, S...), dy as (C_out, N, O...), groups g,
//             stride = dilation, dilation = stride), cut to K, transposed;
//   db = dy summed over every dim but 1.
// A gradient output_mask leaves out is a zero splat nothing reads.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <numeric>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

struct DecomposeConvolutionBackward
    : OpRewritePattern<aten::ConvolutionBackwardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::ConvolutionBackwardOp op,
                                PatternRewriter &r) const override {
    Location loc = op.getLoc();
    AtenBuilder b(r, loc);
    Value dy = op.getGradOutput(), x = op.getInput(), w = op.getWeight();
    RankedTensorType xType = typeOf(x), wType = typeOf(w), dyType = typeOf(dy);
    int64_t rank = xType.getRank();
    size_t s = rank - 2;
    ArrayRef<int64_t> stride = op.getStride(), padding = op.getPadding(),
                      dilation = op.getDilation();
    int64_t groups = op.getGroups();
    int64_t batch = xType.getDimSize(0), cin = xType.getDimSize(1),
            cout = wType.getDimSize(0);
    auto attr = [&](ArrayRef<int64_t> v) { return r.getDenseI64ArrayAttr(v); };
    ArrayRef<bool> mask = op.getOutputMask();
    SmallVector<Value> results;
    for (Value result : op->getResults()) {
      RankedTensorType type = typeOf(result);
      results.push_back(b.constant(
          DenseElementsAttr::get(type, r.getZeroAttr(type.getElementType()))));
    }

    if (mask[0]) {
      SmallVector<int64_t> outputPadding;
      for (size_t i = 0; i < s; ++i) {
        int64_t k = wType.getDimSize(2 + i);
        // The rows the forward's stride skipped at the end of the input.
        outputPadding.push_back(xType.getDimSize(2 + i) + 2 * padding[i] -
                                dilation[i] * (k - 1) - 1 -
                                (dyType.getDimSize(2 + i) - 1) * stride[i]);
      }
      results[0] = r.create<aten::ConvolutionOp>(
          loc, xType, dy, w, Value(), attr(stride), attr(padding), attr(dilation),
          attr(outputPadding), r.getBoolAttr(true), r.getI64IntegerAttr(groups));
    }

    if (mask[1]) {
      int64_t cinPerGroup = cin / groups;
      // x (N, C_in, S...) -> (N, g, C_in/g, S...) -> (C_in/g, g, N, S...)
      // -> (C_in/g, g*N, S...): group G's batch is input channels [G*N, G*N+N).
      SmallVector<int64_t> split{batch, groups, cinPerGroup};
      SmallVector<int64_t> order{2, 1, 0};
      SmallVector<int64_t> merged{cinPerGroup, groups * batch};
      for (size_t i = 0; i < s; ++i) {
        split.push_back(xType.getDimSize(2 + i));
        order.push_back(3 + i);
        merged.push_back(xType.getDimSize(2 + i));
      }
      Value input = b.view(b.permute(b.view(x, split), order), merged);
      // dy (N, C_out, O...) -> (C_out, N, O...): the "weight", kernel O.
      SmallVector<int64_t> swap(rank);
      std::iota(swap.begin(), swap.end(), 0);
      std::swap(swap[0], swap[1]);
      Value kernel = b.permute(dy, swap);
      SmallVector<int64_t> full{cinPerGroup, cout}, kernelShape{cinPerGroup, cout};
      for (size_t i = 0; i < s; ++i) {
        int64_t span = xType.getDimSize(2 + i) + 2 * padding[i] -
                       stride[i] * (dyType.getDimSize(2 + i) - 1) - 1;
        full.push_back(span / dilation[i] + 1);
        kernelShape.push_back(wType.getDimSize(2 + i));
      }
      Value dw = r.create<aten::ConvolutionOp>(
          loc, RankedTensorType::get(full, xType.getElementType()), input, kernel,
          Value(), attr(dilation), attr(padding), attr(stride),
          attr(SmallVector<int64_t>(s, 0)), r.getBoolAttr(false),
          r.getI64IntegerAttr(groups));
      // Positions past the kernel come from input rows the forward's
      // stride never reached.
      if (ArrayRef<int64_t>(full) != ArrayRef<int64_t>(kernelShape))
        dw = r.create<aten::SliceOp>(loc, typeOf(dw).clone(kernelShape), dw,
                                     attr(SmallVector<int64_t>(rank, 0)),
                                     attr(SmallVector<int64_t>(rank, 1)));
      results[1] = b.permute(dw, swap);
    }

    if (mask[2]) {
      SmallVector<int64_t> dims{0};
      for (size_t i = 0; i < s; ++i)
        dims.push_back(2 + i);
      results[2] = b.sum(typeOf(op.getGradBias()), dy, dims);
    }
    r.replaceOp(op, results);
    return success();
  }
};

} // namespace

void kiln::populateConvolutionBackwardDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeConvolutionBackward>(patterns.getContext());
}
