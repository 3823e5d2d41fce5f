//===- DecomposeAdaptivePool.cpp - adaptive pooling as pools or gathers ---===//
//
// This file implements the decomposition of aten.adaptive_avg_pool and
// aten.adaptive_max_pool (adaptive pooling over the last 1 to 3 dims,
// PyTorch's windows in AdaptiveWindows.h).
//
// When every output extent divides the input's, the windows are a plain
// pool with kernel = stride = In / Out (aten.avg_pool, aten.max_pool).
// Otherwise the windows are gathered: one aten.index_select per dim with a
// constant (Out, K) index, K the longest window, each row padded by
// repeating its window's last element, turns the input into (lead...,
// O0, K0, O1, K1...). Average pooling sums the real window elements and
// divides by the window sizes; max pooling takes the first maximum of the
// flattened window (aten.arg_reduce; with several NaNs in one window it
// names the first, where PyTorch names the last) and maps it back to the
// flat spatial input index through a constant table. The verifiers bound
// the tables (kMaxConstantTable entries).
//
//===----------------------------------------------------------------------===//
#include "AtenBuilder.h"
#include "Decompositions.h"

#include "kiln/Dialect/Aten/IR/AdaptiveWindows.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

using namespace mlir;
namespace aten = kiln::aten;
using kiln::aten::AdaptiveWindows;
using kiln::decompose::AtenBuilder;
using kiln::decompose::typeOf;

namespace {

/// The windows of `pooled` trailing dims of `input` pooled to `result`.
SmallVector<AdaptiveWindows> windowsOf(Value input, RankedTensorType result,
                                       int64_t pooled) {
  return aten::adaptiveWindows(typeOf(input).getShape(),
                               result.getShape().take_back(pooled));
}

/// A constant tensor of `element` (i1, i64 or a float type) and `shape`.
template <typename T>
Value table(AtenBuilder &b, Type element, ArrayRef<int64_t> shape,
            ArrayRef<T> data) {
  auto type = RankedTensorType::get(shape, element);
  return b.constant(DenseElementsAttr::get(type, data));
}

/// (lead..., O0, K0, O1, K1...): every window, padded to K by repeating its
/// last element. `longest` holds each dim's K.
Value gatherWindows(AtenBuilder &b, PatternRewriter &r, Location loc, Value x,
                    ArrayRef<AdaptiveWindows> windows,
                    ArrayRef<int64_t> longest) {
  int64_t lead = typeOf(x).getRank() - windows.size();
  for (size_t i = 0; i < windows.size(); ++i) {
    const AdaptiveWindows &w = windows[i];
    SmallVector<int64_t> index;
    for (int64_t o = 0; o < w.out; ++o)
      for (int64_t k = 0; k < longest[i]; ++k)
        index.push_back(w.at(o, k));
    Value positions =
        table<int64_t>(b, r.getI64Type(), {w.out, longest[i]}, index);
    int64_t dim = lead + 2 * i;
    SmallVector<int64_t> shape(typeOf(x).getShape());
    shape[dim] = longest[i];
    shape.insert(shape.begin() + dim, w.out);
    x = r.create<aten::IndexSelectOp>(loc, typeOf(x).clone(shape), x, positions,
                                      r.getI64IntegerAttr(dim));
  }
  return x;
}

/// Calls f(o, k) for every output position and window position, row-major
/// over (O0, K0, O1, K1...) (`interleaved`) or (O0, O1..., K0, K1...).
template <typename F>
void forEachWindowElement(ArrayRef<AdaptiveWindows> windows,
                          ArrayRef<int64_t> longest, bool interleaved, F f) {
  size_t s = windows.size();
  SmallVector<int64_t> o(s, 0), k(s, 0);
  // An odometer over the 2s digits in the requested order.
  SmallVector<std::pair<int64_t *, int64_t>> digits;
  for (size_t i = 0; i < s; ++i) {
    digits.push_back({&o[i], windows[i].out});
    if (interleaved)
      digits.push_back({&k[i], longest[i]});
  }
  if (!interleaved)
    for (size_t i = 0; i < s; ++i)
      digits.push_back({&k[i], longest[i]});
  while (true) {
    f(ArrayRef<int64_t>(o), ArrayRef<int64_t>(k));
    size_t d = digits.size();
    while (d > 0 && ++*digits[d - 1].first == digits[d - 1].second)
      *digits[--d].first = 0;
    if (d == 0)
      return;
  }
}

SmallVector<int64_t> longestOf(ArrayRef<AdaptiveWindows> windows) {
  SmallVector<int64_t> longest;
  for (const AdaptiveWindows &w : windows)
    longest.push_back(w.longest());
  return longest;
}

/// Average pooling over uneven windows: a masked sum over the gathered
/// windows divided by each window's size, in f32 for f16/bf16 (as eager's
/// CPU kernel accumulates; a window can hold more elements than f16's
/// largest value) and converted back.
Value unevenAvgPool(AtenBuilder &b, PatternRewriter &r, Location loc,
                    RankedTensorType resultType, Value self,
                    ArrayRef<AdaptiveWindows> windows) {
  Type result = resultType.getElementType();
  Type element = result.isF64() ? result : r.getF32Type();
  RankedTensorType type = resultType.clone(element);
  int64_t lead = type.getRank() - windows.size();
  SmallVector<int64_t> longest = longestOf(windows);
  Value gathered =
      b.convert(gatherWindows(b, r, loc, self, windows, longest), element);
  SmallVector<int64_t> maskShape;
  for (auto [w, k] : llvm::zip(windows, longest))
    maskShape.append({w.out, k});
  SmallVector<bool> real;
  forEachWindowElement(windows, longest, /*interleaved=*/true,
                       [&](ArrayRef<int64_t> o, ArrayRef<int64_t> k) {
                         bool inside = true;
                         for (size_t i = 0; i < windows.size(); ++i)
                           inside = inside && k[i] < windows[i].size(o[i]);
                         real.push_back(inside);
                       });
  Value masked = gathered;
  if (llvm::is_contained(real, false)) {
    Value mask = table<bool>(b, r.getI1Type(), maskShape, real);
    masked = b.pointwise(typeOf(gathered), "where",
                         {mask, gathered, b.constant(element, 0.0)});
  }
  SmallVector<int64_t> dims;
  for (size_t i = 0; i < windows.size(); ++i)
    dims.push_back(lead + 2 * i + 1);
  Value sum = b.sum(type, masked, dims);
  SmallVector<int64_t> outShape;
  SmallVector<double> sizes(1, 1.0);
  for (const AdaptiveWindows &w : windows) {
    outShape.push_back(w.out);
    SmallVector<double> next;
    for (double prefix : sizes)
      for (int64_t o = 0; o < w.out; ++o)
        next.push_back(prefix * double(w.size(o)));
    sizes = next;
  }
  SmallVector<Attribute> divisors;
  for (double v : sizes)
    divisors.push_back(FloatAttr::get(element, v));
  auto divisorType = RankedTensorType::get(outShape, element);
  Value divisor = b.constant(DenseElementsAttr::get(divisorType, divisors));
  return b.convert(r.create<aten::DivOp>(loc, type, sum, divisor), result);
}

/// Max pooling over uneven windows: (values, flat spatial input indices).
SmallVector<Value> unevenMaxPool(AtenBuilder &b, PatternRewriter &r,
                                 Location loc, RankedTensorType type, Value self,
                                 ArrayRef<AdaptiveWindows> windows) {
  size_t s = windows.size();
  int64_t lead = type.getRank() - s;
  SmallVector<int64_t> longest = longestOf(windows);
  Value gathered = gatherWindows(b, r, loc, self, windows, longest);
  // (lead..., O0, O1..., K0 * K1...).
  SmallVector<int64_t> perm, flatShape(type.getShape().take_front(lead));
  for (int64_t d = 0; d < lead; ++d)
    perm.push_back(d);
  int64_t window = 1;
  for (size_t i = 0; i < s; ++i) {
    perm.push_back(lead + 2 * i);
    flatShape.push_back(windows[i].out);
    window *= longest[i];
  }
  for (size_t i = 0; i < s; ++i)
    perm.push_back(lead + 2 * i + 1);
  flatShape.push_back(window);
  Value flat = b.view(b.permute(gathered, perm), flatShape);
  int64_t last = flatShape.size() - 1;
  Value values = r.create<aten::AmaxOp>(loc, type, flat,
                                        r.getDenseI64ArrayAttr({last}),
                                        r.getBoolAttr(false));
  SmallVector<int64_t> keptShape(type.getShape());
  keptShape.push_back(1);
  Type i64 = r.getI64Type();
  Value position = r.create<aten::ArgReduceOp>(
      loc, RankedTensorType::get(keptShape, i64), flat,
      r.getI64IntegerAttr(last), /*keepdim=*/r.getBoolAttr(true),
      /*max=*/r.getBoolAttr(true));
  // table[o..., k] = the flat spatial input index of window element k.
  SmallVector<int64_t> entries, tableShape(lead, 1);
  for (size_t i = 0; i < s; ++i)
    tableShape.push_back(windows[i].out);
  tableShape.push_back(window);
  forEachWindowElement(windows, longest, /*interleaved=*/false,
                       [&](ArrayRef<int64_t> o, ArrayRef<int64_t> k) {
                         int64_t flatIndex = 0;
                         for (size_t i = 0; i < s; ++i)
                           flatIndex = flatIndex * windows[i].in +
                                       windows[i].at(o[i], k[i]);
                         entries.push_back(flatIndex);
                       });
  Value inputIndex = table<int64_t>(b, i64, tableShape, entries);
  Value fullTable = r.create<aten::ExpandOp>(
      loc, RankedTensorType::get(flatShape, i64), inputIndex);
  Value index = r.create<aten::GatherOp>(loc, typeOf(position), fullTable,
                                         position, r.getI64IntegerAttr(last));
  return {values, b.view(index, type.getShape())};
}

/// The plain pool that dividing windows are: kernel = stride = In / Out,
/// no padding (the max pool's indices are the op's).
Operation *plainPool(PatternRewriter &r, aten::AdaptiveAvgPoolOp op,
                     ArrayRef<int64_t> kernel) {
  auto attr = [&](ArrayRef<int64_t> v) { return r.getDenseI64ArrayAttr(v); };
  return r.create<aten::AvgPoolOp>(
      op.getLoc(), op.getType(), op.getSelf(), attr(kernel), attr(kernel),
      attr(SmallVector<int64_t>(kernel.size(), 0)),
      /*count_include_pad=*/r.getBoolAttr(true),
      /*divisor_override=*/r.getI64IntegerAttr(0), /*channels_last=*/UnitAttr());
}

Operation *plainPool(PatternRewriter &r, aten::AdaptiveMaxPoolOp op,
                     ArrayRef<int64_t> kernel) {
  auto attr = [&](ArrayRef<int64_t> v) { return r.getDenseI64ArrayAttr(v); };
  return r.create<aten::MaxPoolOp>(
      op.getLoc(), op->getResultTypes(), op.getSelf(), attr(kernel), attr(kernel),
      attr(SmallVector<int64_t>(kernel.size(), 0)),
      attr(SmallVector<int64_t>(kernel.size(), 1)), /*channels_last=*/UnitAttr());
}

SmallVector<Value> unevenPool(AtenBuilder &b, PatternRewriter &r,
                              aten::AdaptiveAvgPoolOp op, RankedTensorType type,
                              ArrayRef<AdaptiveWindows> windows) {
  return {unevenAvgPool(b, r, op.getLoc(), type, op.getSelf(), windows)};
}

SmallVector<Value> unevenPool(AtenBuilder &b, PatternRewriter &r,
                              aten::AdaptiveMaxPoolOp op, RankedTensorType type,
                              ArrayRef<AdaptiveWindows> windows) {
  return unevenMaxPool(b, r, op.getLoc(), type, op.getSelf(), windows);
}

/// aten.adaptive_avg_pool and aten.adaptive_max_pool: the plain pool when
/// the windows divide, the gathered windows otherwise.
template <typename AdaptiveOp>
struct DecomposeAdaptivePool : OpRewritePattern<AdaptiveOp> {
  using OpRewritePattern<AdaptiveOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AdaptiveOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = typeOf(op->getResult(0));
    SmallVector<AdaptiveWindows> windows =
        windowsOf(op.getSelf(), type, op.getPooledDims());
    if (aten::allEven(windows)) {
      rewriter.replaceOp(op, plainPool(rewriter, op, aten::adaptiveKernel(windows)));
      return success();
    }
    AtenBuilder b(rewriter, op.getLoc());
    rewriter.replaceOp(op, unevenPool(b, rewriter, op, type, windows));
    return success();
  }
};

} // namespace

void kiln::populateAdaptivePoolDecompositions(RewritePatternSet &patterns) {
  patterns.add<DecomposeAdaptivePool<aten::AdaptiveAvgPoolOp>,
               DecomposeAdaptivePool<aten::AdaptiveMaxPoolOp>>(patterns.getContext());
}
