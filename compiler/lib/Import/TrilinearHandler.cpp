//===- TrilinearHandler.cpp - aten._trilinear as one batched product -------===//
//
// This file implements the importer handler of aten._trilinear, the op
// behind torch.nn.functional.bilinear: each of i1, i2, i3 gains size-1 dims
// at its `expand` positions (all three then have one rank R), and the result
// is sum over `sumdim` of i1 * i2 * i3, broadcast, with the summed dims
// removed.
//
// The broadcast product of all three is never formed. The two inputs whose
// broadcast is smallest are multiplied first (for bilinear x1 * x2,
// N x in1 x in2, not the N x out x in1 x in2 that the weight would give),
// then contracted with the third the way einsum lowers to bmm: each summed dim only one side has is summed there first; the other
// dims are batch dims (both sides), left dims (the product's only) and
// right dims (the third's only); one aten.bmm of (batch, left, summed) by
// (batch, summed, right) gives them, and a permute puts the result's dims
// back in order.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <set>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// `v` with size-1 dims inserted at `positions` (of the widened rank).
absl::StatusOr<Value> expandAt(NodeImporter &n, Value v,
                               const std::vector<int64_t> &positions,
                               int64_t rank, const char *name) {
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  if (static_cast<int64_t>(shape.size() + positions.size()) != rank)
    return n.error(absl::StrCat(name, " of rank ", shape.size(), " with ",
                                positions.size(), " expanded dims is not of rank ",
                                rank));
  std::set<int64_t> at(positions.begin(), positions.end());
  if (at.size() != positions.size() || (!at.empty() && (*at.begin() < 0 || *at.rbegin() >= rank)))
    return n.error(absl::StrCat("the expand dims of ", name,
                                " must be distinct and in [0, ", rank, ")"));
  SmallVector<int64_t> widened;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    widened.push_back(at.count(d) ? 1 : shape[next++]);
  return viewValue(n, v, widened);
}

/// A product over dims in `order` of `shape`'s extents.
int64_t extentOf(ArrayRef<int64_t> shape, ArrayRef<int64_t> order) {
  int64_t e = 1;
  for (int64_t d : order)
    e *= shape[d];
  return e;
}

absl::StatusOr<Values> trilinear(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value i1, n.tensor("i1"));
  ASSIGN_OR_RETURN(Value i2, n.tensor("i2"));
  ASSIGN_OR_RETURN(Value i3, n.tensor("i3"));
  ASSIGN_OR_RETURN(std::vector<int64_t> expand1, n.intsAttr("expand1", true));
  ASSIGN_OR_RETURN(std::vector<int64_t> expand2, n.intsAttr("expand2", true));
  ASSIGN_OR_RETURN(std::vector<int64_t> expand3, n.intsAttr("expand3", true));
  ASSIGN_OR_RETURN(std::vector<int64_t> sumdim, n.intsAttr("sumdim", true));
  Type element = type.getElementType();
  if (!isa<FloatType>(element))
    return n.unimplemented("_trilinear of a non-floating-point type");
  int64_t rank = typeOf(i1).getRank() + static_cast<int64_t>(expand1.size());
  ASSIGN_OR_RETURN(i1, expandAt(n, i1, expand1, rank, "i1"));
  ASSIGN_OR_RETURN(i2, expandAt(n, i2, expand2, rank, "i2"));
  ASSIGN_OR_RETURN(i3, expandAt(n, i3, expand3, rank, "i3"));
  std::set<int64_t> summed(sumdim.begin(), sumdim.end());
  for (int64_t d : summed)
    if (d < 0 || d >= rank)
      return n.error(absl::StrCat("sumdim ", d, " is outside [0, ", rank, ")"));

  // P = the product of the two inputs whose broadcast is smallest, Q = the
  // third (for bilinear: x1 * x2, then the weight).
  Value inputs[3] = {i1, i2, i3};
  auto broadcastShape = [&](Value a, Value b) -> absl::StatusOr<SmallVector<int64_t>> {
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t x = typeOf(a).getDimSize(d), y = typeOf(b).getDimSize(d);
      if (x != y && x != 1 && y != 1)
        return n.error(absl::StrCat("the inputs do not broadcast at dim ", d));
      shape.push_back(x == 1 ? y : x);
    }
    return shape;
  };
  // Element counts of the candidate products, saturating past 2^40 (the
  // most a tensor may hold).
  auto count = [](ArrayRef<int64_t> shape) {
    __int128 c = 1;
    for (int64_t e : shape)
      c = std::min<__int128>(c * e, kMaxTensorElements + 1);
    return static_cast<int64_t>(c);
  };
  int third = -1;
  SmallVector<int64_t> pShape;
  for (int candidate = 2; candidate >= 0; --candidate) {
    ASSIGN_OR_RETURN(SmallVector<int64_t> shape,
                     broadcastShape(inputs[(candidate + 1) % 3],
                                    inputs[(candidate + 2) % 3]));
    if (third < 0 || count(shape) < count(pShape)) {
      third = candidate;
      pShape = shape;
    }
  }
  if (count(pShape) > kMaxTensorElements)
    return n.unimplemented("_trilinear whose smallest pairwise product has more than "
                           "2^40 elements");
  Value p = n.b().create<aten::MulOp>(n.loc(), RankedTensorType::get(pShape, element),
                                      inputs[(third + 1) % 3], inputs[(third + 2) % 3]);
  Value q = inputs[third];
  SmallVector<int64_t> qShape(typeOf(q).getShape());
  ASSIGN_OR_RETURN(SmallVector<int64_t> resultShape, broadcastShape(p, q));
  (void)resultShape; // checks that Q broadcasts with P
  if (typeOf(q).getElementType() != element)
    q = pointwise(n, typeOf(q).clone(element), "copy", q);

  // A summed dim only one side has is summed there first (kept as 1).
  SmallVector<int64_t> pOnly, qOnly;
  for (int64_t d : summed) {
    if (pShape[d] != 1 && qShape[d] == 1)
      pOnly.push_back(d);
    else if (qShape[d] != 1 && pShape[d] == 1)
      qOnly.push_back(d);
  }
  auto sumOver = [&](Value v, SmallVector<int64_t> &shape,
                     ArrayRef<int64_t> dims) -> Value {
    if (dims.empty())
      return v;
    for (int64_t d : dims)
      shape[d] = 1;
    return n.b().create<aten::SumOp>(n.loc(), RankedTensorType::get(shape, element), v,
                                     n.b().getDenseI64ArrayAttr(dims),
                                     n.b().getBoolAttr(true));
  };
  p = sumOver(p, pShape, pOnly);
  q = sumOver(q, qShape, qOnly);

  // Classify the dims: batch (both, kept), left (P's), right (Q's),
  // contracted (both, summed). Dims of extent 1 on both sides go to batch.
  SmallVector<int64_t> batch, left, right, contracted;
  for (int64_t d = 0; d < rank; ++d) {
    bool inP = pShape[d] != 1, inQ = qShape[d] != 1;
    if (summed.count(d)) {
      if (inP && inQ)
        contracted.push_back(d);
      continue; // summed on one side above, or 1 on both
    }
    if (inP && !inQ)
      left.push_back(d);
    else if (inQ && !inP)
      right.push_back(d);
    else
      batch.push_back(d);
  }
  int64_t bExtent = extentOf(pShape, batch);
  int64_t mExtent = extentOf(pShape, left), nExtent = extentOf(qShape, right);
  int64_t kExtent = extentOf(pShape, contracted);

  auto toMatrix = [&](Value v, ArrayRef<int64_t> first,
                      ArrayRef<int64_t> second, ArrayRef<int64_t> third,
                      int64_t e1, int64_t e2, int64_t e3) -> Value {
    SmallVector<int64_t> perm(first);
    perm.append(second.begin(), second.end());
    perm.append(third.begin(), third.end());
    // The dims not listed have extent 1 on this side: put them last.
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(perm, d))
        perm.push_back(d);
    Value moved = permuteValue(n, v, perm);
    return viewValue(n, moved, {e1, e2, e3});
  };
  Value lhs = toMatrix(p, batch, left, contracted, bExtent, mExtent, kExtent);
  Value rhs = toMatrix(q, batch, contracted, right, bExtent, kExtent, nExtent);
  Value product = n.b().create<aten::BmmOp>(
      n.loc(), RankedTensorType::get({bExtent, mExtent, nExtent}, element), lhs, rhs);

  // (batch..., left..., right...) back to the result's order: the
  // non-summed dims in increasing order.
  SmallVector<int64_t> produced(batch);
  produced.append(left.begin(), left.end());
  produced.append(right.begin(), right.end());
  SmallVector<int64_t> producedShape;
  for (int64_t d : produced)
    producedShape.push_back(std::max(pShape[d], qShape[d]));
  Value unflat = viewValue(n, product, producedShape);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!summed.count(d))
      kept.push_back(d);
  SmallVector<int64_t> perm;
  for (int64_t d : kept)
    perm.push_back(llvm::find(produced, d) - produced.begin());
  Value ordered = perm == llvm::to_vector(llvm::seq<int64_t>(0, perm.size()))
                      ? unflat
                      : permuteValue(n, unflat, perm);
  if (typeOf(ordered).getNumElements() != type.getNumElements())
    return n.error("the declared result shape does not match the product's");
  return Values{viewValue(n, ordered, type.getShape())};
}

} // namespace

void addTrilinearHandler(OpHandlerTable &t) {
  t["aten._trilinear.default"] = trilinear;
}

} // namespace kiln
