//===- DecomposeRepeat.cpp - aten.repeat as one broadcast copy ------------===//
//
// This file implements the decomposition of aten.repeat: self viewed with a
// unit dim before each of its dims (unit dims first for the counts past its
// rank), expanded to the counts, and viewed back with each (count, size)
// pair merged. The expand is the only copy.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

struct DecomposeRepeatOp : OpRewritePattern<aten::RepeatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(aten::RepeatOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType in = typeOf(op.getSelf());
    ArrayRef<int64_t> repeats = op.getRepeats();
    size_t lead = repeats.size() - in.getRank();
    SmallVector<int64_t> unit, tiled;
    for (size_t d = 0; d < repeats.size(); ++d) {
      int64_t size = d < lead ? 1 : in.getDimSize(d - lead);
      unit.append({1, size});
      tiled.append({repeats[d], size});
    }
    AtenBuilder b(rewriter, op.getLoc());
    Value expanded = rewriter.create<aten::ExpandOp>(
        op.getLoc(), in.clone(tiled), b.view(op.getSelf(), unit));
    rewriter.replaceOp(op, b.view(expanded, op.getType().getShape()));
    return success();
  }
};

} // namespace

void kiln::populateRepeatDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeRepeatOp>(patterns.getContext());
}
