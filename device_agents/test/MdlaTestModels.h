//===- MdlaTestModels.h - ONNX models for the mdla tests --------*- C++ -*-===//
//
// This file declares small ONNX models built in code, in the form the mdla
// target writes (graph "kiln_main", weights as graph inputs), for the mdla
// backend, driver and model tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::agent::test {

/// A model under construction.
class OnnxBuilder {
public:
  OnnxBuilder();
  void input(const std::string &name, const std::vector<int64_t> &shape);
  void output(const std::string &name, const std::vector<int64_t> &shape);
  void constant(const std::string &name, const std::vector<int64_t> &shape,
                const std::vector<float> &values);
  void shape(const std::string &name, const std::vector<int64_t> &values);
  onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &inputs,
                        const std::string &output);
  static void ints(onnx::NodeProto &node, const std::string &name,
                   const std::vector<int64_t> &values);
  static void integer(onnx::NodeProto &node, const std::string &name, int64_t value);
  std::string bytes() const;

  onnx::ModelProto model;
};

/// out = a + 2 * x over n floats; `a` is the weight (a manifest parameter).
std::string axpyModel(int n);

/// x [1,3,8,8] -> Conv(w [4,3,3,3], b [4], pad 1) -> BatchNormalization
/// (gamma, beta, mean, var [4]) -> Relu -> MaxPool 2 -> Reshape [1,64] ->
/// Gemm(fc [5,64] transposed, fcb [5]) -> Sigmoid -> y [1,5].
std::string convNetModel();

/// The weights of convNetModel, by name, deterministic.
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};
std::vector<NamedTensor> convNetWeights();
/// A deterministic input for convNetModel.
std::vector<float> convNetInput();

} // namespace kiln::agent::test
