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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <array>
#include <cmath>

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
/// (`stream`, `draw`) under `seed`.
std::array<Value, 4> philox(OpBuilder &b, Location l, Value index, Value seed,
                            ArrayRef<double> s) {
  Words w(b, l);
  auto stream = static_cast<uint64_t>(s[0]), draw = static_cast<uint64_t>(s[1]);
  std::array<Value, 4> counter = {w.low(index), w.high(index),
                                  w.constant(stream & 0xFFFFFFFFu),
                                  w.constant(draw & 0xFFFFFFFFu)};
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

Value randomBits(OpBuilder &b, Location l, ValueRange a, ArrayRef<double> s) {
  std::array<Value, 4> words = philox(b, l, a[0], a[1], s);
  Words w(b, l);
  return w.shiftRight(w.bitOr(w.shiftLeft(words[0], 32), words[1]), 1);
}

} // namespace kiln::aten
