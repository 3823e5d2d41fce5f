//===- Builders.cpp - IR builders shared by the ATen lowering patterns ----===//
//
// This file implements the linalg.generic builders and scalar casts used by
// every ATen-to-linalg pattern group.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace kiln::aten {

Value castScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return b.create<arith::ExtFOp>(loc, to, v);
    return b.create<arith::TruncFOp>(loc, to, v);
  }
  bool fromBool = from.isInteger(1), toBool = to.isInteger(1);
  if (toBool) {
    // PyTorch: nonzero is true.
    Value zero = scalarConstant(b, loc, from, 0.0);
    if (fromFloat)
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v, zero);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v, zero);
  }
  if (fromFloat) // float -> int truncates toward zero.
    return b.create<arith::FPToSIOp>(loc, to, v);
  if (toFloat) {
    if (fromBool)
      return b.create<arith::UIToFPOp>(loc, to, v);
    return b.create<arith::SIToFPOp>(loc, to, v);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth < toWidth) {
    if (fromBool)
      return b.create<arith::ExtUIOp>(loc, to, v);
    return b.create<arith::ExtSIOp>(loc, to, v);
  }
  return b.create<arith::TruncIOp>(loc, to, v);
}

Type accumulatorType(OpBuilder &b, Type element) {
  return element.isF16() || element.isBF16() ? b.getF32Type() : element;
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, value));
  // A number as a bool is whether it is non-zero (pad(value=2.0) is True),
  // not its low bit.
  if (type.isInteger(1))
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(value != 0.0));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                       ArrayRef<int64_t> resultShape) {
  size_t offset = resultShape.size() - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, extent] : llvm::enumerate(operandShape)) {
    if (extent == 1 && resultShape[offset + i] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

static ReassociationIndices allDims(int64_t rank) {
  ReassociationIndices group;
  for (int64_t i = 0; i < rank; ++i)
    group.push_back(i);
  return group;
}

SmallVector<OpFoldResult> sizesFrom(OpBuilder &b, Location loc,
                                    RankedTensorType type, ValueRange sources) {
  SmallVector<OpFoldResult> sizes;
  int64_t rank = type.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (!type.isDynamicDim(d)) {
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
      continue;
    }
    OpFoldResult size;
    for (Value source : sources) {
      auto sourceType = cast<RankedTensorType>(source.getType());
      int64_t sd = d - (rank - sourceType.getRank());
      if (sd >= 0 && sourceType.isDynamicDim(sd)) {
        size = b.create<tensor::DimOp>(loc, source, sd).getResult();
        break;
      }
    }
    sizes.push_back(size);
  }
  return sizes;
}

SmallVector<OpFoldResult> sizesOf(OpBuilder &b, Location loc, Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

Value buildEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                 ArrayRef<OpFoldResult> sizes) {
  if (type.hasStaticShape())
    return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
  return b.create<tensor::EmptyOp>(loc, type, dynamic);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange operands, ScalarBody body, Type computeType,
                       ArrayRef<OpFoldResult> sizes) {
  MLIRContext *ctx = b.getContext();
  Type resultElement = resultType.getElementType();
  if (!computeType)
    computeType = resultElement;
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(broadcastMap(
        ctx, cast<RankedTensorType>(operand.getType()).getShape(),
        resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  Value init = buildEmpty(b, loc, resultType,
                          sizes.empty() ? sizesFrom(b, loc, resultType, operands)
                                        : SmallVector<OpFoldResult>(sizes));
  auto generic = b.create<linalg::GenericOp>(
      loc, resultType, operands, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> converted;
        for (Value arg : args.drop_back())
          converted.push_back(castScalar(nb, nloc, arg, computeType));
        Value result = body(nb, nloc, converted);
        nb.create<linalg::YieldOp>(
            nloc, castScalar(nb, nloc, result, resultElement));
      });
  return generic.getResult(0);
}

Value buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                  double value, ArrayRef<OpFoldResult> sizes) {
  Value empty = buildEmpty(b, loc, type, sizes);
  Value scalar = scalarConstant(b, loc, type.getElementType(), value);
  return b.create<linalg::FillOp>(loc, scalar, empty).getResult(0);
}

llvm::SmallBitVector reducedDims(int64_t rank, ArrayRef<int64_t> dims) {
  llvm::SmallBitVector reduced(rank, dims.empty());
  for (int64_t dim : dims)
    reduced.set(dim);
  return reduced;
}

Value reducedCount(OpBuilder &b, Location loc, Value input,
                   const llvm::SmallBitVector &reduced, Type type) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t count = 1;
  Value dynamic;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    if (!reduced.test(d))
      continue;
    if (!inputType.isDynamicDim(d)) {
      count *= inputType.getDimSize(d);
      continue;
    }
    Value size = b.create<tensor::DimOp>(loc, input, d);
    dynamic = dynamic ? b.create<arith::MulIOp>(loc, dynamic, size).getResult() : size;
  }
  if (!dynamic)
    return scalarConstant(b, loc, type, double(count));
  if (count != 1)
    dynamic = b.create<arith::MulIOp>(loc, dynamic,
                                      b.create<arith::ConstantIndexOp>(loc, count));
  Value asInt = b.create<arith::IndexCastOp>(loc, b.getI64Type(), dynamic);
  return b.create<arith::SIToFPOp>(loc, type, asInt);
}

SmallVector<int64_t> droppedShape(ArrayRef<int64_t> shape,
                                  const llvm::SmallBitVector &reduced) {
  SmallVector<int64_t> kept;
  for (auto [i, extent] : llvm::enumerate(shape))
    if (!reduced.test(i))
      kept.push_back(extent);
  return kept;
}

Value addToSum(OpBuilder &b, Location loc, Value acc, Value x) {
  if (isa<FloatType>(acc.getType()))
    return b.create<arith::AddFOp>(loc, acc, x, arith::FastMathFlags::reassoc);
  return b.create<arith::AddIOp>(loc, acc, x);
}

Value buildReduction(
    OpBuilder &b, Location loc, Value input, const llvm::SmallBitVector &reduced,
    Type accType, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  return buildReductionFrom(b, loc, input, reduced,
                            scalarConstant(b, loc, accType, init), combine);
}

Value buildReductionWithKept(
    OpBuilder &b, Location loc, Value input, Value kept,
    const llvm::SmallBitVector &reduced, Value init,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  Type accType = init.getType();
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  auto resultType = RankedTensorType::get(
      droppedShape(inputType.getShape(), reduced), accType);
  SmallVector<OpFoldResult> keptSizes;
  for (auto [d, size] : llvm::enumerate(sizesOf(b, loc, input)))
    if (!reduced.test(d))
      keptSizes.push_back(size);
  Value empty = buildEmpty(b, loc, resultType, keptSizes);
  Value acc = b.create<linalg::FillOp>(loc, init, empty).getResult(0);
  SmallVector<AffineExpr> outExprs, keptExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    if (reduced.test(i)) {
      iterators.push_back(utils::IteratorType::reduction);
      keptExprs.push_back(getAffineConstantExpr(0, ctx));
    } else {
      iterators.push_back(utils::IteratorType::parallel);
      outExprs.push_back(getAffineDimExpr(i, ctx));
      keptExprs.push_back(getAffineDimExpr(i, ctx));
    }
  }
  SmallVector<Value> inputs = {input};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  if (kept) {
    inputs.push_back(kept);
    maps.push_back(AffineMap::get(rank, 0, keptExprs, ctx));
  }
  maps.push_back(AffineMap::get(rank, 0, outExprs, ctx));
  auto generic = b.create<linalg::GenericOp>(
      loc, resultType, inputs, acc, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value x = castScalar(nb, nloc, args[0], accType);
        Value k = kept ? args[1] : Value();
        nb.create<linalg::YieldOp>(nloc, combine(nb, nloc, args.back(), x, k));
      });
  return generic.getResult(0);
}

Value buildReductionFrom(
    OpBuilder &b, Location loc, Value input, const llvm::SmallBitVector &reduced,
    Value init, function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  return buildReductionWithKept(
      b, loc, input, Value(), reduced, init,
      [&](OpBuilder &nb, Location l, Value acc, Value x, Value) {
        return combine(nb, l, acc, x);
      });
}

SmallVector<Value> tileOffsets(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<int64_t> extents,
                               ArrayRef<int64_t> tileSizes) {
  SmallVector<Value> offsets(extents.size());
  Value rest = flat;
  for (int64_t g = static_cast<int64_t>(extents.size()) - 1; g >= 0; --g) {
    Value index = rest;
    if (g > 0) {
      Value extent = b.create<arith::ConstantIndexOp>(loc, extents[g]);
      index = b.create<arith::RemUIOp>(loc, rest, extent);
      rest = b.create<arith::DivUIOp>(loc, rest, extent);
    }
    if (tileSizes[g] != 1)
      index = b.create<arith::MulIOp>(
          loc, index, b.create<arith::ConstantIndexOp>(loc, tileSizes[g]));
    offsets[g] = index;
  }
  return offsets;
}

Value buildPadded(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                  ArrayRef<int64_t> strides, Value padValue) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  bool trivial = true;
  for (auto [i, extent] : llvm::enumerate(type.getShape())) {
    shape.push_back((extent - 1) * strides[i] + 1 + low[i] + high[i]);
    trivial &= low[i] == 0 && high[i] == 0 && (strides[i] == 1 || extent == 1);
  }
  if (trivial)
    return input;
  Value empty = b.create<tensor::EmptyOp>(loc, shape, type.getElementType());
  Value filled = b.create<linalg::FillOp>(loc, padValue, empty).getResult(0);
  MLIRContext *ctx = b.getContext();
  return b.create<tensor::InsertSliceOp>(
      loc, input, filled, getAsIndexOpFoldResult(ctx, low),
      getAsIndexOpFoldResult(ctx, type.getShape()),
      getAsIndexOpFoldResult(ctx, strides));
}

Value castTensor(OpBuilder &b, Location loc, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  return buildElementwise(
      b, loc, RankedTensorType::get(type.getShape(), element), value,
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

/// The sizes of `resultType`, a reshape of `input` that only adds or drops
/// unit dimensions: each dynamic one is the input's matching dimension.
/// Empty when the reshape does more than that.
static SmallVector<OpFoldResult> unitReshapeSizes(OpBuilder &b, Location loc,
                                                  Value input,
                                                  RankedTensorType resultType) {
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < inputType.getRank(); ++d)
    if (inputType.getDimSize(d) != 1)
      kept.push_back(d);
  SmallVector<OpFoldResult> sizes;
  size_t next = 0;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    int64_t extent = resultType.getDimSize(d);
    if (extent == 1) {
      sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    if (next == kept.size() || inputType.getDimSize(kept[next]) != extent)
      return {};
    sizes.push_back(tensor::getMixedSize(b, loc, input, kept[next++]));
  }
  if (next != kept.size())
    return {};
  return sizes;
}

Value buildReshape(OpBuilder &b, Location loc, Value input,
                   RankedTensorType resultType, ArrayRef<OpFoldResult> sizes) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (inputType == resultType && resultType.hasStaticShape())
    return input;
  if (!inputType.hasStaticShape() || !resultType.hasStaticShape()) {
    SmallVector<OpFoldResult> outputShape(sizes);
    if (outputShape.empty())
      outputShape = unitReshapeSizes(b, loc, input, resultType);
    if (resultType.getRank() == 0 || (outputShape.empty() && resultType.getRank() != 0))
      return {};
    if (inputType == resultType && sizes.empty())
      return input;
    Value flat = input;
    if (inputType.getRank() != 1) {
      auto flatType = RankedTensorType::get({ShapedType::kDynamic},
                                            inputType.getElementType());
      flat = b.create<tensor::CollapseShapeOp>(
          loc, flatType, input,
          ArrayRef<ReassociationIndices>{allDims(inputType.getRank())});
    }
    if (resultType.getRank() == 1)
      return b.create<tensor::CastOp>(loc, resultType, flat);
    if (resultType.getNumDynamicDims() <= 1)
      return b.create<tensor::ExpandShapeOp>(
          loc, resultType, flat,
          ArrayRef<ReassociationIndices>{allDims(resultType.getRank())}, outputShape);
    // Two dynamic extents in one expanded group do not bufferize in MLIR 19
    // (one-shot bufferization crashes on it): a reshape by a shape tensor.
    SmallVector<Value> extents;
    for (OpFoldResult size : outputShape)
      extents.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
    Value shape = b.create<tensor::FromElementsOp>(loc, extents);
    return b.create<tensor::ReshapeOp>(loc, resultType, flat, shape);
  }
  if (inputType == resultType)
    return input;
  // 0-d tensors hold one element: reassociate with an empty list.
  if (resultType.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, resultType, input,
                                             ArrayRef<ReassociationIndices>{});
  if (inputType.getRank() == 0)
    return b.create<tensor::ExpandShapeOp>(loc, resultType, input,
                                           ArrayRef<ReassociationIndices>{});
  // Collapse to rank 1, then expand to the result: valid for any two static
  // shapes with the same element count.
  Value flat = input;
  if (inputType.getRank() != 1) {
    auto flatType = RankedTensorType::get({inputType.getNumElements()},
                                          inputType.getElementType());
    flat = b.create<tensor::CollapseShapeOp>(
        loc, flatType, input,
        ArrayRef<ReassociationIndices>{allDims(inputType.getRank())});
  }
  if (resultType.getRank() == 1)
    return flat;
  return b.create<tensor::ExpandShapeOp>(
      loc, resultType, flat,
      ArrayRef<ReassociationIndices>{allDims(resultType.getRank())});
}

Value combineElements(Combiner kind, OpBuilder &b, Location l, Value acc,
                      Value x) {
  bool isFloat = isa<FloatType>(acc.getType());
  bool isBool = acc.getType().isInteger(1);
  switch (kind) {
  case Combiner::Sum:
    if (isBool)
      return b.create<arith::OrIOp>(l, acc, x);
    return isFloat ? b.create<arith::AddFOp>(l, acc, x).getResult()
                   : b.create<arith::AddIOp>(l, acc, x).getResult();
  case Combiner::Prod:
    if (isBool)
      return b.create<arith::AndIOp>(l, acc, x);
    return isFloat ? b.create<arith::MulFOp>(l, acc, x).getResult()
                   : b.create<arith::MulIOp>(l, acc, x).getResult();
  case Combiner::Max:
    if (isBool)
      return b.create<arith::OrIOp>(l, acc, x);
    return isFloat ? b.create<arith::MaximumFOp>(l, acc, x,
                                                 arith::FastMathFlags::nsz)
                         .getResult()
                   : b.create<arith::MaxSIOp>(l, acc, x).getResult();
  case Combiner::Min:
    if (isBool)
      return b.create<arith::AndIOp>(l, acc, x);
    return isFloat ? b.create<arith::MinimumFOp>(l, acc, x,
                                                 arith::FastMathFlags::nsz)
                         .getResult()
                   : b.create<arith::MinSIOp>(l, acc, x).getResult();
  case Combiner::Any:
    return b.create<arith::OrIOp>(l, acc, x);
  case Combiner::All:
    return b.create<arith::AndIOp>(l, acc, x);
  }
  return acc;
}

Value extremeConstant(OpBuilder &b, Location loc, Type type, bool lowest) {
  if (auto f = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(
        loc, b.getFloatAttr(f, lowest ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity()));
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(!lowest));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(type, lowest ? APInt::getSignedMinValue(width)
                                         : APInt::getSignedMaxValue(width)));
}

} // namespace kiln::aten
