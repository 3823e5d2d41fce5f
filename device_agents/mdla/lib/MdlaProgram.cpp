//===- MdlaProgram.cpp - an mdla artifact (ONNX model), parsed ------------===//
//
// This file implements MdlaProgram::parse (ONNX bytes to checked layers) and
// bindWeights (weights in as initializers, for ie_compile).
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/mdla/MdlaProgram.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace kiln::agent::mdla {
namespace {

/// The ops and how many inputs each takes (min, max).
struct OpArity {
  int minInputs;
  int maxInputs;
};

const std::map<std::string, OpArity> &supportedOps() {
  static const std::map<std::string, OpArity> ops = {
      {"Conv", {2, 3}},        {"BatchNormalization", {5, 5}},
      {"Relu", {1, 1}},        {"Tanh", {1, 1}},
      {"Sigmoid", {1, 1}},     {"Add", {2, 2}},
      {"Sub", {2, 2}},         {"Mul", {2, 2}},
      {"MaxPool", {1, 1}},     {"AveragePool", {1, 1}},
      {"GlobalAveragePool", {1, 1}},
      {"Reshape", {2, 2}},     {"Transpose", {1, 1}},
      {"Gemm", {2, 3}},        {"Concat", {1, 64}},
      {"Identity", {1, 1}},
  };
  return ops;
}

absl::StatusOr<std::vector<int64_t>> staticShape(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type() ||
      info.type().tensor_type().elem_type() != onnx::TensorProto::FLOAT)
    return absl::InvalidArgumentError(
        absl::StrCat("'", info.name(), "' is not an f32 tensor"));
  std::vector<int64_t> shape;
  for (const onnx::TensorShapeProto::Dimension &dim :
       info.type().tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("'", info.name(), "' has a dimension that is not static"));
    shape.push_back(dim.dim_value());
  }
  if (!withinElementLimit(shape))
    return absl::InvalidArgumentError(
        absl::StrCat("'", info.name(), "' has over 2^28 elements"));
  return shape;
}

template <typename T>
absl::StatusOr<std::vector<T>> tensorData(const onnx::TensorProto &tensor,
                                          const auto &typed) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims())
    count *= dim;
  std::vector<T> data;
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != static_cast<size_t>(count) * sizeof(T))
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer '", tensor.name(), "' has ", tensor.raw_data().size(),
          " bytes for ", count, " elements"));
    data.resize(count);
    std::memcpy(data.data(), tensor.raw_data().data(), tensor.raw_data().size());
  } else {
    if (typed.size() != count)
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer '", tensor.name(), "' has ", typed.size(), " values for ",
          count, " elements"));
    data.assign(typed.begin(), typed.end());
  }
  return data;
}

absl::Status checkLayer(const Layer &layer) {
  auto it = supportedOps().find(layer.op);
  auto fail = [&](const std::string &why) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer '", layer.name, "' (", layer.op, "): ", why));
  };
  if (it == supportedOps().end()) {
    std::vector<std::string> names;
    for (const auto &[name, arity] : supportedOps())
      names.push_back(name);
    return fail(absl::StrCat("not an op the MDLA runs (",
                             absl::StrJoin(names, ", "), ")"));
  }
  int count = static_cast<int>(layer.inputs.size());
  if (count < it->second.minInputs || count > it->second.maxInputs)
    return fail(absl::StrCat("takes ", it->second.minInputs, "..",
                             it->second.maxInputs, " inputs, has ", count));
  if (layer.outputs.size() != 1)
    return fail("must have exactly one output");
  if (layer.op == "Transpose" && layer.intsAttr("perm", {}) != std::vector<int64_t>{1, 0})
    return fail("only the 2-d transpose (perm 1, 0) is supported");
  if ((layer.op == "MaxPool" || layer.op == "AveragePool") &&
      !layer.ints.count("kernel_shape"))
    return fail("kernel_shape is required");
  if (layer.op == "Gemm" && layer.intAttr("transA", 0) != 0)
    return fail("transA is not supported");
  if (layer.op == "Conv" && layer.ints.count("auto_pad"))
    return fail("auto_pad is not supported");
  return absl::OkStatus();
}

} // namespace

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

bool withinElementLimit(const std::vector<int64_t> &shape) {
  int64_t count = 1;  // of the non-zero dims, so loops over them stay bounded
  for (int64_t dim : shape) {
    if (dim < 0 || dim > kMaxTensorElements)
      return false;
    if (dim > 0 && count > kMaxTensorElements / dim)
      return false;
    count *= dim > 0 ? dim : 1;
  }
  return true;
}

int64_t Layer::intAttr(const std::string &key, int64_t fallback) const {
  auto it = ints.find(key);
  return it == ints.end() || it->second.empty() ? fallback : it->second[0];
}

std::vector<int64_t> Layer::intsAttr(const std::string &key,
                                     std::vector<int64_t> fallback) const {
  auto it = ints.find(key);
  return it == ints.end() ? std::move(fallback) : it->second;
}

float Layer::floatAttr(const std::string &key, float fallback) const {
  auto it = floats.find(key);
  return it == floats.end() ? fallback : it->second;
}

absl::StatusOr<MdlaProgram> MdlaProgram::parse(std::string_view onnxBytes) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(onnxBytes.data(), static_cast<int>(onnxBytes.size())))
    return absl::InvalidArgumentError("the artifact is not an ONNX model");
  bool defaultOpset = false;
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      defaultOpset = opset.version() >= 13;
  if (!defaultOpset)
    return absl::InvalidArgumentError(
        "the ONNX model does not import the default opset at version 13 or later");
  const onnx::GraphProto &graph = model.graph();
  MdlaProgram program;
  program.modelBytes = std::string(onnxBytes);
  program.name = graph.name();
  std::set<std::string> defined;
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (!withinElementLimit({init.dims().begin(), init.dims().end()}))
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer '", init.name(), "' has a negative dim or over 2^28 elements"));
    if (init.data_type() == onnx::TensorProto::FLOAT) {
      Tensor tensor;
      tensor.shape.assign(init.dims().begin(), init.dims().end());
      auto data = tensorData<float>(init, init.float_data());
      if (!data.ok())
        return data.status();
      tensor.data = *std::move(data);
      program.constantTensors[init.name()] = std::move(tensor);
    } else if (init.data_type() == onnx::TensorProto::INT64 && init.dims_size() == 1) {
      auto data = tensorData<int64_t>(init, init.int64_data());
      if (!data.ok())
        return data.status();
      program.shapeTensors[init.name()] = *std::move(data);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer '", init.name(), "' is neither f32 nor a 1-d int64 shape"));
    }
    defined.insert(init.name());
  }
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (defined.count(input.name()))
      continue;  // an initializer also listed as an input
    auto shape = staticShape(input);
    if (!shape.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("graph input ", shape.status().message()));
    program.inputPorts.push_back({input.name(), *std::move(shape)});
    defined.insert(input.name());
  }
  for (const onnx::NodeProto &node : graph.node()) {
    Layer layer;
    layer.op = node.op_type();
    layer.name = node.name().empty() ? node.op_type() : node.name();
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return absl::InvalidArgumentError(absl::StrCat(
          "layer '", layer.name, "' is in domain '", node.domain(), "'"));
    for (const std::string &input : node.input()) {
      if (!defined.count(input))
        return absl::InvalidArgumentError(absl::StrCat(
            "layer '", layer.name, "' (", layer.op, ") reads '", input,
            "', which nothing before it defines"));
      // A 1-d int64 initializer is a shape: only Reshape's second input.
      const bool shapeSlot = layer.op == "Reshape" && layer.inputs.size() == 1;
      if (program.shapeTensors.count(input) && !shapeSlot)
        return absl::InvalidArgumentError(absl::StrCat(
            "layer '", layer.name, "' (", layer.op, ") reads '", input,
            "', an int64 shape, as an f32 tensor"));
      layer.inputs.push_back(input);
    }
    layer.outputs.assign(node.output().begin(), node.output().end());
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.type() == onnx::AttributeProto::INT)
        layer.ints[attr.name()] = {attr.i()};
      else if (attr.type() == onnx::AttributeProto::INTS)
        layer.ints[attr.name()].assign(attr.ints().begin(), attr.ints().end());
      else if (attr.type() == onnx::AttributeProto::FLOAT)
        layer.floats[attr.name()] = attr.f();
      else
        return absl::InvalidArgumentError(absl::StrCat(
            "layer '", layer.name, "' (", layer.op, "): attribute '",
            attr.name(), "' has a type this device does not take"));
    }
    if (absl::Status status = checkLayer(layer); !status.ok())
      return status;
    for (const std::string &output : layer.outputs)
      if (!defined.insert(output).second)
        return absl::InvalidArgumentError(absl::StrCat(
            "layer '", layer.name, "' redefines '", output, "'"));
    program.layerList.push_back(std::move(layer));
  }
  if (graph.output_size() == 0)
    return absl::InvalidArgumentError("the ONNX model has no outputs");
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (program.shapeTensors.count(output.name()))
      return absl::InvalidArgumentError(absl::StrCat(
          "graph output '", output.name(), "' is an int64 shape, not an f32 tensor"));
    auto shape = staticShape(output);
    if (!shape.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("graph output ", shape.status().message()));
    if (!defined.count(output.name()))
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", output.name(), "' is never defined"));
    program.outputPorts.push_back({output.name(), *std::move(shape)});
  }
  return program;
}

absl::StatusOr<std::string>
MdlaProgram::bindWeights(const std::map<std::string, TensorView> &weights) const {
  onnx::ModelProto model;
  model.ParseFromString(modelBytes);
  onnx::GraphProto &graph = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  std::set<std::string> bound;
  for (onnx::ValueInfoProto &input : *graph.mutable_input()) {
    auto it = weights.find(input.name());
    if (it == weights.end()) {
      *inputs.Add() = std::move(input);
      continue;
    }
    auto port = std::find_if(inputPorts.begin(), inputPorts.end(),
                             [&](const Port &p) { return p.name == input.name(); });
    if (port == inputPorts.end() || port->shape != it->second.shape)
      return absl::InvalidArgumentError(absl::StrCat(
          "weight '", input.name(), "' does not have the model's shape"));
    onnx::TensorProto &init = *graph.add_initializer();
    init.set_name(input.name());
    init.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : it->second.shape)
      init.add_dims(dim);
    init.set_raw_data(it->second.data,
                      sizeof(float) * static_cast<size_t>(elementCount(it->second.shape)));
    bound.insert(input.name());
  }
  for (const auto &[name, view] : weights)
    if (!bound.count(name))
      return absl::InvalidArgumentError(
          absl::StrCat("weight '", name, "' is not an input of the model"));
  graph.mutable_input()->Swap(&inputs);
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return absl::InvalidArgumentError(
        "the model with its weights does not serialize (ONNX models stop at 2 GiB)");
  return bytes;
}

} // namespace kiln::agent::mdla
