//===- RandomBodies.cpp - scalar bodies of Kiln's random numbers ----------===//
//
// This file implements Philox4x32-10 over i64 scalars holding 32-bit words
// (the 32x32 -> 64-bit products fit an i64 multiply, so every target's
// vector unit runs it) and the distributions made from its words.
//
// The counter of element i of a draw is (i mod 2^32, i >> 32, stream,
// draw), the key (seed mod 2^32, seed >> 32). The importer passes the
// node's position in its graph as the stream, so two random nodes of one
// graph never share a counter.
//
//===----------------------------------------------------------------------===//
#include "RandomBodies.h"
#include "FloatMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::aten {
namespace {

// Random123's Philox4x32 multipliers and Weyl key increments.
constexpr uint64_t kMultiplier0 = 0xD2511F53u;
constexpr uint64_t kMultiplier1 = 0xCD9E8D57u;
constexpr uint64_t kWeyl0 = 0x9E3779B9u;
constexpr uint64_t kWeyl1 = 0xBB67AE85u;
constexpr int kRounds = 10;

/// i64 word arithmetic at one location.
class Words {
public:
  Words(OpBuilder &b, Location l) : b(b), l(l) {}

  Value constant(uint64_t v) {
    return b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(static_cast<int64_t>(v)));
  }
  Value low(Value v) { return b.create<arith::AndIOp>(l, v, constant(0xFFFFFFFFu)); }
  Value high(Value v) { return shiftRight(v, 32); }
  Value shiftRight(Value v, unsigned amount) {
    return b.create<arith::ShRUIOp>(l, v, constant(amount));
  }
  Value shiftLeft(Value v, unsigned amount) {
    return b.create<arith::ShLIOp>(l, v, constant(amount));
  }
  Value bitOr(Value x, Value y) { return b.create<arith::OrIOp>(l, x, y); }
  Value bitXor(Value x, Value y) { return b.create<arith::XOrIOp>(l, x, y); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(l, x, y); }

private:
  OpBuilder &b;
  Location l;
};

/// The four output words of Philox4x32-10 for element `index` of draw
/// (`stream`, `draw`: i64 words below 2^32) under `seed`.
std::array<Value, 4> philox(OpBuilder &b, Location l, Value index, Value seed,
                            Value stream, Value draw) {
  Words w(b, l);
  std::array<Value, 4> counter = {w.low(index), w.high(index), stream, draw};
  std::array<Value, 2> key = {w.low(seed), w.high(seed)};
  for (int round = 0; round < kRounds; ++round) {
    if (round) {
      key[0] = w.low(w.add(key[0], w.constant(kWeyl0)));
      key[1] = w.low(w.add(key[1], w.constant(kWeyl1)));
    }
    Value product0 = w.mul(w.constant(kMultiplier0), counter[0]);
    Value product1 = w.mul(w.constant(kMultiplier1), counter[2]);
    counter = {w.bitXor(w.bitXor(w.high(product1), counter[1]), key[0]),
               w.low(product1),
               w.bitXor(w.bitXor(w.high(product0), counter[3]), key[1]),
               w.low(product0)};
  }
  return counter;
}

/// philox for the draw the scalars name: (stream, draw).
std::array<Value, 4> philox(OpBuilder &b, Location l, Value index, Value seed,
                            ArrayRef<double> s) {
  Words w(b, l);
  auto stream = static_cast<uint64_t>(s[0]), draw = static_cast<uint64_t>(s[1]);
  Value streamWord = w.constant(stream & 0xFFFFFFFFu);
  return philox(b, l, index, seed, streamWord, w.constant(draw & 0xFFFFFFFFu));
}

/// The top `bits` (1..53) bits of the word pair (hi, lo) as an integer.
Value topBits(Words &w, Value hi, Value lo, unsigned bits) {
  if (bits <= 32)
    return w.shiftRight(hi, 32 - bits);
  return w.shiftRight(w.bitOr(w.shiftLeft(hi, 32), lo), 64 - bits);
}

/// k * 2^-bits in `type` (exact: k has at most `bits` <= the mantissa's).
Value scaled(OpBuilder &b, Location l, Value k, unsigned bits, FloatType type) {
  Value f = b.create<arith::SIToFPOp>(l, type, k);
  return b.create<arith::MulFOp>(
      l, f, b.create<arith::ConstantOp>(l, b.getFloatAttr(type, std::ldexp(1.0, -int(bits)))));
}

FloatType computeType(OpBuilder &b, unsigned bits) {
  return bits <= 24 ? FloatType(b.getF32Type()) : FloatType(b.getF64Type());
}

/// Draws a Poisson sample may take before it gives up (NaN): the product
/// method takes k + 1 for a rate below 10, PTRS about 1.1 per sample.
constexpr int64_t kPoissonMaxDraws = 1 << 16;

} // namespace

Value randomUniform(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  auto bits = static_cast<unsigned>(s[2]);
  std::array<Value, 4> words = philox(b, l, a[0], a[1], s);
  Words w(b, l);
  return scaled(b, l, topBits(w, words[0], words[1], bits), bits, computeType(b, bits));
}

Value randomNormal(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  auto bits = static_cast<unsigned>(s[2]);
  std::array<Value, 4> words = philox(b, l, a[0], a[1], s);
  Words w(b, l);
  FloatType type = computeType(b, bits);
  bool wide = bits > 32;
  Value k1 = topBits(w, words[0], words[1], bits);
  Value k2 = wide ? topBits(w, words[2], words[3], bits)
                  : topBits(w, words[1], words[0], bits);
  // u1 = (k1 + 1) 2^-bits is in (0, 1], so its log is finite.
  Value u1 = scaled(b, l, w.add(k1, w.constant(1)), bits, type);
  Value u2 = scaled(b, l, k2, bits, type);
  auto c = [&](double v) -> Value {
    return b.create<arith::ConstantOp>(l, b.getFloatAttr(type, v));
  };
  Value radius = b.create<math::SqrtOp>(
      l, b.create<arith::MulFOp>(l, c(-2.0), b.create<math::LogOp>(l, u1)));
  Value angle = b.create<arith::MulFOp>(l, c(2.0 * M_PI), u2);
  return b.create<arith::MulFOp>(l, radius, b.create<math::CosOp>(l, angle));
}

Value randomPoisson(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  Value index = a[0], seed = a[1];
  FloatMath m(b, l);
  Value rate = b.create<arith::BitcastOp>(l, b.getF64Type(), a[2]);
  Value inf = m.c(std::numeric_limits<double>::infinity());
  Value active = m.both(m.gt(rate, m.c(0)), m.lt(rate, inf));
  Value small = m.lt(rate, m.c(10));
  // The product method's bound, and PTRS's constants (Hormann 1993, as
  // eager's sample_poisson has them).
  Value bound = m.exp(m.neg(rate));
  Value logRate = m.log(rate);
  Value bb = m.add(m.c(0.931), m.mul(m.c(2.53), b.create<math::SqrtOp>(l, rate)));
  Value aa = m.add(m.c(-0.059), m.mul(m.c(0.02483), bb));
  Value logInverseAlpha = m.log(m.add(m.c(1.1239), m.div(m.c(1.1328), m.sub(bb, m.c(3.4)))));
  Value vr = m.sub(m.c(0.9277), m.div(m.c(3.6224), m.sub(bb, m.c(2))));
  Words w(b, l);
  Value stream = w.constant(static_cast<uint64_t>(s[0]) & 0xFFFFFFFFu);
  // Carried: the draw (i64), the count k, whether k is final, and the
  // product method's running product of uniforms.
  Carried init{w.constant(0), m.c(0), m.truth(false), m.c(1)};
  Carried last = whileLoop(
      b, l, init,
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Value below = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, c[0],
                                               Words(nb, nl).constant(kPoissonMaxDraws));
        Value go = n.both(n.both(active, n.negate(c[2])), below);
        return std::pair{go, Carried(c.begin(), c.end())};
      },
      [&](OpBuilder &nb, Location nl, ValueRange c) {
        FloatMath n(nb, nl);
        Words v(nb, nl);
        std::array<Value, 4> words = philox(nb, nl, index, seed, stream, c[0]);
        auto f64 = nb.getF64Type();
        Value u = scaled(nb, nl, topBits(v, words[0], words[1], 53), 53, f64);
        Value u2 = scaled(nb, nl, topBits(v, words[2], words[3], 53), 53, f64);
        // Below 10: multiply uniforms until the product falls to e^-rate.
        Value product = n.mul(c[3], u);
        Value more = n.gt(product, bound);
        Value counted = n.select(more, n.add(c[1], n.c(1)), c[1]);
        // From 10: PTRS, a transformed rejection with squeeze.
        Value centred = n.sub(u, n.c(0.5));
        Value us = n.sub(n.c(0.5), n.abs(centred));
        Value k = n.floor(n.add(n.mul(n.add(n.div(n.mul(n.c(2), aa), us), bb), centred),
                                n.add(rate, n.c(0.43))));
        Value quick = n.both(n.ge(us, n.c(0.07)), n.le(u2, vr));
        Value rejected = n.either(n.lt(k, n.c(0)), n.both(n.lt(us, n.c(0.013)), n.gt(u2, us)));
        Value lhs = n.sub(n.add(n.log(u2), logInverseAlpha),
                          n.log(n.add(n.div(aa, n.mul(us, us)), bb)));
        Value rhs = n.sub(n.sub(n.mul(k, logRate), rate), n.libm("lgamma", n.add(k, n.c(1))));
        Value accepted = n.either(quick, n.both(n.negate(rejected), n.le(lhs, rhs)));
        return Carried{v.add(c[0], v.constant(1)), n.select(small, counted, k),
                       n.select(small, n.negate(more), accepted), product};
      });
  Value r = m.where(m.negate(last[2]), std::numeric_limits<double>::quiet_NaN(), last[1]);
  r = m.where(m.eq(rate, m.c(0)), 0, r);
  return m.where(m.eq(rate, inf), std::numeric_limits<double>::infinity(), r);
}

Value randomBits(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  std::array<Value, 4> words = philox(b, l, a[0], a[1], s);
  Words w(b, l);
  return w.shiftRight(w.bitOr(w.shiftLeft(words[0], 32), words[1]), 1);
}

} // namespace kiln::aten
