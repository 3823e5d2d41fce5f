//===- BareBoundary.cpp - the kiln-bare-boundary pass ---------------------===//
//
// This file implements the boundary of a graph function with symbolic
// sizes: dynamic memref arguments become base pointers (memref<0xT>) that a
// reinterpret_cast reshapes inside, from the symbols argument.
//
//===----------------------------------------------------------------------===//
#include "kiln/Transforms/Passes.h"

#include "kiln/common/SymbolicSizes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace kiln {
#define GEN_PASS_DEF_BAREBOUNDARY
#include "kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct BareBoundaryPass : kiln::impl::BareBoundaryBase<BareBoundaryPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    auto names = function->getAttrOfType<ArrayAttr>("kiln.symbols");
    auto boundary = function->getAttrOfType<ArrayAttr>("kiln.boundary_sizes");
    if (!names || !boundary || function.isDeclaration())
      return;
    // Arguments: parameters and inputs, the symbols, then the outputs that
    // buffer-results-to-out-params appended.
    auto position = function->getAttrOfType<IntegerAttr>("kiln.symbols_position");
    unsigned argCount = function.getNumArguments();
    // boundary_sizes covers every argument but the symbols.
    if (!position || boundary.size() + 1 != argCount ||
        position.getInt() >= static_cast<int64_t>(argCount)) {
      function.emitOpError() << "has " << argCount << " arguments; kiln.boundary_sizes "
                             << "describes " << boundary.size()
                             << " buffers, and kiln.symbols_position must name the symbols";
      return signalPassFailure();
    }
    unsigned symbolsArg = position.getInt();

    Block &entry = function.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location loc = function.getLoc();
    llvm::StringMap<Value> symbolValues;
    for (auto [i, name] : llvm::enumerate(names.getAsValueRange<StringAttr>())) {
      Value position = b.create<arith::ConstantIndexOp>(loc, i);
      Value value = b.create<memref::LoadOp>(loc, entry.getArgument(symbolsArg), position);
      symbolValues[name] = b.create<arith::IndexCastOp>(loc, b.getIndexType(), value);
    }
    auto evaluate = [&](StringRef text) -> FailureOr<Value> {
      absl::StatusOr<kiln::SizeExpr> expr = kiln::parseSizeExpr(text.str());
      if (!expr.ok()) {
        function.emitOpError() << std::string(expr.status().message());
        return failure();
      }
      Value size;
      if (expr->coefficient != 1)
        size = b.create<arith::ConstantIndexOp>(loc, expr->coefficient);
      for (const std::string &symbol : expr->symbols) {
        Value value = symbolValues.lookup(symbol);
        if (!value) {
          function.emitOpError() << "size '" << text << "' names unknown symbol '"
                                 << symbol << "'";
          return failure();
        }
        size = size ? b.create<arith::MulIOp>(loc, size, value).getResult() : value;
      }
      return size;
    };

    SmallVector<Type> argTypes(function.getArgumentTypes());
    for (unsigned i = 0, buffer = 0; i < argCount; ++i) {
      if (i == symbolsArg)
        continue;
      auto sizes = cast<ArrayAttr>(boundary[buffer++]);
      BlockArgument argument = entry.getArgument(i);
      auto type = dyn_cast<MemRefType>(argument.getType());
      if (!type || type.hasStaticShape())
        continue;
      if (!type.getLayout().isIdentity() ||
          sizes.size() != static_cast<size_t>(type.getRank())) {
        function.emitOpError() << "argument " << i << " of type " << type
                               << " does not match its boundary sizes " << sizes;
        return signalPassFailure();
      }
      SmallVector<OpFoldResult> extents;
      for (auto [d, text] : llvm::enumerate(sizes.getAsValueRange<StringAttr>())) {
        if (!type.isDynamicDim(d)) {
          extents.push_back(b.getIndexAttr(type.getDimSize(d)));
          continue;
        }
        FailureOr<Value> size = evaluate(text);
        if (failed(size))
          return signalPassFailure();
        extents.push_back(*size);
      }
      // Row-major strides: static where the type has them.
      SmallVector<int64_t> staticStrides;
      int64_t offset;
      if (failed(getStridesAndOffset(type, staticStrides, offset)))
        return signalPassFailure();
      SmallVector<OpFoldResult> strides(type.getRank());
      OpFoldResult running = b.getIndexAttr(1);
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        if (ShapedType::isDynamic(staticStrides[d])) {
          Value product = b.create<arith::MulIOp>(
              loc, getValueOrCreateConstantIndexOp(b, loc, running),
              getValueOrCreateConstantIndexOp(b, loc, extents[d + 1]));
          strides[d] = product;
        } else {
          strides[d] = b.getIndexAttr(staticStrides[d]);
        }
        running = strides[d];
      }
      auto base = MemRefType::get({0}, type.getElementType());
      argument.setType(base);
      argTypes[i] = base;
      auto reshaped = b.create<memref::ReinterpretCastOp>(
          loc, type, argument, b.getIndexAttr(0), extents, strides);
      argument.replaceAllUsesExcept(reshaped.getResult(), reshaped);
    }
    function.setType(FunctionType::get(&getContext(), argTypes,
                                       function.getFunctionType().getResults()));
  }
};

} // namespace
