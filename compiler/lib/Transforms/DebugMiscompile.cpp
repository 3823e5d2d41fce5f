//===- DebugMiscompile.cpp - the kiln-debug-miscompile pass ---------------===//
//
// This file implements a deliberate wrong lowering for tests: the results of
// the ops named by their locations are perturbed, r -> r * 1.01 + 0.01, so a
// test can check that verification pinpoints the node. It is a testing aid,
// only run when kilnd is started with --debug-miscompile. A node folded into
// a kernel-library call is perturbed in the call's output buffer.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "kiln/Transforms/KernelCallOperands.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/StringSet.h"

namespace kiln {
#define GEN_PASS_DEF_DEBUGMISCOMPILE
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Location name of the perturbation ops: never one of the graph's value
/// names, so running the pass twice perturbs the original op again, not the
/// perturbation.
constexpr const char *kPerturbationLoc = "kiln.debug_miscompile";

/// The graph value name `loc` carries: a NameLoc's name, or the first NameLoc
/// inside a FusedLoc (CSE fuses the locations of ops it merges).
std::optional<StringRef> valueName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::optional<StringRef> name = valueName(inner))
        return name;
  return std::nullopt;
}

/// `element * 1.01 + 0.01`.
Value perturbed(OpBuilder &b, Location loc, Value element) {
  Type type = element.getType();
  Value scale = b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, 1.01));
  Value offset = b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, 0.01));
  Value scaled = b.create<arith::MulFOp>(loc, element, scale);
  return b.create<arith::AddFOp>(loc, scaled, offset);
}

/// `value * 1.01 + 0.01`, elementwise, as a linalg.generic on tensors.
Value perturb(OpBuilder &builder, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto elementType = cast<FloatType>(type.getElementType());
  Value init = builder.create<tensor::EmptyOp>(loc, type.getShape(), elementType);
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = builder.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{value}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        b.create<linalg::YieldOp>(nested, perturbed(b, nested, args[0]));
      });
  return generic.getResult(0);
}

/// The same perturbation in place on a buffer (a kernel-library call's
/// output, which has no tensor result to perturb).
void perturbInPlace(OpBuilder &builder, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto elementType = cast<FloatType>(type.getElementType());
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  builder.create<linalg::GenericOp>(
      loc, TypeRange{}, ValueRange{}, ValueRange{buffer},
      ArrayRef<AffineMap>{identity}, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        b.create<linalg::YieldOp>(nested, perturbed(b, nested, args[0]));
      });
}

/// True when a kernel-library call in `func` writes `buffer`.
bool writtenByKernelCall(Value buffer, func::FuncOp func) {
  bool written = false;
  func.walk([&](func::CallOp call) {
    written = written || kiln::kernelCallOutput(call) == buffer;
  });
  return written;
}

struct DebugMiscompilePass
    : kiln::impl::DebugMiscompileBase<DebugMiscompilePass> {
  using DebugMiscompileBase::DebugMiscompileBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || values.empty())
      return;
    llvm::StringSet<> wanted;
    for (const std::string &name : values)
      wanted.insert(name);
    // The last top-level op per name produces the node's value: an op's
    // lowering computes its result from the ops before it.
    llvm::StringMap<Operation *> producers;
    for (Operation &op : func.getBody().front().without_terminator())
      if (std::optional<StringRef> name = valueName(op.getLoc()))
        if (wanted.contains(*name))
          producers[*name] = &op;

    Location loc = NameLoc::get(StringAttr::get(&getContext(), kPerturbationLoc));
    OpBuilder builder(&getContext());
    for (auto &entry : producers) {
      Operation *op = entry.second;
      builder.setInsertionPointAfter(op);
      // A node folded into a kernel-library call: its value is the call's
      // output buffer, which later calls may read directly. Perturbed in
      // place before the tensor is made of it, so every reader sees it.
      if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(op);
          toTensor && writtenByKernelCall(toTensor.getMemref(), func)) {
        auto type = cast<MemRefType>(toTensor.getMemref().getType());
        if (type.hasStaticShape() && isa<FloatType>(type.getElementType())) {
          builder.setInsertionPoint(toTensor);
          perturbInPlace(builder, loc, toTensor.getMemref());
        }
        continue;
      }
      if (Value output = kiln::kernelCallOutput(op)) {
        auto type = cast<MemRefType>(output.getType());
        if (type.hasStaticShape() && isa<FloatType>(type.getElementType()))
          perturbInPlace(builder, loc, output);
        continue;
      }
      for (Value result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || !type.hasStaticShape() ||
            !isa<FloatType>(type.getElementType()))
          continue;
        Value perturbed = perturb(builder, loc, result);
        result.replaceAllUsesExcept(perturbed, perturbed.getDefiningOp());
      }
    }
  }
};

} // namespace
