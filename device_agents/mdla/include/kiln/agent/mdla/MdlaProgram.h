//===- MdlaProgram.h - an mdla artifact (ONNX model), parsed ----*- C++ -*-===//
//
// This file declares MdlaProgram: the ONNX model the mdla target writes,
// parsed and checked once at load: its graph inputs (weights and runtime
// inputs), outputs, constants and layers, each layer an op the MDLA runs
// with the attributes the simulator and the cycle model read. It also binds
// weights into the model as initializers, the form Micron's ie_compile
// takes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::agent::mdla {

/// A dense, row-major f32 tensor (the MDLA's interface type).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Someone else's dense, row-major f32 bytes with their shape.
struct TensorView {
  std::vector<int64_t> shape;
  const float *data = nullptr;
};

int64_t elementCount(const std::vector<int64_t> &shape);

/// The most elements one tensor of an mdla model may have: 2^28 (1 GiB of
/// f32), so that no artifact can make the host allocate without bound.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 28;

/// Whether every dim is in 0..kMaxTensorElements and the product of the
/// non-zero ones is at most kMaxTensorElements (checked without overflow).
bool withinElementLimit(const std::vector<int64_t> &shape);

/// One ONNX node: its op type, names and the attributes Kiln's models use.
struct Layer {
  std::string op;
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, std::vector<int64_t>> ints;
  std::map<std::string, float> floats;

  /// The integer attribute `key`, or `fallback` when absent.
  int64_t intAttr(const std::string &key, int64_t fallback) const;
  /// The integer-list attribute `key`, or `fallback` when absent.
  std::vector<int64_t> intsAttr(const std::string &key,
                                std::vector<int64_t> fallback) const;
  float floatAttr(const std::string &key, float fallback) const;
};

/// A graph input or output: name and static shape.
struct Port {
  std::string name;
  std::vector<int64_t> shape;
};

class MdlaProgram {
public:
  /// Parses and checks serialized ONNX model bytes: opset, f32 ports with
  /// static shapes, every layer an op this device runs with its required
  /// attributes, and every name defined before use. INVALID_ARGUMENT naming
  /// the layer or port otherwise.
  static absl::StatusOr<MdlaProgram> parse(std::string_view onnxBytes);

  /// The ONNX graph's name: the manifest's entry_symbol.
  const std::string &graphName() const { return name; }
  /// Graph inputs without an initializer, in model order.
  const std::vector<Port> &inputs() const { return inputPorts; }
  const std::vector<Port> &outputs() const { return outputPorts; }
  const std::vector<Layer> &layers() const { return layerList; }
  /// Initializers: constants and reshape shapes (int64 data as floats is
  /// never needed; shapes are kept in `shapes`).
  const std::map<std::string, Tensor> &constants() const { return constantTensors; }
  const std::map<std::string, std::vector<int64_t>> &shapes() const {
    return shapeTensors;
  }

  /// The model with `weights` (by graph input name) added as initializers
  /// and removed from the graph inputs: what ie_compile compiles. The
  /// remaining inputs are the runtime inputs, in order. INVALID_ARGUMENT
  /// for a name the model does not have or a shape that differs.
  absl::StatusOr<std::string>
  bindWeights(const std::map<std::string, TensorView> &weights) const;

private:
  std::string name;
  std::string modelBytes;
  std::vector<Port> inputPorts;
  std::vector<Port> outputPorts;
  std::vector<Layer> layerList;
  std::map<std::string, Tensor> constantTensors;
  std::map<std::string, std::vector<int64_t>> shapeTensors;
};

} // namespace kiln::agent::mdla
