//===- HermitianEigenvectors.cpp - complex eigenvectors from the embedding ===//
//
// This file implements the lowering of aten.hermitian_eigenvectors: for each
// matrix of the batch, the 2n eigenvector columns (u; v) of the real
// embedding as complex vectors z = u + iv (a working copy), then n steps of
// complex Gram-Schmidt with column pivoting: the column not yet taken with
// the largest squared norm is taken, made orthogonal once more to those
// taken before (<q, z> = sum conj(q_i) z_i; z -= <q, z> q), normalised, and
// projected out of every column not taken. Last, the taken columns are
// written in the order of their columns, which is the eigenvalues' order.
//
// Why pivoting: the columns of distinct eigenvalues are orthogonal, also as
// complex vectors, and an eigenvalue of multiplicity k owns 2k columns that
// span its k complex dimensions; once it has given k vectors its columns
// have nothing left. So the largest leftover always belongs to an
// eigenvalue still owed a vector (at least 2/(k+2) of a column for a k-fold
// one, against rounding for the others), and each gets exactly its k. An
// order-bound rule (keep a column when over half of it is left) can skip
// the last vectors of a 4-fold or larger eigenvalue.
//
// The Gram-Schmidt loops are ComplexGramSchmidt.h's, which
// aten.complex_singular_vectors shares.
//
//===----------------------------------------------------------------------===//
#include "ComplexGramSchmidt.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

struct HermitianEigenvectorsLowering : OpConversionPattern<HermitianEigenvectorsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HermitianEigenvectorsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Scalars s(b, loc);
    Value vectors = adaptor.getSelf();
    auto type = cast<RankedTensorType>(vectors.getType());
    Type element = type.getElementType();
    const int64_t batch = type.getDimSize(0), n = type.getDimSize(1) / 2;
    ComplexColumns cols(0, n, element);
    auto outType = cast<RankedTensorType>(op.getType());
    auto workType = RankedTensorType::get({n, 2 * n, 2}, element);
    auto stateType = RankedTensorType::get({2 * n}, element);
    Carried init{s.zeros(outType), s.fresh(workType), s.fresh(stateType)};
    Carried done = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Scalars s(b, l);
          // The working columns z_c = u + iv, every one a candidate.
          Value z = loadEmbeddingColumns(b, l, c[1], vectors, m, /*first=*/0, n, 2 * n);
          Value state = b.create<linalg::FillOp>(l, s.number(element, 0.0), c[2]).getResult(0);
          auto [work, taken] =
              pivotedGramSchmidt(b, l, cols, z, state, 2 * n, s.index(n), /*mark=*/1.0);
          // The taken columns, in column (eigenvalue) order.
          Value out = writeMarked(b, l, work, taken, 2 * n, /*mark=*/1.0, c[0], m, s.index(0),
                                  /*first=*/0, n)
                          .first;
          return {out, work, taken};
        });
    rewriter.replaceOp(op, done[0]);
    return success();
  }
};

} // namespace

void kiln::aten::populateHermitianEigenvectorPatterns(RewritePatternSet &patterns) {
  patterns.add<HermitianEigenvectorsLowering>(patterns.getContext());
}
