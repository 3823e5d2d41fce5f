//===- OpReport.cpp - per-layer cost analysis of the aten dialect ---------===//
//
// This file implements the op report: the cost table (MACs and FLOPs per aten
// op), byte counts from tensor types, the grouping of ops into graph-node
// layers by location, and a text rendering.
//
//===----------------------------------------------------------------------===//
#include "kiln/Analysis/OpReport.h"

#include "kiln/Dialect/Aten/IR/AdaptiveWindows.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Import/GraphImporter.h"
#include "kiln/common/NodeName.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <unordered_map>
#include <vector>

using namespace mlir;

namespace kiln::analysis {
namespace {

int64_t elementCount(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

/// Extent `dim` of `type`; 0 for a symbolic one (no count before a call).
int64_t staticExtent(RankedTensorType type, int64_t dim) {
  return type.isDynamicDim(dim) ? 0 : type.getDimSize(dim);
}

int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t v : values)
    result *= v;
  return result;
}

OpCost cost(v1::OpCostKind kind, int64_t flops, int64_t macs = 0) {
  OpCost c;
  c.kind = kind;
  c.flops = flops;
  c.macs = macs;
  return c;
}

/// A 128-bit count cut to what a contraction's 2 * macs + extra fits.
int64_t saturate(__int128 v) {
  return static_cast<int64_t>(std::min<__int128>(v, INT64_MAX / 4));
}

OpCost contraction(int64_t macs, int64_t extraFlops) {
  return cost(v1::OP_COST_KIND_CONTRACTION, 2 * macs + extraFlops, macs);
}

/// 4 for a batch of complex matrices as (N, m, n, 2) pairs (a complex
/// multiply-add is 4 real ones), 1 for real (N, m, n) ones.
int64_t pairFactor(RankedTensorType matrices) { return matrices.getRank() == 4 ? 4 : 1; }

OpCost elementwise(Operation *op) {
  return cost(v1::OP_COST_KIND_ELEMENTWISE, elementCount(op->getResult(0)));
}

OpCost reduction(Value input, int64_t flopsPerElement) {
  return cost(v1::OP_COST_KIND_REDUCTION, flopsPerElement * elementCount(input));
}

OpCost dataMovement() { return cost(v1::OP_COST_KIND_DATA_MOVEMENT, 0); }

OpCost convolutionCost(aten::ConvolutionOp op) {
  auto weight = cast<RankedTensorType>(op.getWeight().getType());
  if (weight.getRank() < 2)
    return cost(v1::OP_COST_KIND_CONTRACTION, 0);
  // Forward: (C_out, C_in/groups, k...); every output element sums over
  // C_in/groups * kernel. Transposed: (C_in, C_out/groups, k...); every input
  // element scatters into C_out/groups * kernel outputs.
  int64_t perElement = weight.getDimSize(1) * product(weight.getShape().drop_front(2));
  int64_t elements = op.getTransposed() ? elementCount(op.getInput())
                                        : elementCount(op.getResult());
  int64_t bias = op.getBias() ? elementCount(op.getResult()) : 0;
  return contraction(elements * perElement, bias);
}

/// Adaptive pooling reads each window's elements once (the input once
/// when the windows tile it; overlapping uneven windows read some twice)
/// and averaging divides each result once.
OpCost adaptivePoolCost(Value self, Value result, int64_t pooled, bool average) {
  auto in = cast<RankedTensorType>(self.getType());
  auto out = cast<RankedTensorType>(result.getType());
  __int128 reads = product(in.getShape().drop_back(pooled));
  for (const aten::AdaptiveWindows &w :
       aten::adaptiveWindows(in.getShape(), out.getShape().take_back(pooled))) {
    int64_t span = w.in;
    if (!w.even()) {
      span = 0;
      for (int64_t i = 0; i < w.out; ++i)
        span += w.size(i);
    }
    reads = std::min<__int128>(reads * span, INT64_MAX);
  }
  int64_t flops = static_cast<int64_t>(reads);
  if (average)
    flops = static_cast<int64_t>(
        std::min<__int128>(__int128(flops) + elementCount(result), INT64_MAX));
  return cost(v1::OP_COST_KIND_WINDOW, flops);
}

/// The input and the weight gradients each take the forward's
/// multiply-adds (N * C_out * O * C_in/g * K); the bias gradient adds each
/// output gradient once.
OpCost convolutionBackwardCost(aten::ConvolutionBackwardOp op) {
  auto weight = cast<RankedTensorType>(op.getWeight().getType());
  __int128 forward = __int128(elementCount(op.getGradOutput())) *
                     product(weight.getShape().drop_front(1));
  ArrayRef<bool> mask = op.getOutputMask();
  __int128 macs = forward * ((mask[0] ? 1 : 0) + (mask[1] ? 1 : 0));
  int64_t bias = mask[2] ? elementCount(op.getGradOutput()) : 0;
  return contraction(saturate(macs), bias);
}

/// getrf, then getrs: n^3 / 3 + n^2 k multiply-adds per matrix.
OpCost solveCost(aten::LinalgSolveOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  __int128 n = type.getDimSize(1), k = type.getDimSize(2);
  __int128 macs = __int128(type.getDimSize(0)) * (n * n * n / 3 + n * n * k);
  return contraction(saturate(macs), 0);
}

/// geqrf (reflector j costs a product and an update of the trailing
/// (m - j) x (n - j) block: 2 (m k n - k^2 (m + n) / 2 + k^3 / 3)
/// multiply-adds, m n^2 - n^3 / 3 for k = n) and orgqr (the k reflectors
/// applied to Q's q columns: about 2 q k (m - k / 2)).
/// dgeqr2's multiply-adds on an (m, n) matrix.
__int128 geqrfMacs(__int128 m, __int128 n) {
  __int128 k = std::min(m, n);
  return 2 * (m * k * n - k * k * (m + n) / 2 + k * k * k / 3);
}

/// dorg2r's or dorm2r's: k reflectors of rows up to m applied to `width`
/// columns.
__int128 reflectorMacs(__int128 m, __int128 k, __int128 width) {
  return 2 * width * k * (m - k / 2);
}

OpCost qrCost(aten::QrOp op) {
  auto type = cast<RankedTensorType>(op.getSelf().getType());
  __int128 m = type.getDimSize(1), n = type.getDimSize(2), k = std::min(m, n);
  __int128 q = cast<RankedTensorType>(op.getQ().getType()).getDimSize(2);
  __int128 macs = __int128(type.getDimSize(0)) * pairFactor(type) *
                 (geqrfMacs(m, n) + reflectorMacs(m, k, q));
  return contraction(saturate(macs), 0);
}

/// One-sided Jacobi rotations (svdvals, svd), counted at kTypicalSweeps
/// sweeps (the loops stop when converged; they run at most 60): each sweep
/// forms the n (n - 1) / 2 pairs' three dot products and rotates two
/// columns of m (7 m multiply-adds); svd also rotates two rows of V^T (4 n)
/// and divides U's m n entries by the norms. Completing U (zero singular
/// values, a complete U) is not counted.
OpCost jacobiCost(Value self, bool vectors) {
  constexpr int64_t kTypicalSweeps = 6;
  auto type = cast<RankedTensorType>(self.getType());
  __int128 m = type.getDimSize(1), n = type.getDimSize(2);
  __int128 perPair = 7 * m + (vectors ? 4 * n : 0);
  __int128 perMatrix = kTypicalSweeps * n * (n - 1) / 2 * perPair + (vectors ? m * n : 0);
  return contraction(saturate(__int128(type.getDimSize(0)) * perMatrix), 0);
}

/// The symmetric eigen decomposition (eigvalsh, eigh): the tridiagonal
/// reduction's n^3 multiply-adds (p = tau A22 v, then the rank-2 update of
/// the whole trailing square: 3 r^2 per step; its QL steps on the values
/// are O(n^2)); with vectors, Q's (2/3) n^3 more and the QL rotations on
/// its rows, counted at kTypicalSteps steps per eigenvalue, each rotating
/// two rows of n for half the remaining order on average: 2 n^3.
OpCost symmetricEigenCost(Value self, bool vectors) {
  constexpr int64_t kTypicalSteps = 2;
  auto type = cast<RankedTensorType>(self.getType());
  __int128 n = type.getDimSize(1);
  __int128 perMatrix = n * n * n;
  if (vectors)
    perMatrix += 2 * n * n * n / 3 + kTypicalSteps * n * n * n;
  return contraction(saturate(__int128(type.getDimSize(0)) * perMatrix), 0);
}

/// The matrix-product form: one multiply-add per (row, row, column) triple
/// plus the norms and the combination; the difference form: a subtraction,
/// |x|^p and the sum per triple.
OpCost cdistCost(aten::CdistOp op) {
  auto x1 = cast<RankedTensorType>(op.getX1().getType());
  __int128 triples =
      __int128(elementCount(op.getResult())) * x1.getDimSize(x1.getRank() - 1);
  if (op.getUseMm())
    return contraction(saturate(triples),
                       elementCount(op.getX1()) + elementCount(op.getX2()) +
                           4 * elementCount(op.getResult()));
  return cost(v1::OP_COST_KIND_REDUCTION, saturate(3 * triples));
}

/// The two products with constant weight tables: (N C H, W) x (W, W_out)
/// when W changes, (N C W_out, H) x (H, H_out) when H does.
OpCost upsampleSeparableCost(aten::UpsampleSeparableOp op) {
  ArrayRef<int64_t> in = cast<RankedTensorType>(op.getSelf().getType()).getShape();
  ArrayRef<int64_t> out = op.getType().getShape();
  __int128 planes = __int128(in[0]) * in[1], macs = 0;
  if (in[3] != out[3])
    macs += planes * in[2] * in[3] * out[3];
  if (in[2] != out[2])
    macs += planes * out[3] * in[2] * out[2];
  return contraction(saturate(macs), 0);
}

/// One multiply-add per element of the three inputs' broadcast (what the
/// batched product contracts), plus the smallest pairwise product first.
OpCost trilinearCost(aten::TrilinearOp op) {
  ArrayRef<int64_t> shapes[3] = {
      cast<RankedTensorType>(op.getI1().getType()).getShape(),
      cast<RankedTensorType>(op.getI2().getType()).getShape(),
      cast<RankedTensorType>(op.getI3().getType()).getShape()};
  // Saturating: three inputs of up to 2^40 elements can broadcast past
  // int64.
  auto broadcastCount = [&](std::initializer_list<int> which) {
    __int128 count = 1;
    for (size_t d = 0; d < shapes[0].size(); ++d) {
      int64_t extent = 1;
      for (int i : which)
        extent = std::max(extent, shapes[i][d]);
      count = std::min<__int128>(count * extent, INT64_MAX / 4);
    }
    return static_cast<int64_t>(count);
  };
  int64_t pair = std::min({broadcastCount({0, 1}), broadcastCount({1, 2}),
                           broadcastCount({0, 2})});
  return contraction(broadcastCount({0, 1, 2}), pair);
}

/// A layer while it is being accumulated.
struct LayerBuilder {
  std::string name;
  SmallVector<Operation *> ops;
};

} // namespace

int64_t tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  Type element = tensor.getElementType();
  int64_t factor = 1;
  if (auto complex = dyn_cast<ComplexType>(element)) {
    element = complex.getElementType();
    factor = 2;
  }
  if (!element.isIntOrFloat())
    return 0;
  int64_t bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  // A symbolic size has no count before a call: reported as 0.
  if (!tensor.hasStaticShape())
    return 0;
  return factor * bytes * tensor.getNumElements();
}

OpCost estimateOpCost(Operation *op) {
  return llvm::TypeSwitch<Operation *, OpCost>(op)
      .Case([](aten::MmOp mm) {
        auto lhs = cast<RankedTensorType>(mm.getSelf().getType());
        return contraction(elementCount(mm.getResult()) * staticExtent(lhs, 1), 0);
      })
      .Case([](aten::BmmOp bmm) {
        auto lhs = cast<RankedTensorType>(bmm.getSelf().getType());
        return contraction(elementCount(bmm.getResult()) * staticExtent(lhs, 2), 0);
      })
      .Case([](aten::AddmmOp addmm) {
        auto lhs = cast<RankedTensorType>(addmm.getMat1().getType());
        int64_t out = elementCount(addmm.getResult());
        return contraction(out * staticExtent(lhs, 1), out);
      })
      .Case([](aten::ConvolutionOp conv) { return convolutionCost(conv); })
      .Case([](aten::MaxPoolOp pool) {
        return cost(v1::OP_COST_KIND_WINDOW,
                    elementCount(pool.getValues()) * product(pool.getKernel()));
      })
      .Case([](aten::AdaptiveAvgPoolOp pool) {
        return adaptivePoolCost(pool.getSelf(), pool.getResult(),
                                pool.getPooledDims(), /*average=*/true);
      })
      .Case([](aten::AdaptiveMaxPoolOp pool) {
        return adaptivePoolCost(pool.getSelf(), pool.getValues(),
                                pool.getPooledDims(), /*average=*/false);
      })
      .Case([](aten::AvgPoolOp pool) {
        int64_t out = elementCount(pool.getResult());
        return cost(v1::OP_COST_KIND_WINDOW, out * product(pool.getKernel()) + out);
      })
      .Case<aten::AddOp, aten::SubOp, aten::MulOp, aten::DivOp, aten::NegOp,
            aten::ReluOp, aten::TanhOp, aten::SigmoidOp, aten::ExpOp,
            aten::GeluOp, aten::PointwiseOp>(
          [](Operation *op) { return elementwise(op); })
      // What their decompositions compute per element: scale, round,
      // shift, clamp, convert; convert, shift, scale; and fake quantize's
      // scale, round, shift, clamp, NaN check and select, two bounds, mask,
      // convert, shift back, scale back, convert.
      .Case([](aten::QuantizeOp q) {
        return cost(v1::OP_COST_KIND_ELEMENTWISE, 5 * elementCount(q.getResult()));
      })
      .Case([](aten::DequantizeOp dq) {
        return cost(v1::OP_COST_KIND_ELEMENTWISE, 3 * elementCount(dq.getResult()));
      })
      .Case([](aten::FakeQuantizeOp fq) {
        return cost(v1::OP_COST_KIND_ELEMENTWISE, 13 * elementCount(fq.getResult()));
      })
      // A count of the row entries before each value: one comparison each.
      .Case([](aten::SearchSortedOp search) {
        auto sorted = cast<RankedTensorType>(search.getSorted().getType());
        return cost(v1::OP_COST_KIND_REDUCTION,
                    elementCount(search.getResult()) *
                        staticExtent(sorted, sorted.getRank() - 1));
      })
      // Scans: a reduction over each prefix (i, j <= i) of the dim, or past
      // kMaxTriangularScan one step per element.
      .Case<aten::CummaxOp, aten::CumminOp, aten::LogCumSumExpOp>([](Operation *op) {
        auto self = cast<RankedTensorType>(op->getOperand(0).getType());
        int64_t dim = op->getAttrOfType<IntegerAttr>("dim").getInt();
        int64_t length = self.getRank() == 0 ? 1 : staticExtent(self, dim);
        auto logSumExp = dyn_cast<aten::LogCumSumExpOp>(op);
        if (length > aten::kMaxTriangularScan || (logSumExp && logSumExp.getComplex()))
          length = 1;
        int64_t perPair = logSumExp ? 4 : 1;
        return cost(v1::OP_COST_KIND_REDUCTION,
                    perPair * elementCount(op->getResult(0)) * length);
      })
      .Case<aten::SumOp, aten::MeanOp, aten::ProdOp, aten::AmaxOp, aten::AminOp,
            aten::AnyOp, aten::AllOp, aten::ArgReduceOp, aten::CumsumOp>(
          [](Operation *op) { return reduction(op->getOperand(0), 1); })
      .Case([](aten::VarOp var) { return reduction(var.getSelf(), 4); })
      // |x|, its power, the sum (then one root per result).
      .Case([](aten::VectorNormOp norm) { return reduction(norm.getSelf(), 3); })
      .Case<aten::SoftmaxOp, aten::LogSoftmaxOp>(
          [](Operation *op) { return reduction(op->getOperand(0), 5); })
      .Case([](aten::NativeLayerNormOp norm) { return reduction(norm.getInput(), 8); })
      // The smallest pairwise product, then one multiply-add per element of
      // the contraction with the third input.
      .Case([](aten::TrilinearOp op) { return trilinearCost(op); })
      // Each index's row reduced into its bag (weighted: one more multiply
      // per element; mean: one division per result).
      .Case([](aten::EmbeddingBagOp bag) {
        auto weight = cast<RankedTensorType>(bag.getWeight().getType());
        __int128 flops = __int128(elementCount(bag.getIndices())) * weight.getDimSize(1) *
                         (bag.getPerSampleWeights() ? 2 : 1);
        if (bag.getMode() == aten::kEmbeddingBagMean)
          flops += elementCount(bag.getResult());
        return cost(v1::OP_COST_KIND_REDUCTION,
                    static_cast<int64_t>(std::min<__int128>(flops, INT64_MAX)));
      })
      .Case([](aten::ConvolutionBackwardOp back) { return convolutionBackwardCost(back); })
      // Each output gradient added to the position that picked it.
      .Case([](aten::MaxPoolBackwardOp back) {
        return reduction(back.getGradOutput(), 1);
      })
      // Each row's norm (|x|, a power, the sum), then the scale.
      .Case([](aten::EmbeddingRenormOp renorm) {
        return reduction(renorm.getSelf(), 4);
      })
      // getrf: about n^3 / 3 multiply-adds per matrix, each 4 real ones
      // for complex pairs.
      .Case([](aten::LuFactorOp lu) {
        auto type = cast<RankedTensorType>(lu.getSelf().getType());
        int64_t order = type.getDimSize(1);
        return contraction(pairFactor(type) * type.getDimSize(0) * order * order * order / 3, 0);
      })
      .Case([](aten::LinalgSolveOp solve) { return solveCost(solve); })
      // Swaps of indices: no arithmetic.
      .Case([](aten::LuPermutationOp) { return dataMovement(); })
      .Case([](aten::QrOp qr) { return qrCost(qr); })
      // qr's parts: dgeqr2, and dorg2r or dorm2r (k reflectors applied to
      // the result's columns); each 4 real multiply-adds for complex pairs.
      .Case([](aten::GeqrfOp geqrf) {
        auto type = cast<RankedTensorType>(geqrf.getSelf().getType());
        return contraction(saturate(__int128(type.getDimSize(0)) * pairFactor(type) *
                                    geqrfMacs(type.getDimSize(1), type.getDimSize(2))),
                           0);
      })
      .Case<aten::HouseholderProductOp, aten::OrmqrOp>([](Operation *op) {
        auto type = cast<RankedTensorType>(op->getResult(0).getType());
        __int128 k = cast<RankedTensorType>(op->getOperand(1).getType()).getDimSize(1);
        return contraction(saturate(__int128(type.getDimSize(0)) * pairFactor(type) *
                                    reflectorMacs(type.getDimSize(1), k, type.getDimSize(2))),
                           0);
      })
      // trtrs: n^2 k / 2 multiply-adds per matrix, each 4 real ones for
      // complex pairs.
      .Case([](aten::TriangularSolveOp solve) {
        auto type = cast<RankedTensorType>(solve.getType());
        __int128 n = type.getDimSize(1);
        return contraction(saturate(__int128(type.getDimSize(0)) * pairFactor(type) * n * n *
                                    type.getDimSize(2) / 2),
                           0);
      })
      // sytrf: about n^3 / 6 multiply-adds per matrix, as potrf.
      .Case([](aten::LdlFactorOp ldl) {
        auto type = cast<RankedTensorType>(ldl.getSelf().getType());
        int64_t order = type.getDimSize(1);
        return contraction(type.getDimSize(0) * order * order * order / 6, 0);
      })
      // potrf: about n^3 / 6 multiply-adds per matrix, each 4 real ones
      // for complex pairs.
      .Case([](aten::CholeskyOp chol) {
        auto type = cast<RankedTensorType>(chol.getSelf().getType());
        int64_t order = type.getDimSize(1);
        return contraction(pairFactor(type) * type.getDimSize(0) * order * order * order / 6, 0);
      })
      // The degree-18 Taylor polynomial's 5 products of n^3 each; the s
      // squarings depend on the data and are not counted.
      .Case([](aten::MatrixExpOp exp) {
        auto type = cast<RankedTensorType>(exp.getType());
        __int128 n = type.getDimSize(1);
        return contraction(saturate(__int128(type.getDimSize(0)) * 5 * n * n * n), 0);
      })
      .Case([](aten::EigvalshOp eig) { return symmetricEigenCost(eig.getSelf(), false); })
      .Case([](aten::EighOp eig) { return symmetricEigenCost(eig.getSelf(), true); })
      // n pivoted Gram-Schmidt steps over 2n columns of n complex entries
      // (the norms, a second projection of the pivot, the projections of
      // the columns left, masked over all 2n columns): about 36 n^3
      // multiply-adds.
      .Case([](aten::HermitianEigenvectorsOp vectors) {
        auto type = cast<RankedTensorType>(vectors.getType());
        __int128 n = type.getDimSize(1);
        return contraction(saturate(__int128(type.getDimSize(0)) * 36 * n * n * n), 0);
      })
      // Three pivoted Gram-Schmidt passes over the embedding's 2k columns
      // (k = n, or m for complete vectors) of up to m + n complex entries,
      // k steps in all per side, as hermitian_eigenvectors' steps, and two
      // masked projections of every column against every other: about
      // 68 k^2 (m + n) multiply-adds.
      .Case([](aten::ComplexSingularVectorsOp vectors) {
        auto type = cast<RankedTensorType>(vectors.getLeft().getType());
        __int128 m = type.getDimSize(1), k = type.getDimSize(2);
        __int128 n = cast<RankedTensorType>(vectors.getRight().getType()).getDimSize(1);
        return contraction(saturate(__int128(type.getDimSize(0)) * 68 * k * k * (m + n)), 0);
      })
      // Eigenvalues of a general matrix: about 10 n^3 flops (Golub and Van
      // Loan's count for the Hessenberg reduction and the QR sweeps), 5 n^3
      // multiply-adds, each 4 real ones for complex pairs (zgeev's steps).
      .Case([](aten::EigvalsOp eig) {
        auto type = cast<RankedTensorType>(eig.getSelf().getType());
        __int128 n = type.getDimSize(1);
        return contraction(
            saturate(__int128(type.getDimSize(0)) * pairFactor(type) * 5 * n * n * n), 0);
      })
      // With the vectors, about 25 n^3 flops (Golub and Van Loan): 13 n^3
      // multiply-adds (times 4 for complex pairs).
      .Case([](aten::EigOp eig) {
        auto type = cast<RankedTensorType>(eig.getSelf().getType());
        __int128 n = type.getDimSize(1);
        return contraction(
            saturate(__int128(type.getDimSize(0)) * pairFactor(type) * 13 * n * n * n), 0);
      })
      .Case([](aten::SvdvalsOp svd) { return jacobiCost(svd.getSelf(), false); })
      .Case([](aten::SvdOp svd) { return jacobiCost(svd.getSelf(), true); })
      .Case([](aten::CdistOp cdist) { return cdistCost(cdist); })
      .Case([](aten::UpsampleSeparableOp up) { return upsampleSeparableCost(up); })
      // Each element's bin: two comparisons, a subtraction, a product and a
      // division; then its count.
      .Case([](aten::HistcOp histc) { return reduction(histc.getSelf(), 6); })
      // histogram: the guess, three edges compared, the range and a count
      // (a binary search over given edges costs about as much).
      .Case([](aten::HistogramOp histogram) { return reduction(histogram.getSelf(), 12); })
      .Case([](aten::HistogramddOp histogram) { return reduction(histogram.getSelf(), 12); })
      .Case([](aten::BincountOp bincount) { return reduction(bincount.getSelf(), 1); })
      // Like layer norm: mean, variance, then center, scale, weight, bias.
      .Case<aten::GroupNormOp, aten::BatchStatsNormOp>(
          [](Operation *op) { return reduction(op->getOperand(0), 8); })
      .Case([](aten::IndexPutOp put) {
        return put.getAccumulate() ? reduction(put.getValues(), 1) : dataMovement();
      })
      // The importer's aten.scatter_reduce and, after kiln-decompose-aten,
      // the primitive aten.scatter.
      .Case<aten::ScatterOp, aten::ScatterReduceOp>([](auto scatter) {
        return scatter.getReduce() == "none" ? dataMovement()
                                             : reduction(scatter.getIndex(), 1);
      })
      .Case([](aten::ViewOp) {
        OpCost c = dataMovement();
        c.movesData = false;
        return c;
      })
      .Case<aten::ConstantOp, aten::PermuteOp, aten::ExpandOp, aten::SliceOp,
            aten::FlipOp, aten::DiagonalOp, aten::RepeatOp, aten::AsStridedOp,
            aten::CatOp, aten::IndexSelectOp, aten::GatherOp, aten::ArangeOp,
            aten::InsertSliceOp, aten::PadOp, aten::NonzeroOp, aten::BooleanMaskOp,
            aten::RepeatInterleaveOp>(
          [](Operation *) { return dataMovement(); })
      .Default([](Operation *op) {
        // Ops added after this table: same-typed unary ops are elementwise;
        // the rest still get exact byte counts.
        if (op->getNumResults() == 1 &&
            op->hasTrait<OpTrait::SameOperandsAndResultType>())
          return elementwise(op);
        return OpCost();
      });
}

FailureOr<v1::OpReport> buildOpReport(ModuleOp module,
                                      const OpReportOptions &options) {
  func::FuncOp func = module.lookupSymbol<func::FuncOp>(kGraphFunctionName);
  if (!func) {
    auto funcs = module.getOps<func::FuncOp>();
    if (std::distance(funcs.begin(), funcs.end()) != 1)
      return failure();
    func = *funcs.begin();
  }
  if (func.isExternal())
    return failure();
  unsigned numParameters =
      options.graph ? options.graph->parameters_size() : options.numParameters;

  // Parameter-derived values: parameters, and results of ops that read only
  // such values (constants, transposed weights, arange...).
  llvm::DenseSet<Value> derived;
  for (BlockArgument arg : func.getArguments())
    if (arg.getArgNumber() < numParameters)
      derived.insert(arg);

  // Layers in order of first appearance, found by location name.
  std::vector<LayerBuilder> layers;
  std::unordered_map<std::string, unsigned> layerIndex;
  llvm::DenseMap<Operation *, unsigned> layerOf;
  int unnamed = 0;
  func.walk([&](Operation *op) {
    if (op == func.getOperation() || isa<func::ReturnOp>(op))
      return;
    if (llvm::all_of(op->getOperands(),
                     [&](Value v) { return derived.contains(v); }))
      for (Value result : op->getResults())
        derived.insert(result);
    std::string name;
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
      name = loc.getName().str();
    else
      name = (op->getName().getStringRef() + "#" + std::to_string(unnamed++)).str();
    auto [it, inserted] = layerIndex.emplace(name, layers.size());
    if (inserted)
      layers.push_back(LayerBuilder{name, {}});
    layers[it->second].ops.push_back(op);
    layerOf[op] = it->second;
  });

  std::unordered_map<std::string, std::string> nodeOps;
  if (options.graph)
    for (const v1::Node &node : options.graph->nodes())
      if (!nodeName(node).empty())
        nodeOps.emplace(nodeName(node), node.op());

  v1::OpReport report;
  v1::OpReportLayer *totals = report.mutable_totals();
  totals->set_name("total");
  for (auto [index, layer] : llvm::enumerate(layers)) {
    const std::string &name = layer.name;
    // Whether `op` belongs to this layer (return and other ops do not).
    auto inLayer = [&, index = index](Operation *op) {
      auto found = layerOf.find(op);
      return found != layerOf.end() && found->second == index;
    };
    v1::OpReportLayer *row = report.add_layers();
    row->set_name(name);
    auto op = nodeOps.find(name);
    if (op != nodeOps.end())
      row->set_op(op->second);
    llvm::SetVector<StringRef> dialectOps;
    llvm::DenseSet<Value> reads;
    bool movesData = false;
    Operation *main = nullptr;
    OpCost mainCost;
    for (Operation *member : layer.ops) {
      OpCost c = estimateOpCost(member);
      movesData |= c.movesData;
      row->set_macs(row->macs() + c.macs);
      row->set_flops(row->flops() + c.flops);
      // The node's own op: the costliest, else the first that is not one of
      // the constants the importer made for its scalar arguments.
      if (!main || c.flops > mainCost.flops ||
          (isa<aten::ConstantOp>(main) && !isa<aten::ConstantOp>(member))) {
        main = member;
        mainCost = c;
      }
      dialectOps.insert(member->getName().getStringRef());
      for (Value operand : member->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && inLayer(def))
          continue; // produced inside the layer
        if (!reads.insert(operand).second)
          continue;
        int64_t bytes = tensorBytes(operand.getType());
        if (derived.contains(operand))
          row->set_parameter_bytes(row->parameter_bytes() + bytes);
        else
          row->set_activation_in_bytes(row->activation_in_bytes() + bytes);
      }
      for (Value result : member->getResults()) {
        bool usedOutside = result.use_empty() ||
                           llvm::any_of(result.getUsers(), [&](Operation *user) {
                             return !inLayer(user);
                           });
        if (usedOutside)
          row->set_activation_out_bytes(row->activation_out_bytes() +
                                        tensorBytes(result.getType()));
      }
    }
    if (row->op().empty())
      row->set_op(main->getName().getStringRef().str());
    row->set_dialect_ops(llvm::join(dialectOps, "+"));
    row->set_kind(mainCost.kind);
    if (movesData) {
      row->set_bytes_read(row->parameter_bytes() + row->activation_in_bytes());
      row->set_bytes_written(row->activation_out_bytes());
    }
    totals->set_macs(totals->macs() + row->macs());
    totals->set_flops(totals->flops() + row->flops());
    totals->set_activation_in_bytes(totals->activation_in_bytes() +
                                    row->activation_in_bytes());
    totals->set_activation_out_bytes(totals->activation_out_bytes() +
                                     row->activation_out_bytes());
    totals->set_bytes_read(totals->bytes_read() + row->bytes_read());
    totals->set_bytes_written(totals->bytes_written() + row->bytes_written());
  }
  for (BlockArgument arg : func.getArguments())
    if (arg.getArgNumber() < numParameters)
      totals->set_parameter_bytes(totals->parameter_bytes() +
                                  tensorBytes(arg.getType()));
  return report;
}

namespace {

/// Adds the node names `loc` carries (a NameLoc's, a FusedLoc's parts').
void collectNames(Location loc, llvm::StringSet<> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    names.insert(name.getName().getValue());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      collectNames(part, names);
}

} // namespace

void markLayerUnits(ModuleOp lowered, llvm::StringRef library,
                    v1::OpReport &report) {
  llvm::StringSet<> inLibrary;
  if (!library.empty())
    lowered.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("kiln_rt_"))
        collectNames(call.getLoc(), inLibrary);
    });
  for (v1::OpReportLayer &layer : *report.mutable_layers())
    layer.set_unit(inLibrary.contains(layer.name()) ? library.str()
                                                    : "generated");
}

std::string formatOpReport(const v1::OpReport &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto kindName = [](v1::OpCostKind kind) -> std::string {
    switch (kind) {
    case v1::OP_COST_KIND_CONTRACTION:
      return "contraction";
    case v1::OP_COST_KIND_ELEMENTWISE:
      return "elementwise";
    case v1::OP_COST_KIND_REDUCTION:
      return "reduction";
    case v1::OP_COST_KIND_WINDOW:
      return "window";
    case v1::OP_COST_KIND_DATA_MOVEMENT:
      return "data-movement";
    default:
      return "-";
    }
  };
  size_t nameWidth = 5, opWidth = 2;
  for (const v1::OpReportLayer &layer : report.layers()) {
    nameWidth = std::max(nameWidth, layer.name().size());
    opWidth = std::max(opWidth, layer.op().size());
  }
  auto row = [&](const std::string &name, const std::string &op,
                 const std::string &kind, const std::string &unit,
                 llvm::ArrayRef<std::string> numbers) {
    os << llvm::left_justify(name, nameWidth) << "  "
       << llvm::left_justify(op, opWidth) << "  " << llvm::left_justify(kind, 13)
       << "  " << llvm::left_justify(unit, 9);
    for (const std::string &n : numbers)
      os << "  " << llvm::right_justify(n, 12);
    os << "\n";
  };
  row("layer", "op", "kind", "unit",
      {"macs", "flops", "param_bytes", "act_in", "act_out", "read", "written"});
  auto numbers = [](const v1::OpReportLayer &l) {
    return SmallVector<std::string>{
        std::to_string(l.macs()),         std::to_string(l.flops()),
        std::to_string(l.parameter_bytes()), std::to_string(l.activation_in_bytes()),
        std::to_string(l.activation_out_bytes()), std::to_string(l.bytes_read()),
        std::to_string(l.bytes_written())};
  };
  for (const v1::OpReportLayer &layer : report.layers())
    row(layer.name(), layer.op(), kindName(layer.kind()),
        layer.unit().empty() ? "-" : layer.unit(), numbers(layer));
  row("total", "", "", "", numbers(report.totals()));
  return text;
}

} // namespace kiln::analysis
