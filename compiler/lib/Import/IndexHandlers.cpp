//===- IndexHandlers.cpp - advanced indexing: index.Tensor, index_put -----===//
//
// This file implements the importer handlers of PyTorch's advanced indexing,
// `x[i, :, j]` and `x[:, i] = v`: aten.index.Tensor and aten.index_put with a
// `Tensor?[]` index list, where None (and every trailing dim the list does
// not reach) means the whole dimension.
//
// The index tensors broadcast together to a shape B. When the indexed dims
// are adjacent, B replaces them in place (x[:, i, j] is (S0, B, S3...));
// otherwise B goes first and the other dims follow in order (x[i, :, j] is
// (B, S1)). Both become one aten.index_select (or aten.index_put) of the
// indexed dims' linearized index over self viewed with those dims merged,
// after a permute that moves non-adjacent indexed dims to the front.
//
// index_put with one leading boolean mask (`x[mask] = v`) is a where over
// the mask, reading values' rows through the mask's running count.
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

/// The index tensors of a `Tensor?[]` list and the dims of self they index.
struct IndexList {
  SmallVector<Value> tensors;
  SmallVector<int64_t> dims;

  size_t size() const { return dims.size(); }
  bool adjacent() const {
    return dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  }
};

/// Reads `indices`: None entries are skipped (whole dims), every index tensor
/// must be an integer tensor, and at least one must be given.
absl::StatusOr<IndexList> readIndices(NodeImporter &n, int64_t rank) {
  ASSIGN_OR_RETURN(std::vector<std::optional<Value>> entries,
                   n.optionalTensors("indices"));
  if (static_cast<int64_t>(entries.size()) > rank)
    return n.error(absl::StrCat("has ", entries.size(),
                                " indices for a tensor of rank ", rank));
  IndexList list;
  for (size_t d = 0; d < entries.size(); ++d) {
    if (!entries[d])
      continue;
    Type element = typeOf(*entries[d]).getElementType();
    if (!isa<IntegerType>(element) || element.isInteger(1))
      return n.unimplemented("only integer index tensors are supported (a "
                             "boolean mask only as the one index)");
    list.tensors.push_back(*entries[d]);
    list.dims.push_back(static_cast<int64_t>(d));
  }
  if (list.tensors.empty())
    return n.error("every index is None: nothing to index");
  return list;
}

/// The shape the index tensors broadcast to.
absl::StatusOr<SmallVector<int64_t>> broadcastShape(NodeImporter &n,
                                                    const IndexList &list) {
  SmallVector<int64_t> shape;
  for (Value index : list.tensors) {
    ArrayRef<int64_t> s = typeOf(index).getShape();
    if (s.size() > shape.size())
      shape.insert(shape.begin(), s.size() - shape.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &slot = shape[shape.size() - s.size() + i];
      if (slot != 1 && s[i] != 1 && slot != s[i])
        return n.error("index tensors do not broadcast together");
      slot = std::max(slot, s[i]);
    }
  }
  return shape;
}

/// The index tensors, each wrapped (Python modulo) by its dim's extent in
/// `extents`, combined row-major into one i64 index of shape `shape` over
/// those dims merged into one of extent prod(extents).
Value linearizeIndices(NodeImporter &n, ArrayRef<Value> indices,
                       ArrayRef<int64_t> extents, ArrayRef<int64_t> shape) {
  Type i64 = n.b().getI64Type();
  auto linearType = RankedTensorType::get(shape, i64);
  Value linear;
  int64_t stride = 1;
  for (size_t j = indices.size(); j-- > 0;) {
    auto wrappedType =
        RankedTensorType::get(typeOf(indices[j]).getShape(), i64);
    Value wrapped = n.b().create<aten::PointwiseOp>(
        n.loc(), wrappedType, n.b().getStringAttr("remainder"),
        ValueRange{indices[j], n.constant(i64, double(extents[j]))},
        n.b().getDenseF64ArrayAttr({}));
    Value term = n.b().create<aten::MulOp>(n.loc(), wrappedType, wrapped,
                                           n.constant(i64, double(stride)));
    if (!linear)
      linear = term.getType() == linearType
                   ? term
                   : n.b().create<aten::ExpandOp>(n.loc(), linearType, term);
    else
      linear = n.b().create<aten::AddOp>(n.loc(), linearType, linear, term,
                                         n.b().getF64FloatAttr(1.0));
    stride *= extents[j];
  }
  return linear;
}

/// The indexed dims first, then the others in order.
SmallVector<int64_t> indexedFirst(const IndexList &list, int64_t rank) {
  SmallVector<int64_t> perm(list.dims.begin(), list.dims.end());
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(list.dims, d))
      perm.push_back(d);
  return perm;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

/// `shape` with [first, first + count) replaced by `middle`.
SmallVector<int64_t> replaceDims(ArrayRef<int64_t> shape, int64_t first,
                                 int64_t count, ArrayRef<int64_t> middle) {
  SmallVector<int64_t> out(shape.take_front(first));
  out.append(middle.begin(), middle.end());
  out.append(shape.begin() + first + count, shape.end());
  return out;
}

} // namespace

absl::StatusOr<std::optional<Value>> soleBooleanIndex(NodeImporter &n) {
  ASSIGN_OR_RETURN(std::vector<std::optional<Value>> entries,
                   n.optionalTensors("indices"));
  if (entries.size() == 1 && entries[0] &&
      typeOf(*entries[0]).getElementType().isInteger(1))
    return entries[0];
  return std::optional<Value>();
}

namespace {

/// index.Tensor: self[indices] as one index_select over the indexed dims,
/// made adjacent (by moving them first) and merged.
absl::StatusOr<Values> index(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  int64_t rank = typeOf(self).getRank();
  if (rank == 0)
    return n.error("cannot index a 0-d tensor");
  // x[mask]: one leading boolean index selects rows; their count is a
  // data-dependent size.
  ASSIGN_OR_RETURN(std::optional<Value> mask, soleBooleanIndex(n));
  if (mask)
    return indexByMask(n, type, self, *mask);
  if (!typeOf(self).hasStaticShape() || !type.hasStaticShape())
    return n.unimplemented("integer indexing of a tensor with symbolic sizes");
  ASSIGN_OR_RETURN(IndexList list, readIndices(n, rank));
  ASSIGN_OR_RETURN(SmallVector<int64_t> shape, broadcastShape(n, list));
  int64_t first = list.dims.front(), k = list.size();
  if (!list.adjacent()) {
    self = permuteValue(n, self, indexedFirst(list, rank));
    first = 0;
  }
  Value index = list.tensors.front();
  if (k > 1) {
    ArrayRef<int64_t> extents = typeOf(self).getShape().slice(first, k);
    int64_t rows = 1;
    for (int64_t e : extents)
      rows *= e;
    index = linearizeIndices(n, list.tensors, extents, shape);
    self = viewValue(n, self,
                replaceDims(typeOf(self).getShape(), first, k, {rows}));
  }
  return Values{n.b().create<aten::IndexSelectOp>(
      n.loc(), type, self, index, n.b().getI64IntegerAttr(first))};
}

/// index_put(self, indices, values, accumulate): the indexed dims moved to
/// the front and merged into rows, values broadcast to self[indices] and
/// laid out as (B, other dims...), one aten.index_put over the rows, and
/// the inverse moves back.
/// index_put with one leading boolean mask (`x[mask] = v`): over the
/// mask's dims in row-major order, the k-th set position takes row k of
/// values, or values itself at every set position when values broadcast to
/// one row. Eager checks at run time that values has as many rows as the
/// mask has set positions; the graph's values shape fixes that count, and a
/// mask with another count reads clamped rows.
absl::StatusOr<Values> maskIndexPut(NodeImporter &n, RankedTensorType type,
                                    Value self, Value mask) {
  ArrayRef<int64_t> selfShape = typeOf(self).getShape();
  ArrayRef<int64_t> maskShape = typeOf(mask).getShape();
  if (maskShape.size() > selfShape.size() ||
      selfShape.take_front(maskShape.size()) != maskShape)
    return n.error("the boolean mask must have the shape of self's leading dims");
  ASSIGN_OR_RETURN(Value values,
                   n.tensorOrScalar("values", type.getElementType()));
  ASSIGN_OR_RETURN(bool accumulate, n.boolAttr("accumulate", false));
  Type element = type.getElementType();
  if (typeOf(values).getElementType() != element)
    values = pointwise(n, typeOf(values).clone(element), "copy", values);
  ArrayRef<int64_t> rest = selfShape.drop_front(maskShape.size());
  int64_t rows = 1;
  for (int64_t e : maskShape)
    rows *= e;
  SmallVector<int64_t> rowsShape = {rows};
  rowsShape.append(rest.begin(), rest.end());
  auto rowsType = RankedTensorType::get(rowsShape, element);
  ArrayRef<int64_t> valueShape = typeOf(values).getShape();
  bool oneRow = valueShape.size() <= rest.size() ||
                (valueShape.size() == rest.size() + 1 && valueShape[0] == 1);
  Value taken;
  if (oneRow) {
    taken = n.b().create<aten::ExpandOp>(n.loc(), rowsType, values);
  } else {
    if (valueShape.size() != rest.size() + 1)
      return n.error("values must be one row or one row per set mask position");
    SmallVector<int64_t> perRow = {valueShape[0]};
    perRow.append(rest.begin(), rest.end());
    auto perRowType = RankedTensorType::get(perRow, element);
    if (typeOf(values) != perRowType)
      values = n.b().create<aten::ExpandOp>(n.loc(), perRowType, values);
    auto flatI64 = RankedTensorType::get({rows}, n.b().getI64Type());
    Value ones = pointwise(n, flatI64, "copy", viewValue(n, mask, {rows}));
    Value through = n.b().create<aten::CumsumOp>(n.loc(), flatI64, ones,
                                                 n.b().getI64IntegerAttr(0),
                                                 n.b().getBoolAttr(false));
    Value before = n.b().create<aten::SubOp>(n.loc(), flatI64, through, ones,
                                             n.b().getF64FloatAttr(1.0));
    // Unset positions may index past the last row: index_select clamps
    // them, and the where below never takes them.
    taken = n.b().create<aten::IndexSelectOp>(n.loc(), rowsType, values, before,
                                              n.b().getI64IntegerAttr(0));
  }
  Value selfRows = viewValue(n, self, rowsShape);
  if (accumulate)
    taken = n.b().create<aten::AddOp>(n.loc(), rowsType, selfRows, taken,
                                      n.b().getF64FloatAttr(1.0));
  SmallVector<int64_t> maskRows(rowsShape.size(), 1);
  maskRows[0] = rows;
  Value set = viewValue(n, mask, maskRows);
  Value result = pointwise(n, rowsType, "where", {set, taken, selfRows});
  return Values{viewValue(n, result, type.getShape())};
}

absl::StatusOr<Values> indexPut(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  RankedTensorType selfType = typeOf(self);
  int64_t rank = selfType.getRank();
  if (rank == 0)
    return n.error("cannot index a 0-d tensor");
  {
    ASSIGN_OR_RETURN(std::vector<std::optional<Value>> entries,
                     n.optionalTensors("indices"));
    if (entries.size() == 1 && entries[0] &&
        typeOf(*entries[0]).getElementType().isInteger(1))
      return maskIndexPut(n, type, self, *entries[0]);
  }
  ASSIGN_OR_RETURN(IndexList list, readIndices(n, rank));
  ASSIGN_OR_RETURN(SmallVector<int64_t> shape, broadcastShape(n, list));
  ASSIGN_OR_RETURN(Value values,
                   n.tensorOrScalar("values", type.getElementType()));
  ASSIGN_OR_RETURN(bool accumulate, n.boolAttr("accumulate", false));
  int64_t k = list.size(), b = shape.size();
  Type element = type.getElementType();
  if (typeOf(values).getElementType() != element)
    values = n.b().create<aten::PointwiseOp>(
        n.loc(), typeOf(values).clone(element), n.b().getStringAttr("copy"),
        ValueRange{values}, n.b().getDenseF64ArrayAttr({}));

  // values broadcast to the shape of self[indices]...
  int64_t first = list.adjacent() ? list.dims.front() : 0;
  SmallVector<int64_t> perm = indexedFirst(list, rank);
  Value moved = isIdentity(perm) ? self : permuteValue(n, self, perm);
  ArrayRef<int64_t> movedShape = typeOf(moved).getShape();
  ArrayRef<int64_t> rest = movedShape.drop_front(k);
  SmallVector<int64_t> selected =
      list.adjacent() ? replaceDims(selfType.getShape(), first, k, shape)
                      : replaceDims(movedShape, 0, k, shape);
  auto selectedType = RankedTensorType::get(selected, element);
  if (typeOf(values) != selectedType)
    values = n.b().create<aten::ExpandOp>(n.loc(), selectedType, values);
  // ...then laid out as (B, rest...): B moves first when it sat at `first`.
  if (first > 0) {
    SmallVector<int64_t> order;
    for (int64_t i = 0; i < b; ++i)
      order.push_back(first + i);
    for (int64_t i = 0; i < static_cast<int64_t>(selected.size()); ++i)
      if (i < first || i >= first + b)
        order.push_back(i);
    values = permuteValue(n, values, order);
  }

  ArrayRef<int64_t> extents = movedShape.take_front(k);
  int64_t rows = 1, count = 1;
  for (int64_t e : extents)
    rows *= e;
  for (int64_t e : shape)
    count *= e;
  Value linear = linearizeIndices(n, list.tensors, extents, shape);
  SmallVector<int64_t> flatValues = {count}, flatSelf = {rows};
  flatValues.append(rest.begin(), rest.end());
  flatSelf.append(rest.begin(), rest.end());
  Value flatMoved = viewValue(n, moved, flatSelf);
  Value put = n.b().create<aten::IndexPutOp>(
      n.loc(), typeOf(flatMoved), flatMoved, viewValue(n, linear, {count}),
      viewValue(n, values, flatValues), n.b().getBoolAttr(accumulate));
  Value result = viewValue(n, put, movedShape);
  if (!isIdentity(perm)) {
    SmallVector<int64_t> inverse(rank);
    for (int64_t i = 0; i < rank; ++i)
      inverse[perm[i]] = i;
    result = permuteValue(n, result, inverse);
  }
  return Values{result};
}

} // namespace

void addIndexHandlers(OpHandlerTable &t) {
  t["aten.index.Tensor"] = index;
  t["aten.index_put.default"] = indexPut;
}

} // namespace kiln
