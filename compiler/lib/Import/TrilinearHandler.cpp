//===- TrilinearHandler.cpp - aten._trilinear as one aten.trilinear -------===//
//
// This file implements the importer handler of aten._trilinear, the op
// behind torch.nn.functional.bilinear: each of i1, i2, i3 gains size-1 dims
// at its `expand` positions (all three then have one rank R), and the result
// is sum over `sumdim` of i1 * i2 * i3, broadcast, with the summed dims
// removed: one aten.trilinear, which kiln-decompose-aten writes as one
// product and one aten.bmm (lib/Transforms/DecomposeTrilinear.cpp).
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

/// Elements of the broadcast of `a` and `b` (same rank), saturating past
/// 2^40 (the most a tensor may hold); nullopt when they do not broadcast.
std::optional<int64_t> broadcastCount(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  __int128 count = 1;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1)
      return std::nullopt;
    count = std::min<__int128>(count * std::max(a[d], b[d]), kMaxTensorElements + 1);
  }
  return static_cast<int64_t>(count);
}

/// _trilinear: the inputs with their expand dims inserted, then one
/// aten.trilinear (kiln-decompose-aten computes it,
/// lib/Transforms/DecomposeTrilinear.cpp).
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
  // The op computes in the result's type.
  i1 = convertElements(n, i1, element);
  i2 = convertElements(n, i2, element);
  i3 = convertElements(n, i3, element);
  int64_t rank = typeOf(i1).getRank() + static_cast<int64_t>(expand1.size());
  ASSIGN_OR_RETURN(i1, expandAt(n, i1, expand1, rank, "i1"));
  ASSIGN_OR_RETURN(i2, expandAt(n, i2, expand2, rank, "i2"));
  ASSIGN_OR_RETURN(i3, expandAt(n, i3, expand3, rank, "i3"));
  std::set<int64_t> summed(sumdim.begin(), sumdim.end());
  for (int64_t d : summed)
    if (d < 0 || d >= rank)
      return n.error(absl::StrCat("sumdim ", d, " is outside [0, ", rank, ")"));
  // The decomposition forms the smallest of the pairwise products.
  ArrayRef<int64_t> shapes[3] = {typeOf(i1).getShape(), typeOf(i2).getShape(),
                                 typeOf(i3).getShape()};
  int64_t smallest = kMaxTensorElements + 1;
  for (int pair = 0; pair < 3; ++pair) {
    std::optional<int64_t> count =
        broadcastCount(shapes[pair], shapes[(pair + 1) % 3]);
    if (!count)
      return n.error("the inputs do not broadcast together");
    smallest = std::min(smallest, *count);
  }
  if (smallest > kMaxTensorElements)
    return n.unimplemented("_trilinear whose smallest pairwise product has more than "
                           "2^40 elements");
  // The kept dims of the broadcast (no input is empty here), counted
  // saturating: three inputs of 2^40 elements can broadcast past int64.
  SmallVector<int64_t> shape;
  __int128 count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (summed.count(d))
      continue;
    shape.push_back(std::max({shapes[0][d], shapes[1][d], shapes[2][d]}));
    count = std::min<__int128>(count * shape.back(), kMaxTensorElements + 1);
  }
  if (count != type.getNumElements())
    return n.error("the declared result shape does not match the product's");
  auto resultType = RankedTensorType::get(shape, element);
  Value product = n.b().create<aten::TrilinearOp>(
      n.loc(), resultType, i1, i2, i3,
      n.b().getDenseI64ArrayAttr(SmallVector<int64_t>(summed.begin(), summed.end())));
  return Values{viewValue(n, product, type.getShape())};
}

} // namespace

void addTrilinearHandler(OpHandlerTable &t) {
  t["aten._trilinear.default"] = trilinear;
}

} // namespace kiln
