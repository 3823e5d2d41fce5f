//===- FourierTransforms.cpp - _fft_c2c, _fft_r2c, _fft_c2r as real pairs -===//
//
// This file implements the importer handlers of PyTorch's Fourier
// transforms on complex tensors carried as (real, imaginary) pairs
// (ComplexHandlers.cpp). Each listed dim is transformed in turn, as rows
// (A, N, 2) of the dim's N points:
//
// - N up to kDirectPoints: the discrete Fourier transform itself, one
//   matrix product with a constant table of cos and sin (computed in
//   double, exact at quarter turns): O(N^2) a row.
// - A prime N: Bluestein's chirp: X_k = w_k sum_n (x_n w_n) conj(w_{k-n}),
//   w_m = exp(-+ i pi m^2 / N), a circular convolution of a power-of-two
//   length M >= 2N - 1 that three transforms of M points compute.
// - Any other N: the four-step factorisation N = N1 N2 (N1 the largest
//   divisor up to sqrt(N)). Point n = N2 n1 + n2; N2 transforms of N1
//   points along n1 give k1, a product with the twiddles
//   exp(-+2 pi i n2 k1 / N), then N1 transforms of N2 points along n2 give
//   k2, and output k = k1 + N1 k2 is a transpose away. Each smaller
//   transform follows the same rule, so a length with small factors costs
//   O(N (N1 + N2 + ...)) a row, not O(N^2), and its tables stay small.
//
// A real input of a direct length reads a real table (no imaginary rows);
// of a factored one it joins the complex path as (x, 0). The real inverse
// (c2r) of a direct length is one product with the Hermitian table; of a
// factored one it rebuilds the full spectrum (X[N - k] = conj X[k]) and
// keeps the real part of the complex inverse, which ignores the imaginary
// parts of X[0] and X[N/2] as eager's does. Normalisation is PyTorch's
// (none, 1/sqrt(n), 1/n), folded into the last product.
//
//===----------------------------------------------------------------------===//
#include "ComplexPairs.h"
#include "OpHandlers.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using Values = SmallVector<Value>;

/// The largest transform table (entries) one product may have.
constexpr int64_t kMaxTransformTable = kMaxConstantTable;
/// Transforms of at most this many points are one product with the DFT
/// table; longer ones factor when their length does.
constexpr int64_t kDirectPoints = 64;

/// PyTorch's fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n.
absl::StatusOr<double> normScale(NodeImporter &n, int64_t signal) {
  ASSIGN_OR_RETURN(int64_t mode, n.intAttr("normalization"));
  if (mode == 0)
    return 1.0;
  if (mode == 1)
    return 1.0 / std::sqrt(static_cast<double>(signal));
  if (mode == 2)
    return 1.0 / static_cast<double>(signal);
  return n.error(absl::StrCat("normalization ", mode,
                              " is not 0 (none), 1 (by root n) or 2 (by n)"));
}

/// `v` permuted by `perm`, or `v` itself for the identity.
Value permuted(NodeImporter &n, Value v, ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != static_cast<int64_t>(i))
      return permuteValue(n, v, perm);
  return v;
}

/// Moves complex dim `dim` of `pairs` to just before the pair dim: the
/// moved value and the permutation used.
std::pair<Value, SmallVector<int64_t>> alongRows(NodeImporter &n, Value pairs, int64_t dim) {
  int64_t rank = complexRank(pairs);
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      perm.push_back(d);
  perm.push_back(dim);
  perm.push_back(rank);
  return {permuted(n, pairs, perm), perm};
}

/// A constant (rows, cols) table of `element` (f32 or f64) from f(i, j) in
/// double.
template <typename F>
Value table(NodeImporter &n, Type element, int64_t rows, int64_t cols, F f) {
  if (element.isF64())
    return gridConstant<double>(n, rows, cols, element, f);
  return gridConstant<float>(n, rows, cols, element, f);
}

/// cos and sin of 2 pi k m / length, with k m reduced modulo length first
/// (exact angles for large products) and exact values at multiples of a
/// quarter turn.
std::pair<double, double> twiddle(int64_t k, int64_t m, int64_t length) {
  int64_t r = static_cast<int64_t>(static_cast<__int128>(k % length) * (m % length) % length);
  if (4 * r % length == 0) {
    switch (4 * r / length) {
    case 0: return {1.0, 0.0};
    case 1: return {0.0, 1.0};
    case 2: return {-1.0, 0.0};
    default: return {0.0, -1.0};
    }
  }
  double angle = 2.0 * M_PI * static_cast<double>(r) / static_cast<double>(length);
  return {std::cos(angle), std::sin(angle)};
}

/// The largest divisor of `length` up to its square root: 1 for a prime.
int64_t innerFactor(int64_t length) {
  int64_t best = 1;
  for (int64_t f = 2; f * f <= length; ++f)
    if (length % f == 0)
      best = f;
  return best;
}

/// True when a transform of `length` points is one product with its table.
bool direct(int64_t length) { return length <= kDirectPoints; }

absl::Status checkTable(NodeImporter &n, int64_t rows, int64_t cols, int64_t length) {
  if (static_cast<__int128>(rows) * cols <= kMaxTransformTable)
    return absl::OkStatus();
  return n.unimplemented(absl::StrCat("a Fourier transform of ", length,
                                      " points (its table would exceed ",
                                      kMaxTransformTable, " entries)"));
}

/// scale * exp(-+ i pi m^2 / N) for m in [0, count) as (count, 2) pairs
/// (- forward), m^2 reduced modulo 2N first (exact angles for large m); with
/// `mirrored`, entry M - m of an M-long table holds m's too (the circular
/// convolution's negative lags), zeros between.
Value chirp(NodeImporter &n, Type element, int64_t length, int64_t count, bool forward,
            int64_t mirrored = 0, double scale = 1.0) {
  double sign = forward ? -1.0 : 1.0;
  int64_t rows = mirrored ? mirrored : count;
  return table(n, element, rows, 2, [&](int64_t i, int64_t part) {
    int64_t m = i;
    if (mirrored && i >= count)
      m = mirrored - i;
    if (mirrored && m >= count)
      return 0.0;
    __int128 square = static_cast<__int128>(m) * m % (2 * length);
    double angle = M_PI * static_cast<double>(square) / static_cast<double>(length);
    return scale * (part == 0 ? std::cos(angle) : sign * std::sin(angle));
  });
}

/// The DFT of rows (A, N, 2): `outLength` outputs
/// X_k = scale * sum_m x_m exp(-+ 2 pi i k m / N) (the minus sign forward),
/// (A, K, 2). One mm of (A, 2N) = [re | im] with the (2N, 2K) table
/// [[C, S'], [-S', C]] (S' = -+ sin).
absl::StatusOr<Value> directRows(NodeImporter &n, Value rows, int64_t outLength,
                                 bool forward, double scale) {
  Type element = typeOf(rows).getElementType();
  int64_t count = typeOf(rows).getDimSize(0), length = typeOf(rows).getDimSize(1);
  RETURN_IF_ERROR(checkTable(n, 2 * length, 2 * outLength, length));
  Value flat = viewValue(n, permuteValue(n, rows, {0, 2, 1}), {count, 2 * length});
  double sign = forward ? -1.0 : 1.0;
  Value weights = table(n, element, 2 * length, 2 * outLength, [&](int64_t i, int64_t j) {
    int64_t m = i % length, k = j % outLength;
    bool imIn = i >= length, imOut = j >= outLength;
    auto [c, sine] = twiddle(k, m, length);
    double s = sign * sine;
    // out_re = re c - im s ; out_im = re s + im c
    double w = !imIn ? (!imOut ? c : s) : (!imOut ? -s : c);
    return w * scale;
  });
  Value product = n.b().create<aten::MmOp>(
      n.loc(), RankedTensorType::get({count, 2 * outLength}, element), flat, weights);
  return permuteValue(n, viewValue(n, product, {count, 2, outLength}), {0, 2, 1});
}

/// The forward DFT of real rows (A, N): `outLength` outputs, (A, K, 2), one
/// mm with the (N, 2K) table [C, S'].
absl::StatusOr<Value> directRealRows(NodeImporter &n, Value rows, int64_t outLength,
                                     double scale) {
  Type element = typeOf(rows).getElementType();
  int64_t count = typeOf(rows).getDimSize(0), length = typeOf(rows).getDimSize(1);
  RETURN_IF_ERROR(checkTable(n, length, 2 * outLength, length));
  Value weights = table(n, element, length, 2 * outLength, [&](int64_t m, int64_t j) {
    auto [c, sine] = twiddle(j % outLength, m, length);
    return (j < outLength ? c : -sine) * scale;
  });
  Value product = n.b().create<aten::MmOp>(
      n.loc(), RankedTensorType::get({count, 2 * outLength}, element), rows, weights);
  return permuteValue(n, viewValue(n, product, {count, 2, outLength}), {0, 2, 1});
}

absl::StatusOr<Value> transformRows(NodeImporter &n, Value rows, int64_t outLength,
                                    bool forward, double scale);

/// Bluestein's transform of rows (A, N, 2) of a prime N: with
/// w_m = exp(-+ i pi m^2 / N), nk = (n^2 + k^2 - (k - n)^2) / 2 makes
/// X_k = w_k sum_n (x_n w_n) conj(w_{k-n}), a convolution, which three
/// transforms of M points (the power of two from 2N - 1) compute.
absl::StatusOr<Value> bluesteinRows(NodeImporter &n, Value rows, int64_t outLength,
                                    bool forward, double scale) {
  Type element = typeOf(rows).getElementType();
  int64_t count = typeOf(rows).getDimSize(0), length = typeOf(rows).getDimSize(1);
  int64_t padded = 1;
  while (padded < 2 * length - 1)
    padded *= 2;
  // Its largest table: the kernel's M pairs.
  RETURN_IF_ERROR(checkTable(n, padded, 2, length));
  auto pairs = [&](int64_t a, int64_t b) { return RankedTensorType::get({a, b, 2}, element); };
  Value w = viewValue(n, chirp(n, element, length, length, forward), {1, length, 2});
  Value weighted = complexProduct(n, pairs(count, length), rows, w);
  Value zeros = n.constant(element, 0.0, {count, padded - length, 2});
  Value extended = n.b().create<aten::CatOp>(n.loc(), pairs(count, padded),
                                             ValueRange{weighted, zeros},
                                             n.b().getI64IntegerAttr(1));
  // conj(w_m) at lags m and M - m: the chirp of the other direction.
  Value kernel = viewValue(n, chirp(n, element, length, length, !forward, padded),
                           {1, padded, 2});
  ASSIGN_OR_RETURN(Value spectrum, transformRows(n, extended, padded, true, 1.0));
  ASSIGN_OR_RETURN(Value response, transformRows(n, kernel, padded, true, 1.0));
  Value product = complexProduct(n, pairs(count, padded), spectrum, response);
  ASSIGN_OR_RETURN(Value convolved,
                   transformRows(n, product, padded, false, 1.0 / static_cast<double>(padded)));
  Value wk = viewValue(n, chirp(n, element, length, outLength, forward, 0, scale),
                       {1, outLength, 2});
  return complexProduct(n, pairs(count, outLength), sliceAlong(n, convolved, 1, 0, outLength),
                        wk);
}

/// The transform of rows (A, N, 2), (A, K, 2): direct, four-step, or for
/// a prime N Bluestein's.
absl::StatusOr<Value> transformRows(NodeImporter &n, Value rows, int64_t outLength,
                                    bool forward, double scale) {
  int64_t count = typeOf(rows).getDimSize(0), length = typeOf(rows).getDimSize(1);
  if (direct(length))
    return directRows(n, rows, outLength, forward, scale);
  int64_t inner = innerFactor(length), outer = length / inner;
  if (inner == 1)
    return bluesteinRows(n, rows, outLength, forward, scale);
  Type element = typeOf(rows).getElementType();
  RETURN_IF_ERROR(checkTable(n, outer, 2 * inner, length)); // the twiddles
  // n = outer n1 + n2: transforms of `inner` points along n1, for each n2.
  Value byColumn = permuteValue(n, viewValue(n, rows, {count, inner, outer, 2}), {0, 2, 1, 3});
  ASSIGN_OR_RETURN(Value first, transformRows(n, viewValue(n, byColumn, {count * outer, inner, 2}),
                                              inner, forward, 1.0));
  // Twiddles exp(-+ 2 pi i n2 k1 / N) over (n2, k1).
  double sign = forward ? -1.0 : 1.0;
  Value twiddles = viewValue(
      n, table(n, element, outer, 2 * inner, [&](int64_t n2, int64_t j) {
        auto [c, sine] = twiddle(n2, j / 2, length);
        return j % 2 == 0 ? c : sign * sine;
      }),
      {outer, inner, 2});
  auto turnedType = RankedTensorType::get({count, outer, inner, 2}, element);
  Value turned = complexProduct(n, turnedType, viewValue(n, first, {count, outer, inner, 2}),
                                twiddles);
  // Transforms of `outer` points along n2, for each k1.
  Value byRow = permuteValue(n, turned, {0, 2, 1, 3});
  ASSIGN_OR_RETURN(Value second, transformRows(n, viewValue(n, byRow, {count * inner, outer, 2}),
                                               outer, forward, scale));
  // k = k1 + inner k2: (k2, k1) in row-major order.
  Value ordered = viewValue(
      n, permuteValue(n, viewValue(n, second, {count, inner, outer, 2}), {0, 2, 1, 3}),
      {count, length, 2});
  return outLength == length ? ordered : sliceAlong(n, ordered, 1, 0, outLength);
}

/// One transform along complex dim `dim` of `input` (pairs; or, `real`, a
/// real tensor of the complex shape, transformed forward): `outLength`
/// outputs X_k = scale * sum_m x_m exp(-+ 2 pi i k m / N).
absl::StatusOr<Value> transformDim(NodeImporter &n, Value input, int64_t dim,
                                   int64_t outLength, bool forward, double scale,
                                   bool real = false) {
  Type element = typeOf(input).getElementType();
  int64_t length = typeOf(input).getDimSize(dim);
  bool realRows = real && direct(length);
  Value pairs = input;
  if (realRows) {
    SmallVector<int64_t> column(typeOf(input).getShape());
    column.push_back(1);
    pairs = viewValue(n, input, column); // (..., 1): alongRows moves it last
  } else if (real) {
    pairs = realAsPairs(n, input, element);
  }
  auto [moved, perm] = alongRows(n, pairs, dim);
  SmallVector<int64_t> movedShape(typeOf(moved).getShape());
  int64_t parts = realRows ? 1 : 2;
  int64_t count = typeOf(moved).getNumElements() / (parts * length);
  absl::StatusOr<Value> rows =
      realRows ? directRealRows(n, viewValue(n, moved, {count, length}), outLength, scale)
               : transformRows(n, viewValue(n, moved, {count, length, 2}), outLength,
                               forward, scale);
  if (!rows.ok())
    return rows.status();
  movedShape[movedShape.size() - 2] = outLength;
  movedShape.back() = 2;
  return permuted(n, viewValue(n, *rows, movedShape), invertPermutationVector(perm));
}

absl::StatusOr<std::vector<int64_t>> transformDims(NodeImporter &n, int64_t rank) {
  ASSIGN_OR_RETURN(std::vector<int64_t> raw, n.intsAttr("dim"));
  std::vector<int64_t> dims;
  for (int64_t d : raw) {
    ASSIGN_OR_RETURN(int64_t normal, n.normalizeDim(d, rank));
    dims.push_back(normal);
  }
  if (dims.empty())
    return n.error("a Fourier transform needs at least one dim");
  return dims;
}

absl::StatusOr<Values> fftC2C(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value x, complexArgument(n, "self"));
  x = convertElements(n, x, element);
  ASSIGN_OR_RETURN(bool forward, n.boolAttr("forward"));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, transformDims(n, complexRank(x)));
  int64_t signal = 1;
  for (int64_t d : dims)
    signal *= typeOf(x).getDimSize(d);
  ASSIGN_OR_RETURN(double scale, normScale(n, signal));
  for (auto [i, d] : llvm::enumerate(dims)) {
    ASSIGN_OR_RETURN(x, transformDim(n, x, d, typeOf(x).getDimSize(d), forward,
                                     i + 1 == dims.size() ? scale : 1.0));
  }
  return Values{x};
}

/// r2c: the real input's DFT along the last listed dim first (its first
/// N/2 + 1 outputs when onesided), then the others.
absl::StatusOr<Values> fftR2C(NodeImporter &n) {
  ASSIGN_OR_RETURN(auto result, pairResult(n));
  auto [type, element] = result;
  ASSIGN_OR_RETURN(Value self, n.tensor("self"));
  if (n.isComplexTensor("self"))
    return n.error("_fft_r2c takes a real input");
  ASSIGN_OR_RETURN(bool onesided, n.boolAttr("onesided"));
  Value real = convertElements(n, self, element);
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, transformDims(n, typeOf(real).getRank()));
  int64_t signal = 1;
  for (int64_t d : dims)
    signal *= typeOf(real).getDimSize(d);
  ASSIGN_OR_RETURN(double scale, normScale(n, signal));
  int64_t last = dims.back();
  int64_t length = typeOf(real).getDimSize(last);
  ASSIGN_OR_RETURN(Value x, transformDim(n, real, last, onesided ? length / 2 + 1 : length,
                                         true, dims.size() == 1 ? scale : 1.0,
                                         /*real=*/true));
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    ASSIGN_OR_RETURN(x, transformDim(n, x, dims[i], typeOf(x).getDimSize(dims[i]), true,
                                     i + 2 == dims.size() ? scale : 1.0));
  }
  if (typeOf(x) != type)
    return n.error("the declared r2c result has another shape");
  return Values{x};
}

/// The real inverse of rows (A, L, 2) from their first N/2 + 1 (Hermitian)
/// entries, N = `outLength`: (A, N). Direct: x_m = sum_k w_k (Re X_k cos -
/// Im X_k sin), w_k 2 except at k = 0 and k = N/2 (even N), one product.
/// Factored: the full spectrum, X[N - k] = conj X[k], through the complex
/// inverse, whose real part that is.
absl::StatusOr<Value> realInverseRows(NodeImporter &n, Value rows, int64_t outLength,
                                      double scale) {
  Type element = typeOf(rows).getElementType();
  int64_t count = typeOf(rows).getDimSize(0);
  int64_t half = outLength / 2 + 1;
  Value used = sliceAlong(n, rows, 1, 0, half);
  if (!direct(outLength)) {
    // X[half .. N-1] = conj X[N-half .. 1]: entries 1 .. N-half, reversed.
    int64_t rest = outLength - half;
    Value mirrored = sliceAlong(n, used, 1, 1, rest);
    mirrored = n.b().create<aten::FlipOp>(n.loc(), mirrored, n.b().getDenseI64ArrayAttr({1}));
    PartMath part(n, RankedTensorType::get({count, rest}, element));
    mirrored = pack(n, realPart(n, mirrored), part.neg(imagPart(n, mirrored)));
    Value full = n.b().create<aten::CatOp>(
        n.loc(), RankedTensorType::get({count, outLength, 2}, element),
        ValueRange{used, mirrored}, n.b().getI64IntegerAttr(1));
    ASSIGN_OR_RETURN(Value complex, transformRows(n, full, outLength, false, scale));
    return realPart(n, complex);
  }
  RETURN_IF_ERROR(checkTable(n, 2 * half, outLength, outLength));
  // [re_0..re_{h-1} | im_0..im_{h-1}].
  Value flat = viewValue(n, permuteValue(n, used, {0, 2, 1}), {count, 2 * half});
  Value weights = table(n, element, 2 * half, outLength, [&](int64_t i, int64_t m) {
    int64_t k = i % half;
    bool edge = k == 0 || (outLength % 2 == 0 && k == outLength / 2);
    double w = edge ? 1.0 : 2.0;
    auto [c, sine] = twiddle(k, m, outLength);
    double v = i < half ? c : -sine;
    return w * v * scale;
  });
  return n.b()
      .create<aten::MmOp>(n.loc(), RankedTensorType::get({count, outLength}, element), flat,
                          weights)
      .getResult();
}

/// c2r: inverse transforms along all but the last listed dim, then the
/// real inverse along it.
absl::StatusOr<Values> fftC2R(NodeImporter &n) {
  ASSIGN_OR_RETURN(RankedTensorType type, n.resultType());
  ASSIGN_OR_RETURN(Value x, complexArgument(n, "self"));
  ASSIGN_OR_RETURN(int64_t outLength, n.intAttr("last_dim_size"));
  if (outLength < 1)
    return n.error(absl::StrCat("last_dim_size ", outLength, " is out of range"));
  // Past this, every path's tables would be (the twiddles alone hold 2N).
  RETURN_IF_ERROR(checkTable(n, outLength, 2, outLength));
  Type element = type.getElementType();
  x = convertElements(n, x, element);
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, transformDims(n, complexRank(x)));
  int64_t signal = outLength;
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    signal *= typeOf(x).getDimSize(dims[i]);
  ASSIGN_OR_RETURN(double scale, normScale(n, signal));
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    ASSIGN_OR_RETURN(x, transformDim(n, x, dims[i], typeOf(x).getDimSize(dims[i]),
                                     false, 1.0));
  }
  int64_t last = dims.back();
  int64_t half = outLength / 2 + 1;
  if (typeOf(x).getDimSize(last) < half)
    return n.error(absl::StrCat("last_dim_size ", outLength, " needs ", half,
                                " input entries along dim ", last));
  auto [moved, perm] = alongRows(n, x, last);
  int64_t length = typeOf(moved).getShape().drop_back().back();
  int64_t count = typeOf(moved).getNumElements() / (2 * length);
  ASSIGN_OR_RETURN(Value rows, realInverseRows(n, viewValue(n, moved, {count, length, 2}),
                                               outLength, scale));
  SmallVector<int64_t> movedShape(typeOf(moved).getShape().drop_back());
  movedShape.back() = outLength;
  SmallVector<int64_t> realPerm(perm.begin(), perm.end() - 1);
  Value out = permuted(n, viewValue(n, rows, movedShape), invertPermutationVector(realPerm));
  if (typeOf(out) != type)
    return n.error("the declared c2r result has another shape");
  return Values{out};
}

} // namespace

void addFourierTransformHandlers(OpHandlerTable &table) {
  table["aten._fft_c2c.default"] = fftC2C;
  table["aten._fft_r2c.default"] = fftR2C;
  table["aten._fft_c2r.default"] = fftC2R;
}

} // namespace kiln
