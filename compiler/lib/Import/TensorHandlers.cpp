//===- TensorHandlers.cpp - pointwise, indexing and creation handlers -----===//
//
// This file implements the importer handlers for the table-driven op
// families: pointwise math, comparisons and logical ops (aten.pointwise),
// more reductions, slicing/concatenation/indexing and creation ops. Most
// entries are one table row naming a pointwise function.
//
//===----------------------------------------------------------------------===//
#include "EmptyTensors.h"
#include "OpHandlers.h"
#include "SelectionBuilders.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// fn(self[, other]) where a number `other` becomes a 0-d constant in the
/// result type (math) or in the comparison type (predicates).
absl::StatusOr<Values> pointwiseOp(NodeImporter &n, StringRef fn,
                                   std::vector<std::string> names,
                                   bool compare = false) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  Values inputs;
  Type selfElement;
  for (const std::string &name : names) {
    Type scalarType = type.getElementType();
    if (compare && selfElement)
      scalarType = scalarTypeAgainst(n, name, selfElement);
    ASSIGN_OR_RETURN(Value v, n.tensorOrScalar(name, scalarType));
    if (!selfElement)
      selfElement = typeOf(v).getElementType();
    inputs.push_back(v);
  }
  return Values{pointwise(n, type, fn, inputs)};
}


OpHandler cmp(StringRef fn) {
  std::string name = fn.str();
  return [name](NodeImporter &n) {
    return pointwiseOp(n, name, {"self", "other"}, /*compare=*/true);
  };
}

/// clamp-like: optional number bounds, NaN meaning none.
absl::StatusOr<Values> clampWith(NodeImporter &n, const std::string &lo,
                                 const std::string &hi,
                                 std::optional<double> loDefault,
                                 std::optional<double> hiDefault) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  double nan = std::numeric_limits<double>::quiet_NaN();
  double bounds[2] = {nan, nan};
  const std::string *names[2] = {&lo, &hi};
  std::optional<double> defaults[2] = {loDefault, hiDefault};
  for (int i = 0; i < 2; ++i) {
    if (names[i]->empty())
      continue;
    if (n.isTensor(*names[i]))
      return n.unimplemented("tensor bounds are not supported; use clamp.Tensor");
    if (n.has(*names[i]) || defaults[i]) {
      ASSIGN_OR_RETURN(bounds[i], n.floatAttr(*names[i], defaults[i]));
    }
  }
  return Values{pointwise(n, type, "clamp", self, bounds)};
}

absl::StatusOr<Values> clampTensor(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (!n.has("min") && !n.has("max"))
    return n.error("clamp needs min or max");
  if (!n.has("min") || !n.has("max")) {
    bool lower = n.has("min");
    ASSIGN_OR_RETURN(Value bound, n.tensor(lower ? "min" : "max"));
    return Values{pointwise(n, type, lower ? "maximum" : "minimum", {self, bound})};
  }
  ASSIGN_OR_RETURN(Value lo, n.tensor("min"));
  ASSIGN_OR_RETURN(Value hi, n.tensor("max"));
  return Values{pointwise(n, type, "clamp_tensor", {self, lo, hi})};
}

absl::StatusOr<Values> withScalars(NodeImporter &n, StringRef fn,
                                   std::vector<std::pair<std::string, double>> args) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  SmallVector<double> scalars;
  for (auto &[name, fallback] : args) {
    ASSIGN_OR_RETURN(double v, n.floatAttr(name, fallback));
    scalars.push_back(v);
  }
  return Values{pointwise(n, type, fn, self, scalars)};
}

/// _to_copy, to.dtype, convert_element_type...: the result type says it.
absl::StatusOr<Values> convert(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (typeOf(self) == type)
    return Values{self};
  if (typeOf(self).getShape() != type.getShape())
    return n.error("a type conversion cannot change the shape");
  return Values{pointwise(n, type, "copy", self)};
}

/// view.dtype: the elements' bits read as the result's type. Between the
/// 8-bit types (uint8 is carried in i16, and wrapped after the node) it is
/// a conversion: the same bits; otherwise an aten.bitcast of one width.
absl::StatusOr<Values> viewAsType(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (typeOf(self) == type)
    return Values{self};
  if (typeOf(self).getShape() != type.getShape())
    return n.unimplemented("a view between dtypes of different widths (elements split into "
                           "or joined from bytes); views of one width compile");
  Type from = typeOf(self).getElementType(), to = type.getElementType();
  auto eightBit = [](Type t) { return t.isInteger(1) || t.isInteger(8); };
  if (eightBit(from) || eightBit(to) || n.resultIsUnsigned())
    return Values{pointwise(n, type, "copy", self)};
  if (from.getIntOrFloatBitWidth() != to.getIntOrFloatBitWidth())
    return n.error("a view between dtypes of different widths must change the last dim");
  return Values{n.b().create<aten::BitcastOp>(n.loc(), type, self).getResult()};
}

/// copy(self, src): src broadcast to self's shape in self's element type.
absl::StatusOr<Values> copyInto(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value src, n.tensor("src"));
  if (typeOf(src).getElementType() != type.getElementType())
    src = pointwise(n, typeOf(src).clone(type.getElementType()), "copy", src);
  if (typeOf(src) != type)
    src = n.b().create<aten::ExpandOp>(n.loc(), type, src);
  return Values{src};
}

absl::StatusOr<Values> where(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value cond, n.tensor("condition"));
  ASSIGN_OR_RETURN(Value self, n.tensorOrScalar("self", type.getElementType()));
  ASSIGN_OR_RETURN(Value other, n.tensorOrScalar("other", type.getElementType()));
  return Values{pointwise(n, type, "where", {cond, self, other})};
}

absl::StatusOr<Values> maskedFill(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value mask, n.tensor("mask"));
  ASSIGN_OR_RETURN(Value value, n.tensorOrScalar("value", type.getElementType()));
  return Values{pointwise(n, type, "where", {mask, value, self})};
}

absl::StatusOr<Values> divMode(NodeImporter &n) {
  ASSIGN_OR_RETURN(std::string mode, n.stringAttr("rounding_mode", ""));
  if (mode.empty()) {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
    ASSIGN_OR_RETURN(Value lhs, n.tensorOrScalar("self", type.getElementType()));
    ASSIGN_OR_RETURN(Value rhs, n.tensorOrScalar("other", type.getElementType()));
    return Values{n.b().create<aten::DivOp>(n.loc(), type, lhs, rhs)};
  }
  if (mode != "trunc" && mode != "floor")
    return n.error(absl::StrCat("rounding_mode must be None, 'trunc' or "
                                "'floor', got '", mode, "'"));
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  Type element = type.getElementType();
  if (mode == "trunc" && (element.isF16() || element.isBF16())) {
    // Eager rounds the quotient to f16/bf16 before truncating it: 2.9995
    // becomes 3.0, then 3 (truncated in f32 it would be 2).
    ASSIGN_OR_RETURN(Value lhs, n.tensorOrScalar("self", element));
    ASSIGN_OR_RETURN(Value rhs, n.tensorOrScalar("other", element));
    Value quotient = n.b().create<aten::DivOp>(n.loc(), type, lhs, rhs);
    return Values{pointwise(n, type, "trunc", quotient)};
  }
  return pointwiseOp(n, mode == "trunc" ? "div_trunc" : "div_floor",
                     {"self", "other"});
}

/// rsub(self, other, alpha) = other - alpha * self.
absl::StatusOr<Values> rsub(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensorOrScalar("self", type.getElementType()));
  ASSIGN_OR_RETURN(Value other, n.tensorOrScalar("other", type.getElementType()));
  ASSIGN_OR_RETURN(double alpha, n.floatAttr("alpha", 1.0));
  return Values{n.b().create<aten::SubOp>(n.loc(), type, other, self,
                                          n.b().getF64FloatAttr(alpha))};
}

//===--------------------------------------------------------------------===//
// Reductions
//===--------------------------------------------------------------------===//

absl::StatusOr<std::vector<int64_t>> dimList(NodeImporter &n, Value self,
                                             const std::string &name = "dim") {
  int64_t rank = typeOf(self).getRank();
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.intsAttr(name, true));
  for (int64_t &dim : dims) {
    ASSIGN_OR_RETURN(dim, n.normalizeDim(dim, rank));
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  if (rank == 0)
    dims.clear();
  return dims;
}

/// One `Op` over self's `dim` list (keepdim), typed `type`.
template <typename Op>
absl::StatusOr<Value> reduction(NodeImporter &n, RankedTensorType type) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, dimList(n, self));
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  return n.b()
      .create<Op>(n.loc(), type, self, n.b().getDenseI64ArrayAttr(dims),
                  n.b().getBoolAttr(keepdim))
      .getResult();
}

template <typename Op>
absl::StatusOr<Values> reduceAt(NodeImporter &n, int result) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(result));
  ASSIGN_OR_RETURN(Value reduced, reduction<Op>(n, type));
  return Values{reduced};
}

template <typename Op> absl::StatusOr<Values> reduce(NodeImporter &n) {
  return reduceAt<Op>(n, 0);
}

/// any / all: a boolean reduction; over a uint8 tensor eager answers 0/1 in
/// uint8, which a copy of the boolean result gives.
template <typename Op> absl::StatusOr<Values> logicalReduce(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  if (type.getElementType().isInteger(1))
    return reduce<Op>(n);
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (typeOf(self).getElementType() != type.getElementType())
    return n.error("any/all answer booleans, or uint8 for a uint8 tensor");
  ASSIGN_OR_RETURN(Value reduced, reduction<Op>(n, type.clone(n.b().getI1Type())));
  return Values{pointwise(n, type, "copy", reduced)};
}

absl::StatusOr<Value> argReduce(NodeImporter &n, bool max, int result) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(result));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  IntegerAttr dimAttr;
  if (n.has("dim")) {
    ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
    ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
    dimAttr = n.b().getI64IntegerAttr(dim);
  }
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  return n.b()
      .create<aten::ArgReduceOp>(n.loc(), type, self, dimAttr,
                                 n.b().getBoolAttr(keepdim), n.b().getBoolAttr(max))
      .getResult();
}

/// max.dim / min.dim: (values, indices).
absl::StatusOr<Values> maxMinDim(NodeImporter &n, bool max) {
  ASSIGN_OR_RETURN(Values values, max ? reduce<aten::AmaxOp>(n)
                                      : reduce<aten::AminOp>(n));
  if (n.numResults() < 2)
    return values;
  ASSIGN_OR_RETURN(Value indices, argReduce(n, max, 1));
  return Values{values[0], indices};
}

absl::StatusOr<Values> variance(NodeImporter &n, bool std, bool withMean) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, dimList(n, self));
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  double correction = 1.0;
  if (n.has("correction")) {
    ASSIGN_OR_RETURN(correction, n.floatAttr("correction"));
  } else if (n.has("unbiased")) {
    ASSIGN_OR_RETURN(bool unbiased, n.boolAttr("unbiased"));
    correction = unbiased ? 1.0 : 0.0;
  }
  Values results{n.b().create<aten::VarOp>(
      n.loc(), type, self, n.b().getDenseI64ArrayAttr(dims),
      n.b().getF64FloatAttr(correction), n.b().getBoolAttr(keepdim),
      n.b().getBoolAttr(std))};
  if (withMean) {
    ASSIGN_OR_RETURN(RankedTensorType meanType, n.resultType(1));
    results.push_back(n.b().create<aten::MeanOp>(
        n.loc(), meanType, self, n.b().getDenseI64ArrayAttr(dims),
        n.b().getBoolAttr(keepdim)));
  }
  return results;
}

absl::StatusOr<Values> cumsum(NodeImporter &n, bool product) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, type.getRank()));
  return Values{n.b().create<aten::CumsumOp>(n.loc(), type, self,
                                             n.b().getI64IntegerAttr(dim),
                                             n.b().getBoolAttr(product))};
}

/// diagonal (and diagonal_copy): one aten.diagonal.
absl::StatusOr<Values> diagonal(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RankedTensorType in = typeOf(self);
  int64_t rank = in.getRank();
  if (rank < 2)
    return n.error("diagonal needs rank >= 2");
  if (!in.hasStaticShape())
    return n.unimplemented("diagonal of a tensor with symbolic sizes");
  ASSIGN_OR_RETURN(int64_t offset, n.intAttr("offset", 0));
  ASSIGN_OR_RETURN(int64_t raw1, n.intAttr("dim1", 0));
  ASSIGN_OR_RETURN(int64_t raw2, n.intAttr("dim2", 1));
  ASSIGN_OR_RETURN(int64_t d1, n.normalizeDim(raw1, rank));
  ASSIGN_OR_RETURN(int64_t d2, n.normalizeDim(raw2, rank));
  if (d1 == d2)
    return n.error("diagonal dims must differ");
  return Values{n.b().create<aten::DiagonalOp>(
      n.loc(), type, self, n.b().getI64IntegerAttr(offset),
      n.b().getI64IntegerAttr(d1), n.b().getI64IntegerAttr(d2))};
}

//===--------------------------------------------------------------------===//
// Slicing, concatenation, indexing
//===--------------------------------------------------------------------===//

/// A slice of `self` along `dim` from `start`, `length` elements, `step`.
absl::StatusOr<Value> sliceAlong(NodeImporter &n, Value self, int64_t dim,
                                 int64_t start, int64_t length, int64_t step) {
  RankedTensorType in = typeOf(self);
  if (in.getRank() == 0)
    return n.error("cannot slice a 0-d tensor");
  if (length < 0)
    return n.error(absl::StrCat("slice length ", length, " is negative"));
  if (length == 0) {
    if (!in.hasStaticShape())
      return n.unimplemented("an empty slice of a tensor with symbolic sizes");
    SmallVector<int64_t> shape(in.getShape());
    shape[dim] = 0;
    return emptyTensor(n.b(), n.loc(), in.clone(shape));
  }
  if (start < 0 || step < 1 ||
      static_cast<__int128>(start) + static_cast<__int128>(length - 1) * step >=
          in.getDimSize(dim))
    return n.error(absl::StrCat("slice start ", start, " step ", step,
                                " length ", length, " is out of range"));
  if (start == 0 && step == 1 && length == in.getDimSize(dim))
    return self;
  SmallVector<int64_t> offsets(in.getRank(), 0), strides(in.getRank(), 1);
  SmallVector<int64_t> shape(in.getShape());
  offsets[dim] = start;
  strides[dim] = step;
  shape[dim] = length;
  return n.b()
      .create<aten::SliceOp>(n.loc(), in.clone(shape), self,
                             n.b().getDenseI64ArrayAttr(offsets),
                             n.b().getDenseI64ArrayAttr(strides))
      .getResult();
}

absl::StatusOr<Values> slice(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  int64_t rank = typeOf(self).getRank();
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, rank));
  if (rank == 0)
    return n.error("cannot slice a 0-d tensor");
  if (typeOf(self).isDynamicDim(dim))
    return n.unimplemented("slice along a dimension of symbolic size");
  int64_t extent = typeOf(self).getDimSize(dim);
  ASSIGN_OR_RETURN(int64_t start, n.intAttr("start", 0));
  ASSIGN_OR_RETURN(int64_t step, n.intAttr("step", 1));
  if (step < 1)
    return n.error(absl::StrCat("slice step must be positive, got ", step));
  if (start < 0)
    start += extent;
  start = std::clamp<int64_t>(start, 0, extent);
  int64_t length = type.getDimSize(dim);
  ASSIGN_OR_RETURN(Value result, sliceAlong(n, self, dim, start, length, step));
  if (typeOf(result) != type)
    return n.error("declared result type does not match the slice");
  return Values{result};
}

absl::StatusOr<Values> narrow(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  ASSIGN_OR_RETURN(int64_t start, n.intAttr("start"));
  ASSIGN_OR_RETURN(int64_t length, n.intAttr("length"));
  if (typeOf(self).getRank() == 0)
    return n.error("cannot narrow a 0-d tensor");
  if (start < 0)
    start += typeOf(self).getDimSize(dim);
  ASSIGN_OR_RETURN(Value result, sliceAlong(n, self, dim, start, length, 1));
  return Values{result};
}

/// resize(self, size), the functional form of resize_ and resize_as_: the
/// first numel(size) of self's elements in row-major order, viewed with
/// `size`. Past self's elements, where eager's values are uninitialised
/// memory, Kiln writes zeros. (A memory format other than contiguous changes
/// which elements land where; the client refuses it, as Kiln's graphs
/// carry no memory formats.) Its shapes are static: the importer refuses
/// symbolic sizes for it before it runs, and negative extents in the
/// declared result, which `size` must equal.
absl::StatusOr<Values> resize(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> size, n.intsAttr("size"));
  if (ArrayRef<int64_t>(size) != type.getShape())
    return n.error(absl::StrCat("resize to [", absl::StrJoin(size, ", "),
                                "] but the result is declared [",
                                absl::StrJoin(type.getShape(), ", "), "]"));
  if (typeOf(self).getElementType() != type.getElementType())
    return n.error("resize keeps self's dtype");
  const int64_t have = typeOf(self).getNumElements();
  const int64_t want = type.getNumElements();
  Value flat = viewValue(n, self, {have});
  if (want < have) {
    ASSIGN_OR_RETURN(flat, sliceAlong(n, flat, 0, 0, want, 1));
  } else if (want > have) {
    flat = n.b()
               .create<aten::PadOp>(n.loc(), type.clone({want}), flat,
                                    n.b().getDenseI64ArrayAttr({0}),
                                    n.b().getDenseI64ArrayAttr({want - have}),
                                    n.b().getF64FloatAttr(0.0))
               .getResult();
  }
  return Values{viewValue(n, flat, type.getShape())};
}

absl::StatusOr<Values> select(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  ASSIGN_OR_RETURN(int64_t index, n.intAttr("index"));
  if (typeOf(self).getRank() == 0)
    return n.error("cannot select from a 0-d tensor");
  if (typeOf(self).isDynamicDim(dim))
    return n.unimplemented("select along a dimension of symbolic size");
  int64_t extent = typeOf(self).getDimSize(dim);
  if (index < -extent || index >= extent)
    return n.error(absl::StrCat("index ", index, " is out of range for extent ",
                                extent));
  if (index < 0)
    index += extent;
  ASSIGN_OR_RETURN(Value one, sliceAlong(n, self, dim, index, 1, 1));
  ASSIGN_OR_RETURN(SmallVector<Value> sizes, n.resultSizes());
  return Values{n.b().create<aten::ViewOp>(n.loc(), type, one, sizes)};
}

/// The most pieces split and unbind make (each is an op and a result).
constexpr int64_t kMaxSplitPieces = 1 << 16;

/// split_with_sizes, split.Tensor, unbind, chunk: consecutive slices.
absl::StatusOr<Values> splitInto(NodeImporter &n, Value self, int64_t dim,
                                 const std::vector<int64_t> &sizes, bool squeeze) {
  Values results;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSIGN_OR_RETURN(Value part, sliceAlong(n, self, dim, start, sizes[i], 1));
    start += sizes[i];
    if (static_cast<int>(i) < n.numResults()) {
      ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(i));
      if (squeeze)
        part = n.b().create<aten::ViewOp>(n.loc(), type, part);
    }
    results.push_back(part);
  }
  if (start != typeOf(self).getDimSize(dim))
    return n.error("split sizes do not add up to the dimension's extent");
  return results;
}

absl::StatusOr<Values> split(NodeImporter &n, bool withSizes) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  if (typeOf(self).getRank() == 0)
    return n.error("cannot split a 0-d tensor");
  int64_t extent = typeOf(self).getDimSize(dim);
  std::vector<int64_t> sizes;
  if (withSizes) {
    ASSIGN_OR_RETURN(sizes, n.intsAttr("split_sizes"));
  } else {
    ASSIGN_OR_RETURN(int64_t size, n.intAttr("split_size"));
    if (size < 1)
      return n.error("split_size must be positive");
    if ((extent - 1) / size + 1 > kMaxSplitPieces)
      return n.unimplemented(absl::StrCat("split into more than ",
                                          kMaxSplitPieces, " pieces"));
    for (int64_t at = 0; at < extent; at += size)
      sizes.push_back(std::min(size, extent - at));
  }
  return splitInto(n, self, dim, sizes, false);
}

absl::StatusOr<Values> unbind(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  if (typeOf(self).getRank() == 0)
    return n.error("cannot unbind a 0-d tensor");
  if (typeOf(self).getDimSize(dim) > kMaxSplitPieces)
    return n.unimplemented(absl::StrCat("unbind into more than ",
                                        kMaxSplitPieces, " pieces"));
  std::vector<int64_t> sizes(typeOf(self).getDimSize(dim), 1);
  return splitInto(n, self, dim, sizes, true);
}

absl::StatusOr<Values> cat(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(std::vector<Value> inputs, n.tensors("tensors"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, type.getRank()));
  if (inputs.size() == 1 && typeOf(inputs[0]) == type)
    return Values{inputs[0]};
  return Values{n.b().create<aten::CatOp>(n.loc(), type, inputs,
                                          n.b().getI64IntegerAttr(dim))};
}

absl::StatusOr<Values> stack(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(std::vector<Value> inputs, n.tensors("tensors"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, type.getRank()));
  Values expanded;
  for (Value input : inputs) {
    SmallVector<int64_t> shape(typeOf(input).getShape());
    if (dim > static_cast<int64_t>(shape.size()))
      return n.error("stack dim is out of range");
    shape.insert(shape.begin() + dim, 1);
    expanded.push_back(n.b().create<aten::ViewOp>(
        n.loc(), typeOf(input).clone(shape), input));
  }
  return Values{n.b().create<aten::CatOp>(n.loc(), type, expanded,
                                          n.b().getI64IntegerAttr(dim))};
}

absl::StatusOr<Values> indexSelect(NodeImporter &n, const std::string &selfName,
                                   const std::string &indexName, bool hasDim) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor(selfName));
  int64_t dim = 0;
  if (hasDim) {
    ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
    ASSIGN_OR_RETURN(dim, n.normalizeDim(raw, typeOf(self).getRank()));
  }
  ASSIGN_OR_RETURN(Value index, n.tensor(indexName));
  // A symbolic size may reach the index (a data-dependent count of
  // positions) but not the tensor it reads.
  if (!typeOf(self).hasStaticShape())
    return n.unimplemented(absl::StrCat(selfName, " has a symbolic size; Kiln "
                                        "selects from statically shaped tensors only"));
  Type element = typeOf(index).getElementType();
  if (!isa<IntegerType>(element) || element.isInteger(1))
    return n.unimplemented("only integer index tensors are supported (no "
                           "boolean masks)");
  if (typeOf(self).getRank() == 0) {
    // As eager: the one element, for the one index entry (0 or -1).
    if (!typeOf(index).hasStaticShape())
      return n.unimplemented("an index of symbolic size into a 0-d tensor");
    int64_t count = typeOf(index).getNumElements();
    if (typeOf(index).getRank() > 1 || type.getNumElements() != count)
      return n.error("a 0-d tensor is indexed by a vector of one entry per "
                     "result element");
    auto picked = n.b().create<aten::IndexSelectOp>(
        n.loc(), type.clone({count}), viewValue(n, self, {1}),
        viewValue(n, index, {count}), n.b().getI64IntegerAttr(0));
    return Values{viewValue(n, picked, type.getShape())};
  }
  return Values{n.b().create<aten::IndexSelectOp>(n.loc(), type, self, index,
                                                  n.b().getI64IntegerAttr(dim))};
}

/// scatter.src/value, scatter.reduce/value_reduce ("named": reduce 'add' or
/// 'multiply'), scatter_add, scatter_reduce.two ("arg"): one
/// aten.scatter_reduce, which kiln-decompose-aten takes apart.
absl::StatusOr<Values> scatter(NodeImporter &n, std::string reduce) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value index, n.tensor("index"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, type.getRank()));
  bool includeSelf = true;
  if (reduce == "named") {
    ASSIGN_OR_RETURN(std::string name, n.stringAttr("reduce"));
    if (name == "add")
      reduce = "sum";
    else if (name == "multiply")
      reduce = "prod";
    else
      return n.error(absl::StrCat("scatter reduce must be 'add' or 'multiply', "
                                  "not '", name, "'"));
  } else if (reduce == "arg") {
    ASSIGN_OR_RETURN(reduce, n.stringAttr("reduce"));
    ASSIGN_OR_RETURN(includeSelf, n.boolAttr("include_self", true));
    if (reduce != "sum" && reduce != "prod" && reduce != "mean" &&
        reduce != "amax" && reduce != "amin")
      return n.unimplemented(absl::StrCat("scatter_reduce '", reduce, "'"));
  }
  Value src;
  if (n.isTensor("src")) {
    ASSIGN_OR_RETURN(src, n.tensor("src"));
  } else {
    ASSIGN_OR_RETURN(double value, n.floatAttr("value"));
    src = n.constant(type.getElementType(), value, typeOf(index).getShape());
  }
  auto op = n.b().create<aten::ScatterReduceOp>(
      n.loc(), type, self, index, src, n.b().getI64IntegerAttr(dim),
      n.b().getStringAttr(reduce), n.b().getBoolAttr(includeSelf),
      n.resultIsUnsigned() && reduce == "mean" ? n.b().getUnitAttr() : UnitAttr());
  return Values{op.getResult()};
}

/// index_reduce(self, dim, index, source, reduce, include_self): one
/// aten.index_reduce. Indices out of [0, size) are eager's error. A 0-d
/// self (and source) reduce as one element along dim 0, as eager's do.
absl::StatusOr<Values> indexReduce(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value index, n.tensor("index"));
  ASSIGN_OR_RETURN(Value source, n.tensor("source"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, type.getRank()));
  if (type.getRank() == 0) {
    if (typeOf(source).getRank() > 1 || typeOf(index).getNumElements() > 1)
      return n.error("index_reduce into a 0-d self takes at most one index and a 0-d or "
                     "1-element source");
    RankedTensorType one = type.clone({1});
    self = viewValue(n, self, {1});
    source = viewValue(n, source, {typeOf(index).getNumElements()});
    index = viewValue(n, index, {typeOf(index).getNumElements()});
    type = one;
  }
  ASSIGN_OR_RETURN(std::string reduce, n.stringAttr("reduce"));
  if (reduce != "prod" && reduce != "mean" && reduce != "amax" && reduce != "amin")
    return n.error(absl::StrCat("index_reduce's reduce must be prod, mean, amax or amin, not '",
                                reduce, "'"));
  ASSIGN_OR_RETURN(bool includeSelf, n.boolAttr("include_self", true));
  auto op = n.b().create<aten::IndexReduceOp>(
      n.loc(), type, self, index, source, n.b().getI64IntegerAttr(dim),
      n.b().getStringAttr(reduce), n.b().getBoolAttr(includeSelf),
      n.resultIsUnsigned() && reduce == "mean" ? n.b().getUnitAttr() : UnitAttr());
  ASSIGN_OR_RETURN(RankedTensorType declared, n.resultType());
  if (declared.getRank() == 0)
    return Values{viewValue(n, op.getResult(), {})};
  return Values{op.getResult()};
}

/// put(self, index, source, accumulate): one aten.put.
absl::StatusOr<Values> put(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value index, n.tensor("index"));
  ASSIGN_OR_RETURN(Value source, n.tensor("source"));
  ASSIGN_OR_RETURN(bool accumulate, n.boolAttr("accumulate", false));
  int64_t indices = typeOf(index).getNumElements(), values = typeOf(source).getNumElements();
  if (indices != values)
    return n.error(absl::StrCat("put's index has ", indices, " elements and source ", values,
                                ": they must match"));
  return Values{n.b().create<aten::PutOp>(n.loc(), type, self, index, source,
                                          n.b().getBoolAttr(accumulate))};
}

} // namespace

OpHandler pointwiseHandler(StringRef fn, std::vector<std::string> names) {
  std::string name = fn.str();
  return [name, names](NodeImporter &n) { return pointwiseOp(n, name, names); };
}

absl::StatusOr<Values> sortAlong(NodeImporter &n, Value self, int64_t dim,
                                 bool descending, std::optional<int64_t> k) {
  RankedTensorType in = typeOf(self);
  auto dimAttr = n.b().getI64IntegerAttr(dim);
  if (!k) {
    auto sorted = n.b().create<aten::SortOp>(
        n.loc(), TypeRange{in, in.clone(n.b().getI64Type())}, self, dimAttr,
        n.b().getBoolAttr(descending));
    return Values{sorted.getValues(), sorted.getIndices()};
  }
  SmallVector<int64_t> shape(in.getShape());
  if (!shape.empty() && *k >= 0)
    shape[dim] = *k;
  auto top = n.b().create<aten::TopkOp>(
      n.loc(), TypeRange{in.clone(shape), in.clone(shape, n.b().getI64Type())},
      self, n.b().getI64IntegerAttr(*k), dimAttr, n.b().getBoolAttr(descending));
  return Values{top.getValues(), top.getIndices()};
}

namespace {

absl::StatusOr<Values> sort(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", -1));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  ASSIGN_OR_RETURN(bool descending, n.boolAttr("descending", false));
  return sortAlong(n, self, dim, descending, std::nullopt);
}

absl::StatusOr<Values> topk(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t k, n.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", -1));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  ASSIGN_OR_RETURN(bool largest, n.boolAttr("largest", true));
  return sortAlong(n, self, dim, largest, k);
}

/// kthvalue: one aten.kthvalue (the k-th smallest along `dim`, NaN the
/// largest, from a stable sort; among equal values eager's selection may
/// return the index of any of them).
absl::StatusOr<Values> kthvalue(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType valuesType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType indicesType, n.resultType(1));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t k, n.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", -1));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  auto op = n.b().create<aten::KthvalueOp>(
      n.loc(), TypeRange{valuesType, indicesType}, self,
      n.b().getI64IntegerAttr(k), n.b().getI64IntegerAttr(dim),
      n.b().getBoolAttr(keepdim));
  return Values{op.getValues(), op.getIndices()};
}

/// A statistic of each row along dim (median.dim, nanmedian.dim, mode):
/// one `StatisticOp` made by `build` from (values and indices types, self,
/// dim, keepdim); an empty dim is refused, as eager refuses it.
template <typename Build>
absl::StatusOr<Values> rowStatistic(NodeImporter &n, const char *what,
                                    std::optional<int64_t> defaultDim, Build build) {
  ASSIGN_OR_RETURN(RankedTensorType valuesType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType indicesType, n.resultType(1));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", defaultDim));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  if (typeOf(self).getRank() > 0 && typeOf(self).getDimSize(dim) == 0)
    return n.error(absl::StrCat("the ", what, " along dim ", raw, " is undefined: it is empty"));
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  auto op = build(TypeRange{valuesType, indicesType}, self, n.b().getI64IntegerAttr(dim),
                  n.b().getBoolAttr(keepdim));
  return Values{op.getValues(), op.getIndices()};
}

/// median.dim/nanmedian.dim: one aten.median (`ignoreNaN` for nanmedian).
absl::StatusOr<Values> medianAlong(NodeImporter &n, bool ignoreNaN) {
  return rowStatistic(n, "median", std::nullopt,
                      [&](TypeRange types, Value self, IntegerAttr dim, BoolAttr keepdim) {
                        return n.b().create<aten::MedianOp>(n.loc(), types, self, dim, keepdim,
                                                            n.b().getBoolAttr(ignoreNaN));
                      });
}

/// mode(self, dim=-1, keepdim=False): one aten.mode.
absl::StatusOr<Values> modeAlong(NodeImporter &n) {
  return rowStatistic(n, "mode", -1,
                      [&](TypeRange types, Value self, IntegerAttr dim, BoolAttr keepdim) {
                        return n.b().create<aten::ModeOp>(n.loc(), types, self, dim, keepdim);
                      });
}

/// median()/nanmedian() of every element: the median along the flattened
/// tensor (EmptyTensors.cpp gives an empty one's NaN).
absl::StatusOr<Values> medianOfAll(NodeImporter &n, bool ignoreNaN) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  int64_t count = typeOf(self).getNumElements();
  if (count == 0)
    return n.error("the median of no elements is NaN, and this result type has no NaN");
  Value flat = n.b().create<aten::ViewOp>(n.loc(), typeOf(self).clone({count}), self);
  auto op = n.b().create<aten::MedianOp>(
      n.loc(), TypeRange{type, type.clone(n.b().getI64Type())}, flat,
      n.b().getI64IntegerAttr(0), n.b().getBoolAttr(false), n.b().getBoolAttr(ignoreNaN));
  return Values{op.getValues()};
}

absl::StatusOr<Values> sliceScatter(NodeImporter &n, bool select) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value src, n.tensor("src"));
  int64_t rank = typeOf(self).getRank();
  if (rank == 0)
    return n.error("cannot scatter into a 0-d tensor");
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, rank));
  int64_t extent = typeOf(self).getDimSize(dim);
  int64_t start = 0, step = 1;
  if (select) {
    ASSIGN_OR_RETURN(start, n.intAttr("index"));
    SmallVector<int64_t> shape(typeOf(self).getShape());
    shape[dim] = 1;
    if (typeOf(src).getNumElements() != typeOf(self).clone(shape).getNumElements())
      return n.error("select_scatter source has the wrong size");
    src = n.b().create<aten::ViewOp>(n.loc(), typeOf(src).clone(shape), src);
  } else {
    ASSIGN_OR_RETURN(start, n.intAttr("start", 0));
    ASSIGN_OR_RETURN(step, n.intAttr("step", 1));
  }
  if (start < 0)
    start += extent;
  if (step < 1 || start < 0 || start >= extent)
    return n.error("scatter start/step out of range");
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
  offsets[dim] = start;
  strides[dim] = step;
  return Values{n.b().create<aten::InsertSliceOp>(
      n.loc(), type, self, src, n.b().getDenseI64ArrayAttr(offsets),
      n.b().getDenseI64ArrayAttr(strides))};
}

absl::StatusOr<Values> constantPad(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> pad, n.intsAttr("pad"));
  ASSIGN_OR_RETURN(double value, n.floatAttr("value", 0.0));
  int64_t rank = typeOf(self).getRank();
  if (pad.size() % 2 != 0 || static_cast<int64_t>(pad.size()) > 2 * rank)
    return n.error("pad needs an even length of at most 2 * rank");
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    // Negative amounts crop (aten.pad's verifier names a crop past the
    // tensor).
    low[rank - 1 - i] = pad[2 * i];
    high[rank - 1 - i] = pad[2 * i + 1];
  }
  return Values{n.b().create<aten::PadOp>(n.loc(), type, self,
                                          n.b().getDenseI64ArrayAttr(low),
                                          n.b().getDenseI64ArrayAttr(high),
                                          n.b().getF64FloatAttr(value))};
}

/// repeat: one aten.repeat (kiln-decompose-aten tiles it with a broadcast).
absl::StatusOr<Values> repeat(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> repeats, n.intsAttr("repeats"));
  RankedTensorType in = typeOf(self);
  if (repeats.size() < static_cast<size_t>(in.getRank()))
    return n.error("repeats needs at least self's rank entries");
  size_t lead = repeats.size() - in.getRank();
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < repeats.size(); ++i) {
    // A count of 0 empties the result, which never reaches a handler.
    if (repeats[i] < 0)
      return n.error(absl::StrCat("repeat count ", repeats[i], " is negative"));
    int64_t size = i < lead ? 1 : in.getDimSize(i - lead), product = 0;
    if (llvm::MulOverflow(repeats[i], size, product))
      return n.error("repeat counts overflow the result's size");
    shape.push_back(product);
  }
  if (ArrayRef<int64_t>(shape) != type.getShape() ||
      type.getElementType() != in.getElementType())
    return n.error("the result's type is not self repeated");
  return Values{n.b().create<aten::RepeatOp>(n.loc(), type, self,
                                             n.b().getDenseI64ArrayAttr(repeats))};
}

absl::StatusOr<Values> logSoftmax(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(bool halfToFloat, n.boolAttr("half_to_float", false));
  if (halfToFloat)
    return n.unimplemented("half_to_float=True is not supported");
  ASSIGN_OR_RETURN(int64_t rawDim, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(rawDim, type.getRank()));
  if (typeOf(self) != type)
    return n.error("log_softmax output must have the input's type");
  return Values{n.b().create<aten::LogSoftmaxOp>(n.loc(), type, self,
                                                 n.b().getI64IntegerAttr(dim))};
}

/// flip: one aten.flip.
absl::StatusOr<Values> flip(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, dimList(n, self, "dims"));
  if (!typeOf(self).hasStaticShape())
    return n.unimplemented("flip of a tensor with symbolic sizes");
  if (typeOf(self) != type)
    return n.error("flip cannot change the type");
  return Values{n.b().create<aten::FlipOp>(n.loc(), self,
                                           n.b().getDenseI64ArrayAttr(dims))};
}

absl::StatusOr<Values> gather(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value index, n.tensor("index"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, typeOf(self).getRank()));
  if (typeOf(self).getRank() == 0 && typeOf(index).getRank() <= 1) {
    // A 0-d self is the 1-element 1-d one; the result has index's shape.
    int64_t count = typeOf(index).getNumElements();
    if (type.getNumElements() != count)
      return n.error("the result must have index's shape");
    auto picked = n.b().create<aten::GatherOp>(
        n.loc(), type.clone({count}), viewValue(n, self, {1}),
        viewValue(n, index, {count}), n.b().getI64IntegerAttr(0));
    return Values{viewValue(n, picked, type.getShape())};
  }
  return Values{n.b().create<aten::GatherOp>(n.loc(), type, self, index,
                                             n.b().getI64IntegerAttr(dim))};
}

//===--------------------------------------------------------------------===//
// Creation
//===--------------------------------------------------------------------===//

/// full, zeros, ones, empty, scalar_tensor, *_like, new_*: a splat constant
/// of the result type (`empty` reads as zeros).
OpHandler fill(std::optional<double> value, const char *valueName = nullptr) {
  return [value, valueName](NodeImporter &n) -> absl::StatusOr<Values> {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
    double v = value.value_or(0.0);
    if (valueName && n.isBoolScalar(valueName)) {
      ASSIGN_OR_RETURN(bool b, n.boolAttr(valueName));
      v = b ? 1.0 : 0.0;
    } else if (valueName) {
      ASSIGN_OR_RETURN(v, n.floatAttr(valueName));
    }
    if (!type.hasStaticShape()) {
      // A symbolic size: the value expanded to it.
      ASSIGN_OR_RETURN(SmallVector<Value> sizes, n.resultSizes());
      return Values{n.b().create<aten::ExpandOp>(
          n.loc(), type, n.constant(type.getElementType(), v), sizes)};
    }
    return Values{n.constant(type.getElementType(), v, type.getShape())};
  };
}

/// prims.collapse(a, start, end): dims start..end (inclusive) merged into
/// one, a view.
absl::StatusOr<Values> collapse(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value a, n.tensor("a"));
  ASSIGN_OR_RETURN(int64_t start, n.intAttr("start"));
  ASSIGN_OR_RETURN(int64_t end, n.intAttr("end"));
  ArrayRef<int64_t> in = typeOf(a).getShape();
  auto rank = static_cast<int64_t>(in.size());
  bool valid = rank == 0 ? start == 0 && end == 0
                         : 0 <= start && start <= end && end < rank;
  if (!valid)
    return n.error(absl::StrCat("collapse's dims [", start, ", ", end,
                                "] are not dims of a rank-", rank, " input"));
  SmallVector<int64_t> shape(in.take_front(rank ? start : 0));
  if (rank) {
    shape.push_back(ShapedType::getNumElements(in.slice(start, end - start + 1)));
    shape.append(in.begin() + end + 1, in.end());
  }
  if (ArrayRef<int64_t>(shape) != type.getShape())
    return n.error("the declared result shape is not the collapsed input's");
  return Values{viewValue(n, a, shape)};
}

absl::StatusOr<Values> arange(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(double start, n.floatAttr("start", 0.0));
  ASSIGN_OR_RETURN(double step, n.floatAttr("step", 1.0));
  if (step == 0.0 || !std::isfinite(step) || !std::isfinite(start))
    return n.error("arange needs a finite start and a finite, non-zero step");
  if (type.getRank() != 1)
    return n.error("arange produces a 1-D tensor");
  // Eager computes an integer arange in int64 from start and step cut to
  // integers (the length from the numbers as given): arange(0, 64, 0.5)
  // in int32 is 128 zeros, arange(-0.9, 2.1, 2.0) is [0, 2].
  if (isa<IntegerType>(type.getElementType())) {
    start = std::trunc(start);
    step = std::trunc(step);
  }
  return Values{n.b().create<aten::ArangeOp>(n.loc(), type,
                                             n.b().getF64FloatAttr(start),
                                             n.b().getF64FloatAttr(step))};
}

absl::StatusOr<Values> eye(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  if (type.getRank() != 2)
    return n.error("eye produces a 2-D tensor");
  if (type.getNumElements() > (1 << 22))
    return n.unimplemented("eye larger than 4M elements");
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  Type element = type.getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double v = i == j ? 1.0 : 0.0;
      if (auto f = dyn_cast<FloatType>(element))
        values.push_back(n.b().getFloatAttr(f, v));
      else
        values.push_back(n.b().getIntegerAttr(element, static_cast<int64_t>(v)));
    }
  return Values{n.b().create<aten::ConstantOp>(
      n.loc(), type, DenseElementsAttr::get(type, values))};
}

} // namespace

void addTensorHandlers(OpHandlerTable &t) {
  // Unary math: one pointwise-table row each.
  for (const char *fn :
       {"sqrt", "rsqrt", "log", "log2", "log10", "log1p", "exp2", "expm1", "sin",
        "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
        "atanh", "erf", "reciprocal", "silu", "hardsigmoid", "hardswish", "mish",
        "abs", "floor", "ceil", "trunc", "sign", "bitwise_not", "logical_not",
        "isnan", "isinf", "signbit", "angle"})
    t[absl::StrCat("aten.", fn, ".default")] = pointwiseHandler(fn);
  t["aten.round.default"] = pointwiseHandler("round");
  t["aten.round.decimals"] = [](NodeImporter &n) {
    return withScalars(n, "round_decimals", {{"decimals", 0.0}});
  };
  t["aten.fix.default"] = pointwiseHandler("trunc");
  // Binary math, Tensor and Scalar overloads.
  for (const char *fn : {"maximum", "minimum", "atan2", "hypot", "fmax", "fmin"})
    t[absl::StrCat("aten.", fn, ".default")] = pointwiseHandler(fn, {"self", "other"});
  t["aten.copysign.Tensor"] = pointwiseHandler("copysign", {"self", "other"});
  t["aten.nextafter.default"] = pointwiseHandler("nextafter", {"self", "other"});
  t["aten.copysign.Scalar"] = pointwiseHandler("copysign", {"self", "other"});
  for (const char *fn : {"remainder", "fmod", "bitwise_and", "bitwise_or",
                         "bitwise_xor", "logical_and", "logical_or",
                         "logical_xor"}) {
    t[absl::StrCat("aten.", fn, ".Tensor")] = pointwiseHandler(fn, {"self", "other"});
    t[absl::StrCat("aten.", fn, ".Scalar")] = pointwiseHandler(fn, {"self", "other"});
  }
  for (const char *fn : {"logical_and", "logical_or", "logical_xor"})
    t[absl::StrCat("aten.", fn, ".default")] = pointwiseHandler(fn, {"self", "other"});
  for (auto [fn, dunder] : {std::pair{"bitwise_left_shift", "__lshift__"},
                            std::pair{"bitwise_right_shift", "__rshift__"}}) {
    for (const char *overload : {"Tensor", "Tensor_Scalar", "Scalar_Tensor"})
      t[absl::StrCat("aten.", fn, ".", overload)] = pointwiseHandler(fn, {"self", "other"});
    for (const char *overload : {"Tensor", "Scalar"})
      t[absl::StrCat("aten.", dunder, ".", overload)] = pointwiseHandler(fn, {"self", "other"});
  }
  t["aten.pow.Tensor_Tensor"] = pointwiseHandler("pow", {"self", "exponent"});
  t["aten.pow.Tensor_Scalar"] = pointwiseHandler("pow", {"self", "exponent"});
  t["aten.pow.Scalar"] = pointwiseHandler("pow", {"self", "exponent"});
  t["aten.floor_divide.default"] = pointwiseHandler("div_floor", {"self", "other"});
  t["aten.div.Tensor_mode"] = divMode;
  t["aten.div.Scalar_mode"] = divMode;
  t["aten.rsub.Scalar"] = rsub;
  t["aten.rsub.Tensor"] = rsub;
  // Comparisons: bool results, compared in the promoted operand type.
  for (const char *fn : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    t[absl::StrCat("aten.", fn, ".Tensor")] = cmp(fn);
    t[absl::StrCat("aten.", fn, ".Scalar")] = cmp(fn);
  }
  // Clamps and activations with number arguments.
  t["aten.clamp.default"] = [](NodeImporter &n) {
    return clampWith(n, "min", "max", {}, {});
  };
  t["aten.clamp_min.default"] = [](NodeImporter &n) {
    return clampWith(n, "min", "", {}, {});
  };
  t["aten.clamp_max.default"] = [](NodeImporter &n) {
    return clampWith(n, "", "max", {}, {});
  };
  t["aten.clamp.Tensor"] = clampTensor;
  t["aten.hardtanh.default"] = [](NodeImporter &n) {
    return clampWith(n, "min_val", "max_val", -1.0, 1.0);
  };
  t["aten.relu6.default"] = [](NodeImporter &n) -> absl::StatusOr<Values> {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
    ASSIGN_OR_RETURN(Value self, n.tensor("self"));
    return Values{pointwise(n, type, "clamp", self, {0.0, 6.0})};
  };
  t["aten.leaky_relu.default"] = [](NodeImporter &n) {
    return withScalars(n, "leaky_relu", {{"negative_slope", 0.01}});
  };
  t["aten.softplus.default"] = [](NodeImporter &n) {
    return withScalars(n, "softplus", {{"beta", 1.0}, {"threshold", 20.0}});
  };
  t["aten.elu.default"] = [](NodeImporter &n) {
    return withScalars(n, "elu",
                       {{"alpha", 1.0}, {"scale", 1.0}, {"input_scale", 1.0}});
  };
  // Selection and conversion.
  t["aten.copy.default"] = copyInto;
  t["aten.where.self"] = where;
  t["aten.where.ScalarSelf"] = where;
  t["aten.where.ScalarOther"] = where;
  t["aten.where.Scalar"] = where;
  t["aten.masked_fill.Scalar"] = maskedFill;
  t["aten.masked_fill.Tensor"] = maskedFill;
  for (const char *name :
       {"aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout",
        "aten._to_dim_order_copy.default", "prims.convert_element_type.default",
        "aten.type_as.default"})
    t[name] = convert;
  // Reductions.
  t["aten.prod.dim_int"] = reduce<aten::ProdOp>;
  t["aten.prod.default"] = reduce<aten::ProdOp>;
  t["aten.amax.default"] = reduce<aten::AmaxOp>;
  t["aten.amin.default"] = reduce<aten::AminOp>;
  t["aten.max.default"] = reduce<aten::AmaxOp>;
  t["aten.min.default"] = reduce<aten::AminOp>;
  t["aten.max.dim"] = [](NodeImporter &n) { return maxMinDim(n, true); };
  t["aten.min.dim"] = [](NodeImporter &n) { return maxMinDim(n, false); };
  for (const char *overload : {"dim", "dims", "default"}) {
    t[absl::StrCat("aten.any.", overload)] = logicalReduce<aten::AnyOp>;
    t[absl::StrCat("aten.all.", overload)] = logicalReduce<aten::AllOp>;
  }
  t["aten.argmax.default"] = [](NodeImporter &n) -> absl::StatusOr<Values> {
    ASSIGN_OR_RETURN(Value v, argReduce(n, true, 0));
    return Values{v};
  };
  t["aten.argmin.default"] = [](NodeImporter &n) -> absl::StatusOr<Values> {
    ASSIGN_OR_RETURN(Value v, argReduce(n, false, 0));
    return Values{v};
  };
  t["aten.var.correction"] = [](NodeImporter &n) { return variance(n, false, false); };
  t["aten.var.dim"] = [](NodeImporter &n) { return variance(n, false, false); };
  t["aten.std.correction"] = [](NodeImporter &n) { return variance(n, true, false); };
  t["aten.std.dim"] = [](NodeImporter &n) { return variance(n, true, false); };
  t["aten.var_mean.correction"] = [](NodeImporter &n) {
    return variance(n, false, true);
  };
  t["aten.cumsum.default"] = [](NodeImporter &n) { return cumsum(n, false); };
  t["aten.cumprod.default"] = [](NodeImporter &n) { return cumsum(n, true); };
  t["aten.diagonal.default"] = diagonal;
  t["aten.diagonal_copy.default"] = diagonal;
  // Data movement.
  t["aten.slice.Tensor"] = slice;
  t["aten.select.int"] = select;
  t["aten.narrow.default"] = narrow;
  t["aten.resize.default"] = resize;
  t["aten.split_with_sizes.default"] = [](NodeImporter &n) { return split(n, true); };
  t["aten.split.Tensor"] = [](NodeImporter &n) { return split(n, false); };
  t["aten.unbind.int"] = unbind;
  t["aten.cat.default"] = cat;
  t["aten.concat.default"] = cat;
  t["aten.stack.default"] = stack;
  t["aten.flatten.using_ints"] = t["aten.view.default"];
  t["aten.view.dtype"] = viewAsType;
  t["aten.unflatten.int"] = t["aten.view.default"];
  t["prims.collapse.default"] = collapse;
  t["aten.index_select.default"] = [](NodeImporter &n) {
    return indexSelect(n, "self", "index", true);
  };
  t["aten.embedding.default"] = [](NodeImporter &n) {
    return indexSelect(n, "weight", "indices", false);
  };
  t["aten.sort.default"] = sort;
  t["aten.kthvalue.default"] = kthvalue;
  t["aten.median.dim"] = [](NodeImporter &n) { return medianAlong(n, false); };
  t["aten.mode.default"] = modeAlong;
  t["aten.nanmedian.dim"] = [](NodeImporter &n) { return medianAlong(n, true); };
  t["aten.median.default"] = [](NodeImporter &n) { return medianOfAll(n, false); };
  t["aten.nanmedian.default"] = [](NodeImporter &n) { return medianOfAll(n, true); };
  t["aten.sort.stable"] = sort;
  t["aten.topk.default"] = topk;
  t["aten.scatter.src"] = [](NodeImporter &n) { return scatter(n, "none"); };
  t["aten.scatter.value"] = [](NodeImporter &n) { return scatter(n, "none"); };
  t["aten.scatter.reduce"] = [](NodeImporter &n) { return scatter(n, "named"); };
  t["aten.scatter.value_reduce"] = [](NodeImporter &n) {
    return scatter(n, "named");
  };
  t["aten.scatter_add.default"] = [](NodeImporter &n) { return scatter(n, "sum"); };
  t["aten.scatter_reduce.two"] = [](NodeImporter &n) { return scatter(n, "arg"); };
  t["aten.index_reduce.default"] = indexReduce;
  t["aten.put.default"] = put;
  t["aten.slice_scatter.default"] = [](NodeImporter &n) {
    return sliceScatter(n, false);
  };
  t["aten.select_scatter.default"] = [](NodeImporter &n) {
    return sliceScatter(n, true);
  };
  t["aten.constant_pad_nd.default"] = constantPad;
  t["aten.repeat.default"] = repeat;
  t["aten._log_softmax.default"] = logSoftmax;
  t["aten.log_softmax.int"] = logSoftmax;
  t["aten.gather.default"] = gather;
  t["aten.flip.default"] = flip;
  // Creation.
  t["aten.full.default"] = fill({}, "fill_value");
  t["aten.full_like.default"] = fill({}, "fill_value");
  t["aten.new_full.default"] = fill({}, "fill_value");
  t["aten.fill.Scalar"] = fill({}, "value");
  t["aten.scalar_tensor.default"] = fill({}, "s");
  for (const char *name :
       {"aten.zeros.default", "aten.zeros_like.default", "aten.new_zeros.default",
        "aten.empty.memory_format", "aten.empty.default", "aten.empty_like.default",
        "aten.new_empty.default", "aten.empty_strided.default",
        "aten.empty_permuted.default",
        "aten.new_empty_strided.default"})
    t[name] = fill(0.0);
  for (const char *name :
       {"aten.ones.default", "aten.ones_like.default", "aten.new_ones.default"})
    t[name] = fill(1.0);
  t["aten.arange.default"] = arange;
  t["aten.arange.start"] = arange;
  t["aten.arange.start_step"] = arange;
  t["aten.eye.default"] = eye;
  t["aten.eye.m"] = eye;
}

} // namespace kiln
