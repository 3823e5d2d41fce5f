//===- PerSampleLoop.cpp - per-sample ops over a symbolic batch -----------===//
//
// This file implements the loop over a symbolic batch that runs a per-sample
// op's static import once per sample.
//
//===----------------------------------------------------------------------===//
#include "PerSampleLoop.h"

#include "kiln/common/Status.h"
#include "kiln/common/SymbolicSizes.h"

#include "absl/strings/str_cat.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <set>

using namespace mlir;

namespace kiln {
namespace {

/// Ops whose results for one sample depend on that sample alone (in eval
/// mode: train-mode batch norm reads the whole batch and is not here).
bool isPerSample(const std::string &op) {
  static const std::set<std::string> ops = {
      "aten.convolution.default",
      "aten.max_pool1d_with_indices.default",
      "aten.max_pool2d_with_indices.default",
      "aten.max_pool3d_with_indices.default",
      "aten.avg_pool1d.default",
      "aten.avg_pool2d.default",
      "aten.avg_pool3d.default",
      "aten._adaptive_avg_pool2d.default",
      "aten.adaptive_avg_pool2d.default",
      "aten._native_batch_norm_legit_no_training.default",
      "aten.constant_pad_nd.default",
      "aten.upsample_nearest2d.default",
  };
  return ops.count(op) != 0;
}

/// The size expression of the leading dimension when it is the only
/// symbolic one of `type` ("" when `type` is static); nullopt otherwise.
std::optional<std::string> leadingSymbol(const v1::TensorType &type) {
  if (!isSymbolic(type))
    return std::string();
  for (int d = 1; d < type.symbols_size(); ++d)
    if (!type.symbols(d).empty())
      return std::nullopt;
  return type.symbols(0);
}

/// `type` for one sample: a leading extent of 1, static.
v1::TensorType oneSample(const v1::TensorType &type) {
  v1::TensorType sample = type;
  sample.clear_symbols();
  sample.set_shape(0, 1);
  return sample;
}

/// Offsets, sizes and strides of sample `index` of a tensor of `type` whose
/// one-sample shape is `sampleShape`.
struct SampleSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
SampleSlice sampleSlice(OpBuilder &b, ArrayRef<int64_t> sampleShape, Value index) {
  SampleSlice slice;
  for (int64_t extent : sampleShape) {
    slice.offsets.push_back(b.getIndexAttr(0));
    slice.sizes.push_back(b.getIndexAttr(extent));
    slice.strides.push_back(b.getIndexAttr(1));
  }
  slice.offsets[0] = index;
  return slice;
}

} // namespace

absl::StatusOr<std::optional<SmallVector<Value>>>
importPerSample(NodeImporter &n, const OpHandler &handler, const ValueTable &values,
                const SymbolScope &symbols) {
  const v1::Node &node = n.proto();
  if (!isPerSample(node.op()))
    return std::optional<SmallVector<Value>>();
  // Every symbolic size is the leading one, and the same for all.
  std::string batch;
  auto agree = [&](const std::optional<std::string> &leading) {
    if (!leading)
      return false;
    if (leading->empty())
      return true;
    if (batch.empty())
      batch = *leading;
    return batch == *leading;
  };
  for (const v1::Value &output : node.outputs())
    if (!output.name().empty() && !agree(leadingSymbol(output.type())))
      return std::optional<SmallVector<Value>>();
  std::set<std::string> batched;
  for (const v1::Argument &argument : node.arguments()) {
    if (argument.kind_case() != v1::Argument::kValue)
      continue;
    auto it = values.find(argument.value());
    if (it == values.end())
      return std::optional<SmallVector<Value>>(); // the handler reports it
    RankedTensorType type = typeOf(it->second);
    if (type.hasStaticShape())
      continue;
    for (int64_t d = 1; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        return std::optional<SmallVector<Value>>();
    batched.insert(argument.value());
  }
  if (batch.empty() || batched.empty())
    return std::optional<SmallVector<Value>>();

  // One sample's node: static result types, the same argument names.
  v1::Node sample = node;
  std::vector<int> loopResults;
  for (int r = 0; r < sample.outputs_size(); ++r) {
    v1::Value &output = *sample.mutable_outputs(r);
    if (output.name().empty() || !isSymbolic(output.type()))
      continue;
    *output.mutable_type() = oneSample(output.type());
    loopResults.push_back(r);
  }
  if (loopResults.empty())
    return std::optional<SmallVector<Value>>();

  OpBuilder &b = n.b();
  Location loc = n.loc();
  v1::TensorType batchType;
  batchType.add_shape(1);
  batchType.add_symbols(batch);
  absl::StatusOr<SmallVector<Value>> count = symbols.dynamicSizes(b, loc, batchType);
  if (!count.ok())
    return n.error(std::string(count.status().message()));
  Value samples = count->front();
  SmallVector<Value> inits;
  for (int r : loopResults) {
    ASSIGN_OR_RETURN(RankedTensorType type, n.resultType(r));
    inits.push_back(b.create<tensor::EmptyOp>(loc, type, ValueRange{samples}));
  }
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  absl::Status inner = absl::OkStatus();
  auto loop = b.create<scf::ForOp>(
      loc, zero, samples, one, inits,
      [&](OpBuilder &body, Location bodyLoc, Value index, ValueRange accumulators) {
        // Each batched argument's sample `index`, as a static tensor.
        ValueTable sampleValues = values;
        for (const std::string &name : batched) {
          Value whole = values.at(name);
          RankedTensorType type = typeOf(whole);
          SmallVector<int64_t> shape(type.getShape());
          shape[0] = 1;
          SampleSlice slice = sampleSlice(body, shape, index);
          sampleValues[name] = body.create<tensor::ExtractSliceOp>(
              bodyLoc, type.clone(shape), whole, slice.offsets, slice.sizes, slice.strides);
        }
        NodeImporter sampleImporter(sample, n.position(), body, sampleValues);
        absl::StatusOr<SmallVector<Value>> results = handler(sampleImporter);
        SmallVector<Value> updated;
        if (results.ok() && results->size() < static_cast<size_t>(sample.outputs_size()))
          results = n.error("the op's import made fewer results than the node declares");
        for (auto [k, r] : llvm::enumerate(loopResults)) {
          if (!results.ok() || !(*results)[r]) {
            updated.push_back(accumulators[k]);
            continue;
          }
          Value result = (*results)[r];
          SampleSlice slice = sampleSlice(body, typeOf(result).getShape(), index);
          updated.push_back(body.create<tensor::InsertSliceOp>(
              bodyLoc, result, accumulators[k], slice.offsets, slice.sizes, slice.strides));
        }
        if (!results.ok())
          inner = results.status();
        body.create<scf::YieldOp>(bodyLoc, updated);
      });
  RETURN_IF_ERROR(inner);
  SmallVector<Value> results(node.outputs_size());
  for (auto [k, r] : llvm::enumerate(loopResults))
    results[r] = loop.getResult(k);
  return std::optional<SmallVector<Value>>(std::move(results));
}

} // namespace kiln
