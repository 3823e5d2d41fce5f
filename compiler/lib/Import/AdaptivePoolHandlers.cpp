//===- AdaptivePoolHandlers.cpp - adaptive average and max pooling --------===//
//
// This file implements the importer handlers of adaptive pooling over the
// last 1, 2 or 3 dims. Output element i of a dim pools PyTorch's window
// [floor(i * In / Out), ceil((i + 1) * In / Out)).
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
// flat spatial input index through a constant table.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// PyTorch's adaptive windows of one dim.
struct Windows {
  int64_t in = 0, out = 0, longest = 0;
  SmallVector<int64_t> start, size;

  Windows(int64_t in, int64_t out) : in(in), out(out) {
    for (int64_t i = 0; i < out; ++i) {
      int64_t begin = (i * in) / out, end = ((i + 1) * in + out - 1) / out;
      start.push_back(begin);
      size.push_back(end - begin);
      longest = std::max(longest, end - begin);
    }
  }
  bool even() const { return in % out == 0; }
  /// The input position of window element k of output i (the window's last
  /// element past its end).
  int64_t at(int64_t i, int64_t k) const {
    return start[i] + std::min(k, size[i] - 1);
  }
};

/// The windows of the last `s` dims; error when the ranks disagree.
absl::StatusOr<SmallVector<Windows>> windowsOf(NodeImporter &n,
                                               RankedTensorType input,
                                               RankedTensorType output,
                                               size_t s) {
  ArrayRef<int64_t> in = input.getShape(), out = output.getShape();
  if (in.size() < s + 1 || in.size() != out.size())
    return n.error("adaptive pooling needs matching input and output ranks");
  size_t lead = in.size() - s;
  if (in.take_front(lead) != out.take_front(lead))
    return n.error("adaptive pooling keeps the leading dims");
  SmallVector<Windows> windows;
  for (size_t i = lead; i < in.size(); ++i) {
    if (in[i] < 1 || out[i] < 1)
      return n.error("adaptive pooling needs non-empty input and output dims");
    // The window table is out x longest (about in) entries.
    if (out[i] > kMaxConstantTable / (in[i] / out[i] + 2))
      return n.unimplemented(absl::StrCat("adaptive pooling from ", in[i],
                                          " to ", out[i], " elements"));
    windows.emplace_back(in[i], out[i]);
  }
  return windows;
}

/// Whether the gathered windows' constant tables (the product over dims of
/// out x longest entries) stay within kMaxConstantTable.
bool tablesFit(ArrayRef<Windows> windows) {
  __int128 entries = 1;
  for (const Windows &w : windows) {
    entries *= static_cast<__int128>(w.out) * std::max<int64_t>(w.longest, 1);
    if (entries > kMaxConstantTable)
      return false;
  }
  return true;
}

bool allEven(ArrayRef<Windows> windows) {
  return llvm::all_of(windows, [](const Windows &w) { return w.even(); });
}

SmallVector<int64_t> kernelOf(ArrayRef<Windows> windows) {
  SmallVector<int64_t> kernel;
  for (const Windows &w : windows)
    kernel.push_back(w.in / w.out);
  return kernel;
}

template <typename T>
Value constant(NodeImporter &n, Type element, ArrayRef<int64_t> shape,
               ArrayRef<T> data) {
  auto type = RankedTensorType::get(shape, element);
  return n.b().create<aten::ConstantOp>(n.loc(), type,
                                        DenseElementsAttr::get(type, data));
}

/// (lead..., O0, K0, O1, K1...): every window, padded to K by repeating its
/// last element.
Value gatherWindows(NodeImporter &n, Value x, ArrayRef<Windows> windows) {
  int64_t lead = typeOf(x).getRank() - windows.size();
  for (size_t i = 0; i < windows.size(); ++i) {
    const Windows &w = windows[i];
    SmallVector<int64_t> index;
    for (int64_t o = 0; o < w.out; ++o)
      for (int64_t k = 0; k < w.longest; ++k)
        index.push_back(w.at(o, k));
    Value table =
        constant<int64_t>(n, n.b().getI64Type(), {w.out, w.longest}, index);
    int64_t dim = lead + 2 * i;
    SmallVector<int64_t> shape(typeOf(x).getShape());
    shape[dim] = w.longest;
    shape.insert(shape.begin() + dim, w.out);
    x = n.b().create<aten::IndexSelectOp>(n.loc(), typeOf(x).clone(shape), x,
                                          table, n.b().getI64IntegerAttr(dim));
  }
  return x;
}

/// Calls f(o, k) for every output position and window position, row-major
/// over (O0, K0, O1, K1...) (`interleaved`) or (O0, O1..., K0, K1...).
template <typename F>
void forEachWindowElement(ArrayRef<Windows> windows, bool interleaved, F f) {
  size_t s = windows.size();
  SmallVector<int64_t> o(s, 0), k(s, 0);
  // Odometer over the 2s digits in the requested order.
  SmallVector<std::pair<int64_t *, int64_t>> digits;
  for (size_t i = 0; i < s; ++i) {
    if (interleaved) {
      digits.push_back({&o[i], windows[i].out});
      digits.push_back({&k[i], windows[i].longest});
    } else {
      digits.push_back({&o[i], windows[i].out});
    }
  }
  if (!interleaved)
    for (size_t i = 0; i < s; ++i)
      digits.push_back({&k[i], windows[i].longest});
  while (true) {
    f(ArrayRef<int64_t>(o), ArrayRef<int64_t>(k));
    size_t d = digits.size();
    while (d > 0 && ++*digits[d - 1].first == digits[d - 1].second)
      *digits[--d].first = 0;
    if (d == 0)
      return;
  }
}

/// Average pooling over uneven windows: masked sum over the gathered
/// windows divided by each window's size.
Value unevenAvgPool(NodeImporter &n, RankedTensorType type, Value self,
                    ArrayRef<Windows> windows) {
  Type element = type.getElementType();
  int64_t lead = type.getRank() - windows.size();
  Value gathered = gatherWindows(n, self, windows);
  SmallVector<int64_t> maskShape;
  for (const Windows &w : windows)
    maskShape.append({w.out, w.longest});
  SmallVector<bool> real;
  auto isReal = [&](ArrayRef<int64_t> o, ArrayRef<int64_t> k) {
    bool inside = true;
    for (size_t i = 0; i < windows.size(); ++i)
      inside = inside && k[i] < windows[i].size[o[i]];
    real.push_back(inside);
  };
  forEachWindowElement(windows, true, isReal);
  Value masked = gathered;
  if (llvm::is_contained(real, false)) {
    Value mask = constant<bool>(n, n.b().getI1Type(), maskShape, real);
    masked = n.b().create<aten::PointwiseOp>(
        n.loc(), typeOf(gathered), n.b().getStringAttr("where"),
        ValueRange{mask, gathered, n.constant(element, 0.0)},
        n.b().getDenseF64ArrayAttr({}));
  }
  SmallVector<int64_t> dims;
  for (size_t i = 0; i < windows.size(); ++i)
    dims.push_back(lead + 2 * i + 1);
  Value sum = n.b().create<aten::SumOp>(n.loc(), type, masked,
                                        n.b().getDenseI64ArrayAttr(dims),
                                        n.b().getBoolAttr(false));
  SmallVector<int64_t> outShape;
  SmallVector<double> sizes(1, 1.0);
  for (const Windows &w : windows) {
    outShape.push_back(w.out);
    SmallVector<double> next;
    for (double prefix : sizes)
      for (int64_t o = 0; o < w.out; ++o)
        next.push_back(prefix * double(w.size[o]));
    sizes = next;
  }
  SmallVector<Attribute> divisors;
  for (double v : sizes)
    divisors.push_back(FloatAttr::get(element, v));
  auto divisorType = RankedTensorType::get(outShape, element);
  Value divisor = n.b().create<aten::ConstantOp>(
      n.loc(), divisorType, DenseElementsAttr::get(divisorType, divisors));
  return n.b().create<aten::DivOp>(n.loc(), type, sum, divisor);
}

/// Max pooling over uneven windows: (values, flat spatial input indices).
Values unevenMaxPool(NodeImporter &n, RankedTensorType type, Value self,
                     ArrayRef<Windows> windows) {
  size_t s = windows.size();
  int64_t lead = type.getRank() - s;
  Value gathered = gatherWindows(n, self, windows);
  // (lead..., O0, O1..., K0 * K1...).
  SmallVector<int64_t> perm, flatShape(type.getShape().take_front(lead));
  for (int64_t d = 0; d < lead; ++d)
    perm.push_back(d);
  int64_t window = 1;
  for (size_t i = 0; i < s; ++i) {
    perm.push_back(lead + 2 * i);
    flatShape.push_back(windows[i].out);
    window *= windows[i].longest;
  }
  for (size_t i = 0; i < s; ++i)
    perm.push_back(lead + 2 * i + 1);
  flatShape.push_back(window);
  ArrayRef<int64_t> gatheredShape = typeOf(gathered).getShape();
  SmallVector<int64_t> permuted;
  for (int64_t d : perm)
    permuted.push_back(gatheredShape[d]);
  Value moved = n.b().create<aten::PermuteOp>(
      n.loc(), typeOf(gathered).clone(permuted), gathered,
      n.b().getDenseI64ArrayAttr(perm));
  Value flat = n.b().create<aten::ViewOp>(
      n.loc(), typeOf(moved).clone(flatShape), moved);
  int64_t last = flatShape.size() - 1;
  auto lastDim = n.b().getDenseI64ArrayAttr({last});
  Value values = n.b().create<aten::AmaxOp>(n.loc(), type, flat, lastDim,
                                            n.b().getBoolAttr(false));
  SmallVector<int64_t> keptShape(type.getShape());
  keptShape.push_back(1);
  Type i64 = n.b().getI64Type();
  Value position = n.b().create<aten::ArgReduceOp>(
      n.loc(), RankedTensorType::get(keptShape, i64), flat,
      n.b().getI64IntegerAttr(last), /*keepdim=*/n.b().getBoolAttr(true),
      /*max=*/n.b().getBoolAttr(true));
  // table[o..., k] = the flat spatial input index of window element k.
  SmallVector<int64_t> entries, tableShape(lead, 1);
  for (size_t i = 0; i < s; ++i)
    tableShape.push_back(windows[i].out);
  tableShape.push_back(window);
  auto flatInput = [&](ArrayRef<int64_t> o, ArrayRef<int64_t> k) {
    int64_t flatIndex = 0;
    for (size_t i = 0; i < s; ++i)
      flatIndex = flatIndex * windows[i].in + windows[i].at(o[i], k[i]);
    entries.push_back(flatIndex);
  };
  forEachWindowElement(windows, false, flatInput);
  Value table = constant<int64_t>(n, i64, tableShape, entries);
  Value tableFull = n.b().create<aten::ExpandOp>(
      n.loc(), RankedTensorType::get(flatShape, i64), table);
  Value index = n.b().create<aten::GatherOp>(n.loc(), typeOf(position),
                                             tableFull, position,
                                             n.b().getI64IntegerAttr(last));
  Value indices = n.b().create<aten::ViewOp>(n.loc(), type.clone(i64), index);
  return Values{values, indices};
}

absl::StatusOr<Values> adaptiveAvgPool(NodeImporter &n, size_t s) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(SmallVector<Windows> windows,
                   windowsOf(n, typeOf(self), type, s));
  if (!allEven(windows) && !tablesFit(windows))
    return n.unimplemented("adaptive pooling with uneven windows whose tables exceed "
                           "16M entries");
  if (!allEven(windows)) {
    if (!isa<FloatType>(type.getElementType()))
      return n.error("adaptive average pooling needs a floating-point input");
    return Values{unevenAvgPool(n, type, self, windows)};
  }
  SmallVector<int64_t> kernel = kernelOf(windows);
  auto b = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  return Values{n.b().create<aten::AvgPoolOp>(
      n.loc(), type, self, b(kernel), b(kernel), b(SmallVector<int64_t>(s, 0)),
      n.b().getBoolAttr(true), n.b().getI64IntegerAttr(0),
      /*channels_last=*/UnitAttr())};
}

absl::StatusOr<Values> adaptiveMaxPool(NodeImporter &n, size_t s) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(SmallVector<Windows> windows,
                   windowsOf(n, typeOf(self), type, s));
  if (type.getElementType().isInteger(1))
    return n.error("adaptive max pooling of a boolean tensor");
  if (!allEven(windows) && !tablesFit(windows))
    return n.unimplemented("adaptive pooling with uneven windows whose tables exceed "
                           "16M entries");
  if (!allEven(windows))
    return unevenMaxPool(n, type, self, windows);
  SmallVector<int64_t> kernel = kernelOf(windows);
  auto b = [&](ArrayRef<int64_t> v) { return n.b().getDenseI64ArrayAttr(v); };
  auto indicesType = RankedTensorType::get(type.getShape(), n.b().getI64Type());
  auto op = n.b().create<aten::MaxPoolOp>(
      n.loc(), TypeRange{type, indicesType}, self, b(kernel), b(kernel),
      b(SmallVector<int64_t>(s, 0)), b(SmallVector<int64_t>(s, 1)),
      /*channels_last=*/UnitAttr());
  return Values(op->getResults());
}

} // namespace

void addAdaptivePoolHandlers(OpHandlerTable &t) {
  t["aten._adaptive_avg_pool2d.default"] = [](NodeImporter &n) {
    return adaptiveAvgPool(n, 2);
  };
  t["aten.adaptive_avg_pool2d.default"] =
      t["aten._adaptive_avg_pool2d.default"];
  t["aten.adaptive_avg_pool1d.default"] = [](NodeImporter &n) {
    return adaptiveAvgPool(n, 1);
  };
  t["aten.adaptive_max_pool2d.default"] = [](NodeImporter &n) {
    return adaptiveMaxPool(n, 2);
  };
  t["aten.adaptive_max_pool1d.default"] = [](NodeImporter &n) {
    return adaptiveMaxPool(n, 1);
  };
  t["aten._adaptive_avg_pool3d.default"] = [](NodeImporter &n) {
    return adaptiveAvgPool(n, 3);
  };
  t["aten.adaptive_avg_pool3d.default"] =
      t["aten._adaptive_avg_pool3d.default"];
  t["aten.adaptive_max_pool3d.default"] = [](NodeImporter &n) {
    return adaptiveMaxPool(n, 3);
  };
}

} // namespace kiln
