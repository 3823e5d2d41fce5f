//===- ComplexHandlers.cpp - ops on complex tensors as real pairs ---------===//
//
// This file implements the importer handlers of ops on complex tensors.
// Kiln carries a complex64 (complex128) tensor of shape S as the f32 (f64)
// tensor S + [2] of its (real, imaginary) pairs: the layout torch stores it
// in, so view_as_real and view_as_complex are the same value, the bytes
// cross the function boundary unchanged, and everything downstream (linalg,
// vectorisation, bufferisation, both targets) sees real tensors only. The
// importer sends every node that reads or declares a complex value here.
//
// Dims of an op are the complex tensor's (the pair dim is never one of
// them). Arithmetic follows c10::complex: (a+bi)(c+di) = (ac-bd) + (ad+bc)i,
// division by Smith's scaling as c10 divides, |z| = sqrt(a^2 + b^2) as
// eager's vectorised abs. A real operand (tensor or number) scales the
// pairs, or joins as (x, 0).
//
// The Fourier transforms are in FourierTransforms.cpp.
//
//===----------------------------------------------------------------------===//
#include "ComplexPairs.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

// --- structure ----------------------------------------------------------

/// Ops that keep the elements in row-major order (view, reshape, squeeze,
/// unsqueeze, flatten, clone...): the pairs viewed with the declared shape.
absl::StatusOr<Values> sameElements(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (!n.isComplexTensor("self") || !n.resultIsComplex())
    return n.error("expected a complex input and result");
  if (typeOf(self).getNumElements() != type.getNumElements())
    return n.error("the declared result has another number of elements");
  return Values{viewValue(n, self, type.getShape())};
}

absl::StatusOr<Values> expand(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  if (!n.resultIsComplex() || type.getRank() < typeOf(self).getRank())
    return n.error("expand keeps a complex tensor complex and adds leading dims");
  if (typeOf(self) == type)
    return Values{self};
  return Values{n.b().create<aten::ExpandOp>(n.loc(), type, self).getResult()};
}

absl::StatusOr<Values> permuteDims(NodeImporter &n, SmallVector<int64_t> perm) {
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  perm.push_back(complexRank(self)); // the pair dim stays last
  return Values{permuteValue(n, self, perm)};
}

absl::StatusOr<Values> permute(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.intsAttr("dims"));
  int64_t rank = complexRank(self);
  if (static_cast<int64_t>(dims.size()) != rank)
    return n.error("permute needs one entry per dim");
  SmallVector<int64_t> perm;
  for (int64_t d : dims) {
    ASSIGN_OR_RETURN(int64_t normal, n.normalizeDim(d, rank));
    perm.push_back(normal);
  }
  return permuteDims(n, perm);
}

absl::StatusOr<Values> transpose(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  int64_t rank = complexRank(self);
  if (rank == 0)
    return Values{self}; // transposing a 0-d tensor is the identity
  ASSIGN_OR_RETURN(int64_t raw0, n.intAttr("dim0"));
  ASSIGN_OR_RETURN(int64_t raw1, n.intAttr("dim1"));
  ASSIGN_OR_RETURN(int64_t d0, n.normalizeDim(raw0, rank));
  ASSIGN_OR_RETURN(int64_t d1, n.normalizeDim(raw1, rank));
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[d0], perm[d1]);
  return permuteDims(n, perm);
}

/// view_as_real and view_as_complex: the same pairs.
absl::StatusOr<Values> samePairs(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (typeOf(self) != type)
    return n.error("view_as_real/view_as_complex pairs the last dim of 2");
  return Values{self};
}

/// slice.Tensor on a complex tensor, with PyTorch's clamped bounds.
absl::StatusOr<Values> slice(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  if (complexRank(self) == 0)
    return n.error("cannot slice a 0-d tensor");
  int64_t rank = complexRank(self);
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, rank));
  int64_t extent = typeOf(self).getDimSize(dim);
  ASSIGN_OR_RETURN(int64_t start, n.intAttr("start", 0));
  ASSIGN_OR_RETURN(int64_t step, n.intAttr("step", 1));
  if (step < 1)
    return n.error("slice step must be positive");
  if (start < 0)
    start += extent;
  start = std::clamp<int64_t>(start, 0, extent);
  SmallVector<int64_t> offsets(rank + 1, 0), strides(rank + 1, 1);
  offsets[dim] = start;
  strides[dim] = step;
  if (type.getRank() != rank + 1 ||
      start + (type.getDimSize(dim) - 1) * step >= std::max<int64_t>(extent, 1))
    return n.error("the declared slice does not fit the input");
  return Values{n.b().create<aten::SliceOp>(n.loc(), type, self,
                                            n.b().getDenseI64ArrayAttr(offsets),
                                            n.b().getDenseI64ArrayAttr(strides))
                    .getResult()};
}

absl::StatusOr<Values> select(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  if (complexRank(self) == 0)
    return n.error("cannot select from a 0-d tensor");
  int64_t rank = complexRank(self);
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, rank));
  ASSIGN_OR_RETURN(int64_t index, n.intAttr("index"));
  int64_t extent = typeOf(self).getDimSize(dim);
  if (index < -extent || index >= extent)
    return n.error(absl::StrCat("index ", index, " is out of range for dim ", dim,
                                " of extent ", extent));
  if (index < 0)
    index += extent;
  SmallVector<int64_t> shape(typeOf(self).getShape()), offsets(rank + 1, 0),
      strides(rank + 1, 1);
  shape[dim] = 1;
  offsets[dim] = index;
  Value one = n.b().create<aten::SliceOp>(n.loc(), typeOf(self).clone(shape), self,
                                          n.b().getDenseI64ArrayAttr(offsets),
                                          n.b().getDenseI64ArrayAttr(strides));
  return Values{viewValue(n, one, type.getShape())};
}

absl::StatusOr<Values> cat(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dim", 0));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(raw, type.getRank() - 1));
  ASSIGN_OR_RETURN(std::vector<Value> values, n.tensors("tensors"));
  SmallVector<Value> pieces;
  size_t next = 0;
  for (const v1::Argument &argument : n.proto().arguments()) {
    if (argument.name() != "tensors" || next >= values.size())
      continue;
    Value piece = values[next++];
    // Real pieces join as (x, 0).
    pieces.push_back(n.isComplexValue(argument.value()) ? convertElements(n, piece, element)
                                                        : realAsPairs(n, piece, element));
  }
  if (pieces.empty())
    return n.error("cat needs tensors");
  return Values{n.b().create<aten::CatOp>(n.loc(), type, pieces,
                                          n.b().getI64IntegerAttr(dim))
                    .getResult()};
}

/// _to_copy / to.dtype: real to complex (imaginary 0), complex to complex
/// (the parts converted), complex to real (the real part, as eager does
/// with its warning).
absl::StatusOr<Values> toCopy(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  Type element = type.getElementType();
  if (n.resultIsComplex()) {
    if (n.isComplexTensor("self")) {
      ASSIGN_OR_RETURN(Value pairs, complexArgument(n, "self"));
      return Values{convertElements(n, pairs, element)};
    }
    return Values{realAsPairs(n, self, element)};
  }
  ASSIGN_OR_RETURN(Value pairs, complexArgument(n, "self"));
  if (element.isInteger(1)) // a complex number is true when either part is nonzero
    return Values{complexIsNonZero(n, pairs)};
  // Other real types take the real part (eager warns that it discards the
  // imaginary one).
  return Values{convertElements(n, realPart(n, pairs), element)};
}

// --- construction -------------------------------------------------------

/// Real argument `name` converted to `element` and broadcast to `shape`.
absl::StatusOr<Value> realBroadcast(NodeImporter &n, const std::string &name, Type element,
                                    ArrayRef<int64_t> shape) {
  if (n.isComplexTensor(name))
    return n.error(absl::StrCat("'", name, "' must be a real tensor"));
  ASSIGN_OR_RETURN(Value v, n.tensor(name));
  v = convertElements(n, v, element);
  if (typeOf(v).getShape() == shape)
    return v;
  if (static_cast<int64_t>(shape.size()) < typeOf(v).getRank())
    return n.error(absl::StrCat("'", name, "' does not broadcast to the result"));
  return n.b()
      .create<aten::ExpandOp>(n.loc(), RankedTensorType::get(shape, element), v)
      .getResult();
}

/// torch.complex(real, imag) and torch.polar(abs, angle): the two real
/// tensors broadcast to the result, as the pair (real, imag) or
/// (abs cos(angle), abs sin(angle)), c10::polar's.
absl::StatusOr<Values> fromParts(NodeImporter &n, bool polar) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ArrayRef<int64_t> shape = type.getShape().drop_back();
  ASSIGN_OR_RETURN(Value first, realBroadcast(n, polar ? "abs" : "real", element, shape));
  ASSIGN_OR_RETURN(Value second, realBroadcast(n, polar ? "angle" : "imag", element, shape));
  if (!polar)
    return Values{pack(n, first, second)};
  PartMath m(n, RankedTensorType::get(shape, element));
  return Values{pack(n, m.mul(first, m.fn("cos", second)), m.mul(first, m.fn("sin", second)))};
}

/// angle(z) = atan2(im, re), a real result.
absl::StatusOr<Values> angle(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  if (n.resultIsComplex() || type.getShape() != complexShape(self))
    return n.error("angle of a complex tensor is real, of its shape");
  return Values{pointwise(n, type, "atan2", {imagPart(n, self), realPart(n, self)})};
}

// --- arithmetic ---------------------------------------------------------

/// add / sub with alpha (a complex alpha scales `other`): pairwise.
absl::StatusOr<Values> addSub(NodeImporter &n, bool subtract) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value self, pairsOf(n, "self", element));
  ASSIGN_OR_RETURN(Value other, pairsOf(n, "other", element));
  ASSIGN_OR_RETURN(std::complex<double> alpha, n.complexAttr("alpha", 1.0));
  if (alpha.imag() != 0.0) { // a complex alpha scales `other` first
    other = scaleComplex(n, other, alpha);
    alpha = 1.0;
  }
  auto attr = n.b().getF64FloatAttr(alpha.real());
  if (subtract)
    return Values{n.b().create<aten::SubOp>(n.loc(), type, self, other, attr).getResult()};
  return Values{n.b().create<aten::AddOp>(n.loc(), type, self, other, attr).getResult()};
}

absl::StatusOr<Values> mul(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  bool selfComplex = n.isComplexTensor("self") || n.isComplexScalar("self");
  bool otherComplex = n.isComplexTensor("other") || n.isComplexScalar("other");
  if (selfComplex && otherComplex) {
    ASSIGN_OR_RETURN(Value x, pairsOf(n, "self", element));
    ASSIGN_OR_RETURN(Value y, pairsOf(n, "other", element));
    return Values{complexProduct(n, type, x, y)};
  }
  // One real factor scales both parts.
  const char *pairName = selfComplex ? "self" : "other";
  const char *realName = selfComplex ? "other" : "self";
  ASSIGN_OR_RETURN(Value pairs, pairsOf(n, pairName, element));
  ASSIGN_OR_RETURN(Value factor, n.tensorOrScalar(realName, element));
  return Values{n.b()
                    .create<aten::MulOp>(n.loc(), type, pairs,
                                         asColumn(n, convertElements(n, factor, element)))
                    .getResult()};
}

/// c10::complex division (ComplexPairs.h, complexQuotient); a real
/// divisor scales both parts.
absl::StatusOr<Values> div(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  if (!n.isComplexTensor("other") && !n.isComplexScalar("other")) {
    ASSIGN_OR_RETURN(Value pairs, pairsOf(n, "self", element));
    ASSIGN_OR_RETURN(Value divisor, n.tensorOrScalar("other", element));
    return Values{n.b()
                      .create<aten::DivOp>(n.loc(), type, pairs,
                                           asColumn(n, convertElements(n, divisor, element)))
                      .getResult()};
  }
  ASSIGN_OR_RETURN(Value x, pairsOf(n, "self", element));
  ASSIGN_OR_RETURN(Value y, pairsOf(n, "other", element));
  return Values{complexQuotient(n, type, x, y)};
}

absl::StatusOr<Values> neg(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  if (typeOf(self) != type)
    return n.error("neg keeps the complex type");
  return Values{n.b().create<aten::NegOp>(n.loc(), type, self).getResult()};
}

/// conj: the imaginary part negated (physically; _conj's lazy view and
/// resolve_conj become this and the identity).
absl::StatusOr<Values> conj(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  Value re = realPart(n, self);
  Value im = imagPart(n, self);
  Value negated = n.b().create<aten::NegOp>(n.loc(), typeOf(im), im);
  return Values{pack(n, re, negated)};
}

absl::StatusOr<Values> identity(NodeImporter &n) {
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  return Values{self};
}

/// |z|, a real result, without overflow or underflow in the squares:
/// complex64 squares and sums in f64 (eager's answers are its f32
/// roundings), complex128 scales by max(|re|, |im|) first, as hypot does.
absl::StatusOr<Values> abs(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  if (n.resultIsComplex() || type.getShape() != complexShape(self))
    return n.error("abs of a complex tensor is real, of its shape");
  Type element = typeOf(self).getElementType();
  if (element.isF32()) {
    // complex64: the squares summed in f64, so none overflows or underflows.
    Value wide = convertElements(n, self, n.b().getF64Type());
    Value squares = n.b().create<aten::MulOp>(n.loc(), typeOf(wide), wide, wide);
    Value sum = n.b().create<aten::SumOp>(
        n.loc(), type.clone(n.b().getF64Type()), squares,
        n.b().getDenseI64ArrayAttr({complexRank(self)}), n.b().getBoolAttr(false));
    return Values{convertElements(n, pointwise(n, typeOf(sum), "sqrt", sum), element)};
  }
  // f64: scaled by max(|re|, |im|) as hypot does.
  PartMath m(n, type);
  return Values{modulus(m, {realPart(n, self), imagPart(n, self)})};
}

/// sum / mean over complex dims: the same reduction of the pairs.
template <typename ReductionOp>
absl::StatusOr<Values> reduce(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value self, complexArgument(n, "self"));
  int64_t rank = complexRank(self);
  if (rank == 0) // over a 0-d tensor (dim 0 or -1 or none): the value itself
    return Values{convertElements(n, self, element)};
  ASSIGN_OR_RETURN(std::vector<int64_t> raw, n.intsAttr("dim", true));
  ASSIGN_OR_RETURN(bool keepdim, n.boolAttr("keepdim", false));
  SmallVector<int64_t> dims;
  if (raw.empty())
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  for (int64_t d : raw) {
    ASSIGN_OR_RETURN(int64_t normal, n.normalizeDim(d, rank));
    dims.push_back(normal);
  }
  llvm::sort(dims);
  return Values{n.b()
                    .create<ReductionOp>(n.loc(), type, convertElements(n, self, element),
                                         n.b().getDenseI64ArrayAttr(dims),
                                         n.b().getBoolAttr(keepdim))
                    .getResult()};
}

} // namespace

namespace {

/// The complex table and the ops in it that run by parts.
struct ComplexTable {
  OpHandlerTable handlers;
  std::set<std::string> byParts;
};

const ComplexTable &complexTable() {
  static const auto *table = [] {
    auto *complete = new ComplexTable;
    OpHandlerTable *t = &complete->handlers;
    for (const char *op :
         {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
          "aten.unsqueeze.default", "aten.squeeze.default", "aten.squeeze.dim",
          "aten.squeeze.dims", "aten.flatten.using_ints", "aten.unflatten.int",
          "aten.clone.default", "aten.alias.default", "aten.detach.default",
          "aten.lift_fresh_copy.default", "aten.contiguous.default"})
      (*t)[op] = sameElements;
    (*t)["aten.expand.default"] = expand;
    (*t)["aten.permute.default"] = permute;
    (*t)["aten.transpose.int"] = transpose;
    (*t)["aten.view_as_real.default"] = samePairs;
    (*t)["aten.view_as_complex.default"] = samePairs;
    (*t)["aten.slice.Tensor"] = slice;
    (*t)["aten.select.int"] = select;
    (*t)["aten.cat.default"] = cat;
    (*t)["aten.masked_select.default"] = maskedSelect;
    for (const char *op : {"aten._to_copy.default", "aten.to.dtype",
                           "aten._to_dim_order_copy.default"})
      (*t)[op] = toCopy;
    (*t)["aten.add.Tensor"] = [](NodeImporter &n) { return addSub(n, false); };
    (*t)["aten.add.Scalar"] = (*t)["aten.add.Tensor"];
    (*t)["aten.sub.Tensor"] = [](NodeImporter &n) { return addSub(n, true); };
    (*t)["aten.sub.Scalar"] = (*t)["aten.sub.Tensor"];
    (*t)["aten.mul.Tensor"] = mul;
    (*t)["aten.mul.Scalar"] = mul;
    (*t)["aten.div.Tensor"] = div;
    (*t)["aten.div.Scalar"] = div;
    (*t)["aten.neg.default"] = neg;
    (*t)["aten._conj.default"] = conj;
    (*t)["aten.conj_physical.default"] = conj;
    (*t)["aten.resolve_conj.default"] = identity;
    (*t)["aten.resolve_neg.default"] = identity;
    (*t)["aten.abs.default"] = abs;
    (*t)["aten.angle.default"] = angle;
    (*t)["aten.complex.default"] = [](NodeImporter &n) { return fromParts(n, false); };
    (*t)["aten.polar.default"] = [](NodeImporter &n) { return fromParts(n, true); };
    (*t)["aten.sum.dim_IntList"] = reduce<aten::SumOp>;
    (*t)["aten.sum.default"] = reduce<aten::SumOp>;
    (*t)["aten.mean.dim"] = reduce<aten::MeanOp>;
    (*t)["aten.mean.default"] = reduce<aten::MeanOp>;
    addFourierTransformHandlers(*t);
    addComplexLinalgHandlers(*t);
    addComplexMathHandlers(*t);
    complete->byParts = addComplexPartHandlers(*t);
    return complete;
  }();
  return *table;
}

} // namespace

const std::map<std::string, OpHandler> &complexHandlers() { return complexTable().handlers; }

bool complexPartsTakeEmptyTensors(const std::string &op) {
  return complexTable().byParts.count(op) != 0;
}

} // namespace kiln
