//===- DecomposeEmbedding.cpp - embedding bags and renormalisation --------===//
//
// This file implements the decompositions of aten.embedding_bag and
// aten.embedding_renorm.
//
// aten.embedding_bag: N indices
// into a weight table, cut into B bags by offsets, each bag reduced by sum
// (optionally weighted per sample), mean or max. An empty bag gives zeros.
//
// Index p belongs to bag offset2bag[p] = #{b < B : offsets[b] <= p} - 1
// (the last bag starting at or before it; with include_last_offset the
// last offset only ends the last bag, and indices past it join that bag,
// as in eager), and a padding_idx entry to none. That makes a (B, N)
// membership mask; the N rows read from the weight are then summed over
// the masked (B, N, D) rows (sum, mean; past 2^26 such triples, one aten.mm
// with the mask, where a non-finite weight reaches every bag) or reduced by
// aten.amax over them (max, whose indices are the weight rows holding each
// maximum, the first among equal values). f16 and bf16 compute in f32.
//
// The other results follow eager's CPU kernel (the op's description), each
// converted to its declared integer type; an entry past the last bag (with
// include_last_offset) is 0.
//
// aten.embedding_renorm: the rows' norms (aten.vector_norm, in f32 for
// f16/bf16 and rounded back to their type, as eager reads a half norm),
// a scale max_norm / (norm + 1e-7) in f64 where a norm exceeds max_norm,
// and 1 elsewhere or on rows no index names (marked by an aten.index_put
// of ones, so no (rows, indices) table is built); the rows are multiplied
// in the compute type and converted back.
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
namespace aten = kiln::aten;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// `v` (1-d, B entries) as `declared`: converted, and with B + 1 entries
/// padded by a 0; an empty constant for an empty `declared`.
Value asDeclared(AtenBuilder &b, PatternRewriter &r, Location loc, Value v,
                 RankedTensorType declared) {
  if (declared.getNumElements() == 0)
    return b.constant(DenseElementsAttr::get(declared, ArrayRef<Attribute>{}));
  if (declared.getRank() == 1 && typeOf(v).getDimSize(0) + 1 == declared.getDimSize(0))
    v = r.create<aten::PadOp>(loc, typeOf(v).clone({declared.getDimSize(0)}), v,
                              r.getDenseI64ArrayAttr({0}), r.getDenseI64ArrayAttr({1}),
                              r.getF64FloatAttr(0.0));
  return b.convert(v, declared.getElementType());
}

struct DecomposeEmbeddingBag : OpRewritePattern<aten::EmbeddingBagOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::EmbeddingBagOp op,
                                PatternRewriter &r) const override {
    Location loc = op.getLoc();
    AtenBuilder b(r, loc);
    RankedTensorType weightType = typeOf(op.getWeight());
    Type element = weightType.getElementType();
    int64_t width = weightType.getDimSize(1);
    int64_t count = typeOf(op.getIndices()).getDimSize(0);
    int64_t bags = typeOf(op.getResult()).getDimSize(0);
    int64_t mode = op.getMode(), padding = op.getPaddingIdx();
    Value perSample = op.getPerSampleWeights();
    Type i64 = r.getI64Type(), i1 = r.getI1Type();
    Type compute = element.isF64() ? element : r.getF32Type();
    auto pairs = RankedTensorType::get({bags, count}, i1);

    // offset2bag[p] = #{b < B : offsets[b] <= p} - 1.
    Value offsets = b.convert(op.getOffsets(), i64);
    Value firstOffsets = r.create<aten::SliceOp>(
        loc, typeOf(offsets).clone({bags}), offsets, r.getDenseI64ArrayAttr({0}),
        r.getDenseI64ArrayAttr({1}));
    Value starts = b.view(firstOffsets, {bags, 1});
    Value started = b.pointwise(pairs, "le", {starts, b.positions({1, count})});
    Value startedCount =
        b.sum(RankedTensorType::get({count}, i64), b.convert(started, i64), {0});
    Value offset2bag = b.sub(i64, startedCount, b.constant(i64, 1.0));

    // member[b, p]: index p counts in bag b.
    Value member = b.pointwise(pairs, "eq",
                               {b.view(offset2bag, {1, count}), b.positions({bags, 1})});
    Value indices = b.convert(op.getIndices(), i64);
    if (padding >= 0)
      member = b.pointwise(
          pairs, "logical_and",
          {member, b.pointwise(RankedTensorType::get({1, count}, i1), "ne",
                               {b.view(indices, {1, count}),
                                b.constant(i64, static_cast<double>(padding))})});
    Value bagSize =
        b.sum(RankedTensorType::get({bags}, i64), b.convert(member, i64), {1});

    // The rows each index reads, in the compute type.
    Value rows = b.convert(
        r.create<aten::IndexSelectOp>(loc, RankedTensorType::get({count, width}, element),
                                      op.getWeight(), indices, r.getI64IntegerAttr(0)),
        compute);
    auto outCompute = RankedTensorType::get({bags, width}, compute);
    auto window = RankedTensorType::get({bags, count, width}, compute);
    bool windowFits =
        static_cast<__int128>(bags) * count * width <= aten::kMaxEmbeddingBagWindow;
    Value output, maxIndices;
    if (mode == aten::kEmbeddingBagMax) {
      Value masked = b.pointwise(
          window, "where",
          {b.view(member, {bags, count, 1}), b.view(rows, {1, count, width}),
           b.constant(compute, -std::numeric_limits<double>::infinity())});
      Value top = r.create<aten::AmaxOp>(loc, outCompute, masked,
                                         r.getDenseI64ArrayAttr({1}), r.getBoolAttr(false));
      Value where = r.create<aten::ArgReduceOp>(
          loc, RankedTensorType::get({bags, width}, i64), masked, r.getI64IntegerAttr(1),
          /*keepdim=*/r.getBoolAttr(false), /*max=*/r.getBoolAttr(true));
      Value rowOf = r.create<aten::IndexSelectOp>(
          loc, RankedTensorType::get({bags * width}, i64), indices,
          b.view(where, {bags * width}), r.getI64IntegerAttr(0));
      Value filled = b.pointwise(RankedTensorType::get({bags, 1}, i1), "gt",
                                 {b.view(bagSize, {bags, 1}), b.constant(i64, 0.0)});
      output = b.pointwise(outCompute, "where", {filled, top, b.constant(compute, 0.0)});
      maxIndices = b.pointwise(RankedTensorType::get({bags, width}, i64), "where",
                               {filled, b.view(rowOf, {bags, width}), b.constant(i64, 0.0)});
    } else if (windowFits) {
      // Each bag sums its own rows only (a NaN or inf in another bag's row,
      // or in a padding row, stays out, as in eager).
      Value weighted = rows;
      if (perSample)
        weighted = b.mul(compute, rows, b.view(b.convert(perSample, compute), {count, 1}));
      Value masked = b.pointwise(window, "where",
                                 {b.view(member, {bags, count, 1}),
                                  b.view(weighted, {1, count, width}),
                                  b.constant(compute, 0.0)});
      output = b.sum(outCompute, masked, {1});
    } else {
      // Past the window's bound, one mm with the mask: a non-finite row
      // then reaches every bag (0 * inf).
      Value weights = b.convert(member, compute);
      if (perSample)
        weights = b.mul(compute, weights, b.view(b.convert(perSample, compute), {1, count}));
      output = r.create<aten::MmOp>(loc, outCompute, weights, rows);
    }
    if (mode == aten::kEmbeddingBagMean) {
      Value divisor = b.pointwise(RankedTensorType::get({bags, 1}, compute), "maximum",
                                  {b.view(bagSize, {bags, 1}), b.constant(compute, 1.0)});
      output = b.div(compute, output, divisor);
    }

    // The other results, as eager's CPU kernel gives them.
    Value zeros = b.constant(DenseElementsAttr::get(
        RankedTensorType::get({bags}, i64), ArrayRef<int64_t>{0}));
    Value sizes = mode == aten::kEmbeddingBagSum ? zeros : bagSize;
    if (mode == aten::kEmbeddingBagMean)
      maxIndices = bagSize;
    else if (mode == aten::kEmbeddingBagSum)
      maxIndices = zeros;
    r.replaceOp(op, {b.convert(output, element),
                     asDeclared(b, r, loc, offset2bag, typeOf(op.getOffset2bag())),
                     asDeclared(b, r, loc, sizes, typeOf(op.getBagSize())),
                     asDeclared(b, r, loc, maxIndices, typeOf(op.getMaxIndices()))});
    return success();
  }
};

struct DecomposeEmbeddingRenorm : OpRewritePattern<aten::EmbeddingRenormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::EmbeddingRenormOp op,
                                PatternRewriter &r) const override {
    RankedTensorType type = typeOf(op.getSelf());
    int64_t count = typeOf(op.getIndices()).getNumElements();
    // No row named, or a NaN norm (eager's norm > max_norm is then false):
    // the table as it is.
    if (count == 0 || type.getNumElements() == 0 ||
        std::isnan(op.getNormType().convertToDouble())) {
      r.replaceOp(op, op.getSelf());
      return success();
    }
    AtenBuilder b(r, op.getLoc());
    Type element = type.getElementType();
    Type compute = element.isF64() ? element : r.getF32Type();
    Type f64 = r.getF64Type();
    int64_t rows = type.getDimSize(0);
    auto column = [&](Type t) { return RankedTensorType::get({rows, 1}, t); };

    Value self = b.convert(op.getSelf(), compute);
    Value norms = r.create<aten::VectorNormOp>(
        op.getLoc(), column(compute), self, op.getNormTypeAttr(),
        r.getDenseI64ArrayAttr({1}), r.getBoolAttr(true));
    norms = b.convert(b.convert(norms, element), f64);
    // named[row] = 1 where an index names the row.
    Value indices = b.view(b.convert(op.getIndices(), r.getI64Type()), {count});
    Value ones = b.constant(DenseElementsAttr::get(
        RankedTensorType::get({count, 1}, compute), r.getFloatAttr(compute, 1.0)));
    Value zeros = b.constant(DenseElementsAttr::get(
        column(compute), r.getFloatAttr(compute, 0.0)));
    Value named = r.create<aten::IndexPutOp>(op.getLoc(), column(compute), zeros,
                                             indices, ones, r.getBoolAttr(false));
    double maxNorm = op.getMaxNorm().convertToDouble();
    Value over = b.pointwise(column(r.getI1Type()), "logical_and",
                             {b.pointwise(column(r.getI1Type()), "gt",
                                          {named, b.constant(compute, 0.0)}),
                              b.pointwise(column(r.getI1Type()), "gt",
                                          {norms, b.constant(f64, maxNorm)})});
    Value scale = b.div(f64, b.constant(f64, maxNorm),
                        b.add(f64, norms, b.constant(f64, 1e-7)));
    scale = b.pointwise(column(f64), "where", {over, scale, b.constant(f64, 1.0)});
    Value scaled = b.mul(compute, self, b.convert(scale, compute));
    r.replaceOp(op, b.convert(scaled, element));
    return success();
  }
};

} // namespace

void kiln::populateEmbeddingDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeEmbeddingBag, DecomposeEmbeddingRenorm>(
      patterns.getContext());
}
