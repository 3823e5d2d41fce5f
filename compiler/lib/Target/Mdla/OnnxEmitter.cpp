//===- OnnxEmitter.cpp - the ATen-level module as an ONNX model -----------===//
//
// This file implements emitOnnxModel(): one walk over the graph function in
// order, each aten op becoming the ONNX node(s) with its meaning, then the
// removal of nodes nothing reads (the channel views batch norm's statistics
// came through, a transpose folded into a Gemm).
//
//===----------------------------------------------------------------------===//
#include "OnnxEmitter.h"

#include "kiln/Dialect/Aten/IR/AdaptiveWindows.h"
#include "kiln/Dialect/Aten/IR/AtenOps.h"
#include "kiln/Import/GraphImporter.h"
#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

using namespace mlir;

namespace kiln::compiler::mdla {
namespace {

using Status = absl::Status;

Status unsupported(Operation *op, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("target 'mdla' does not run ", op->getName().getStringRef().str(),
                   why.empty() ? "" : absl::StrCat(": ", why),
                   " (the MDLA runs ", kMdlaOps, ")"));
}

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

RankedTensorType tensorOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The output extent of a window of `kernel` (dilated) along a dim.
int64_t floorExtent(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                    int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

class OnnxEmitter {
public:
  explicit OnnxEmitter(const v1::Graph &graph) : graph(graph) {}

  absl::StatusOr<onnx::ModelProto> emit(func::FuncOp func);

private:
  Status declareArguments(func::FuncOp func);
  Status emitOp(Operation &op);
  Status emitReturn(func::ReturnOp ret);
  void removeUnreadNodes();

  Status emitConvolution(aten::ConvolutionOp op);
  Status emitMaxPool(aten::MaxPoolOp op);
  Status emitAvgPool(aten::AvgPoolOp op);
  /// An adaptive pool whose output extents divide the input's: a plain
  /// `onnxType` pool with kernel = stride = In / Out.
  Status emitAdaptivePool(Operation *op, Value self, Value result,
                          int64_t pooled, const char *onnxType);
  Status emitMean(aten::MeanOp op);
  Status emitBatchNorm(aten::PointwiseOp op);
  Status emitGemm(Operation *op, Value a, Value b, Value c, double alpha,
                  double beta);
  Status emitConstant(aten::ConstantOp op);

  /// Every operand and result is a static f32 tensor.
  Status requireF32(Operation *op);
  /// The ONNX name of `value` (defined earlier in the walk).
  const std::string &nameOf(Value value) { return names.at(value); }
  /// A new, unused ONNX name based on `base`.
  std::string fresh(const std::string &base);
  /// The name `result` gets: the graph output's when one returns it.
  std::string define(Value result);
  /// A node of `opType` for `op` (named after its location).
  onnx::NodeProto &addNode(const std::string &opType, Operation *op,
                           const std::vector<std::string> &inputs,
                           const std::vector<std::string> &outputs);
  /// An int64 initializer (a Reshape's shape).
  std::string addInt64s(const std::string &base, llvm::ArrayRef<int64_t> values);
  /// A 1-d f32 initializer.
  std::string addFloats(const std::string &base, const std::vector<float> &values);
  /// `value` as a (C) channel vector: the 1-d tensor it was viewed from, a
  /// splat constant repeated, or a Reshape of it.
  absl::StatusOr<std::string> channelVector(Value value, int64_t channels,
                                            Operation *user);

  const v1::Graph &graph;
  onnx::ModelProto model;
  onnx::GraphProto *out = model.mutable_graph();
  llvm::DenseMap<Value, std::string> names;
  llvm::DenseMap<Value, std::string> outputNames;
  std::unordered_set<std::string> used;
  std::unordered_map<std::string, int> nodeNames;
};

std::string OnnxEmitter::fresh(const std::string &base) {
  std::string name = base.empty() ? "t" : base;
  for (int i = 1; !used.insert(name).second; ++i)
    name = absl::StrCat(base.empty() ? "t" : base, "_", i);
  return name;
}

std::string locationName(Operation *op) {
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    return loc.getName().str();
  return op->getName().stripDialect().str();
}

std::string OnnxEmitter::define(Value result) {
  auto preset = outputNames.find(result);
  std::string name = preset != outputNames.end()
                         ? preset->second
                         : fresh(locationName(result.getDefiningOp()));
  names[result] = name;
  return name;
}

onnx::NodeProto &OnnxEmitter::addNode(const std::string &opType, Operation *op,
                                      const std::vector<std::string> &inputs,
                                      const std::vector<std::string> &outputs) {
  onnx::NodeProto &node = *out->add_node();
  node.set_op_type(opType);
  std::string base = locationName(op);
  int &count = nodeNames[base];
  node.set_name(count++ ? absl::StrCat(base, "#", count) : base);
  for (const std::string &input : inputs)
    node.add_input(input);
  for (const std::string &output : outputs)
    node.add_output(output);
  return node;
}

void setInts(onnx::NodeProto &node, const char *name, llvm::ArrayRef<int64_t> values) {
  onnx::AttributeProto &attr = *node.add_attribute();
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    attr.add_ints(v);
}

void setInt(onnx::NodeProto &node, const char *name, int64_t value) {
  onnx::AttributeProto &attr = *node.add_attribute();
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
}

void setFloat(onnx::NodeProto &node, const char *name, float value) {
  onnx::AttributeProto &attr = *node.add_attribute();
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::FLOAT);
  attr.set_f(value);
}

/// ONNX pads: every begin, then every end.
std::vector<int64_t> symmetricPads(llvm::ArrayRef<int64_t> padding) {
  std::vector<int64_t> pads(padding.begin(), padding.end());
  pads.insert(pads.end(), padding.begin(), padding.end());
  return pads;
}

void describeTensor(onnx::ValueInfoProto &info, const std::string &name,
                    RankedTensorType type) {
  info.set_name(name);
  onnx::TypeProto::Tensor &tensor = *info.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto &shape = *tensor.mutable_shape();
  for (int64_t dim : type.getShape())
    shape.add_dim()->set_dim_value(dim);
}

std::string OnnxEmitter::addInt64s(const std::string &base,
                                   llvm::ArrayRef<int64_t> values) {
  onnx::TensorProto &tensor = *out->add_initializer();
  tensor.set_name(fresh(base));
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values)
    tensor.add_int64_data(v);
  return tensor.name();
}

std::string OnnxEmitter::addFloats(const std::string &base,
                                   const std::vector<float> &values) {
  onnx::TensorProto &tensor = *out->add_initializer();
  tensor.set_name(fresh(base));
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (float v : values)
    tensor.add_float_data(v);
  return tensor.name();
}

Status OnnxEmitter::requireF32(Operation *op) {
  for (Value v : op->getOperands())
    if (!isF32Tensor(v.getType()))
      return unsupported(op, "it has a tensor operand that is not static f32");
  for (Value v : op->getResults())
    if (!isF32Tensor(v.getType()))
      return unsupported(op, "it has a result that is not a static f32 tensor");
  return absl::OkStatus();
}

Status OnnxEmitter::declareArguments(func::FuncOp func) {
  std::vector<const v1::Value *> declared;
  for (const v1::Parameter &param : graph.parameters())
    declared.push_back(&param.value());
  for (const v1::Value &input : graph.inputs())
    declared.push_back(&input);
  if (func.getNumArguments() != declared.size())
    return absl::UnimplementedError(
        "target 'mdla' does not run graphs with symbolic sizes");
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    // Unread arguments (a batch norm's num_batches_tracked) are left out:
    // the device binds the model's inputs by name.
    if (arg.use_empty())
      continue;
    if (!isF32Tensor(arg.getType()))
      return absl::UnimplementedError(absl::StrCat(
          "target 'mdla' runs f32 tensors only; '", declared[i]->name(),
          "' is not one"));
    used.insert(declared[i]->name());
    names[arg] = declared[i]->name();
    describeTensor(*out->add_input(), declared[i]->name(), tensorOf(arg));
  }
  return absl::OkStatus();
}

Status OnnxEmitter::emitConvolution(aten::ConvolutionOp op) {
  RETURN_IF_ERROR(requireF32(op));
  int64_t spatial = tensorOf(op.getInput()).getRank() - 2;
  if (spatial < 1 || spatial > 2)
    return unsupported(op, "only 1-d and 2-d convolutions");
  if (op.getTransposed())
    return unsupported(op, "transposed convolution");
  std::vector<std::string> inputs = {nameOf(op.getInput()), nameOf(op.getWeight())};
  if (op.getBias())
    inputs.push_back(nameOf(op.getBias()));
  onnx::NodeProto &node = addNode("Conv", op, inputs, {define(op.getResult())});
  setInts(node, "strides", op.getStride());
  setInts(node, "pads", symmetricPads(op.getPadding()));
  setInts(node, "dilations", op.getDilation());
  setInt(node, "group", op.getGroups());
  return absl::OkStatus();
}

Status OnnxEmitter::emitMaxPool(aten::MaxPoolOp op) {
  if (!op.getIndices().use_empty())
    return unsupported(op, "its indices are read (max_pool2d_with_indices "
                           "feeding an unpool or a backward)");
  if (!isF32Tensor(op.getSelf().getType()) || !isF32Tensor(op.getValues().getType()))
    return unsupported(op, "it pools a tensor that is not static f32");
  if (op.getChannelsLast())
    return unsupported(op, "ONNX pools channels first; this one is channels last");
  RankedTensorType in = tensorOf(op.getSelf()), res = tensorOf(op.getValues());
  int64_t spatial = in.getRank() - 2;
  if (spatial < 1 || spatial > 2)
    return unsupported(op, "only 1-d and 2-d pooling");
  bool ceil = false;
  for (int64_t d = 0; d < spatial; ++d)
    ceil |= res.getDimSize(2 + d) !=
            floorExtent(in.getDimSize(2 + d), op.getKernel()[d], op.getStride()[d],
                        op.getPadding()[d], op.getDilation()[d]);
  onnx::NodeProto &node =
      addNode("MaxPool", op, {nameOf(op.getSelf())}, {define(op.getValues())});
  setInts(node, "kernel_shape", op.getKernel());
  setInts(node, "strides", op.getStride());
  setInts(node, "pads", symmetricPads(op.getPadding()));
  setInts(node, "dilations", op.getDilation());
  setInt(node, "ceil_mode", ceil);
  return absl::OkStatus();
}

Status OnnxEmitter::emitAvgPool(aten::AvgPoolOp op) {
  RETURN_IF_ERROR(requireF32(op));
  if (op.getChannelsLast())
    return unsupported(op, "ONNX pools channels first; this one is channels last");
  RankedTensorType in = tensorOf(op.getSelf()), res = tensorOf(op.getResult());
  int64_t spatial = in.getRank() - 2;
  if (spatial < 1 || spatial > 2)
    return unsupported(op, "only 1-d and 2-d pooling");
  if (op.getDivisorOverride() != 0)
    return unsupported(op, "divisor_override");
  for (int64_t d = 0; d < spatial; ++d)
    if (res.getDimSize(2 + d) != floorExtent(in.getDimSize(2 + d), op.getKernel()[d],
                                             op.getStride()[d], op.getPadding()[d], 1))
      return unsupported(op, "ceil-mode average pooling");
  onnx::NodeProto &node =
      addNode("AveragePool", op, {nameOf(op.getSelf())}, {define(op.getResult())});
  setInts(node, "kernel_shape", op.getKernel());
  setInts(node, "strides", op.getStride());
  setInts(node, "pads", symmetricPads(op.getPadding()));
  setInt(node, "count_include_pad", op.getCountIncludePad());
  return absl::OkStatus();
}

Status OnnxEmitter::emitAdaptivePool(Operation *op, Value self, Value result,
                                     int64_t pooled, const char *onnxType) {
  if (!isF32Tensor(self.getType()) || !isF32Tensor(result.getType()))
    return unsupported(op, "it pools a tensor that is not static f32");
  RankedTensorType in = tensorOf(self), res = tensorOf(result);
  if (in.getRank() != pooled + 2 || pooled > 2)
    return unsupported(op, "only 1-d and 2-d pooling of (N, C, spatial...)");
  SmallVector<aten::AdaptiveWindows> windows =
      aten::adaptiveWindows(in.getShape(), res.getShape().take_back(pooled));
  if (!aten::allEven(windows))
    return unsupported(op, "output extents that do not divide the input's");
  SmallVector<int64_t> kernel = aten::adaptiveKernel(windows);
  onnx::NodeProto &node = addNode(onnxType, op, {nameOf(self)}, {define(result)});
  setInts(node, "kernel_shape", kernel);
  setInts(node, "strides", kernel);
  setInts(node, "pads", std::vector<int64_t>(2 * pooled, 0));
  return absl::OkStatus();
}

Status OnnxEmitter::emitMean(aten::MeanOp op) {
  RETURN_IF_ERROR(requireF32(op));
  RankedTensorType in = tensorOf(op.getSelf());
  std::set<int64_t> dims;
  for (int64_t d : op.getDims())
    dims.insert(d < 0 ? d + in.getRank() : d);
  if (in.getRank() != 4 || dims != std::set<int64_t>{2, 3})
    return unsupported(op, "only the mean over H and W of an NCHW tensor "
                           "(global average pooling)");
  if (op.getKeepdim()) {
    addNode("GlobalAveragePool", op, {nameOf(op.getSelf())}, {define(op.getResult())});
    return absl::OkStatus();
  }
  std::string pooled = fresh(locationName(op) + "_pooled");
  addNode("GlobalAveragePool", op, {nameOf(op.getSelf())}, {pooled});
  std::string shape = addInt64s(locationName(op) + "_shape",
                                tensorOf(op.getResult()).getShape());
  addNode("Reshape", op, {pooled, shape}, {define(op.getResult())});
  return absl::OkStatus();
}

absl::StatusOr<std::string> OnnxEmitter::channelVector(Value value, int64_t channels,
                                                       Operation *user) {
  if (auto view = value.getDefiningOp<aten::ViewOp>()) {
    RankedTensorType source = tensorOf(view.getSelf());
    if (source.getRank() == 1 && source.getDimSize(0) == channels)
      return nameOf(view.getSelf());
  }
  if (auto constant = value.getDefiningOp<aten::ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        dense && dense.isSplat() && dense.getElementType().isF32())
      return addFloats(locationName(user) + "_const",
                       std::vector<float>(channels, dense.getSplatValue<float>()));
  if (tensorOf(value).getNumElements() != channels)
    return unsupported(user, "batch norm statistics that are not per channel");
  std::string shape = addInt64s(locationName(user) + "_cshape", {channels});
  std::string name = fresh(locationName(user) + "_channels");
  addNode("Reshape", user, {nameOf(value), shape}, {name});
  return name;
}

Status OnnxEmitter::emitBatchNorm(aten::PointwiseOp op) {
  RETURN_IF_ERROR(requireF32(op));
  if (op.getInputs().size() != 5 || op.getScalars().size() != 1)
    return unsupported(op, "a batch norm without its four statistics and eps");
  Value x = op.getInputs()[0];
  if (tensorOf(x).getRank() < 2 || tensorOf(x) != tensorOf(op.getResult()))
    return unsupported(op, "a batch norm that broadcasts its input");
  int64_t channels = tensorOf(x).getDimSize(1);
  // aten order: input, mean, var, weight, bias; ONNX: X, scale, B, mean, var.
  std::vector<std::string> inputs = {nameOf(x)};
  for (int operand : {3, 4, 1, 2}) {
    ASSIGN_OR_RETURN(std::string name,
                     channelVector(op.getInputs()[operand], channels, op));
    inputs.push_back(name);
  }
  onnx::NodeProto &node =
      addNode("BatchNormalization", op, inputs, {define(op.getResult())});
  setFloat(node, "epsilon", static_cast<float>(op.getScalars()[0]));
  return absl::OkStatus();
}

Status OnnxEmitter::emitGemm(Operation *op, Value a, Value b, Value c,
                             double alpha, double beta) {
  RETURN_IF_ERROR(requireF32(op));
  if (tensorOf(a).getRank() != 2 || tensorOf(b).getRank() != 2)
    return unsupported(op, "only 2-d matrix products");
  bool transB = false;
  if (auto permute = b.getDefiningOp<aten::PermuteOp>();
      permute && permute.getDims() == llvm::ArrayRef<int64_t>{1, 0}) {
    b = permute.getSelf();  // a linear layer's weight, read transposed
    transB = true;
  }
  if (c && beta == 0.0)
    c = Value();  // PyTorch ignores self at beta 0 (its NaNs too); Gemm would not
  std::vector<std::string> inputs = {nameOf(a), nameOf(b)};
  if (c)
    inputs.push_back(nameOf(c));
  onnx::NodeProto &node = addNode("Gemm", op, inputs, {define(op->getResult(0))});
  setInt(node, "transB", transB);
  if (alpha != 1.0)
    setFloat(node, "alpha", static_cast<float>(alpha));
  if (c && beta != 1.0)
    setFloat(node, "beta", static_cast<float>(beta));
  return absl::OkStatus();
}

Status OnnxEmitter::emitConstant(aten::ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense || !isF32Tensor(op.getType()))
    return unsupported(op, "a constant that is not f32");
  onnx::TensorProto &tensor = *out->add_initializer();
  tensor.set_name(define(op.getResult()));
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : tensorOf(op.getResult()).getShape())
    tensor.add_dims(dim);
  for (float v : dense.getValues<float>())
    tensor.add_float_data(v);
  return absl::OkStatus();
}

Status OnnxEmitter::emitOp(Operation &op) {
  auto binary = [&](const char *type, Value lhs, Value rhs, double alpha) -> Status {
    RETURN_IF_ERROR(requireF32(&op));
    if (alpha != 1.0)
      return unsupported(&op, "an alpha other than 1");
    addNode(type, &op, {nameOf(lhs), nameOf(rhs)}, {define(op.getResult(0))});
    return absl::OkStatus();
  };
  auto unary = [&](const char *type) -> Status {
    RETURN_IF_ERROR(requireF32(&op));
    addNode(type, &op, {nameOf(op.getOperand(0))}, {define(op.getResult(0))});
    return absl::OkStatus();
  };
  return llvm::TypeSwitch<Operation *, Status>(&op)
      .Case([&](aten::ConvolutionOp o) { return emitConvolution(o); })
      .Case([&](aten::MaxPoolOp o) { return emitMaxPool(o); })
      .Case([&](aten::AvgPoolOp o) { return emitAvgPool(o); })
      .Case([&](aten::AdaptiveAvgPoolOp o) {
        return emitAdaptivePool(o, o.getSelf(), o.getResult(), o.getPooledDims(),
                                "AveragePool");
      })
      .Case([&](aten::AdaptiveMaxPoolOp o) -> Status {
        if (!o.getIndices().use_empty())
          return unsupported(o, "its indices are read");
        return emitAdaptivePool(o, o.getSelf(), o.getValues(), o.getPooledDims(),
                                "MaxPool");
      })
      .Case([&](aten::MeanOp o) { return emitMean(o); })
      .Case([&](aten::AddOp o) {
        return binary("Add", o.getLhs(), o.getRhs(), o.getAlpha().convertToDouble());
      })
      .Case([&](aten::SubOp o) {
        return binary("Sub", o.getLhs(), o.getRhs(), o.getAlpha().convertToDouble());
      })
      .Case([&](aten::MulOp o) { return binary("Mul", o.getLhs(), o.getRhs(), 1.0); })
      .Case([&](aten::ReluOp) { return unary("Relu"); })
      .Case([&](aten::TanhOp) { return unary("Tanh"); })
      .Case([&](aten::SigmoidOp) { return unary("Sigmoid"); })
      .Case([&](aten::PointwiseOp o) -> Status {
        if (o.getFn() != "batch_norm")
          return unsupported(&op, absl::StrCat("pointwise '", o.getFn().str(), "'"));
        return emitBatchNorm(o);
      })
      .Case([&](aten::ViewOp o) -> Status {
        RETURN_IF_ERROR(requireF32(&op));
        // Opset 13's Reshape reads a 0 in the shape as "keep that dim".
        if (llvm::is_contained(tensorOf(o.getResult()).getShape(), 0))
          return unsupported(&op, "a view with a zero-size dim");
        std::string shape = addInt64s(locationName(&op) + "_shape",
                                      tensorOf(o.getResult()).getShape());
        addNode("Reshape", &op, {nameOf(o.getSelf()), shape}, {define(o.getResult())});
        return absl::OkStatus();
      })
      .Case([&](aten::PermuteOp o) -> Status {
        RETURN_IF_ERROR(requireF32(&op));
        if (o.getDims() != llvm::ArrayRef<int64_t>{1, 0})
          return unsupported(&op, "only the transpose of a 2-d tensor");
        onnx::NodeProto &node =
            addNode("Transpose", &op, {nameOf(o.getSelf())}, {define(o.getResult())});
        setInts(node, "perm", {1, 0});
        return absl::OkStatus();
      })
      .Case([&](aten::MmOp o) {
        return emitGemm(&op, o.getSelf(), o.getMat2(), Value(), 1.0, 1.0);
      })
      .Case([&](aten::AddmmOp o) {
        return emitGemm(&op, o.getMat1(), o.getMat2(), o.getSelf(),
                        o.getAlpha().convertToDouble(), o.getBeta().convertToDouble());
      })
      .Case([&](aten::CatOp o) -> Status {
        RETURN_IF_ERROR(requireF32(&op));
        std::vector<std::string> inputs;
        for (Value v : o.getInputs())
          inputs.push_back(nameOf(v));
        onnx::NodeProto &node = addNode("Concat", &op, inputs, {define(o.getResult())});
        int64_t dim = o.getDim();
        setInt(node, "axis", dim < 0 ? dim + tensorOf(o.getResult()).getRank() : dim);
        return absl::OkStatus();
      })
      .Case([&](aten::ConstantOp o) { return emitConstant(o); })
      .Case([&](func::ReturnOp o) { return emitReturn(o); })
      .Default([&](Operation *other) { return unsupported(other, ""); });
}

Status OnnxEmitter::emitReturn(func::ReturnOp ret) {
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    const std::string &name = graph.outputs(static_cast<int>(i));
    if (names.at(value) != name) {
      // An input returned as it is, or a value returned twice.
      used.insert(name);
      addNode("Identity", ret, {names.at(value)}, {name});
    }
    describeTensor(*out->add_output(), name, tensorOf(value));
  }
  return absl::OkStatus();
}

void OnnxEmitter::removeUnreadNodes() {
  std::unordered_set<std::string> read;
  for (const onnx::ValueInfoProto &output : out->output())
    read.insert(output.name());
  std::vector<bool> keep(out->node_size(), false);
  for (int i = out->node_size() - 1; i >= 0; --i) {
    const onnx::NodeProto &node = out->node(i);
    for (const std::string &output : node.output())
      keep[i] = keep[i] || read.count(output);
    if (keep[i])
      read.insert(node.input().begin(), node.input().end());
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < out->node_size(); ++i)
    if (keep[i])
      *nodes.Add() = std::move(*out->mutable_node(i));
  out->mutable_node()->Swap(&nodes);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  for (onnx::TensorProto &tensor : *out->mutable_initializer())
    if (read.count(tensor.name()))
      *initializers.Add() = std::move(tensor);
  out->mutable_initializer()->Swap(&initializers);
}

absl::StatusOr<onnx::ModelProto> OnnxEmitter::emit(func::FuncOp func) {
  model.set_ir_version(kOnnxIrVersion);
  model.set_producer_name("kiln");
  onnx::OperatorSetIdProto &opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(kOnnxOpset);
  out->set_name(kGraphFunctionName);  // the manifest's entry_symbol
  RETURN_IF_ERROR(declareArguments(func));
  // Values the function returns take the graph output's name when defined.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (value.getDefiningOp() && !outputNames.count(value)) {
      outputNames[value] = graph.outputs(static_cast<int>(i));
      used.insert(graph.outputs(static_cast<int>(i)));
    }
  for (Operation &op : func.getBody().front())
    RETURN_IF_ERROR(emitOp(op));
  removeUnreadNodes();
  return std::move(model);
}

} // namespace

absl::StatusOr<onnx::ModelProto> emitOnnxModel(ModuleOp module,
                                               const v1::Graph &graph) {
  auto func = module.lookupSymbol<func::FuncOp>(kGraphFunctionName);
  if (!func || func.getBody().empty())
    return absl::InternalError("the module has no graph function to emit");
  return OnnxEmitter(graph).emit(func);
}

} // namespace kiln::compiler::mdla
