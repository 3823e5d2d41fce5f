//===- FlatIndexHandlers.cpp - ops that address elements in row-major order ===//
//
// This file implements the importer handlers of ops defined over a tensor's
// elements in row-major order: as_strided (a window of them at a storage
// offset with strides), unfold (sliding windows along a dim),
// diagonal_scatter (a diagonal replaced), masked_scatter (the k-th set
// position of the mask takes source's k-th element), and the constant
// coordinate lists tril_indices and triu_indices. as_strided and unfold
// are one aten.as_strided each, which reads through its own indexing; the
// others read through one aten.index_select over a flattened tensor, with
// a constant table where the positions follow from the shapes.
//
// Kiln's values are dense and row-major, so as_strided reads the elements
// of its input's row-major copy: eager's answer whenever that input is
// contiguous with storage offset 0 (every intermediate value, and inputs
// passed as such). A view handed in as an input is copied densely by the
// client, so its storage (which eager's as_strided would read) is not there.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The elements of `self`'s row-major copy at `offset` + sum(i_d *
/// stride[d]) for every index i of `type`: one aten.as_strided, read
/// through its own indexing when lowered. `what` names the op in errors.
absl::StatusOr<Value> stridedView(NodeImporter &n, Value self,
                                  RankedTensorType type,
                                  ArrayRef<int64_t> stride, int64_t offset,
                                  const char *what) {
  int64_t available = typeOf(self).getNumElements();
  int64_t last = aten::AsStridedOp::lastPosition(type.getShape(), stride, offset);
  if (last < 0 || last >= available)
    return n.error(absl::StrCat(
        what, " reads element ",
        last < 0 ? std::string("2^63 or beyond") : absl::StrCat(last),
        " of an input with ", available,
        " (Kiln reads the input's dense row-major elements)"));
  return n.b()
      .create<aten::AsStridedOp>(n.loc(), type, self,
                                 n.b().getDenseI64ArrayAttr(stride),
                                 n.b().getI64IntegerAttr(offset))
      .getResult();
}

/// Row-major strides of `shape`.
SmallVector<int64_t> denseStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

absl::StatusOr<Values> asStrided(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(std::vector<int64_t> size, n.intsAttr("size", true));
  ASSIGN_OR_RETURN(std::vector<int64_t> stride, n.intsAttr("stride", true));
  ASSIGN_OR_RETURN(int64_t offset, n.intAttr("storage_offset", 0));
  if (size.size() != stride.size())
    return n.error(absl::StrCat("size has ", size.size(), " entries and stride ",
                                stride.size()));
  if (ArrayRef<int64_t>(size) != type.getShape())
    return n.error("the declared result shape differs from size");
  if (offset < 0)
    return n.error(absl::StrCat("storage_offset ", offset, " is negative"));
  for (int64_t s : stride)
    if (s < 0)
      return n.error(absl::StrCat("stride ", s, " is negative"));
  ASSIGN_OR_RETURN(Value window,
                   stridedView(n, self, type, stride, offset, "as_strided"));
  return Values{window};
}

/// unfold(dimension, size, step): every window of `size` elements along
/// the dim, `step` apart, as a new last dim.
absl::StatusOr<Values> unfold(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t raw, n.intAttr("dimension"));
  ASSIGN_OR_RETURN(int64_t size, n.intAttr("size"));
  ASSIGN_OR_RETURN(int64_t step, n.intAttr("step"));
  SmallVector<int64_t> shape(typeOf(self).getShape());
  if (shape.empty())
    shape.push_back(1); // a 0-d input unfolds as one element
  ASSIGN_OR_RETURN(int64_t dim,
                   n.normalizeDim(raw, static_cast<int64_t>(shape.size())));
  if (step < 1)
    return n.error(absl::StrCat("step ", step, " must be positive"));
  if (size < 0 || size > shape[dim])
    return n.error(absl::StrCat("size ", size, " must be in [0, ", shape[dim],
                                "], the extent of dim ", dim));
  SmallVector<int64_t> strides = denseStrides(shape);
  SmallVector<int64_t> outSize(shape), outStride(strides);
  outSize[dim] = (shape[dim] - size) / step + 1;
  // A step past the extent leaves one window (and keeps the product small).
  outStride[dim] = strides[dim] * std::min<int64_t>(step, std::max<int64_t>(shape[dim], 1));
  outSize.push_back(size);
  outStride.push_back(strides[dim]);
  if (typeOf(self).getRank() == 0) {
    outSize.erase(outSize.begin());
    outStride.erase(outStride.begin());
  }
  if (ArrayRef<int64_t>(outSize) != type.getShape())
    return n.error("the declared result shape differs from the windows'");
  ASSIGN_OR_RETURN(Value window, stridedView(n, self, type, outStride, 0, "unfold"));
  return Values{window};
}

/// diagonal_scatter(self, src, offset, dim1, dim2): self with the diagonal
/// that diagonal(self, offset, dim1, dim2) reads replaced by src (whose
/// shape is that diagonal's: the other dims in order, then its length).
absl::StatusOr<Values> diagonalScatter(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value src, n.tensor("src"));
  ASSIGN_OR_RETURN(int64_t offset, n.intAttr("offset", 0));
  ASSIGN_OR_RETURN(int64_t raw1, n.intAttr("dim1", 0));
  ASSIGN_OR_RETURN(int64_t raw2, n.intAttr("dim2", 1));
  ArrayRef<int64_t> shape = typeOf(self).getShape();
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2)
    return n.error("diagonal_scatter needs self of rank 2 or more");
  ASSIGN_OR_RETURN(int64_t dim1, n.normalizeDim(raw1, rank));
  ASSIGN_OR_RETURN(int64_t dim2, n.normalizeDim(raw2, rank));
  if (dim1 == dim2)
    return n.error("dim1 and dim2 must differ");
  if (typeOf(src).getElementType() != type.getElementType())
    return n.error("src must have self's dtype");
  int64_t length = std::max<int64_t>(
      0, offset >= 0 ? std::min(shape[dim1], shape[dim2] - offset)
                     : std::min(shape[dim1] + offset, shape[dim2]));
  SmallVector<int64_t> diagonalShape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim1 && d != dim2)
      diagonalShape.push_back(shape[d]);
  diagonalShape.push_back(length);
  if (typeOf(src).getShape() != ArrayRef<int64_t>(diagonalShape))
    return n.error("src must have the shape of the diagonal it replaces");
  int64_t count = type.getNumElements();
  if (count > kMaxConstantTable)
    return n.unimplemented(absl::StrCat("diagonal_scatter of more than ",
                                        kMaxConstantTable, " elements"));
  // For each element of self: on the diagonal, and which src element.
  SmallVector<int64_t> srcStrides = denseStrides(diagonalShape);
  std::vector<int8_t> onDiagonal(count, 0);
  std::vector<int64_t> source(count, 0);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i;
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    if (index[dim2] - index[dim1] != offset)
      continue;
    onDiagonal[i] = 1;
    int64_t k = 0, position = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim1 && d != dim2)
        position += index[d] * srcStrides[k++];
    position += offset >= 0 ? index[dim1] : index[dim2];
    source[i] = position;
  }
  auto maskType = type.clone(n.b().getI1Type());
  auto indexType = RankedTensorType::get({count}, n.b().getI64Type());
  SmallVector<bool> maskBits(onDiagonal.begin(), onDiagonal.end());
  Value mask = n.b().create<aten::ConstantOp>(
      n.loc(), maskType, DenseElementsAttr::get(maskType, ArrayRef<bool>(maskBits)));
  Value table = n.b().create<aten::ConstantOp>(
      n.loc(), indexType, DenseElementsAttr::get(indexType, ArrayRef<int64_t>(source)));
  int64_t srcCount = std::max<int64_t>(typeOf(src).getNumElements(), 1);
  if (typeOf(src).getNumElements() == 0)
    return Values{self};
  Value taken = n.b().create<aten::IndexSelectOp>(
      n.loc(), RankedTensorType::get({count}, type.getElementType()),
      viewValue(n, src, {srcCount}), table, n.b().getI64IntegerAttr(0));
  return Values{pointwise(n, type, "where",
                          {mask, viewValue(n, taken, type.getShape()), self})};
}

/// tril_indices / triu_indices(row, col, offset): the (2, N) coordinates
/// of the lower (upper) triangle, row by row, as a constant.
absl::StatusOr<Values> triangleIndices(NodeImporter &n, bool lower) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(int64_t rows, n.intAttr("row"));
  ASSIGN_OR_RETURN(int64_t cols, n.intAttr("col"));
  ASSIGN_OR_RETURN(int64_t offset, n.intAttr("offset", 0));
  if (rows < 0 || cols < 0)
    return n.error("row and col must be non-negative");
  if (static_cast<__int128>(rows) * cols > kMaxConstantTable)
    return n.unimplemented(absl::StrCat("a triangle of more than ",
                                        kMaxConstantTable, " positions"));
  std::vector<int64_t> is, js;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (lower ? j - i <= offset : j - i >= offset) {
        is.push_back(i);
        js.push_back(j);
      }
  if (type.getRank() != 2 || type.getDimSize(0) != 2 ||
      type.getDimSize(1) != static_cast<int64_t>(is.size()))
    return n.error(absl::StrCat("the declared result must be (2, ", is.size(), ")"));
  Type element = type.getElementType();
  if (!element.isInteger(32) && !element.isInteger(64))
    return n.error("the indices' dtype must be int32 or int64 (as eager's)");
  is.insert(is.end(), js.begin(), js.end());
  SmallVector<APInt> values;
  for (int64_t v : is)
    values.push_back(APInt(element.getIntOrFloatBitWidth(), v, /*isSigned=*/true));
  return Values{n.b().create<aten::ConstantOp>(
      n.loc(), type, DenseElementsAttr::get(type, values))};
}

/// masked_scatter: at the k-th set position of the mask (row-major, after
/// self and mask broadcast), source's k-th element; elsewhere self.
absl::StatusOr<Values> maskedScatter(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(Value mask, n.tensor("mask"));
  ASSIGN_OR_RETURN(Value source, n.tensor("source"));
  if (!typeOf(mask).getElementType().isInteger(1))
    return n.error("mask must be bool");
  if (typeOf(source).getElementType() != type.getElementType())
    return n.error("source must have self's dtype");
  auto broadcast = [&](Value v, Type element) -> Value {
    RankedTensorType to = type.clone(element);
    return typeOf(v) == to ? v : n.b().create<aten::ExpandOp>(n.loc(), to, v).getResult();
  };
  Value wide = broadcast(self, type.getElementType());
  Value set = broadcast(mask, n.b().getI1Type());
  int64_t count = type.getNumElements();
  auto flatI64 = RankedTensorType::get({count}, n.b().getI64Type());
  Value ones = pointwise(n, type.clone(n.b().getI64Type()), "copy", set);
  ones = viewValue(n, ones, {count});
  // Set positions before each element: source's index at a set position.
  Value through = n.b().create<aten::CumsumOp>(n.loc(), flatI64, ones,
                                               n.b().getI64IntegerAttr(0),
                                               n.b().getBoolAttr(false));
  Value before = n.b().create<aten::SubOp>(n.loc(), flatI64, through, ones,
                                           n.b().getF64FloatAttr(1.0));
  Value flatSource = viewValue(n, source, {typeOf(source).getNumElements()});
  // Unset positions may index past source's end: index_select clamps them,
  // and the where below never takes them.
  Value taken = n.b().create<aten::IndexSelectOp>(
      n.loc(), RankedTensorType::get({count}, type.getElementType()), flatSource,
      before, n.b().getI64IntegerAttr(0));
  return Values{pointwise(n, type, "where", {set, viewValue(n, taken, type.getShape()), wide})};
}

} // namespace

void addFlatIndexHandlers(OpHandlerTable &t) {
  t["aten.as_strided.default"] = asStrided;
  t["aten.masked_scatter.default"] = maskedScatter;
  t["aten.unfold.default"] = unfold;
  t["aten.diagonal_scatter.default"] = diagonalScatter;
  t["aten.tril_indices.default"] = [](NodeImporter &n) {
    return triangleIndices(n, true);
  };
  t["aten.triu_indices.default"] = [](NodeImporter &n) {
    return triangleIndices(n, false);
  };
}

} // namespace kiln
