//===- HermitianEigenvectors.cpp - complex eigenvectors from the embedding ===//
//
// This file implements the lowering of aten.hermitian_eigenvectors: for each
// matrix of the batch, the 2n eigenvector columns (u; v) of the real
// embedding, in order, as complex vectors z = u + iv, each made orthogonal
// to the vectors kept so far by complex modified Gram-Schmidt run twice
// (z -= <q, z> q for each kept q, <q, z> = sum conj(q_i) z_i), and kept,
// normalised, where |z|^2 is then over 1/2 or where the columns left are as
// many as the vectors still missing. The op's description says why that
// gives each eigenvalue's vectors once.
//
//===----------------------------------------------------------------------===//
#include "MatrixLoops.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

/// z (two rows of n: real and imaginary parts) made orthogonal to the
/// first `kept` columns of matrix `m` of `out` (N, n, n, 2), once.
Carried orthogonalise(OpBuilder &b, Location loc, Value out, Value m, Value kept,
                      Value zr, Value zi, int64_t n) {
  Scalars s(b, loc);
  Type element = cast<RankedTensorType>(zr.getType()).getElementType();
  Value zero = s.number(element, 0.0);
  return s.loop(s.index(0), kept, {zr, zi}, [&](OpBuilder &b, Location l, Value k, ValueRange z) -> Carried {
    Scalars s(b, l);
    Value re = s.index(0), im = s.index(1);
    auto q = [&](Value i, Value part) { return Scalars::at(b, l, out, {m, i, k, part}); };
    // <q, z> = sum (qr - i qi)(zr + i zi).
    Carried dot = s.loop(s.index(0), s.index(n), {zero, zero},
                         [&](OpBuilder &b, Location l, Value i, ValueRange acc) -> Carried {
                           Arithmetic a(b, l);
                           Value qr = q(i, re), qi = q(i, im);
                           Value xr = Scalars::at(b, l, z[0], {i});
                           Value xi = Scalars::at(b, l, z[1], {i});
                           return {a.add(acc[0], a.add(a.mul(qr, xr), a.mul(qi, xi))),
                                   a.add(acc[1], a.sub(a.mul(qr, xi), a.mul(qi, xr)))};
                         });
    return s.loop(s.index(0), s.index(n), {z[0], z[1]},
                  [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                    Arithmetic a(b, l);
                    Value qr = q(i, re), qi = q(i, im);
                    // z_i -= c q_i, c = dot.
                    Value cr = dot[0], ci = dot[1];
                    Value xr = a.sub(Scalars::at(b, l, w[0], {i}), a.sub(a.mul(cr, qr), a.mul(ci, qi)));
                    Value xi = a.sub(Scalars::at(b, l, w[1], {i}), a.add(a.mul(cr, qi), a.mul(ci, qr)));
                    return {Scalars::put(b, l, xr, w[0], {i}), Scalars::put(b, l, xi, w[1], {i})};
                  });
  });
}

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
    auto outType = cast<RankedTensorType>(op.getType());
    auto rowType = RankedTensorType::get({n}, element);
    Carried init{s.zeros(outType), s.fresh(rowType), s.fresh(rowType)};
    Carried done = s.loop(
        s.index(0), s.index(batch), init,
        [&](OpBuilder &b, Location l, Value m, ValueRange c) -> Carried {
          Scalars s(b, l);
          Carried columns{c[0], s.index(0), c[1], c[2]};
          Carried after = s.loop(
              s.index(0), s.index(2 * n), columns,
              [&](OpBuilder &b, Location l, Value col, ValueRange u) -> Carried {
                Scalars s(b, l);
                Arithmetic a(b, l);
                Value out = u[0], kept = u[1];
                // z = u + iv from column `col`.
                Carried z = s.loop(s.index(0), s.index(n), {u[2], u[3]},
                                   [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                                     Value below = b.create<arith::AddIOp>(
                                         l, i, b.create<arith::ConstantIndexOp>(l, n));
                                     Value re = Scalars::at(b, l, vectors, {m, i, col});
                                     Value im = Scalars::at(b, l, vectors, {m, below, col});
                                     return {Scalars::put(b, l, re, w[0], {i}),
                                             Scalars::put(b, l, im, w[1], {i})};
                                   });
                for (int pass = 0; pass < 2; ++pass)
                  z = orthogonalise(b, l, out, m, kept, z[0], z[1], n);
                Value norm2 = s.loop(s.index(0), s.index(n), {s.number(element, 0.0)},
                                     [&](OpBuilder &b, Location l, Value i, ValueRange acc) -> Carried {
                                       Arithmetic a(b, l);
                                       Value xr = Scalars::at(b, l, z[0], {i});
                                       Value xi = Scalars::at(b, l, z[1], {i});
                                       return {a.add(acc[0], a.add(a.mul(xr, xr), a.mul(xi, xi)))};
                                     })[0];
                // Columns left (this one too) against vectors missing.
                Value left = a.minus(s.index(2 * n), col);
                Value missing = a.minus(s.index(n), kept);
                Value room = a.icmp(arith::CmpIPredicate::slt, kept, s.index(n));
                Value keep = a.both(room, a.either(a.gt(norm2, s.number(element, 0.5)),
                                                   a.icmp(arith::CmpIPredicate::sle, left, missing)));
                auto branch = b.create<scf::IfOp>(
                    l, keep,
                    [&](OpBuilder &b, Location l) {
                      Scalars s(b, l);
                      Arithmetic a(b, l);
                      Value scale = a.div(s.number(element, 1.0), a.sqrt(norm2));
                      Value written = s.loop(
                          s.index(0), s.index(n), {out},
                          [&](OpBuilder &b, Location l, Value i, ValueRange w) -> Carried {
                            Arithmetic a(b, l);
                            Value re = a.mul(Scalars::at(b, l, z[0], {i}), scale);
                            Value im = a.mul(Scalars::at(b, l, z[1], {i}), scale);
                            Value t = Scalars::put(b, l, re, w[0],
                                                   {m, i, kept, b.create<arith::ConstantIndexOp>(l, 0)});
                            return {Scalars::put(b, l, im, t,
                                                 {m, i, kept, b.create<arith::ConstantIndexOp>(l, 1)})};
                          })[0];
                      b.create<scf::YieldOp>(l, ValueRange{written, a.plus(kept, 1)});
                    },
                    [&](OpBuilder &b, Location l) {
                      b.create<scf::YieldOp>(l, ValueRange{out, kept});
                    });
                return {branch.getResult(0), branch.getResult(1), z[0], z[1]};
              });
          return {after[0], after[2], after[3]};
        });
    rewriter.replaceOp(op, done[0]);
    return success();
  }
};

} // namespace

void kiln::aten::populateHermitianEigenvectorPatterns(RewritePatternSet &patterns) {
  patterns.add<HermitianEigenvectorsLowering>(patterns.getContext());
}
