//===- ElementwiseChains.cpp - elementwise chains for a kernel library ----===//
//
// This file implements findElementwiseChains: the runs of elementwise aten
// ops the "aie" library computes in one call. A chain grows from its first
// op along sole users while each op's operands are the previous op's
// result, tensors of the chain's type (the call's inputs, at most
// KILN_RT_ELEMENTWISE_MAX_INPUTS) or splat constants (scalars).
//
//===----------------------------------------------------------------------===//
#include "ElementwiseChains.h"

#include "kiln/Dialect/Aten/IR/AtenMatchers.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "llvm/ADT/DenseSet.h"

#include <bit>
#include <cmath>
#include <optional>

using namespace mlir;

namespace kiln {
namespace {

using Step = kiln_rt_elementwise_step;

/// While a chain grows, a step's result register is kStepBase + its index
/// (the inputs' count, which numbers the step registers, is known last).
constexpr int64_t kStepBase = 1 << 20;
/// The most elements a chain streams (the array model's bound).
constexpr int64_t kMaxChainElements = int64_t{1} << 32;

/// alpha * s as the generated code computes it: in f32.
double inF32(double alpha, double s) { return double(float(alpha) * float(s)); }

int64_t bitsOf(double value) { return std::bit_cast<int64_t>(value); }

/// The value of a float splat aten.constant that broadcasts to `type`.
std::optional<double> scalarOf(Value value, RankedTensorType type) {
  std::optional<double> splat = aten::floatSplatValue(value);
  if (!splat)
    return std::nullopt;
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  if (shape.size() > size_t(type.getRank()))
    return std::nullopt;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t want = type.getDimSize(type.getRank() - shape.size() + d);
    if (shape[d] != 1 && shape[d] != want)
      return std::nullopt;
  }
  return splat;
}

/// A growing chain: its inputs and steps, registers numbered as above.
struct ChainState {
  RankedTensorType type;
  SmallVector<Value, KILN_RT_ELEMENTWISE_MAX_INPUTS> inputs;
  SmallVector<Step, KILN_RT_ELEMENTWISE_MAX_STEPS> steps;

  /// The register of the last step's result.
  int64_t last() const { return kStepBase + int64_t(steps.size()) - 1; }

  /// One operand: a register, or a scalar.
  struct Operand {
    std::optional<int64_t> reg;
    double scalar = 0;
  };
  /// `value` as an operand of the op after `previous` (null for the first
  /// op); nullopt when the chain cannot read it.
  std::optional<Operand> operand(Value value, Value previous) {
    if (previous && value == previous)
      return Operand{last()};
    if (std::optional<double> scalar = scalarOf(value, type))
      return Operand{std::nullopt, *scalar};
    if (value.getType() != type)
      return std::nullopt;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] == value)
        return Operand{int64_t(i)};
    if (inputs.size() == KILN_RT_ELEMENTWISE_MAX_INPUTS)
      return std::nullopt;
    inputs.push_back(value);
    return Operand{int64_t(inputs.size()) - 1};
  }

  bool push(int64_t op, int64_t lhs, int64_t rhs = 0, double scalar = 0) {
    if (steps.size() == KILN_RT_ELEMENTWISE_MAX_STEPS)
      return false;
    steps.push_back({op, lhs, rhs, bitsOf(scalar)});
    return true;
  }

  /// Appends `op`'s steps; false when the chain cannot express it (the
  /// caller then drops this state).
  bool append(Operation *op, Value previous) {
    if (op->getNumResults() != 1 || op->getResult(0).getType() != type)
      return false;
    auto binary = [&](Value lhsValue, Value rhsValue, auto both, auto lhsScalar,
                      auto rhsScalar) -> bool {
      std::optional<Operand> lhs = operand(lhsValue, previous);
      std::optional<Operand> rhs = lhs ? operand(rhsValue, previous) : std::nullopt;
      if (!lhs || !rhs || (!lhs->reg && !rhs->reg))
        return false;
      if (lhs->reg && rhs->reg)
        return both(*lhs->reg, *rhs->reg);
      if (lhs->reg)
        return rhsScalar(*lhs->reg, rhs->scalar);
      return lhsScalar(lhs->scalar, *rhs->reg);
    };
    auto unary = [&](Value x, int64_t code) -> bool {
      std::optional<Operand> in = operand(x, previous);
      return in && in->reg && push(code, *in->reg);
    };
    auto never = [](auto...) { return false; };
    if (auto relu = dyn_cast<aten::ReluOp>(op))
      return unary(relu.getSelf(), KILN_RT_ELEMENTWISE_RELU);
    if (auto neg = dyn_cast<aten::NegOp>(op))
      return unary(neg.getSelf(), KILN_RT_ELEMENTWISE_NEG);
    if (auto add = dyn_cast<aten::AddOp>(op)) {
      double alpha = add.getAlpha().convertToDouble();
      return binary(
          add.getLhs(), add.getRhs(),
          [&](int64_t l, int64_t r) { return push(KILN_RT_ELEMENTWISE_ADD, l, r, alpha); },
          [&](double s, int64_t r) {
            return alpha == 1.0 && push(KILN_RT_ELEMENTWISE_ADD_SCALAR, r, 0, s);
          },
          [&](int64_t l, double s) {
            return push(KILN_RT_ELEMENTWISE_ADD_SCALAR, l, 0, inF32(alpha, s));
          });
    }
    if (auto sub = dyn_cast<aten::SubOp>(op)) {
      double alpha = sub.getAlpha().convertToDouble();
      return binary(
          sub.getLhs(), sub.getRhs(),
          [&](int64_t l, int64_t r) { return push(KILN_RT_ELEMENTWISE_SUB, l, r, alpha); },
          [&](double s, int64_t r) {
            return alpha == 1.0 && push(KILN_RT_ELEMENTWISE_RSUB_SCALAR, r, 0, s);
          },
          [&](int64_t l, double s) {
            return push(KILN_RT_ELEMENTWISE_ADD_SCALAR, l, 0, -inF32(alpha, s));
          });
    }
    if (auto mul = dyn_cast<aten::MulOp>(op))
      return binary(
          mul.getLhs(), mul.getRhs(),
          [&](int64_t l, int64_t r) { return push(KILN_RT_ELEMENTWISE_MUL, l, r); },
          [&](double s, int64_t r) { return push(KILN_RT_ELEMENTWISE_MUL_SCALAR, r, 0, s); },
          [&](int64_t l, double s) { return push(KILN_RT_ELEMENTWISE_MUL_SCALAR, l, 0, s); });
    if (auto div = dyn_cast<aten::DivOp>(op))
      return binary(
          div.getLhs(), div.getRhs(),
          [&](int64_t l, int64_t r) { return push(KILN_RT_ELEMENTWISE_DIV, l, r); },
          never,
          [&](int64_t l, double s) { return push(KILN_RT_ELEMENTWISE_DIV_SCALAR, l, 0, s); });
    auto pointwise = dyn_cast<aten::PointwiseOp>(op);
    if (!pointwise)
      return false;
    StringRef fn = pointwise.getFn();
    ValueRange ins = pointwise.getInputs();
    ArrayRef<double> scalars = pointwise.getScalars();
    if ((fn == "maximum" || fn == "minimum") && ins.size() == 2 && scalars.empty()) {
      int64_t code = fn == "maximum" ? KILN_RT_ELEMENTWISE_MAXIMUM
                                     : KILN_RT_ELEMENTWISE_MINIMUM;
      return binary(
          ins[0], ins[1], [&](int64_t l, int64_t r) { return push(code, l, r); },
          never, never);
    }
    if (fn == "clamp" && ins.size() == 1 && scalars.size() == 2) {
      // A NaN bound is "none": a step for each bound there is.
      std::optional<Operand> in = operand(ins[0], previous);
      if (!in || !in->reg || (std::isnan(scalars[0]) && std::isnan(scalars[1])))
        return false;
      int64_t reg = *in->reg;
      if (!std::isnan(scalars[0])) {
        if (!push(KILN_RT_ELEMENTWISE_CLAMP_MIN, reg, 0, scalars[0]))
          return false;
        reg = last();
      }
      return std::isnan(scalars[1]) ||
             push(KILN_RT_ELEMENTWISE_CLAMP_MAX, reg, 0, scalars[1]);
    }
    return false;
  }

  /// The geometry, step registers renumbered after the inputs.
  kiln_rt_elementwise geometry() const {
    kiln_rt_elementwise g{};
    g.elements = type.getNumElements();
    g.inputs = int64_t(inputs.size());
    g.steps = int64_t(steps.size());
    auto renumber = [&](int64_t reg) {
      return reg >= kStepBase ? g.inputs + (reg - kStepBase) : reg;
    };
    for (size_t i = 0; i < steps.size(); ++i) {
      g.step[i] = steps[i];
      g.step[i].lhs = renumber(steps[i].lhs);
      g.step[i].rhs = kiln_rt_elementwise_reads_rhs(steps[i].op)
                          ? renumber(steps[i].rhs)
                          : 0;
    }
    return g;
  }
};

/// The type a chain starting at `op` computes in, if it can start one.
std::optional<RankedTensorType> chainType(Operation *op, int64_t minElements) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape() ||
      type.getNumElements() < std::max<int64_t>(minElements, 1) ||
      type.getNumElements() > kMaxChainElements)
    return std::nullopt;
  return type;
}

} // namespace

std::vector<ElementwiseChain> findElementwiseChains(ModuleOp module,
                                                    int64_t minElements) {
  std::vector<ElementwiseChain> chains;
  llvm::DenseSet<Operation *> taken;
  module.walk([&](Operation *first) {
    if (taken.contains(first))
      return;
    std::optional<RankedTensorType> type = chainType(first, minElements);
    if (!type)
      return;
    ChainState state{*type, {}, {}};
    if (!state.append(first, Value()))
      return;
    ElementwiseChain chain;
    chain.ops.push_back(first);
    Value current = first->getResult(0);
    while (current.hasOneUse()) {
      Operation *next = *current.getUsers().begin();
      if (next->getBlock() != first->getBlock() || taken.contains(next))
        break;
      ChainState grown = state;
      if (!grown.append(next, current))
        break;
      state = std::move(grown);
      chain.ops.push_back(next);
      current = next->getResult(0);
    }
    for (Operation *op : chain.ops)
      taken.insert(op);
    // Each input by the first chain operand reading it: rewriting another
    // chain first may replace the value, never the operand.
    for (Value input : state.inputs) {
      OpOperand *use = nullptr;
      for (Operation *op : chain.ops)
        for (OpOperand &operand : op->getOpOperands())
          if (!use && operand.get() == input)
            use = &operand;
      chain.inputs.push_back(use);
    }
    chain.geometry = state.geometry();
    chains.push_back(std::move(chain));
  });
  return chains;
}

} // namespace kiln
