//===- DataDependentHandlers.cpp - ops whose result size is data-dependent ===//
//
// This file implements the handlers of the ops whose output size depends on
// the values: nonzero, masked_select and x[mask] (aten.index.Tensor with one
// boolean index), each one aten.nonzero or aten.boolean_mask, and
// torch.unique (_unique2, unique_dim) and torch.unique_consecutive, one
// aten.unique (flattened) or aten.unique_dim (along a dim) each, and
// repeat_interleave with a tensor of repeats, one aten.repeat_interleave,
// and bincount, one aten.bincount. Their row count is a data-dependent size of the graph (torch.export's
// u0), which GraphImporter binds to the result's first dim (unique_dim's:
// its dim).
//
//===----------------------------------------------------------------------===//
#include "EmptyTensors.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Traits.h"

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The most slices a sorted unique_dim may have: its order pairs the slices'
/// ranks r1 * slices + r2, which must stay in int64.
constexpr int64_t kMaxSortedSlices = int64_t{1} << 31;

/// The result of an op whose row count the run computes, or why not: its
/// first dim must be dynamic (a data-dependent size). A static result with
/// no elements (nonzero of an empty tensor) is that empty tensor.
absl::StatusOr<std::optional<Values>> staticResult(NodeImporter &n,
                                                   RankedTensorType type) {
  if (type.getRank() >= 1 && type.isDynamicDim(0))
    return std::optional<Values>();
  if (type.hasStaticShape() && type.getNumElements() == 0)
    return std::optional<Values>(Values{emptyTensor(n.b(), n.loc(), type)});
  return n.unimplemented(
      "its row count depends on the values, and the graph gives it as a "
      "static size; export the program with torch.export so that the count "
      "is a data-dependent size (u0)");
}

absl::Status checkStatic(NodeImporter &n, Value v, const char *what) {
  if (!typeOf(v).hasStaticShape())
    return n.unimplemented(absl::StrCat(
        what, " has a symbolic size; Kiln takes data-dependent sizes from "
              "statically shaped operands only"));
  return absl::OkStatus();
}

/// nonzero: one aten.nonzero.
absl::StatusOr<Values> nonzero(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RETURN_IF_ERROR(checkStatic(n, self, "self"));
  ASSIGN_OR_RETURN(std::optional<Values> fixed, staticResult(n, type));
  if (fixed)
    return *fixed;
  return Values{n.b().create<aten::NonzeroOp>(n.loc(), type, self).getResult()};
}

/// A boolean mask over self's leading dims: one aten.boolean_mask.
absl::StatusOr<Values> booleanMask(NodeImporter &n, RankedTensorType type,
                                   Value self, Value mask) {
  RETURN_IF_ERROR(checkStatic(n, self, "self"));
  RETURN_IF_ERROR(checkStatic(n, mask, "the mask"));
  ArrayRef<int64_t> selfShape = typeOf(self).getShape();
  ArrayRef<int64_t> maskShape = typeOf(mask).getShape();
  if (maskShape.empty())
    return n.unimplemented("a 0-d boolean index");
  if (maskShape.size() > selfShape.size() ||
      selfShape.take_front(maskShape.size()) != maskShape)
    return n.error("the boolean mask must have the shape of self's leading dims");
  ASSIGN_OR_RETURN(std::optional<Values> fixed, staticResult(n, type));
  if (fixed)
    return *fixed;
  if (type.getElementType() != typeOf(self).getElementType())
    return n.error("the result must have self's dtype");
  return Values{
      n.b().create<aten::BooleanMaskOp>(n.loc(), type, self, mask).getResult()};
}

} // namespace

/// masked_select(self, mask): both broadcast to one shape, then the
/// elements where mask is true, in row-major order. A complex self keeps
/// its pairs: the mask picks rows of the pair tensor.
absl::StatusOr<Values> maskedSelect(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value mask, n.tensor("mask"));
  RETURN_IF_ERROR(checkStatic(n, self, "self"));
  RETURN_IF_ERROR(checkStatic(n, mask, "the mask"));
  if (!typeOf(mask).getElementType().isInteger(1))
    return n.error("the mask must be a bool tensor");
  const bool pairs = n.isComplexTensor("self");
  if (pairs != n.resultIsComplex())
    return n.error("masked_select keeps self's dtype");
  ArrayRef<int64_t> selfShape = typeOf(self).getShape();
  if (pairs)
    selfShape = selfShape.drop_back();
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(selfShape, typeOf(mask).getShape(), shape))
    return n.error("self and mask do not broadcast");
  if (shape.empty())
    shape.push_back(1); // two 0-d operands: one position
  // `v` (of `shape` plus its trailing `kept` dims) broadcast to that.
  auto to = [&](Value v, ArrayRef<int64_t> kept) -> Value {
    SmallVector<int64_t> full(shape);
    full.append(kept.begin(), kept.end());
    auto want = RankedTensorType::get(full, typeOf(v).getElementType());
    if (typeOf(v) == want)
      return v;
    if (typeOf(v).getRank() == static_cast<int64_t>(kept.size())) {
      SmallVector<int64_t> one{1};
      one.append(kept.begin(), kept.end());
      v = viewValue(n, v, one);
    }
    return typeOf(v) == want
               ? v
               : n.b().create<aten::ExpandOp>(n.loc(), want, v).getResult();
  };
  SmallVector<int64_t> pairDim;
  if (pairs)
    pairDim.push_back(2);
  return booleanMask(n, type, to(self, pairDim), to(mask, {}));
}

namespace {

/// unique_dim(self, dim, sorted, return_inverse, return_counts) and
/// unique_consecutive(..., dim): one aten.unique_dim over self's slices
/// along dim. Eager refuses a zero-sized dim other than `dim`; a
/// zero-sized `dim` gives empty results.
absl::StatusOr<Values> uniqueDim(NodeImporter &n, bool consecutive) {
  ASSIGN_OR_RETURN(RankedTensorType valuesType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType inverseType, n.resultType(1));
  ASSIGN_OR_RETURN(RankedTensorType countsType, n.resultType(2));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RETURN_IF_ERROR(checkStatic(n, self, "self"));
  RankedTensorType selfType = typeOf(self);
  if (selfType.getRank() == 0)
    return n.error("unique along a dim needs a tensor of rank 1 or more; self is 0-d");
  ASSIGN_OR_RETURN(int64_t rawDim, n.intAttr("dim"));
  ASSIGN_OR_RETURN(int64_t dim, n.normalizeDim(rawDim, selfType.getRank()));
  int64_t zeroDims = llvm::count(selfType.getShape(), 0);
  if (selfType.getDimSize(dim) == 0) {
    if (zeroDims > 1)
      return n.error("unique along a dim of size 0 needs self's other dims non-empty");
    for (RankedTensorType type : {valuesType, inverseType, countsType})
      if (!type.hasStaticShape() || type.getNumElements() != 0)
        return n.error("the unique along an empty dim is empty tensors");
    return Values{emptyTensor(n.b(), n.loc(), valuesType),
                  emptyTensor(n.b(), n.loc(), inverseType),
                  emptyTensor(n.b(), n.loc(), countsType)};
  }
  if (zeroDims != 0)
    return n.error(absl::StrCat("self has a zero-sized dim other than dim ", dim,
                                ", so its slices along dim ", dim, " are empty; eager "
                                "refuses them"));
  SmallVector<int64_t> valuesShape(selfType.getShape());
  valuesShape[dim] = ShapedType::kDynamic;
  auto fullValues = RankedTensorType::get(valuesShape, selfType.getElementType());
  Type i64 = n.b().getI64Type();
  auto fullInverse = RankedTensorType::get({selfType.getDimSize(dim)}, i64);
  auto fullCounts = RankedTensorType::get({ShapedType::kDynamic}, i64);
  if (valuesType != fullValues) {
    std::string got;
    llvm::raw_string_ostream(got) << valuesType;
    return n.error(absl::StrCat("values must have self's shape and dtype with dim ", dim,
                                " a data-dependent size (u0); the graph declares ", got));
  }
  // Eager's kernel computes the inverse and the counts whether or not they
  // are asked for, and torch.export declares them as it does.
  auto result = [&](Value computed, RankedTensorType declared) -> absl::StatusOr<Value> {
    if (declared == computed.getType())
      return computed;
    if (declared.hasStaticShape() && declared.getNumElements() == 0)
      return emptyTensor(n.b(), n.loc(), declared);
    return n.error("the inverse must be a 1-d int64 tensor of self's size along dim, and "
                   "the counts a 1-d int64 tensor of the values' count");
  };
  int64_t slices = selfType.getDimSize(dim);
  if (!consecutive && slices >= kMaxSortedSlices)
    return n.unimplemented(absl::StrCat(
        "unique along a dim orders its slices by pairing their ranks in int64, which "
        "takes fewer than ", kMaxSortedSlices, " slices; self has ", slices, " along dim ",
        dim, " (unique_consecutive along a dim has no such bound)"));
  auto op = n.b().create<aten::UniqueDimOp>(
      n.loc(), TypeRange{fullValues, fullInverse, fullCounts}, self,
      n.b().getI64IntegerAttr(dim), consecutive ? n.b().getUnitAttr() : UnitAttr());
  ASSIGN_OR_RETURN(Value inverse, result(op.getInverse(), inverseType));
  ASSIGN_OR_RETURN(Value counts, result(op.getCounts(), countsType));
  return Values{op.getValues(), inverse, counts};
}

/// _unique2(self, sorted, return_inverse, return_counts) and
/// unique_consecutive(self, return_inverse, return_counts, dim=None): one
/// aten.unique (`consecutive` for the second); an inverse or counts not
/// asked for is the empty tensor eager returns. sorted=False leaves the
/// order open, and eager's CPU kernel sorts anyway.
absl::StatusOr<Values> unique(NodeImporter &n, bool consecutive) {
  if (consecutive && n.has("dim"))
    return uniqueDim(n, consecutive);
  ASSIGN_OR_RETURN(RankedTensorType valuesType, n.resultType(0));
  ASSIGN_OR_RETURN(RankedTensorType inverseType, n.resultType(1));
  ASSIGN_OR_RETURN(RankedTensorType countsType, n.resultType(2));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RETURN_IF_ERROR(checkStatic(n, self, "self"));
  ASSIGN_OR_RETURN(bool returnInverse, n.boolAttr("return_inverse", false));
  ASSIGN_OR_RETURN(bool returnCounts, n.boolAttr("return_counts", false));
  RankedTensorType selfType = typeOf(self);
  if (selfType.getNumElements() == 0) {
    // Nothing to count: every result is empty, whatever sizes it declares.
    for (RankedTensorType type : {valuesType, inverseType, countsType})
      if (!type.hasStaticShape() || type.getNumElements() != 0)
        return n.error("the unique of an empty tensor is empty tensors");
    return Values{emptyTensor(n.b(), n.loc(), valuesType),
                  emptyTensor(n.b(), n.loc(), inverseType),
                  emptyTensor(n.b(), n.loc(), countsType)};
  }
  ASSIGN_OR_RETURN(std::optional<Values> fixed, staticResult(n, valuesType));
  if (fixed)
    return n.error("the unique of a non-empty tensor has at least one value");
  Type i64 = n.b().getI64Type();
  auto fullInverse = RankedTensorType::get(selfType.getShape(), i64);
  auto fullCounts = RankedTensorType::get({ShapedType::kDynamic}, i64);
  if (valuesType.getRank() != 1 || valuesType.getElementType() != selfType.getElementType())
    return n.error("values must be a 1-d tensor of self's dtype");
  if (returnInverse && inverseType != fullInverse)
    return n.error("the inverse must have self's shape, in int64");
  if (returnCounts && countsType != fullCounts)
    return n.error("the counts must be a 1-d int64 tensor of the values' count");
  auto op = n.b().create<aten::UniqueOp>(n.loc(), TypeRange{valuesType, fullInverse, fullCounts},
                                         self, consecutive ? n.b().getUnitAttr() : UnitAttr());
  return Values{op.getValues(),
                returnInverse ? op.getInverse() : emptyTensor(n.b(), n.loc(), inverseType),
                returnCounts ? op.getCounts() : emptyTensor(n.b(), n.loc(), countsType)};
}

/// The declared max of a length that nothing in the graph bounds (a
/// repeat_interleave's sum, a bincount's largest value + 1): the program's
/// torch._check(y.shape[0] <= N) after the op, or why there is none.
absl::StatusOr<int64_t> programBound(NodeImporter &n, absl::string_view length,
                                     absl::string_view otherWays) {
  std::optional<int64_t> most = n.declaredRowMax();
  if (!most)
    return n.error("its length must be a data-dependent size (u0)");
  if (*most >= kMaxSymbolValue)
    return n.unimplemented(absl::StrCat(
        "its length (", length, ") has no upper bound, and Kiln sizes the output's buffer "
        "before the run: ", otherWays, "bound the length with torch._check(y.shape[0] <= N) "
        "after it"));
  return *most;
}

/// repeat_interleave.Tensor(repeats, output_size=None): one
/// aten.repeat_interleave. Its length is output_size (a static result), or
/// else the repeats' sum, a data-dependent size whose declared max bounds
/// the buffers that hold it.
absl::StatusOr<Values> repeatInterleave(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value repeats, n.tensor("repeats"));
  RETURN_IF_ERROR(checkStatic(n, repeats, "repeats"));
  Type element = typeOf(repeats).getElementType();
  if (typeOf(repeats).getRank() != 1 ||
      !(element.isInteger(32) || element.isInteger(64)))
    return n.error("repeats must be a 1-d int32 or int64 tensor");
  if (type.getRank() != 1 || type.getElementType() != element)
    return n.error("the result must be a 1-d tensor of repeats' dtype");
  int64_t capacity;
  if (type.hasStaticShape()) {
    if (type.getNumElements() == 0)
      return Values{emptyTensor(n.b(), n.loc(), type)};
    capacity = type.getDimSize(0);
  } else {
    ASSIGN_OR_RETURN(capacity, programBound(n, "the sum of repeats",
                                            "give repeat_interleave an output_size, or "));
  }
  return Values{n.b()
                    .create<aten::RepeatInterleaveOp>(n.loc(), type, repeats,
                                                      n.b().getI64IntegerAttr(capacity))
                    .getResult()};
}

/// bincount(self, weights=None, minlength=0): one aten.bincount. Its
/// length, max(minlength, max(self) + 1), has no bound in the graph but
/// the program's: a torch._check(y.shape[0] <= N) after it declares the
/// max the buffers take. Weights other than f32 are widened to f64, as
/// eager's kernel does.
absl::StatusOr<Values> bincount(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RETURN_IF_ERROR(checkStatic(n, self, "self"));
  RankedTensorType selfType = typeOf(self);
  Type element = selfType.getElementType();
  if (selfType.getRank() != 1 || !isa<IntegerType>(element) || element.isInteger(1))
    return n.error("bincount takes a 1-d integer tensor (not bool)");
  ASSIGN_OR_RETURN(int64_t minlength, n.intAttr("minlength", 0));
  if (minlength < 0)
    return n.error(absl::StrCat("minlength must not be negative; it is ", minlength));
  ASSIGN_OR_RETURN(std::optional<Value> weights, n.optionalTensor("weights"));
  Type want = n.b().getI64Type();
  if (weights) {
    RETURN_IF_ERROR(checkStatic(n, *weights, "weights"));
    if (typeOf(*weights).getShape() != selfType.getShape())
      return n.error("weights must have self's shape");
    Type weightType = typeOf(*weights).getElementType();
    want = weightType.isF32() ? weightType : n.b().getF64Type();
    weights = convertElements(n, *weights, want);
  }
  if (type.getRank() != 1 || type.getElementType() != want)
    return n.error("the result must be a 1-d tensor: int64, or f32 for f32 weights, else f64");
  // Of no elements: minlength zeros, a length torch.export knows.
  if (selfType.getNumElements() == 0 && type.hasStaticShape()) {
    if (type.getDimSize(0) != minlength)
      return n.error("the bincount of an empty tensor has minlength elements");
    return Values{n.constant(want, 0.0, {minlength})};
  }
  if (!type.isDynamicDim(0))
    return n.error("its length must be a data-dependent size (u0)");
  ASSIGN_OR_RETURN(int64_t most, programBound(n, "max(self) + 1", ""));
  if (most < minlength)
    return n.error(absl::StrCat("its declared max length ", most, " is below minlength ",
                                minlength));
  return Values{n.b()
                    .create<aten::BincountOp>(n.loc(), type, self, weights.value_or(Value()),
                                              n.b().getI64IntegerAttr(minlength),
                                              n.b().getI64IntegerAttr(most))
                    .getResult()};
}

} // namespace

absl::StatusOr<SmallVector<Value>> indexByMask(NodeImporter &n, RankedTensorType type,
                                               Value self, Value mask) {
  return booleanMask(n, type, self, mask);
}

void addDataDependentHandlers(OpHandlerTable &t) {
  t["aten.nonzero.default"] = nonzero;
  t["aten.masked_select.default"] = maskedSelect;
  t["aten._unique2.default"] = [](NodeImporter &n) { return unique(n, false); };
  t["aten.unique_consecutive.default"] = [](NodeImporter &n) { return unique(n, true); };
  t["aten.unique_dim.default"] = [](NodeImporter &n) { return uniqueDim(n, false); };
  t["aten.repeat_interleave.Tensor"] = repeatInterleave;
  t["aten.bincount.default"] = bincount;
}

} // namespace kiln
