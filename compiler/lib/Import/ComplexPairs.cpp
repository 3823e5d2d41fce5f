//===- ComplexPairs.cpp - complex tensors as (real, imaginary) pairs ------===//
//
// This file implements the builders the complex handlers share: the parts
// of a pair tensor, packing two parts, and the complex product.
//
//===----------------------------------------------------------------------===//
#include "ComplexPairs.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

using namespace mlir;

namespace kiln {
namespace {

Value slicePart(NodeImporter &n, Value pairs, int64_t part) {
  return viewValue(n, sliceAlong(n, pairs, typeOf(pairs).getRank() - 1, part, 1),
                   complexShape(pairs));
}

} // namespace

Value sliceAlong(NodeImporter &n, Value x, int64_t dim, int64_t start, int64_t count) {
  RankedTensorType type = typeOf(x);
  SmallVector<int64_t> shape(type.getShape()), offsets(type.getRank(), 0),
      strides(type.getRank(), 1);
  shape[dim] = count;
  offsets[dim] = start;
  return n.b().create<aten::SliceOp>(n.loc(), type.clone(shape), x,
                                     n.b().getDenseI64ArrayAttr(offsets),
                                     n.b().getDenseI64ArrayAttr(strides));
}

Value modulus(PartMath &m, Parts z) {
  Value big = m.fn("maximum", {m.fn("abs", z.re), m.fn("abs", z.im)});
  Value isZero = m.test("eq", {big, m.number(0.0)});
  Value safe = m.where(isZero, m.number(1.0), big);
  Value x = m.div(z.re, safe), y = m.div(z.im, safe);
  Value r = m.mul(big, m.fn("sqrt", m.add(m.mul(x, x), m.mul(y, y))));
  Value infinite = m.test("isinf", big);
  return m.where(infinite, big, m.where(isZero, m.number(0.0), r));
}


ArrayRef<int64_t> complexShape(Value pairs) {
  return typeOf(pairs).getShape().drop_back();
}

int64_t complexRank(Value pairs) { return typeOf(pairs).getRank() - 1; }

Value realPart(NodeImporter &n, Value pairs) { return slicePart(n, pairs, 0); }
Value imagPart(NodeImporter &n, Value pairs) { return slicePart(n, pairs, 1); }

Value pack(NodeImporter &n, Value re, Value im) {
  SmallVector<int64_t> column(typeOf(re).getShape());
  column.push_back(1);
  SmallVector<int64_t> pairShape(typeOf(re).getShape());
  pairShape.push_back(2);
  return n.b().create<aten::CatOp>(
      n.loc(), typeOf(re).clone(pairShape),
      ValueRange{viewValue(n, re, column), viewValue(n, im, column)},
      n.b().getI64IntegerAttr(static_cast<int64_t>(column.size()) - 1));
}

Value realAsPairs(NodeImporter &n, Value v, Type element) {
  Value re = convertElements(n, v, element);
  Value zeros = n.constant(element, 0.0, typeOf(re).getShape());
  return pack(n, re, zeros);
}

Value asColumn(NodeImporter &n, Value v) {
  SmallVector<int64_t> shape(typeOf(v).getShape());
  shape.push_back(1);
  return viewValue(n, v, shape);
}

Value complexIsNonZero(NodeImporter &n, Value pairs) {
  RankedTensorType type = typeOf(pairs);
  auto i1 = n.b().getI1Type();
  Value nonzero = pointwise(n, type.clone(i1), "ne",
                            {pairs, n.constant(type.getElementType(), 0.0)});
  return n.b()
      .create<aten::AnyOp>(n.loc(), RankedTensorType::get(complexShape(pairs), i1), nonzero,
                           n.b().getDenseI64ArrayAttr({complexRank(pairs)}),
                           n.b().getBoolAttr(false))
      .getResult();
}

Value complexProduct(NodeImporter &n, RankedTensorType type, Value x, Value y) {
  PartMath m(n, RankedTensorType::get(type.getShape().drop_back(), type.getElementType()));
  Value a = realPart(n, x), b = imagPart(n, x), c = realPart(n, y), d = imagPart(n, y);
  // Named steps: the ops are built in this order whatever the compiler's
  // order of evaluating arguments.
  Value ac = m.mul(a, c), bd = m.mul(b, d);
  Value re = m.sub(ac, bd);
  Value ad = m.mul(a, d), bc = m.mul(b, c);
  Value im = m.add(ad, bc);
  return pack(n, re, im);
}

Value expandPairs(NodeImporter &n, Value x, RankedTensorType type) {
  RankedTensorType pairs = typeOf(x).clone(type.getShape());
  if (typeOf(x) == pairs)
    return x;
  return n.b().create<aten::ExpandOp>(n.loc(), pairs, x).getResult();
}

absl::StatusOr<Value> pairsOf(NodeImporter &n, const std::string &name, Type element) {
  if (n.isComplexTensor(name)) {
    ASSIGN_OR_RETURN(Value v, n.tensor(name));
    return convertElements(n, v, element);
  }
  if (n.isComplexScalar(name)) {
    ASSIGN_OR_RETURN(std::complex<double> c, n.complexAttr(name));
    return complexConstant(n, element, c);
  }
  ASSIGN_OR_RETURN(Value v, n.tensorOrScalar(name, element));
  return realAsPairs(n, v, element);
}

absl::StatusOr<Value> complexArgument(NodeImporter &n, const std::string &name) {
  if (!n.isComplexTensor(name))
    return n.error(absl::StrCat("argument '", name, "' must be a complex tensor"));
  ASSIGN_OR_RETURN(Value v, n.tensor(name));
  if (typeOf(v).getRank() < 1 || typeOf(v).getShape().back() != 2)
    return n.error(absl::StrCat("argument '", name, "' is not a complex value"));
  return v;
}

absl::StatusOr<std::pair<RankedTensorType, Type>> pairResult(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  if (!n.resultIsComplex())
    return n.error("the result must be complex");
  return std::make_pair(type, type.getElementType());
}

Value complexConstant(NodeImporter &n, Type element, std::complex<double> c) {
  Value pair = tableConstant<double>(n, {2}, n.b().getF64Type(), [&](int64_t k) {
    return k == 0 ? c.real() : c.imag();
  });
  return convertElements(n, pair, element);
}

Value scaleComplex(NodeImporter &n, Value pairs, std::complex<double> c) {
  RankedTensorType type = typeOf(pairs);
  Type element = type.getElementType();
  if (c.imag() == 0.0)
    return n.b().create<aten::MulOp>(n.loc(), type, pairs, n.constant(element, c.real()));
  return complexProduct(n, type, pairs, complexConstant(n, element, c));
}

Value complexQuotient(NodeImporter &n, RankedTensorType type, Value x, Value y) {
  // Every part below is of the result's shape (the steps divide parts of
  // one operand alone).
  x = expandPairs(n, x, type);
  y = expandPairs(n, y, type);
  PartMath m(n, RankedTensorType::get(type.getShape().drop_back(), type.getElementType()));
  Value a = realPart(n, x), b = imagPart(n, x), c = realPart(n, y), d = imagPart(n, y);
  Value absC = m.fn("abs", c), absD = m.fn("abs", d);
  Value cWins = m.test("ge", {absC, absD});
  Value one = m.number(1.0);
  // |c| >= |d|: rat = d / c, scl = 1 / (c + d * rat),
  //   ((a + b * rat) * scl, (b - a * rat) * scl).
  Value ratC = m.div(d, c);
  Value sclC = m.div(one, m.add(c, m.mul(d, ratC)));
  Value reC = m.mul(m.add(a, m.mul(b, ratC)), sclC);
  Value imC = m.mul(m.sub(b, m.mul(a, ratC)), sclC);
  // else: rat = c / d, scl = 1 / (d + c * rat),
  //   ((a * rat + b) * scl, (b * rat - a) * scl).
  Value ratD = m.div(c, d);
  Value sclD = m.div(one, m.add(d, m.mul(c, ratD)));
  Value reD = m.mul(m.add(m.mul(a, ratD), b), sclD);
  Value imD = m.mul(m.sub(m.mul(b, ratD), a), sclD);
  // A zero divisor: (a / |c|, b / |d|), infinities or NaN as in c10.
  Value zero = m.number(0.0);
  Value bothZero = m.test("logical_and", {m.test("eq", {absC, zero}), m.test("eq", {absD, zero})});
  Value re = m.where(bothZero, m.div(a, absC), m.where(cWins, reC, reD));
  Value im = m.where(bothZero, m.div(b, absD), m.where(cWins, imC, imD));
  return pack(n, re, im);
}

Value productAlong(NodeImporter &n, Value x, int64_t dim) {
  while (typeOf(x).getDimSize(dim) > 1) {
    int64_t extent = typeOf(x).getDimSize(dim), half = extent / 2;
    Value lo = sliceAlong(n, x, dim, 0, half), hi = sliceAlong(n, x, dim, half, half);
    Value product = complexProduct(n, typeOf(lo), lo, hi);
    if (extent % 2) {
      Value last = sliceAlong(n, x, dim, 2 * half, 1);
      SmallVector<int64_t> shape(typeOf(product).getShape());
      shape[dim] += 1;
      product = n.b().create<aten::CatOp>(n.loc(), typeOf(product).clone(shape),
                                          ValueRange{product, last},
                                          n.b().getI64IntegerAttr(dim));
    }
    x = product;
  }
  return x;
}

} // namespace kiln
