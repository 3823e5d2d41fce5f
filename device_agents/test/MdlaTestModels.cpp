//===- MdlaTestModels.cpp - ONNX models for the mdla tests ----------------===//
#include "MdlaTestModels.h"

#include <cmath>

namespace kiln::agent::test {
namespace {

void describe(onnx::ValueInfoProto &info, const std::string &name,
              const std::vector<int64_t> &shape) {
  info.set_name(name);
  auto &tensor = *info.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : shape)
    tensor.mutable_shape()->add_dim()->set_dim_value(dim);
}

std::vector<float> pattern(size_t count, float scale, float offset) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = offset + scale * std::sin(0.37f * static_cast<float>(i) + 0.11f);
  return values;
}

} // namespace

OnnxBuilder::OnnxBuilder() {
  model.set_ir_version(8);
  auto &opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(13);
  model.mutable_graph()->set_name("kiln_main");
}

void OnnxBuilder::input(const std::string &name, const std::vector<int64_t> &shape) {
  describe(*model.mutable_graph()->add_input(), name, shape);
}

void OnnxBuilder::output(const std::string &name, const std::vector<int64_t> &shape) {
  describe(*model.mutable_graph()->add_output(), name, shape);
}

void OnnxBuilder::constant(const std::string &name, const std::vector<int64_t> &shape,
                           const std::vector<float> &values) {
  auto &tensor = *model.mutable_graph()->add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : shape)
    tensor.add_dims(dim);
  for (float v : values)
    tensor.add_float_data(v);
}

void OnnxBuilder::shape(const std::string &name, const std::vector<int64_t> &values) {
  auto &tensor = *model.mutable_graph()->add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values)
    tensor.add_int64_data(v);
}

onnx::NodeProto &OnnxBuilder::node(const std::string &op,
                                   const std::vector<std::string> &inputs,
                                   const std::string &output) {
  auto &node = *model.mutable_graph()->add_node();
  node.set_op_type(op);
  node.set_name(output);
  for (const std::string &input : inputs)
    node.add_input(input);
  node.add_output(output);
  return node;
}

void OnnxBuilder::ints(onnx::NodeProto &node, const std::string &name,
                       const std::vector<int64_t> &values) {
  auto &attr = *node.add_attribute();
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    attr.add_ints(v);
}

void OnnxBuilder::integer(onnx::NodeProto &node, const std::string &name, int64_t value) {
  auto &attr = *node.add_attribute();
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
}

std::string OnnxBuilder::bytes() const {
  std::string out;
  model.SerializeToString(&out);
  return out;
}

std::string axpyModel(int n) {
  OnnxBuilder b;
  b.input("a", {n});
  b.input("x", {n});
  b.constant("two", {}, {2.0f});
  b.node("Mul", {"x", "two"}, "twice");
  b.node("Add", {"a", "twice"}, "out");
  b.output("out", {n});
  return b.bytes();
}

std::vector<NamedTensor> convNetWeights() {
  return {
      {"w", {4, 3, 3, 3}, pattern(108, 0.3f, 0.0f)},
      {"b", {4}, pattern(4, 0.1f, 0.0f)},
      {"gamma", {4}, pattern(4, 0.2f, 1.0f)},
      {"beta", {4}, pattern(4, 0.1f, 0.05f)},
      {"mean", {4}, pattern(4, 0.1f, 0.0f)},
      {"var", {4}, pattern(4, 0.2f, 0.8f)},
      {"fc", {5, 64}, pattern(320, 0.15f, 0.0f)},
      {"fcb", {5}, pattern(5, 0.1f, 0.0f)},
  };
}

std::vector<float> convNetInput() { return pattern(192, 1.5f, 0.2f); }

std::string convNetModel() {
  OnnxBuilder b;
  for (const NamedTensor &weight : convNetWeights())
    b.input(weight.name, weight.shape);
  b.input("x", {1, 3, 8, 8});
  auto &conv = b.node("Conv", {"x", "w", "b"}, "conv");
  OnnxBuilder::ints(conv, "pads", {1, 1, 1, 1});
  b.node("BatchNormalization", {"conv", "gamma", "beta", "mean", "var"}, "bn");
  b.node("Relu", {"bn"}, "relu");
  auto &pool = b.node("MaxPool", {"relu"}, "pool");
  OnnxBuilder::ints(pool, "kernel_shape", {2, 2});
  OnnxBuilder::ints(pool, "strides", {2, 2});
  b.shape("flat_shape", {1, 64});
  b.node("Reshape", {"pool", "flat_shape"}, "flat");
  auto &gemm = b.node("Gemm", {"flat", "fc", "fcb"}, "fc_out");
  OnnxBuilder::integer(gemm, "transB", 1);
  b.node("Sigmoid", {"fc_out"}, "y");
  b.output("y", {1, 5});
  return b.bytes();
}

} // namespace kiln::agent::test
