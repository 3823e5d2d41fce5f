//===- AtenTensorOps.cpp - verifiers of the table-driven aten ops ---------===//
//
// This file implements the verifiers of aten.pointwise (against the pointwise
// table), var, arg_reduce, cumsum, slice, cat, index_select, gather,
// embedding_bag, embedding_renorm, trilinear, cdist, histc and arange.
//
//===----------------------------------------------------------------------===//
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Dialect/Aten/IR/PointwiseFns.h"

#include "VerifyUtils.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::aten;

namespace {

/// The result shape is exactly the broadcast of all operand shapes.
LogicalResult verifyBroadcastResult(Operation *op, ValueRange operands) {
  ArrayRef<int64_t> result = shapeOf(op->getResult(0));
  size_t rank = 0;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    if (failed(verifyBroadcastsTo(op, operand, result,
                                  "operand #" + std::to_string(i))))
      return failure();
    rank = std::max(rank, shapeOf(operand).size());
  }
  if (result.size() != rank)
    return op->emitOpError("result rank must be the largest operand rank");
  for (size_t d = 0; d < rank; ++d) {
    // A symbolic (dynamic) extent meets 1 or itself.
    int64_t expected = 1;
    for (Value operand : operands) {
      ArrayRef<int64_t> shape = shapeOf(operand);
      size_t offset = rank - shape.size();
      if (d >= offset && shape[d - offset] != 1)
        expected = expected == 1 ? shape[d - offset] : std::max(expected, shape[d - offset]);
    }
    if (result[d] != expected)
      return op->emitOpError() << "result dimension " << d << " is "
                               << result[d] << ", expected " << expected;
  }
  return success();
}

/// Shape after reducing `dims` (all when empty) of `in`, keeping them as 1
/// when `keepdim`.
SmallVector<int64_t> reducedShape(ArrayRef<int64_t> in, ArrayRef<int64_t> dims,
                                  bool keepdim) {
  llvm::SmallBitVector reduced(in.size(), dims.empty());
  for (int64_t dim : dims)
    reduced.set(dim);
  SmallVector<int64_t> shape;
  for (auto [i, extent] : llvm::enumerate(in)) {
    if (!reduced.test(i))
      shape.push_back(extent);
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

bool isIntegerTensor(Value value) {
  auto element = cast<RankedTensorType>(value.getType()).getElementType();
  return isa<IntegerType>(element) && !element.isInteger(1);
}

} // namespace

LogicalResult PointwiseOp::verify() {
  const PointwiseFn *fn = lookupPointwiseFn(getFn());
  if (!fn)
    return emitOpError() << "unknown pointwise function \"" << getFn() << "\"";
  if (getInputs().size() != fn->arity)
    return emitOpError() << "\"" << getFn() << "\" takes " << fn->arity
                         << " operands, got " << getInputs().size();
  if (getScalars().size() != fn->numScalars)
    return emitOpError() << "\"" << getFn() << "\" takes " << fn->numScalars
                         << " scalars, got " << getScalars().size();
  Type element = getType().getElementType();
  if (fn->result == PointwiseResult::Float && !isa<FloatType>(element))
    return emitOpError() << "\"" << getFn()
                         << "\" needs a floating-point result";
  if (fn->result == PointwiseResult::Bool && !element.isInteger(1))
    return emitOpError() << "\"" << getFn() << "\" produces i1";
  if (!pointwiseComputeType(*fn, getInputs().getTypes(), element))
    return emitOpError() << "\"" << getFn()
                         << "\" is not defined for these element types";
  if (getFn() == "polygamma") {
    double n = getScalars()[0];
    if (!(n >= 0 && n <= 1e6) || n != std::floor(n))
      return emitOpError() << "polygamma's order must be an integer in [0, 1e6], got " << n;
  }
  return verifyBroadcastResult(*this, getInputs());
}

/// A reduction of `self` over `dims` to a float `result` of the reduced
/// shape (var, vector_norm).
static LogicalResult verifyFloatReduction(Operation *op, Value self,
                                          ArrayRef<int64_t> dims, bool keepdim,
                                          Value result) {
  ArrayRef<int64_t> in = shapeOf(self);
  if (failed(verifyDimList(op, dims, in.size())))
    return failure();
  auto type = cast<RankedTensorType>(result.getType());
  if (!isa<FloatType>(type.getElementType()))
    return op->emitOpError("needs a floating-point result");
  if (ArrayRef<int64_t>(reducedShape(in, dims, keepdim)) != type.getShape())
    return op->emitOpError("result shape does not match the reduction");
  return success();
}

LogicalResult VarOp::verify() {
  return verifyFloatReduction(*this, getSelf(), getDims(), getKeepdim(),
                              getResult());
}

std::optional<std::string> kiln::aten::embeddingBagBeyondBounds(int64_t bags,
                                                               int64_t count,
                                                               int64_t width,
                                                               int64_t mode) {
  if (WideInt(bags) * count > kMaxConstantTable)
    return "needs at most " + std::to_string(kMaxConstantTable) + " (bag, index) pairs";
  if (WideInt(count) * width > kMaxTensorElements)
    return "needs at most " + std::to_string(kMaxTensorElements) +
           " gathered (index, column) elements";
  if (mode == kEmbeddingBagMax && WideInt(bags) * count * width > kMaxEmbeddingBagWindow)
    return "max mode needs at most " + std::to_string(kMaxEmbeddingBagWindow) +
           " (bag, index, column) triples";
  return std::nullopt;
}

LogicalResult EmbeddingBagOp::verify() {
  auto weight = cast<RankedTensorType>(getWeight().getType());
  ArrayRef<int64_t> indices = shapeOf(getIndices()), offsets = shapeOf(getOffsets());
  int64_t mode = getMode();
  if (mode != kEmbeddingBagSum && mode != kEmbeddingBagMean && mode != kEmbeddingBagMax)
    return emitOpError() << "mode " << mode << " is not 0 (sum), 1 (mean) or 2 (max)";
  Type element = weight.getElementType();
  if (weight.getRank() != 2 || !isa<FloatType>(element))
    return emitOpError("weight must be a 2-d floating-point tensor");
  if (indices.size() != 1 || offsets.size() != 1 || !isIntegerTensor(getIndices()) ||
      !isIntegerTensor(getOffsets()))
    return emitOpError("indices and offsets must be 1-d integer tensors");
  int64_t rows = weight.getDimSize(0), width = weight.getDimSize(1);
  int64_t count = indices[0];
  int64_t bags = offsets[0] - (getIncludeLastOffset() ? 1 : 0);
  if (bags < 0)
    return emitOpError("include_last_offset needs at least one offset");
  if (count < 1 || bags < 1)
    return emitOpError("needs at least one index and one bag");
  if (std::optional<std::string> why = embeddingBagBeyondBounds(bags, count, width, mode))
    return emitOpError() << *why;
  int64_t padding = getPaddingIdx();
  if (padding < -1 || padding >= rows)
    return emitOpError() << "padding_idx " << padding << " is outside the weight's "
                         << rows << " rows";
  if (Value perSample = getPerSampleWeights()) {
    if (mode != kEmbeddingBagSum)
      return emitOpError("per_sample_weights are only defined for mode sum");
    if (perSample.getType() != weight.clone({count}))
      return emitOpError("per_sample_weights must have one entry per index, "
                         "in the weight's type");
  }
  if (getResult().getType() != weight.clone({bags, width}))
    return emitOpError() << "result must be (" << bags << ", " << width
                         << ") in the weight's type";
  for (Value other : {getOffset2bag(), getBagSize(), getMaxIndices()})
    if (!isIntegerTensor(other))
      return emitOpError("offset2bag, bag_size and max_indices are integer tensors");
  // Eager's sum without padding_idx leaves offset2bag empty on its fast
  // path (f32 and f16 weights, in torch's meta function) and fills it
  // otherwise (f64, bf16); either is declared.
  ArrayRef<int64_t> offset2bag = shapeOf(getOffset2bag());
  bool mayBeEmpty = mode == kEmbeddingBagSum && padding < 0;
  if (offset2bag != ArrayRef<int64_t>{count} &&
      !(mayBeEmpty && offset2bag == ArrayRef<int64_t>{0}))
    return emitOpError() << "offset2bag must have " << (mayBeEmpty ? "0 or " : "") << count
                         << " entries";
  // One entry per bag; with include_last_offset also one past the last.
  auto perBag = [&](Value v) {
    ArrayRef<int64_t> shape = shapeOf(v);
    return shape.size() == 1 &&
           (shape[0] == bags || (getIncludeLastOffset() && shape[0] == bags + 1));
  };
  if (!perBag(getBagSize()))
    return emitOpError() << "bag_size must have " << bags << " entries";
  if (mode == kEmbeddingBagMax
          ? shapeOf(getMaxIndices()) != ArrayRef<int64_t>{bags, width}
          : !perBag(getMaxIndices()))
    return emitOpError() << "max_indices must be "
                         << (mode == kEmbeddingBagMax ? "(bags, columns)" : "one per bag");
  return success();
}

LogicalResult EmbeddingRenormOp::verify() {
  auto self = cast<RankedTensorType>(getSelf().getType());
  if (self.getRank() != 2 || !isa<FloatType>(self.getElementType()))
    return emitOpError("self must be a 2-d floating-point tensor");
  if (!isIntegerTensor(getIndices()))
    return emitOpError("indices must be an integer tensor");
  if (getType() != self)
    return emitOpError("result must have self's type");
  return success();
}

LogicalResult TrilinearOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getI1()), b = shapeOf(getI2()), c = shapeOf(getI3());
  if (a.size() != b.size() || a.size() != c.size())
    return emitOpError("i1, i2 and i3 must have one rank (after their expand dims)");
  auto type = cast<RankedTensorType>(getType());
  if (!isa<FloatType>(type.getElementType()))
    return emitOpError("needs a floating-point result");
  for (Value v : {getI1(), getI2(), getI3()}) {
    auto input = cast<RankedTensorType>(v.getType());
    if (input.getElementType() != type.getElementType())
      return emitOpError("i1, i2, i3 and the result share their element type");
    if (input.getNumElements() == 0)
      return emitOpError("needs inputs with elements (the importer handles "
                         "empty tensors before any op)");
  }
  ArrayRef<int64_t> sumdim = getSumdim();
  for (size_t i = 0; i < sumdim.size(); ++i)
    if (sumdim[i] < 0 || sumdim[i] >= static_cast<int64_t>(a.size()) ||
        (i > 0 && sumdim[i] <= sumdim[i - 1]))
      return emitOpError() << "sumdim must be distinct ascending dims in [0, "
                           << a.size() << ")";
  SmallVector<int64_t> expected;
  for (size_t d = 0; d < a.size(); ++d) {
    int64_t extent = 1;
    for (int64_t e : {a[d], b[d], c[d]}) {
      if (e != 1 && extent != 1 && e != extent)
        return emitOpError() << "i1, i2 and i3 do not broadcast at dim " << d;
      extent = e == 1 ? extent : e;
    }
    if (!llvm::is_contained(sumdim, static_cast<int64_t>(d)))
      expected.push_back(extent);
  }
  if (type.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be the broadcast shape without the summed dims");
  return success();
}

LogicalResult CdistOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getX1()), b = shapeOf(getX2());
  Type element = getX1().getType().getElementType();
  if (!isa<FloatType>(element) || getX2().getType().getElementType() != element ||
      getType().getElementType() != element)
    return emitOpError("x1, x2 and the result must share one float type");
  if (a.size() < 2 || a.size() != b.size() || a.back() != b.back() ||
      a.drop_back(2) != b.drop_back(2))
    return emitOpError("x1 and x2 must be (batch..., rows, M) with the same batch dims and M");
  SmallVector<int64_t> expected(a.drop_back());
  expected.push_back(b[b.size() - 2]);
  if (ArrayRef<int64_t>(expected) != getType().getShape())
    return emitOpError("result shape must be (batch..., x1 rows, x2 rows)");
  double p = getP().convertToDouble();
  if (!(p >= 0))
    return emitOpError("p must be a non-negative number");
  if (getUseMm() && p != 2.0)
    return emitOpError("use_mm is for p = 2");
  return success();
}

LogicalResult HistcOp::verify() {
  Type element = getSelf().getType().getElementType();
  if (!isa<FloatType>(element) || getType().getElementType() != element)
    return emitOpError("counts floating-point elements in their own type");
  const int64_t bins = static_cast<int64_t>(getBins());
  if (bins < 1 || getType().getShape() != ArrayRef<int64_t>{bins})
    return emitOpError("result must be (bins) with bins >= 1");
  double lo = getMin().convertToDouble(), hi = getMax().convertToDouble();
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    return emitOpError("min and max must be finite with min <= max");
  return success();
}

LogicalResult HistogramOp::verify() {
  Type element = getSelf().getType().getElementType();
  if (!isa<FloatType>(element))
    return emitOpError("counts floating-point elements");
  auto sameElement = [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType() == element;
  };
  if (!sameElement(getHist()) || !sameElement(getBinEdges()) ||
      (getEdges() && !sameElement(getEdges())) ||
      (getWeight() && !sameElement(getWeight())))
    return emitOpError("edges, weight, hist and bin_edges must have the input's element type");
  ArrayRef<int64_t> hist = shapeOf(getHist());
  if (hist.size() != 1 || hist[0] < 1 ||
      shapeOf(getBinEdges()) != ArrayRef<int64_t>{hist[0] + 1})
    return emitOpError("hist must be (bins) with bins >= 1, and bin_edges (bins + 1)");
  if (getEdges() && shapeOf(getEdges()) != shapeOf(getBinEdges()))
    return emitOpError("edges must be (bins + 1), as bin_edges");
  if (getWeight() && shapeOf(getWeight()) != shapeOf(getSelf()))
    return emitOpError("weight must have the input's shape");
  if (std::optional<ArrayRef<double>> range = getRange()) {
    if (getEdges())
      return emitOpError("takes a range or edges, not both");
    if (range->size() != 2 || !std::isfinite((*range)[0]) ||
        !std::isfinite((*range)[1]) || (*range)[0] > (*range)[1])
      return emitOpError("range must be two finite numbers, lo <= hi");
  }
  return success();
}

LogicalResult HistogramddOp::verify() {
  RankedTensorType self = getSelf().getType();
  Type element = self.getElementType();
  if (!isa<FloatType>(element) || self.getRank() != 2)
    return emitOpError("counts (N, D) floating-point points");
  const int64_t dims = self.getDimSize(1);
  ArrayRef<int64_t> hist = shapeOf(getHist());
  if (dims < 1 || static_cast<int64_t>(hist.size()) != dims ||
      static_cast<int64_t>(getBinEdges().size()) != dims)
    return emitOpError("hist must have one dim, and bin_edges one tensor, per coordinate (")
           << dims << ")";
  auto sameElement = [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType() == element;
  };
  if (!sameElement(getHist()) || (getWeight() && !sameElement(getWeight())) ||
      !llvm::all_of(getBinEdges(), sameElement) || !llvm::all_of(getEdges(), sameElement))
    return emitOpError("edges, weight, hist and bin_edges must have the input's element type");
  for (int64_t d = 0; d < dims; ++d) {
    if (hist[d] < 1 || shapeOf(getBinEdges()[d]) != ArrayRef<int64_t>{hist[d] + 1})
      return emitOpError("bin_edges #") << d << " must be (bins + 1) for hist's dim " << d;
    if (!getEdges().empty() && shapeOf(getEdges()[d]) != shapeOf(getBinEdges()[d]))
      return emitOpError("edges #") << d << " must be (bins + 1), as bin_edges";
  }
  if (!getEdges().empty() && static_cast<int64_t>(getEdges().size()) != dims)
    return emitOpError("takes edges for every coordinate or none");
  if (getWeight() && shapeOf(getWeight()) != ArrayRef<int64_t>{self.getDimSize(0)})
    return emitOpError("weight must be (N)");
  if (std::optional<ArrayRef<double>> range = getRange()) {
    if (!getEdges().empty())
      return emitOpError("takes a range or edges, not both");
    if (static_cast<int64_t>(range->size()) != 2 * dims)
      return emitOpError("range must be (lo, hi) per coordinate");
    for (int64_t d = 0; d < dims; ++d)
      if (!std::isfinite((*range)[2 * d]) || !std::isfinite((*range)[2 * d + 1]) ||
          (*range)[2 * d] > (*range)[2 * d + 1])
        return emitOpError("range must be finite numbers, lo <= hi");
  }
  return success();
}

LogicalResult SegmentReduceOp::verify() {
  static constexpr llvm::StringLiteral kReductions[] = {"sum", "mean", "max", "min", "prod"};
  if (!llvm::is_contained(kReductions, getReduce()))
    return emitOpError("reduce must be sum, mean, max, min or prod");
  RankedTensorType data = getData().getType();
  if (!isa<FloatType>(data.getElementType()) ||
      getType().getElementType() != data.getElementType())
    return emitOpError("reduces floating-point data into its own type");
  if (!getBounds().getType().getElementType().isSignlessInteger())
    return emitOpError("bounds must be integers");
  const int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= data.getRank())
    return emitOpError("axis must be one of the data's dims");
  ArrayRef<int64_t> bounds = shapeOf(getBounds());
  if (static_cast<int64_t>(bounds.size()) != axis + 1 ||
      bounds.drop_back() != data.getShape().take_front(axis) ||
      (getOffsets() && bounds.back() < 1))
    return emitOpError("bounds must have the data's dims before axis, then the segments "
                       "(their lengths, or one more offset)");
  SmallVector<int64_t> expected(data.getShape());
  expected[axis] = getOffsets() ? bounds.back() - 1 : bounds.back();
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result must be the data's shape with the segments at axis");
  return success();
}

LogicalResult VectorNormOp::verify() {
  if (std::isnan(getOrd().convertToDouble()))
    return emitOpError("ord must be a number");
  return verifyFloatReduction(*this, getSelf(), getDims(), getKeepdim(),
                              getResult());
}

LogicalResult ArgReduceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf());
  if (!getType().getElementType().isInteger(64))
    return emitOpError("produces i64 indices");
  SmallVector<int64_t> expected;
  if (std::optional<int64_t> dim = getDim()) {
    if (*dim < 0 || *dim >= std::max<int64_t>(in.size(), 1))
      return emitOpError() << "dim " << *dim << " is out of range";
    if (in.empty())
      expected = {};
    else
      expected = reducedShape(in, {*dim}, getKeepdim());
  } else if (getKeepdim()) {
    expected.assign(in.size(), 1);
  }
  if (ArrayRef<int64_t>(expected) != getType().getShape())
    return emitOpError("result shape does not match the reduction");
  return success();
}

LogicalResult CumsumOp::verify() {
  int64_t rank = getType().getRank();
  if (getDim() < 0 || getDim() >= std::max<int64_t>(rank, 1))
    return emitOpError() << "dim " << getDim() << " is out of range";
  if (shapeOf(getSelf()) != getType().getShape())
    return emitOpError("result must have the input's shape");
  return success();
}

namespace {

/// A scan's dim in range (a 0-d input scans along dim 0) and the result
/// shapes equal to the input's.
LogicalResult verifyScan(Operation *op, Value self, IntegerAttr dim,
                         ValueRange results) {
  int64_t rank = cast<RankedTensorType>(self.getType()).getRank();
  if (dim.getInt() < 0 || dim.getInt() >= std::max<int64_t>(rank, 1))
    return op->emitOpError() << "dim " << dim.getInt() << " is out of range";
  for (Value result : results)
    if (shapeOf(result) != shapeOf(self))
      return op->emitOpError("results must have the input's shape");
  return success();
}

/// cummax and cummin: the values keep the input's type, the indices i64.
LogicalResult verifyCumExtremum(Operation *op, Value self, IntegerAttr dim,
                                Value values, Value indices) {
  if (values.getType() != self.getType())
    return op->emitOpError("values must have the input's type");
  if (!cast<RankedTensorType>(indices.getType()).getElementType().isInteger(64))
    return op->emitOpError("indices must be i64");
  return verifyScan(op, self, dim, {values, indices});
}

} // namespace

LogicalResult CummaxOp::verify() {
  return verifyCumExtremum(*this, getSelf(), getDimAttr(), getValues(),
                           getIndices());
}

LogicalResult CumminOp::verify() {
  return verifyCumExtremum(*this, getSelf(), getDimAttr(), getValues(),
                           getIndices());
}

LogicalResult LogCumSumExpOp::verify() {
  if (!isa<FloatType>(getType().getElementType()))
    return emitOpError("the result must be floating point");
  if (getComplex()) {
    ArrayRef<int64_t> shape = shapeOf(getSelf());
    if (shape.size() < 2 || shape.back() != 2)
      return emitOpError("complex parts need a last dim of size 2 after the scanned one");
    if (getDim() >= static_cast<int64_t>(shape.size()) - 1)
      return emitOpError("the scanned dim of complex parts must come before their last dim");
    if (getType() != getSelf().getType())
      return emitOpError("the result of complex parts must have the input's type");
  }
  return verifyScan(*this, getSelf(), getDimAttr(), getResult());
}

LogicalResult SearchSortedOp::verify() {
  auto sorted = cast<RankedTensorType>(getSorted().getType());
  auto values = cast<RankedTensorType>(getValues().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (sorted.getRank() == 0)
    return emitOpError("the sorted sequence must have at least one dim");
  if (result.getShape() != values.getShape())
    return emitOpError("the result must have the values' shape");
  auto element = dyn_cast<IntegerType>(result.getElementType());
  if (!element || element.getWidth() == 1)
    return emitOpError("the result must have an integer element type");
  if (sorted.getRank() > 1 &&
      (values.getRank() != sorted.getRank() ||
       values.getShape().drop_back() != sorted.getShape().drop_back()))
    return emitOpError() << "the values must have the sorted sequence's "
                         << sorted.getRank() - 1 << " leading dims and one more";
  return success();
}

namespace {

/// The checks sort, topk and kthvalue share: `dim` within self's rank (0
/// for a 0-d self), values of self's element type, indices i64, and each
/// result of `shape`.
LogicalResult verifySelection(Operation *op, Value self, int64_t dim,
                              Value values, Value indices,
                              ArrayRef<int64_t> shape) {
  auto in = cast<RankedTensorType>(self.getType());
  if (dim < 0 || dim >= std::max<int64_t>(in.getRank(), 1))
    return op->emitOpError() << "dim " << dim << " is out of range";
  auto valuesType = cast<RankedTensorType>(values.getType());
  auto indicesType = cast<RankedTensorType>(indices.getType());
  if (valuesType.getElementType() != in.getElementType() ||
      !indicesType.getElementType().isInteger(64))
    return op->emitOpError("values keep self's element type, indices are i64");
  if (valuesType.getShape() != shape || indicesType.getShape() != shape)
    return op->emitOpError("values and indices have the wrong shape");
  return success();
}

/// The extent of `dim` in `self` (1 for a 0-d self); a dim out of range
/// is reported.
FailureOr<int64_t> selectionExtent(Operation *op, Value self, int64_t dim) {
  auto in = cast<RankedTensorType>(self.getType());
  if (dim < 0 || dim >= std::max<int64_t>(in.getRank(), 1))
    return op->emitOpError() << "dim " << dim << " is out of range";
  return in.getRank() == 0 ? 1 : in.getDimSize(dim);
}

/// The shape of one entry selected along `dim` (kthvalue, median): the dim
/// dropped, or kept as 1 with `keepdim`; 0-d stays 0-d.
SmallVector<int64_t> selectedShape(Value self, int64_t dim, bool keepdim) {
  SmallVector<int64_t> shape(shapeOf(self));
  if (!shape.empty()) {
    if (keepdim)
      shape[dim] = 1;
    else
      shape.erase(shape.begin() + dim);
  }
  return shape;
}

} // namespace

LogicalResult SortOp::verify() {
  return verifySelection(*this, getSelf(), getDim(), getValues(), getIndices(),
                         shapeOf(getSelf()));
}

LogicalResult TopkOp::verify() {
  int64_t dim = getDim(), k = getK();
  FailureOr<int64_t> extent = selectionExtent(*this, getSelf(), dim);
  if (failed(extent))
    return failure();
  if (k < 0 || k > *extent)
    return emitOpError() << "k = " << k << " is outside [0, " << *extent << "]";
  SmallVector<int64_t> shape(shapeOf(getSelf()));
  if (!shape.empty())
    shape[dim] = k;
  return verifySelection(*this, getSelf(), dim, getValues(), getIndices(), shape);
}

LogicalResult KthvalueOp::verify() {
  int64_t dim = getDim(), k = getK();
  FailureOr<int64_t> extent = selectionExtent(*this, getSelf(), dim);
  if (failed(extent))
    return failure();
  if (k < 1 || k > *extent)
    return emitOpError() << "k = " << k << " is outside [1, " << *extent << "]";
  return verifySelection(*this, getSelf(), dim, getValues(), getIndices(),
                         selectedShape(getSelf(), dim, getKeepdim()));
}

namespace {

/// A statistic of each row along `dim` (median, mode): the dim is not
/// empty, and values and indices have the selected shape.
template <typename StatisticOp>
LogicalResult verifyRowStatistic(StatisticOp op, StringRef what) {
  int64_t dim = op.getDim();
  FailureOr<int64_t> extent = selectionExtent(op, op.getSelf(), dim);
  if (failed(extent))
    return failure();
  if (*extent < 1)
    return op.emitOpError() << "the " << what << " of an empty dim (dim " << dim
                            << ") is undefined";
  return verifySelection(op, op.getSelf(), dim, op.getValues(), op.getIndices(),
                         selectedShape(op.getSelf(), dim, op.getKeepdim()));
}

} // namespace

LogicalResult MedianOp::verify() { return verifyRowStatistic(*this, "median"); }

LogicalResult ModeOp::verify() { return verifyRowStatistic(*this, "mode"); }

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), out = getType().getShape();
  if (getOffsets().size() != in.size() || getStrides().size() != in.size() ||
      out.size() != in.size())
    return emitOpError("offsets, strides and result need the input's rank");
  if (getSelf().getType().getElementType() != getType().getElementType())
    return emitOpError("slice cannot change the element type");
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t offset = getOffsets()[d], stride = getStrides()[d];
    if (stride < 1 || offset < 0)
      return emitOpError() << "dim " << d << ": offset " << offset
                           << " and stride " << stride << " must be valid";
    if (ShapedType::isDynamic(in[d]) || ShapedType::isDynamic(out[d])) {
      // A symbolic extent is only ever taken whole.
      if (in[d] != out[d] || offset != 0 || stride != 1)
        return emitOpError() << "dim " << d << " of symbolic size must be taken whole";
      continue;
    }
    if (WideInt(offset) + WideInt(out[d] - 1) * stride >= in[d])
      return emitOpError() << "dim " << d << " reads past extent " << in[d];
  }
  return success();
}

LogicalResult CatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  ArrayRef<int64_t> out = getType().getShape();
  int64_t dim = getDim();
  if (dim < 0 || dim >= static_cast<int64_t>(out.size()))
    return emitOpError() << "dim " << dim << " is out of range";
  WideInt total = 0;
  for (Value input : getInputs()) {
    ArrayRef<int64_t> shape = shapeOf(input);
    if (shape.size() != out.size())
      return emitOpError("operands need the result's rank");
    for (size_t d = 0; d < out.size(); ++d)
      if (static_cast<int64_t>(d) != dim && shape[d] != out[d])
        return emitOpError() << "operand extent " << shape[d] << " of dim "
                             << d << " differs from the result's";
    total += shape[dim];
  }
  if (total != out[dim])
    return emitOpError() << "result extent " << out[dim]
                         << " of the concatenated dim must be "
                         << formatWide(total);
  return success();
}

LogicalResult FlipOp::verify() {
  int64_t rank = getType().getRank();
  SmallVector<bool> seen(rank, false);
  for (int64_t dim : getDims()) {
    if (dim < 0 || dim >= rank)
      return emitOpError() << "dim " << dim << " is out of range";
    if (seen[dim])
      return emitOpError() << "dim " << dim << " appears twice";
    seen[dim] = true;
  }
  return success();
}

int64_t AsStridedOp::lastPosition(ArrayRef<int64_t> size,
                                  ArrayRef<int64_t> stride, int64_t offset) {
  // In 128 bits: each term is below 2^126 for int64 sizes and strides, and
  // the sum stops as soon as it passes 2^63 - 1, so it never overflows.
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  __int128 last = offset;
  for (size_t d = 0; d < size.size() && last <= kMax; ++d)
    last += static_cast<__int128>(size[d] - 1) * stride[d];
  return last > kMax ? -1 : static_cast<int64_t>(last);
}

LogicalResult AsStridedOp::verify() {
  ArrayRef<int64_t> size = getType().getShape(), stride = getStride();
  if (stride.size() != size.size())
    return emitOpError() << "has " << stride.size() << " strides for a rank-"
                         << size.size() << " result";
  if (getType().getElementType() !=
      cast<RankedTensorType>(getSelf().getType()).getElementType())
    return emitOpError() << "result element type must be self's";
  if (getStorageOffsetAttr().getInt() < 0)
    return emitOpError() << "storage_offset " << getStorageOffsetAttr().getInt()
                         << " is negative";
  for (int64_t s : stride)
    if (s < 0)
      return emitOpError() << "stride " << s << " is negative";
  if (getType().getNumElements() == 0)
    return success();
  int64_t available = cast<RankedTensorType>(getSelf().getType()).getNumElements();
  int64_t last = lastPosition(size, stride, getStorageOffsetAttr().getInt());
  if (last < 0 || last >= available)
    return emitOpError() << "reads past the " << available
                         << " elements of self";
  return success();
}

LogicalResult RepeatOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), repeats = getRepeats();
  RankedTensorType type = getType();
  if (repeats.size() < in.size())
    return emitOpError() << "has " << repeats.size()
                         << " repeats for a rank-" << in.size() << " self";
  if (type.getRank() != static_cast<int64_t>(repeats.size()))
    return emitOpError() << "result rank must be " << repeats.size();
  if (type.getElementType() != cast<RankedTensorType>(getSelf().getType()).getElementType())
    return emitOpError() << "result element type must be self's";
  size_t lead = repeats.size() - in.size();
  for (size_t d = 0; d < repeats.size(); ++d) {
    int64_t size = d < lead ? 1 : in[d - lead];
    if (repeats[d] < 1)
      return emitOpError() << "repeat count " << repeats[d] << " of dim " << d
                           << " is below 1";
    int64_t want = 0;
    if (llvm::MulOverflow(repeats[d], size, want) || type.getDimSize(d) != want)
      return emitOpError() << "result dim " << d << " must be " << repeats[d]
                           << " * " << size;
  }
  return success();
}

int64_t DiagonalOp::length(int64_t rows, int64_t cols, int64_t offset) {
  // Offsets past the matrix give an empty diagonal; both are extents, so
  // neither difference overflows.
  if (offset >= cols || offset <= -rows)
    return 0;
  return std::min(rows - std::max<int64_t>(-offset, 0),
                  cols - std::max<int64_t>(offset, 0));
}

LogicalResult DiagonalOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf());
  int64_t rank = in.size(), d1 = getDim1(), d2 = getDim2();
  if (rank < 2)
    return emitOpError("self needs rank 2 or more");
  if (d1 < 0 || d1 >= rank || d2 < 0 || d2 >= rank || d1 == d2)
    return emitOpError() << "dim1 " << d1 << " and dim2 " << d2
                         << " must be distinct dims of self";
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d)
    if (d != d1 && d != d2)
      expected.push_back(in[d]);
  expected.push_back(length(in[d1], in[d2], getOffset()));
  if (ArrayRef<int64_t>(expected) != getType().getShape())
    return emitOpError("result shape must be self's other dims, then the "
                       "diagonal's length");
  if (getSelf().getType().getElementType() != getType().getElementType())
    return emitOpError("cannot change the element type");
  return success();
}

LogicalResult IndexSelectOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), index = shapeOf(getIndex());
  int64_t dim = getDim();
  if (!isIntegerTensor(getIndex()))
    return emitOpError("index must be an integer tensor");
  if (dim < 0 || dim >= static_cast<int64_t>(in.size()))
    return emitOpError() << "dim " << dim << " is out of range";
  SmallVector<int64_t> expected(in.take_front(dim));
  expected.append(index.begin(), index.end());
  expected.append(in.begin() + dim + 1, in.end());
  if (ArrayRef<int64_t>(expected) != getType().getShape())
    return emitOpError("result shape must be self[:dim] + index + self[dim+1:]");
  if (getSelf().getType().getElementType() != getType().getElementType())
    return emitOpError("cannot change the element type");
  return success();
}

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), index = shapeOf(getIndex());
  int64_t dim = getDim();
  if (!isIntegerTensor(getIndex()))
    return emitOpError("index must be an integer tensor");
  if (in.size() != index.size() || dim < 0 ||
      dim >= static_cast<int64_t>(in.size()))
    return emitOpError("index needs self's rank and dim must be in range");
  for (size_t d = 0; d < in.size(); ++d)
    if (static_cast<int64_t>(d) != dim && index[d] > in[d])
      return emitOpError() << "index extent " << index[d] << " of dim " << d
                           << " exceeds self's " << in[d];
  if (index != getType().getShape() ||
      getSelf().getType().getElementType() != getType().getElementType())
    return emitOpError("result must have the index's shape and self's type");
  return success();
}

LogicalResult InsertSliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), src = shapeOf(getSrc());
  if (getType() != getSelf().getType())
    return emitOpError("result must have self's type");
  if (getOffsets().size() != in.size() || getStrides().size() != in.size() ||
      src.size() != in.size())
    return emitOpError("offsets, strides and src need self's rank");
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t offset = getOffsets()[d], stride = getStrides()[d];
    if (stride < 1 || offset < 0 ||
        WideInt(offset) + WideInt(src[d] - 1) * stride >= in[d])
      return emitOpError() << "dim " << d << ": src does not fit";
  }
  return success();
}

LogicalResult IndexPutOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), index = shapeOf(getIndex()),
                    values = shapeOf(getValues());
  if (getType() != getSelf().getType())
    return emitOpError("result must have self's type");
  if (!isIntegerTensor(getIndex()) || index.size() != 1)
    return emitOpError("index must be a 1-D integer tensor");
  if (in.empty() || values.size() != in.size() || values[0] != index[0] ||
      values.drop_front() != in.drop_front())
    return emitOpError("values must be (K, self.shape[1:])");
  return success();
}

/// What aten.scatter and aten.scatter_reduce both ask: the result has
/// self's type and the index is an integer tensor.
static LogicalResult verifyScatterTypes(Operation *op, Value self, Value index) {
  if (op->getResult(0).getType() != self.getType())
    return op->emitOpError("result must have self's type");
  if (!isIntegerTensor(index))
    return op->emitOpError("index must be an integer tensor");
  return success();
}

LogicalResult ScatterOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), index = shapeOf(getIndex()),
                    src = shapeOf(getSrc());
  if (failed(verifyScatterTypes(*this, getSelf(), getIndex())))
    return failure();
  StringRef reduce = getReduce();
  if (reduce != "none" && reduce != "sum" && reduce != "prod" &&
      reduce != "amax" && reduce != "amin")
    return emitOpError() << "unknown reduce \"" << reduce << "\"";
  int64_t dim = getDim();
  if (dim < 0 || dim >= static_cast<int64_t>(in.size()) || index != src ||
      index.size() != in.size())
    return emitOpError("index and src need self's rank and equal shapes");
  for (size_t d = 0; d < in.size(); ++d)
    if (static_cast<int64_t>(d) != dim && index[d] != in[d])
      return emitOpError() << "index extent " << index[d] << " of dim " << d
                           << " must equal self's " << in[d];
  return success();
}

LogicalResult ScatterReduceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), index = shapeOf(getIndex()),
                    src = shapeOf(getSrc());
  if (failed(verifyScatterTypes(*this, getSelf(), getIndex())))
    return failure();
  if (cast<RankedTensorType>(getSrc().getType()).getElementType() !=
      getType().getElementType())
    return emitOpError("src must have self's element type");
  StringRef reduce = getReduce();
  if (reduce != "none" && reduce != "sum" && reduce != "prod" &&
      reduce != "mean" && reduce != "amax" && reduce != "amin")
    return emitOpError() << "unknown reduce \"" << reduce << "\"";
  if (reduce == "none" && !getIncludeSelf())
    return emitOpError("a scatter without reduction always keeps self");
  Type element = getType().getElementType();
  if (reduce == "mean" && element.isInteger(1))
    return emitOpError("a boolean tensor has no mean");
  if (getWrapU8() && (reduce != "mean" || !isa<IntegerType>(element)))
    return emitOpError("wrap_u8 is for the mean of (widened) uint8 tensors");
  if (index.size() != in.size() || src.size() != in.size())
    return emitOpError("index and src need self's rank");
  int64_t dim = getDim();
  if (dim < 0 || dim >= std::max<int64_t>(in.size(), 1))
    return emitOpError() << "dim " << dim << " is out of range";
  for (size_t d = 0; d < in.size(); ++d) {
    if (index[d] > src[d])
      return emitOpError() << "index extent " << index[d] << " of dim " << d
                           << " is larger than src's";
    if (static_cast<int64_t>(d) != dim && index[d] > in[d])
      return emitOpError() << "index extent " << index[d] << " of dim " << d
                           << " is larger than self's";
  }
  return success();
}

LogicalResult PutOp::verify() {
  if (failed(verifyScatterTypes(*this, getSelf(), getIndex())))
    return failure();
  auto index = cast<RankedTensorType>(getIndex().getType());
  auto source = cast<RankedTensorType>(getSource().getType());
  if (source.getElementType() != getType().getElementType())
    return emitOpError("source must have self's element type");
  if (index.getNumElements() != source.getNumElements())
    return emitOpError() << "index has " << index.getNumElements() << " elements and source "
                         << source.getNumElements() << ": they must match";
  return success();
}

LogicalResult IndexReduceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), index = shapeOf(getIndex()),
                    source = shapeOf(getSource());
  if (failed(verifyScatterTypes(*this, getSelf(), getIndex())))
    return failure();
  Type element = getType().getElementType();
  if (cast<RankedTensorType>(getSource().getType()).getElementType() != element)
    return emitOpError("source must have self's element type");
  StringRef reduce = getReduce();
  if (reduce != "prod" && reduce != "mean" && reduce != "amax" && reduce != "amin")
    return emitOpError() << "unknown reduce \"" << reduce
                         << "\" (prod, mean, amax or amin)";
  if (reduce == "mean" && element.isInteger(1))
    return emitOpError("a boolean tensor has no mean");
  if (getWrapU8() && (reduce != "mean" || !isa<IntegerType>(element)))
    return emitOpError("wrap_u8 is for the mean of (widened) uint8 tensors");
  if (in.empty())
    return emitOpError("self needs a dimension to index");
  if (index.size() != 1)
    return emitOpError("index must be 1-d");
  int64_t dim = getDim();
  if (dim < 0 || dim >= static_cast<int64_t>(in.size()))
    return emitOpError() << "dim " << dim << " is out of range";
  if (source.size() != in.size())
    return emitOpError("source needs self's rank");
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t want = static_cast<int64_t>(d) == dim ? index[0] : in[d];
    if (source[d] != want)
      return emitOpError() << "source's extent " << source[d] << " of dim " << d
                           << " must be " << want;
  }
  return success();
}

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getSelf()), out = getType().getShape();
  if (getLow().size() != in.size() || getHigh().size() != in.size() ||
      out.size() != in.size())
    return emitOpError("low, high and result need self's rank");
  if (getSelf().getType().getElementType() != getType().getElementType())
    return emitOpError("cannot change the element type");
  for (size_t d = 0; d < in.size(); ++d) {
    // Negative amounts crop, at most the whole dim (as eager's narrow).
    WideInt kept = WideInt(in[d]) + std::min<int64_t>(getLow()[d], 0) +
                   std::min<int64_t>(getHigh()[d], 0);
    if (kept < 0)
      return emitOpError() << "dim " << d << " crops more than its " << in[d]
                           << " elements";
    WideInt expected = WideInt(in[d]) + getLow()[d] + getHigh()[d];
    if (out[d] != expected)
      return emitOpError() << "result dim " << d << " must be "
                           << formatWide(expected);
  }
  return success();
}

LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxLike(*this, getDim(), getType());
}

LogicalResult ArangeOp::verify() {
  if (getType().getRank() != 1)
    return emitOpError("produces a 1-D tensor");
  // A step of 0 repeats start: an integer arange whose step eager cut to
  // 0 (the importer refuses a step of 0 as given).
  if (!std::isfinite(getStep().convertToDouble()) ||
      !std::isfinite(getStart().convertToDouble()))
    return emitOpError("start and step must be finite");
  return success();
}

LogicalResult NonzeroOp::verify() {
  RankedTensorType type = getType();
  int64_t rank = getSelf().getType().getRank();
  if (type.getRank() != 2 || !type.isDynamicDim(0) || type.isDynamicDim(1) ||
      type.getDimSize(1) != rank || !type.getElementType().isInteger(64))
    return emitOpError() << "result must be tensor<?x" << rank
                         << "xi64> (a row of coordinates per nonzero element)";
  if (isa<ComplexType>(getSelf().getType().getElementType()))
    return emitOpError() << "takes a real tensor";
  return success();
}

LogicalResult UniqueOp::verify() {
  RankedTensorType self = getSelf().getType();
  if (self.getNumElements() == 0)
    return emitOpError() << "self must have elements (an empty unique is empty tensors)";
  Type i64 = IntegerType::get(getContext(), 64);
  auto rows = [](Type element) {
    return RankedTensorType::get({ShapedType::kDynamic}, element);
  };
  if (getValues().getType() != rows(self.getElementType()))
    return emitOpError() << "values must be " << rows(self.getElementType());
  if (getInverse().getType() != RankedTensorType::get(self.getShape(), i64))
    return emitOpError() << "inverse must be " << RankedTensorType::get(self.getShape(), i64);
  if (getCounts().getType() != rows(i64))
    return emitOpError() << "counts must be " << rows(i64);
  return success();
}

LogicalResult UniqueDimOp::verify() {
  RankedTensorType self = getSelf().getType();
  const int64_t dim = getDim();
  if (dim < 0 || dim >= self.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank " << self.getRank();
  if (self.getNumElements() == 0)
    return emitOpError() << "self must have elements (an empty unique is empty tensors)";
  Type i64 = IntegerType::get(getContext(), 64);
  SmallVector<int64_t> shape(self.getShape());
  shape[dim] = ShapedType::kDynamic;
  auto values = RankedTensorType::get(shape, self.getElementType());
  if (getValues().getType() != values)
    return emitOpError() << "values must be " << values;
  auto inverse = RankedTensorType::get({self.getDimSize(dim)}, i64);
  if (getInverse().getType() != inverse)
    return emitOpError() << "inverse must be " << inverse;
  auto counts = RankedTensorType::get({ShapedType::kDynamic}, i64);
  if (getCounts().getType() != counts)
    return emitOpError() << "counts must be " << counts;
  return success();
}

LogicalResult RepeatInterleaveOp::verify() {
  RankedTensorType repeats = getRepeats().getType(), type = getType();
  if (repeats.getRank() != 1 || !isa<IntegerType>(repeats.getElementType()) ||
      repeats.getElementType().isInteger(1))
    return emitOpError() << "repeats must be a 1-D integer tensor";
  if (type.getRank() != 1 || type.getElementType() != repeats.getElementType())
    return emitOpError() << "result must be a 1-D tensor of repeats' type";
  if (getCapacity() < 0)
    return emitOpError() << "capacity must not be negative";
  if (!type.isDynamicDim(0) && type.getDimSize(0) != getCapacity())
    return emitOpError() << "a static result holds capacity (" << getCapacity()
                         << ") elements";
  return success();
}

LogicalResult BincountOp::verify() {
  RankedTensorType self = getSelf().getType(), type = getType();
  if (self.getRank() != 1 || !isa<IntegerType>(self.getElementType()) ||
      self.getElementType().isInteger(1))
    return emitOpError() << "self must be a 1-D integer tensor";
  Type want = IntegerType::get(getContext(), 64);
  if (Value weights = getWeights()) {
    auto weightsType = cast<RankedTensorType>(weights.getType());
    if (weightsType.getShape() != self.getShape())
      return emitOpError() << "weights must have self's shape";
    want = weightsType.getElementType().isF32() ? Type(Float32Type::get(getContext()))
                                                : Type(Float64Type::get(getContext()));
    if (weightsType.getElementType() != want)
      return emitOpError() << "weights must be f32 or f64 (the importer widens others)";
  }
  if (type != RankedTensorType::get({ShapedType::kDynamic}, want))
    return emitOpError() << "result must be " << RankedTensorType::get({ShapedType::kDynamic}, want);
  if (getMinlength() < 0)
    return emitOpError() << "minlength must not be negative";
  if (getCapacity() < getMinlength())
    return emitOpError() << "capacity must be at least minlength";
  return success();
}

LogicalResult BooleanMaskOp::verify() {
  RankedTensorType self = getSelf().getType(), mask = getMask().getType();
  RankedTensorType type = getType();
  if (!mask.getElementType().isInteger(1))
    return emitOpError() << "mask must be a boolean (i1) tensor";
  if (mask.getRank() < 1 || mask.getRank() > self.getRank() ||
      self.getShape().take_front(mask.getRank()) != mask.getShape())
    return emitOpError() << "mask's shape must be self's leading dims";
  SmallVector<int64_t> want = {ShapedType::kDynamic};
  llvm::append_range(want, self.getShape().drop_front(mask.getRank()));
  if (type.getShape() != ArrayRef<int64_t>(want) ||
      type.getElementType() != self.getElementType())
    return emitOpError() << "result must be " << RankedTensorType::get(want, self.getElementType())
                         << ": a dynamic row count, then self's other dims";
  return success();
}
