//===- DecomposeHistogram.cpp - histograms as scatter-adds ----------------===//
//
// This file implements the decompositions of aten.histc and
// aten.histogram: each element's bin computed as eager's CPU kernels
// compute it, in the element type, then a scatter-add of ones (or the
// weights) into bins + 1 counters, the last of which takes the elements
// outside the range (and NaN) and is dropped.
//
// - histc: trunc((x - min) * bins / (max - min)), the last bin closed at
//   max. With min == max the range is the elements' own minimum and
//   maximum, widened by 1 on each side when they are equal.
// - histogram with a bin count: the edges are eager's linspace over the
//   range (the elements' extremes widened by 1/2 when equal), and a bin is
//   eager's guess trunc((x - lo) * bins / (hi - lo)) settled by an upper
//   bound among the three edges around it; with given edges, an upper bound
//   among all of them.
// - histogramdd: each coordinate's edges and bins as histogram's; a point's
//   cell is the row-major combination of its bins, and a point outside the
//   edges along any coordinate counts nowhere.
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

/// `bins` + 1 rounded up to the float type `element`: a value v of that
/// type is below it exactly when v < bins + 1, i.e. when v truncates to at
/// most `bins` (bins + 1 itself may not be a bf16 or f16 number).
double pastLastBin(Type element, int64_t bins) {
  llvm::APFloat limit(static_cast<double>(bins + 1));
  bool inexact = false;
  limit.convert(cast<FloatType>(element).getFloatSemantics(),
                llvm::APFloat::rmTowardPositive, &inexact);
  limit.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &inexact);
  return limit.convertToDouble();
}

/// Adds `weights` (or ones) at `bin` (i64, one per element; `bins` for
/// an element that counts nowhere) into bins + 1 zeros, and drops the last.
Value countIntoBins(PatternRewriter &rewriter, Location loc, RankedTensorType histType,
                    Value bin, Value weights) {
  const int64_t bins = histType.getDimSize(0);
  Type element = histType.getElementType();
  auto counters = RankedTensorType::get({bins + 1}, element);
  if (!weights)
    weights = rewriter.create<aten::ConstantOp>(loc, element, 1.0, typeOf(bin).getShape());
  Value counts = rewriter.create<aten::ScatterOp>(
      loc, counters, rewriter.create<aten::ConstantOp>(loc, element, 0.0, counters.getShape()),
      bin, weights, rewriter.getI64IntegerAttr(0), rewriter.getStringAttr("sum"));
  return rewriter.create<aten::SliceOp>(loc, histType, counts,
                                        rewriter.getDenseI64ArrayAttr({0}),
                                        rewriter.getDenseI64ArrayAttr({1}));
}

/// The elements' minimum and maximum, each moved out by `widen` where the
/// two are equal (histc widens by 1, histogram by 1/2).
std::pair<Value, Value> dataRange(PatternRewriter &rewriter, AtenBuilder &b, Value x,
                                  double widen) {
  Location loc = x.getLoc();
  Type element = typeOf(x).getElementType();
  auto scalar = RankedTensorType::get({}, element);
  auto everything = rewriter.getDenseI64ArrayAttr({0});
  auto drop = rewriter.getBoolAttr(false);
  Value lo = rewriter.create<aten::AminOp>(loc, scalar, x, everything, drop);
  Value hi = rewriter.create<aten::AmaxOp>(loc, scalar, x, everything, drop);
  Value equal = b.pointwise(RankedTensorType::get({}, rewriter.getI1Type()), "eq", {lo, hi});
  Value by = b.constant(element, widen);
  return {b.pointwise(scalar, "where", {equal, b.sub(element, lo, by), lo}),
          b.pointwise(scalar, "where", {equal, b.add(element, hi, by), hi})};
}

/// Eager's bin guess trunc((x - lo) * bins / (hi - lo)), in the element
/// type, as i64, and where it is usable. Where the quotient is not in [0,
/// bins + 1) (NaN or an infinity: an infinite data range, where eager
/// raises; an empty range once rounded to the element type; an overflow)
/// it is not usable and converts as 0: the conversion only sees [0, bins +
/// 1). At x = hi it may round past bins, which eager's truncation still
/// takes to bins.
std::pair<Value, Value> guessBins(PatternRewriter &rewriter, AtenBuilder &b, Value x, Value lo,
                                  Value hi, int64_t bins) {
  RankedTensorType flat = typeOf(x);
  Type element = flat.getElementType();
  auto mask = flat.clone(rewriter.getI1Type());
  Value guess = b.div(element, b.mul(element, b.sub(element, x, lo), b.constant(element, bins)),
                      b.sub(element, hi, lo));
  Value usable = b.pointwise(
      mask, "logical_and",
      {b.pointwise(mask, "ge", {guess, b.constant(element, 0.0)}),
       b.pointwise(mask, "lt", {guess, b.constant(element, pastLastBin(element, bins))})});
  guess = b.pointwise(flat, "where", {usable, guess, b.constant(element, 0.0)});
  return {b.pointwise(flat.clone(rewriter.getI64Type()), "copy", guess), usable};
}

struct DecomposeHistc : OpRewritePattern<aten::HistcOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::HistcOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType resultType = op.getType();
    Type element = resultType.getElementType();
    const int64_t bins = op.getBins();
    const int64_t count = typeOf(op.getSelf()).getNumElements();
    if (count == 0) {
      rewriter.replaceOpWithNewOp<aten::ConstantOp>(op, element, 0.0,
                                                    resultType.getShape());
      return success();
    }
    Value x = b.view(op.getSelf(), {count});
    auto flatMask = RankedTensorType::get({count}, rewriter.getI1Type());
    double lowest = op.getMin().convertToDouble(), highest = op.getMax().convertToDouble();
    auto [lo, hi] = lowest == highest
                        ? dataRange(rewriter, b, x, 1.0)
                        : std::pair(b.constant(element, lowest), b.constant(element, highest));
    Value inRange = b.pointwise(flatMask, "logical_and",
                                {b.pointwise(flatMask, "ge", {x, lo}),
                                 b.pointwise(flatMask, "le", {x, hi})});
    auto [guess, usable] = guessBins(rewriter, b, x, lo, hi, bins);
    inRange = b.pointwise(flatMask, "logical_and", {inRange, usable});
    Type i64 = rewriter.getI64Type();
    auto positions = RankedTensorType::get({count}, i64);
    Value bin = b.pointwise(positions, "minimum",
                            {guess, b.constant(i64, static_cast<double>(bins - 1))});
    bin = b.pointwise(positions, "where",
                      {inRange, bin, b.constant(i64, static_cast<double>(bins))});
    rewriter.replaceOp(op, countIntoBins(rewriter, loc, resultType, bin, Value()));
    return success();
  }
};

/// The pieces of an aten.histogram's decomposition, over its elements `x`
/// (flattened, `count` of them, at least one where a bin is computed).
/// One coordinate of a histogram: the edges of `bins` bins over x (N
/// elements of one float type) and each element's bin, as eager's kernel
/// computes them.
class AxisBins {
public:
  AxisBins(PatternRewriter &rewriter, Location loc, Value x, int64_t bins,
           std::optional<std::pair<double, double>> range)
      : r(rewriter), loc(loc), b(rewriter, loc), x(x), range(range),
        element(typeOf(x).getElementType()), i64(rewriter.getI64Type()), bins(bins),
        count(typeOf(x).getNumElements()) {}

  /// The given edges, or eager's even ones: linspace over the range's ends.
  Value edges(Value given) {
    if (given)
      return given;
    auto [lo, hi] = outerEdges();
    return evenEdges(lo, hi);
  }

  /// Each element's bin, clamped into [0, bins), and whether it lies within
  /// the edges (the last edge closes the last bin; NaN lies nowhere).
  std::pair<Value, Value> placed(Value edges, bool given) {
    Value bin = given ? searchedBins(edges) : guessedBins(edges);
    Value inRange = both(b.pointwise(maskType(), "ge", {x, edgeAt(edges, 0)}),
                         b.pointwise(maskType(), "le", {x, edgeAt(edges, bins)}));
    bin = b.pointwise(indexType(), "minimum",
                      {b.pointwise(indexType(), "maximum", {bin, int64(0)}), int64(bins - 1)});
    return {bin, inRange};
  }

private:
  /// Edge `at` as a 0-d tensor.
  Value edgeAt(Value edges, int64_t at) {
    Value one = r.create<aten::SliceOp>(loc, RankedTensorType::get({1}, element), edges,
                                        r.getDenseI64ArrayAttr({at}), r.getDenseI64ArrayAttr({1}));
    return b.view(one, {});
  }

  /// The range's ends as eager picks them: `range`, else the elements'
  /// minimum and maximum (0 and 1 for no elements), widened by 1/2 on each
  /// side where the two are equal.
  std::pair<Value, Value> outerEdges() {
    if (range) {
      auto [low, high] = *range;
      if (low == high)
        low -= 0.5, high += 0.5;
      return {b.constant(element, low), b.constant(element, high)};
    }
    if (count == 0)
      return {b.constant(element, 0.0), b.constant(element, 1.0)};
    return dataRange(r, b, x, 0.5);
  }

  /// linspace(lo, hi, bins + 1) as eager's kernel computes it in the
  /// element type: the first half counts up from lo, the rest down from hi.
  Value evenEdges(Value lo, Value hi) {
    const int64_t edgeCount = bins + 1;
    Value step = b.div(element, b.sub(element, hi, lo), b.constant(element, bins));
    Value index = b.convert(b.positions({edgeCount}), element);
    Value fromEnd = b.sub(element, b.constant(element, bins), index);
    Value firstHalf = b.pointwise(RankedTensorType::get({edgeCount}, r.getI1Type()), "lt",
                                  {index, b.constant(element, edgeCount / 2)});
    return b.pointwise(RankedTensorType::get({edgeCount}, element), "where",
                       {firstHalf, b.add(element, lo, b.mul(element, step, index)),
                        b.sub(element, hi, b.mul(element, step, fromEnd))});
  }

  /// Given edges: eager's binary search, the upper bound among all the
  /// edges, less one.
  Value searchedBins(Value edges) {
    Value above = r.create<aten::SearchSortedOp>(loc, indexType(), edges, x, r.getUnitAttr());
    return b.sub(i64, above, int64(1));
  }

  /// Even edges: eager's guess trunc((x - lo) * bins / (hi - lo)) (lo and
  /// hi the edges' ends; only a number in [0, bins] is converted), then
  /// its local search: the upper bound among the edges guess - 1 .. guess +
  /// 1 that exist, less one.
  Value guessedBins(Value edges) {
    const int64_t edgeCount = bins + 1;
    auto flat = RankedTensorType::get({count}, element);
    Value guess = guessBins(r, b, x, edgeAt(edges, 0), edgeAt(edges, bins), bins).first;
    Value above = b.pointwise(indexType(), "maximum", {b.sub(i64, guess, int64(1)), int64(0)});
    for (int delta = -1; delta <= 1; ++delta) {
      Value at = b.add(i64, guess, int64(delta));
      Value exists = both(b.pointwise(maskType(), "ge", {at, int64(0)}),
                          b.pointwise(maskType(), "lt", {at, int64(edgeCount)}));
      Value clamped = b.pointwise(indexType(), "minimum",
                                  {b.pointwise(indexType(), "maximum", {at, int64(0)}),
                                   int64(edgeCount - 1)});
      Value edge = r.create<aten::IndexSelectOp>(loc, flat, edges, clamped,
                                                 r.getI64IntegerAttr(0));
      Value counted = both(exists, b.pointwise(maskType(), "le", {edge, x}));
      above = b.add(i64, above, b.pointwise(indexType(), "copy", counted));
    }
    return b.sub(i64, above, int64(1));
  }

  RankedTensorType indexType() { return RankedTensorType::get({count}, i64); }
  RankedTensorType maskType() { return RankedTensorType::get({count}, r.getI1Type()); }
  Value int64(double v) { return b.constant(i64, v); }
  Value both(Value p, Value q) { return b.pointwise(maskType(), "logical_and", {p, q}); }

  PatternRewriter &r;
  Location loc;
  AtenBuilder b;
  Value x;
  std::optional<std::pair<double, double>> range;
  Type element, i64;
  int64_t bins, count;
};

/// Densities: each count divided by the total, then by its cell's width
/// along each dimension in turn (`edges`, one per dim of `hist`), as eager
/// does.
Value densities(PatternRewriter &r, AtenBuilder &b, Value hist, ValueRange edges) {
  RankedTensorType histType = typeOf(hist);
  Type element = histType.getElementType();
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, histType.getRank()));
  Value total = b.sum(RankedTensorType::get({}, element), hist, all);
  Value density = b.div(element, hist, total);
  for (auto [d, dimEdges] : llvm::enumerate(edges)) {
    const int64_t bins = histType.getDimSize(d);
    auto binsType = RankedTensorType::get({bins}, element);
    auto from = [&](int64_t at) {
      return r.create<aten::SliceOp>(dimEdges.getLoc(), binsType, dimEdges,
                                     r.getDenseI64ArrayAttr({at}), r.getDenseI64ArrayAttr({1}))
          .getResult();
    };
    SmallVector<int64_t> along(histType.getRank(), 1);
    along[d] = bins;
    density = b.div(element, density, b.view(b.sub(element, from(1), from(0)), along));
  }
  return density;
}

/// The range of coordinate `d` of a (lo0, hi0, lo1, hi1, ...) attribute.
std::optional<std::pair<double, double>> rangeOf(std::optional<ArrayRef<double>> range,
                                                 int64_t d) {
  if (!range)
    return std::nullopt;
  return std::make_pair((*range)[2 * d], (*range)[2 * d + 1]);
}

struct DecomposeHistogram : OpRewritePattern<aten::HistogramOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::HistogramOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType histType = op.getHist().getType();
    const int64_t bins = histType.getDimSize(0);
    const int64_t count = typeOf(op.getSelf()).getNumElements();
    AxisBins axis(rewriter, loc, b.view(op.getSelf(), {count}), bins, rangeOf(op.getRange(), 0));
    Value edges = axis.edges(op.getEdges());
    Value hist;
    if (count == 0) {
      hist = rewriter.create<aten::ConstantOp>(loc, histType.getElementType(), 0.0,
                                               histType.getShape());
    } else {
      auto [bin, inRange] = axis.placed(edges, static_cast<bool>(op.getEdges()));
      Value slot = b.pointwise(typeOf(bin), "where", {inRange, bin, b.constant(rewriter.getI64Type(), bins)});
      Value weights = op.getWeight() ? b.view(op.getWeight(), {count}) : Value();
      hist = countIntoBins(rewriter, loc, histType, slot, weights);
    }
    if (op.getDensity())
      hist = densities(rewriter, b, hist, edges);
    rewriter.replaceOp(op, {hist, edges});
    return success();
  }
};

/// histogramdd: each coordinate's bin as histogram's, the cell the
/// row-major combination of them, one scatter-add over the cells (plus one
/// for the points outside the edges, dropped).
struct DecomposeHistogramdd : OpRewritePattern<aten::HistogramddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(aten::HistogramddOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder b(rewriter, loc);
    RankedTensorType selfType = op.getSelf().getType();
    RankedTensorType histType = op.getHist().getType();
    Type element = selfType.getElementType(), i64 = rewriter.getI64Type();
    const int64_t points = selfType.getDimSize(0), dims = selfType.getDimSize(1);
    const int64_t cells = histType.getNumElements();
    auto indexType = RankedTensorType::get({points}, i64);
    SmallVector<Value> allEdges;
    Value cell, inside;
    int64_t stride = cells;
    for (int64_t d = 0; d < dims; ++d) {
      const int64_t bins = histType.getDimSize(d);
      stride /= bins;
      Value column = rewriter.create<aten::SliceOp>(
          loc, RankedTensorType::get({points, 1}, element), op.getSelf(),
          rewriter.getDenseI64ArrayAttr({0, d}), rewriter.getDenseI64ArrayAttr({1, 1}));
      AxisBins axis(rewriter, loc, b.view(column, {points}), bins, rangeOf(op.getRange(), d));
      Value given = op.getEdges().empty() ? Value() : op.getEdges()[d];
      Value edges = axis.edges(given);
      allEdges.push_back(edges);
      if (points == 0)
        continue;
      auto [bin, inRange] = axis.placed(edges, static_cast<bool>(given));
      Value offset = b.mul(i64, bin, b.constant(i64, stride));
      cell = cell ? b.add(i64, cell, offset) : offset;
      inside = inside ? b.pointwise(typeOf(inRange), "logical_and", {inside, inRange}) : inRange;
    }
    Value hist;
    if (points == 0) {
      hist = rewriter.create<aten::ConstantOp>(loc, element, 0.0, histType.getShape());
    } else {
      Value slot = b.pointwise(indexType, "where", {inside, cell, b.constant(i64, cells)});
      hist = b.view(countIntoBins(rewriter, loc, RankedTensorType::get({cells}, element), slot,
                                  op.getWeight()),
                    histType.getShape());
    }
    if (op.getDensity())
      hist = densities(rewriter, b, hist, allEdges);
    SmallVector<Value> results = {hist};
    results.append(allEdges);
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void kiln::populateHistogramDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeHistc, DecomposeHistogram, DecomposeHistogramdd>(patterns.getContext());
}
