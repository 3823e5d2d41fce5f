//===- Pointwise.cpp - aten.pointwise to linalg.generic -------------------===//
//
// This file implements the one pattern behind every aten.pointwise function:
// it picks the compute element type (result, promoted operands per PyTorch's
// rules, or i1), checks the function's domain, and builds a broadcasting
// linalg.generic around the body from the pointwise table. f16/bf16 compute
// in f32 and round once at the end.
//
//===----------------------------------------------------------------------===//
#include "Builders.h"
#include "PointwiseTable.h"
#include "PopulatePatterns.h"

#include "kiln/Dialect/Aten/IR/AtenOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace kiln::aten;

namespace {

int category(Type t) {
  if (t.isInteger(1))
    return 0;
  return isa<FloatType>(t) ? 2 : 1;
}

/// PyTorch's promote_types for the element types Kiln has.
Type promote(Type a, Type b) {
  if (!a)
    return b;
  if (a == b)
    return a;
  int ca = category(a), cb = category(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == 2 && a.getIntOrFloatBitWidth() == b.getIntOrFloatBitWidth())
    return Float32Type::get(a.getContext()); // f16 with bf16.
  return a.getIntOrFloatBitWidth() > b.getIntOrFloatBitWidth() ? a : b;
}

/// result_type over tensors: 0-d operands only matter when they raise the
/// category of the dimensioned ones.
Type promotedType(ValueRange operands) {
  Type dimensioned, zeroDim;
  for (Value v : operands) {
    auto type = cast<RankedTensorType>(v.getType());
    Type &slot = type.getRank() ? dimensioned : zeroDim;
    slot = promote(slot, type.getElementType());
  }
  if (!dimensioned)
    return zeroDim;
  if (zeroDim && category(zeroDim) > category(dimensioned))
    return zeroDim;
  return dimensioned;
}

bool inDomain(Domain domain, Type t) {
  switch (domain) {
  case Domain::Any:
    return true;
  case Domain::Float:
    return isa<FloatType>(t);
  case Domain::NotBool:
    return !t.isInteger(1);
  case Domain::IntOrBool:
    return isa<IntegerType>(t);
  }
  return false;
}

struct PointwiseOpLowering : OpConversionPattern<PointwiseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PointwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const PointwiseLowering *row = lookupPointwiseLowering(op.getFn());
    if (!row)
      return rewriter.notifyMatchFailure(op, "no lowering for this function");
    RankedTensorType resultType = op.getType();
    Type resultElement = resultType.getElementType();
    Type i1 = rewriter.getI1Type();
    Type compute;
    switch (row->computeIn) {
    case ComputeIn::Result:
    case ComputeIn::Where:
      compute = resultElement;
      break;
    case ComputeIn::Promoted:
      compute = promotedType(adaptor.getInputs());
      break;
    case ComputeIn::Bool:
      compute = i1;
      break;
    }
    if (!inDomain(row->domain, compute))
      return rewriter.notifyMatchFailure(
          op, "function not defined for this element type");
    if (compute.isF16() || compute.isBF16())
      compute = rewriter.getF32Type();
    SmallVector<Type> operandTypes(adaptor.getInputs().size(), compute);
    if (row->computeIn == ComputeIn::Where)
      operandTypes[0] = i1;

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (Value operand : adaptor.getInputs())
      maps.push_back(broadcastMap(
          ctx, cast<RankedTensorType>(operand.getType()).getShape(),
          resultType.getShape()));
    maps.push_back(rewriter.getMultiDimIdentityMap(resultType.getRank()));
    SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                               utils::IteratorType::parallel);
    Value init = rewriter.create<tensor::EmptyOp>(loc, resultType.getShape(),
                                                  resultElement);
    ArrayRef<double> scalars = op.getScalars();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, resultType, adaptor.getInputs(), init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> converted;
          for (auto [arg, type] : llvm::zip(args.drop_back(), operandTypes))
            converted.push_back(castScalar(b, l, arg, type));
          Value result = row->body(b, l, converted, scalars);
          b.create<linalg::YieldOp>(l, castScalar(b, l, result, resultElement));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void kiln::aten::populatePointwisePatterns(RewritePatternSet &patterns) {
  patterns.add<PointwiseOpLowering>(patterns.getContext());
}
