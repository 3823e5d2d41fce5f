//===- RandomHandlers.cpp - random ops with PyTorch's distributions -------===//
//
// This file implements the importer handlers of ATen's random ops (those
// torch tags nondeterministic_seeded): rand, randn, randint, randperm,
// uniform, normal, exponential, poisson, bernoulli, native_dropout (and
// its backward), random and multinomial.
//
// Kiln's RNG contract (docs/architecture.md, "Random numbers"): a random
// node reads the graph's seed, an int64 0-d input the client names in the
// node's `kiln_seed` argument and fills from torch's default generator on
// every call. Its numbers are Philox4x32-10 keyed by that seed, counted by
// element index, node position (the stream) and draw within the node
// (lib/Conversion/AtenToLinalg/RandomBodies.h). They follow eager's
// distributions, shapes and dtypes, not eager's values.
//
// Where eager raises on a bad argument known at compile time (a probability
// outside [0, 1], an empty range), the import is INVALID_ARGUMENT. What
// eager checks in the data (negative or all-zero multinomial weights) is
// not checked here.
//
//===----------------------------------------------------------------------===//
#include "OpHandlers.h"
#include "SelectionBuilders.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The node argument naming the graph's seed input.
constexpr const char *kSeedArgument = "kiln_seed";

/// The random bits a [0, 1) number of `type` carries: its significand's.
unsigned uniformBits(Type type) {
  if (type.isF64())
    return 53;
  if (type.isF16())
    return 11;
  if (type.isBF16())
    return 8;
  return 24;
}

/// The type a distribution computes in for a result of `type`: f64 stays,
/// every other float type computes in f32 (and rounds once at the end).
FloatType computeType(NodeImporter &n, Type type) {
  return type.isF64() ? FloatType(n.b().getF64Type()) : FloatType(n.b().getF32Type());
}

/// The draws of one random node: each call makes a new draw (the counter's
/// last word), so the numbers of one node's draws are independent.
class Draws {
public:
  static absl::StatusOr<Draws> of(NodeImporter &n) {
    if (!n.isTensor(kSeedArgument))
      return n.error("a random op needs its 'kiln_seed' argument, the graph's "
                     "int64 0-d input that seeds it (docs/architecture.md, "
                     "\"Random numbers\")");
    ASSIGN_OR_RETURN(Value seed, n.tensor(kSeedArgument));
    RankedTensorType type = typeOf(seed);
    if (type.getRank() != 0 || !type.getElementType().isInteger(64))
      return n.error("'kiln_seed' must be an int64 0-d tensor");
    return Draws(n, seed);
  }

  /// Numbers in [0, 1) of `element` (a float type), of `shape`.
  Value uniform(ArrayRef<int64_t> shape, Type element) {
    return draw(shape, element, "random_uniform", {double(uniformBits(element))});
  }
  /// Standard normals of `element`, of `shape` (computed in f32 below f64).
  Value normal(ArrayRef<int64_t> shape, Type element) {
    bool wide = element.isF64();
    Value z = draw(shape, wide ? element : n.b().getF32Type(), "random_normal",
                   {wide ? 53.0 : 24.0});
    return convertElements(n, z, element);
  }
  /// 63 random bits per element, as non-negative i64.
  Value bits(ArrayRef<int64_t> shape) {
    return draw(shape, n.b().getI64Type(), "random_bits", {});
  }

  /// Poisson(rate) counts, of rate's shape, as `element`: random_poisson's
  /// loop draws from the counter's last word itself (the node's only draw).
  Value poisson(Value rate, Type element) {
    Value wide = convertElements(n, rate, n.b().getF64Type());
    RankedTensorType type = typeOf(wide);
    Value bits = n.b().create<aten::BitcastOp>(n.loc(), type.clone(n.b().getI64Type()), wide);
    Value counts = pointwise(n, type, "random_poisson",
                             {indices(type.getShape()), seed, bits}, {double(n.position())});
    return convertElements(n, counts, element);
  }

private:
  Draws(NodeImporter &n, Value seed) : n(n), seed(seed) {}

  /// Each element's row-major index, as i64 of `shape`.
  Value indices(ArrayRef<int64_t> shape) {
    Type i64 = n.b().getI64Type();
    int64_t count = RankedTensorType::get(shape, i64).getNumElements();
    Value iota = n.b().create<aten::ArangeOp>(
        n.loc(), RankedTensorType::get({count}, i64), n.b().getF64FloatAttr(0.0),
        n.b().getF64FloatAttr(1.0));
    return viewValue(n, iota, shape);
  }

  Value draw(ArrayRef<int64_t> shape, Type element, StringRef fn,
             ArrayRef<double> extra) {
    auto type = RankedTensorType::get(shape, element);
    SmallVector<double> scalars = {double(n.position()), double(next++)};
    scalars.append(extra.begin(), extra.end());
    return pointwise(n, type, fn, {indices(shape), seed}, scalars);
  }

  NodeImporter &n;
  Value seed;
  int next = 0;
};

Value mul(NodeImporter &n, Value a, Value b) {
  RankedTensorType type = typeOf(typeOf(a).getRank() >= typeOf(b).getRank() ? a : b);
  return n.b().create<aten::MulOp>(n.loc(), type, a, b);
}

Value add(NodeImporter &n, Value a, Value b) {
  RankedTensorType type = typeOf(typeOf(a).getRank() >= typeOf(b).getRank() ? a : b);
  return n.b().create<aten::AddOp>(n.loc(), type, a, b, n.b().getF64FloatAttr(1.0));
}

/// An i64 0-d constant holding `v` exactly.
Value int64Constant(NodeImporter &n, int64_t v) {
  auto type = RankedTensorType::get({}, n.b().getI64Type());
  return n.b().create<aten::ConstantOp>(
      n.loc(), type, DenseElementsAttr::get(type, n.b().getI64IntegerAttr(v)));
}

absl::StatusOr<RankedTensorType> floatResult(NodeImporter &n, int i = 0) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(i));
  if (!isa<FloatType>(type.getElementType()))
    return n.error("produces floating-point tensors only");
  return type;
}

absl::StatusOr<double> probability(NodeImporter &n, const std::string &name) {
  ASSIGN_OR_RETURN(double p, n.floatAttr(name));
  if (!(p >= 0.0 && p <= 1.0))
    return n.error(absl::StrCat("'", name, "' is ", p, "; a probability must be in [0, 1]"));
  return p;
}

/// rand, rand_like.
absl::StatusOr<Values> rand(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  return Values{draws.uniform(type.getShape(), type.getElementType())};
}

/// randn, randn_like.
absl::StatusOr<Values> randn(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  return Values{draws.normal(type.getShape(), type.getElementType())};
}

/// a * scale + shift over `type` (scale and shift numbers), computed in
/// `compute` and rounded once to the result's element type.
Value affine(NodeImporter &n, RankedTensorType type, Value x, double scale, double shift) {
  Type compute = typeOf(x).getElementType();
  if (scale != 1.0)
    x = mul(n, x, n.constant(compute, scale));
  if (shift != 0.0)
    x = add(n, x, n.constant(compute, shift));
  return convertElements(n, x, type.getElementType());
}

/// uniform(self, from, to): from + (to - from) u, as eager's
/// uniform_real_distribution.
absl::StatusOr<Values> uniform(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  ASSIGN_OR_RETURN(double from, n.floatAttr("from", 0.0));
  ASSIGN_OR_RETURN(double to, n.floatAttr("to", 1.0));
  if (!(from <= to))
    return n.error(absl::StrCat("uniform's range [", from, ", ", to, ") is empty"));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  Value u = draws.uniform(type.getShape(), computeType(n, type.getElementType()));
  return Values{affine(n, type, u, to - from, from)};
}

/// normal_functional(self, mean, std) and normal.float_float(mean, std,
/// size): mean + std z.
absl::StatusOr<Values> normalNumbers(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  ASSIGN_OR_RETURN(double mean, n.floatAttr("mean", 0.0));
  ASSIGN_OR_RETURN(double std, n.floatAttr("std", 1.0));
  if (!(std >= 0.0))
    return n.error(absl::StrCat("normal's std is ", std, "; it must be >= 0"));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  Value z = draws.normal(type.getShape(), computeType(n, type.getElementType()));
  return Values{affine(n, type, z, std, mean)};
}

/// normal.Tensor_float, float_Tensor and Tensor_Tensor: z std + mean with
/// either or both tensors, broadcast to the result (eager fills z, then
/// multiplies by std and adds mean).
absl::StatusOr<Values> normalTensors(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  Type element = type.getElementType();
  ASSIGN_OR_RETURN(Value mean, n.tensorOrScalar("mean", element));
  ASSIGN_OR_RETURN(Value std, n.tensorOrScalar("std", element));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  Value z = draws.normal(type.getShape(), element);
  Value scaled = n.b().create<aten::MulOp>(n.loc(), type, z, std);
  return Values{n.b().create<aten::AddOp>(n.loc(), type, scaled, mean,
                                          n.b().getF64FloatAttr(1.0))};
}

/// exponential(self, lambd): -log1p(-u) / lambd.
absl::StatusOr<Values> exponential(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  ASSIGN_OR_RETURN(double lambd, n.floatAttr("lambd", 1.0));
  if (!(lambd > 0.0))
    return n.error(absl::StrCat("exponential's lambd is ", lambd, "; it must be > 0"));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  Value u = draws.uniform(type.getShape(), computeType(n, type.getElementType()));
  Value negated = n.b().create<aten::NegOp>(n.loc(), typeOf(u), u);
  Value logged = pointwise(n, typeOf(u), "log1p", negated);
  return Values{affine(n, type, logged, -1.0 / lambd, 0.0)};
}

/// u < p as the result's dtype, with u drawn over the result's shape in
/// the float type `compute`.
Value trials(NodeImporter &n, Draws &draws, RankedTensorType type, Type compute,
             Value p) {
  Value u = draws.uniform(type.getShape(), compute);
  Value hit = pointwise(n, type.clone(n.b().getI1Type()), "lt",
                        {u, convertElements(n, p, compute)});
  return convertElements(n, hit, type.getElementType());
}

/// bernoulli(self): self's entries are the probabilities.
absl::StatusOr<Values> bernoulliTensor(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  Value p = self;
  if (n.isTensor("p")) {
    ASSIGN_OR_RETURN(p, n.tensor("p"));
  }
  if (!isa<FloatType>(typeOf(p).getElementType()))
    return n.error("bernoulli's probabilities must be floating-point");
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  return Values{trials(n, draws, type, computeType(n, typeOf(p).getElementType()), p)};
}

/// bernoulli.p(self, p): one probability for every element.
absl::StatusOr<Values> bernoulliNumber(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(double p, probability(n, "p"));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  FloatType compute = computeType(n, type.getElementType());
  return Values{trials(n, draws, type, compute, n.constant(compute, p))};
}

/// native_dropout(input, p, train): (input * keep * scale, keep) with keep
/// ~ bernoulli(1 - p) and scale 1 / (1 - p) (0 for p = 1), multiplied in
/// eager's order; out of training, (input, all true).
absl::StatusOr<Values> nativeDropout(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n, 0));
  ASSIGN_OR_RETURN(RankedTensorType maskType, n.resultType(1));
  ASSIGN_OR_RETURN(Value input, n.tensor("input"));
  ASSIGN_OR_RETURN(double p, probability(n, "p"));
  ASSIGN_OR_RETURN(bool train, n.boolAttr("train", true));
  if (!maskType.getElementType().isInteger(1) || maskType.getShape() != type.getShape())
    return n.error("the mask result must be bool of the input's shape");
  if (!train)
    return Values{input, n.constant(maskType.getElementType(), 1.0, maskType.getShape())};
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  FloatType compute = computeType(n, type.getElementType());
  Value keep = trials(n, draws, maskType, compute, n.constant(compute, 1.0 - p));
  Value kept = n.b().create<aten::MulOp>(n.loc(), type, input,
                                         convertElements(n, keep, type.getElementType()));
  double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  Value out = n.b().create<aten::MulOp>(n.loc(), type, kept,
                                        n.constant(compute, scale));
  return Values{out, keep};
}

/// native_dropout_backward(grad_output, mask, scale): grad * mask * scale,
/// as ATen computes it.
absl::StatusOr<Values> nativeDropoutBackward(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  ASSIGN_OR_RETURN(Value grad, n.tensor("grad_output"));
  ASSIGN_OR_RETURN(Value mask, n.tensor("mask"));
  ASSIGN_OR_RETURN(double scale, n.floatAttr("scale"));
  Value masked = n.b().create<aten::MulOp>(
      n.loc(), type, grad, convertElements(n, mask, type.getElementType()));
  return Values{n.b().create<aten::MulOp>(
      n.loc(), type, masked, n.constant(computeType(n, type.getElementType()), scale))};
}

/// low + bits mod range over the result's shape, in its dtype. A range of
/// 2^63 (int64's whole non-negative half) takes the bits as they are.
Value integersIn(NodeImporter &n, Draws &draws, RankedTensorType type, int64_t low,
                 std::optional<int64_t> range) {
  Type i64 = n.b().getI64Type();
  auto wide = type.clone(i64);
  Value v = draws.bits(type.getShape());
  if (range)
    v = pointwise(n, wide, "remainder", {v, int64Constant(n, *range)});
  if (low)
    v = add(n, v, int64Constant(n, low));
  return convertElements(n, v, type.getElementType());
}

absl::StatusOr<int64_t> rangeOf(NodeImporter &n, int64_t low, int64_t high) {
  if (low >= high)
    return n.error(absl::StrCat("the range [", low, ", ", high, ") is empty"));
  if (low < 0 && high > std::numeric_limits<int64_t>::max() + low)
    return n.unimplemented(absl::StrCat("a range [", low, ", ", high,
                                        ") wider than 2^63 - 1"));
  return high - low;
}

/// randint(high, size), randint.low(low, high, size), randint_like(self,
/// high) and randint_like.low_dtype(self, low, high).
absl::StatusOr<Values> randint(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(int64_t low, n.intAttr("low", 0));
  ASSIGN_OR_RETURN(int64_t high, n.intAttr("high"));
  ASSIGN_OR_RETURN(int64_t range, rangeOf(n, low, high));
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  return Values{integersIn(n, draws, type, low, range)};
}

/// The exclusive upper end of random_() without `to`: 2^digits + 1 for a
/// float dtype (its exactly representable integers), the dtype's maximum
/// + 1 for an integer one; nullopt for int64's 2^63.
std::optional<int64_t> defaultRandomEnd(Type element, bool isUnsigned) {
  if (auto f = dyn_cast<FloatType>(element))
    return (int64_t{1} << uniformBits(f)) + 1;
  unsigned width = element.getIntOrFloatBitWidth();
  if (width == 1)
    return 2;
  if (isUnsigned)
    return 256;
  if (width >= 64)
    return std::nullopt;
  return int64_t{1} << (width - 1);
}

/// random(self), random.from(self, from, to) and random.to(self, to).
absl::StatusOr<Values> random(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(int64_t from, n.intAttr("from", 0));
  std::optional<int64_t> end = defaultRandomEnd(type.getElementType(),
                                                n.resultIsUnsigned());
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  if (!n.has("to")) {
    if (!end)
      return Values{integersIn(n, draws, type, from, std::nullopt)};
    if (from >= *end)
      return n.error(absl::StrCat("'from' (", from, ") is past the dtype's range"));
    return Values{integersIn(n, draws, type, from, *end - from)};
  }
  ASSIGN_OR_RETURN(int64_t to, n.intAttr("to"));
  ASSIGN_OR_RETURN(int64_t range, rangeOf(n, from, to));
  return Values{integersIn(n, draws, type, from, range)};
}

/// poisson(self): a Poisson(rate) count for each of self's rates, in self's
/// float dtype.
absl::StatusOr<Values> poisson(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, floatResult(n));
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (!isa<FloatType>(typeOf(self).getElementType()))
    return n.error("poisson's rates must be floating-point");
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  return Values{draws.poisson(self, type.getElementType())};
}

/// randperm(n): the stable ascending order of n draws of 63 bits.
absl::StatusOr<Values> randperm(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  if (type.getRank() != 1)
    return n.error("randperm produces a 1-d tensor");
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  Value keys = draws.bits(type.getShape());
  ASSIGN_OR_RETURN(Values sorted, sortAlong(n, keys, 0, false, std::nullopt));
  return Values{convertElements(n, sorted[1], type.getElementType())};
}

/// multinomial(self, num_samples, replacement), as ATen draws it:
///  - without replacement, or one sample: the largest of self / q with
///    q ~ exponential(1) (argmax for one, topk for more), in self's dtype;
///  - with replacement: for each sample u ~ U[0, 1), the first category
///    whose cumulative weight exceeds u times the total (clamped to the last
///    category against rounding).
absl::StatusOr<Values> multinomial(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  ASSIGN_OR_RETURN(int64_t samples, n.intAttr("num_samples"));
  ASSIGN_OR_RETURN(bool replacement, n.boolAttr("replacement", false));
  RankedTensorType weights = typeOf(self);
  Type element = weights.getElementType();
  if (!isa<FloatType>(element))
    return n.error("multinomial's weights must be floating-point");
  if (weights.getRank() < 1 || weights.getRank() > 2)
    return n.error("multinomial's weights must be 1-d or 2-d");
  int64_t last = weights.getRank() - 1;
  int64_t categories = weights.getShape().back();
  if (samples < 1)
    return n.error(absl::StrCat("num_samples is ", samples, "; it must be >= 1"));
  if (!replacement && samples > categories)
    return n.error(absl::StrCat("cannot draw ", samples, " samples without replacement "
                                "from ", categories, " categories"));
  SmallVector<int64_t> shape(weights.getShape());
  shape.back() = samples;
  if (type.getShape() != ArrayRef<int64_t>(shape) || !type.getElementType().isInteger(64))
    return n.error("the result must be int64 with num_samples in the weights' last dim");
  ASSIGN_OR_RETURN(Draws draws, Draws::of(n));
  Type i64 = n.b().getI64Type();
  if (!replacement || samples == 1) {
    FloatType compute = computeType(n, element);
    Value u = draws.uniform(weights.getShape(), compute);
    Value negated = n.b().create<aten::NegOp>(n.loc(), typeOf(u), u);
    Value q = affine(n, weights, pointwise(n, typeOf(u), "log1p", negated), -1.0, 0.0);
    // u = 0 gives q = 0: the smallest normal instead keeps a zero weight's
    // key 0 (not 0 / 0) and makes a positive one's huge.
    double tiny = APFloat::getSmallestNormalized(
                      cast<FloatType>(element).getFloatSemantics())
                      .convertToDouble();
    q = pointwise(n, weights, "clamp", q, {tiny, std::nan("")});
    Value keys = n.b().create<aten::DivOp>(n.loc(), weights, self, q);
    if (samples == 1)
      return Values{n.b().create<aten::ArgReduceOp>(
          n.loc(), type, keys, n.b().getI64IntegerAttr(last),
          /*keepdim=*/n.b().getBoolAttr(true), /*max=*/n.b().getBoolAttr(true))};
    ASSIGN_OR_RETURN(Values top, sortAlong(n, keys, last, true, samples));
    return Values{top[1]};
  }
  FloatType compute = computeType(n, element);
  Value w = convertElements(n, self, compute);
  Value cumulative = n.b().create<aten::CumsumOp>(
      n.loc(), typeOf(w), w, n.b().getI64IntegerAttr(last), n.b().getBoolAttr(false));
  SmallVector<int64_t> totalShape(weights.getShape());
  totalShape.back() = 1;
  SmallVector<int64_t> offsets(weights.getRank(), 0), strides(weights.getRank(), 1);
  offsets.back() = categories - 1;
  Value total = n.b().create<aten::SliceOp>(
      n.loc(), RankedTensorType::get(totalShape, compute), cumulative,
      n.b().getDenseI64ArrayAttr(offsets), n.b().getDenseI64ArrayAttr(strides));
  Value targets = mul(n, draws.uniform(shape, compute), total);
  ASSIGN_OR_RETURN(Value picked, insertionIndices(n, type.clone(i64), cumulative,
                                                  targets, /*right=*/true));
  return Values{pointwise(n, type, "minimum", {picked, int64Constant(n, categories - 1)})};
}

} // namespace

void addRandomHandlers(OpHandlerTable &t) {
  for (const char *op : {"aten.rand.default", "aten.rand_like.default"})
    t[op] = rand;
  for (const char *op : {"aten.randn.default", "aten.randn_like.default"})
    t[op] = randn;
  t["aten.uniform.default"] = uniform;
  t["aten.normal_functional.default"] = normalNumbers;
  t["aten.normal.float_float"] = normalNumbers;
  for (const char *op : {"aten.normal.Tensor_float", "aten.normal.float_Tensor",
                         "aten.normal.Tensor_Tensor"})
    t[op] = normalTensors;
  t["aten.exponential.default"] = exponential;
  t["aten.poisson.default"] = poisson;
  t["aten.bernoulli.default"] = bernoulliTensor;
  t["aten.bernoulli.Tensor"] = bernoulliTensor;
  t["aten.bernoulli.p"] = bernoulliNumber;
  t["aten.native_dropout.default"] = nativeDropout;
  t["aten.native_dropout_backward.default"] = nativeDropoutBackward;
  for (const char *op : {"aten.randint.default", "aten.randint.low",
                         "aten.randint_like.default", "aten.randint_like.low_dtype"})
    t[op] = randint;
  for (const char *op : {"aten.random.default", "aten.random.from", "aten.random.to"})
    t[op] = random;
  t["aten.randperm.default"] = randperm;
  t["aten.multinomial.default"] = multinomial;
}

} // namespace kiln
