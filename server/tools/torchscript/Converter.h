//===- Converter.h - TorchScript graph -> kiln.v1.Graph JSON -----*- C++ -*-===//
//
// Internal to kiln-torchscript-import: the graph walk (Converter.cpp), the
// rewrites of non-core ops (Rewrites.cpp) and the JSON helpers they share.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "TorchScriptConverter.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/ir/ir.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kiln::torchscript {

using torch::jit::Node;
using torch::jit::Value;

/// Throw ImportError: exit 2 (INVALID_ARGUMENT) or 3 (UNIMPLEMENTED).
[[noreturn]] void invalid(const std::string &message);
[[noreturn]] void unsupported(const std::string &message);
/// "TorchScript node aten::linear (value %9)", for error messages.
std::string describe(const Node *node);

/// Pieces of the protobuf JSON mapping of kiln.v1 messages.
std::string jsonString(const std::string &s);
std::string jsonDouble(double d);
/// The kiln.v1.DType name of a scalar type, or null when Kiln lacks it.
const char *dtypeName(c10::ScalarType t);
/// A TensorType; `what` names the value in the error for a bad dtype.
std::string typeJson(const at::Tensor &t, const std::string &what);
/// Attributes.
std::string intsJson(c10::IntArrayRef values);
std::string boolJson(bool b);
std::string intJson(int64_t i);
std::string floatJson(double f);

/// Converts one frozen, inlined forward graph, evaluating it as it goes.
class Converter {
public:
  explicit Converter(std::string outDir) : outDir(std::move(outDir)) {}

  std::string run(torch::jit::Graph &graph,
                  const std::vector<at::Tensor> &examples,
                  const std::string &name);

private:
  // One op in the Kiln graph being written.
  struct Emitted {
    std::string op;
    std::vector<std::string> arguments; // JSON objects
    std::vector<std::string> outputs;   // JSON objects
  };

  void convertNode(Node *node);
  void convertIf(Node *node);
  void markStatic(Node *node);
  void evaluate(Node *node);
  std::string tensorName(Value *v, Node *user);
  std::string freshName(const std::string &base);
  std::string attributeJson(const c10::IValue &iv, const c10::Argument &arg,
                            Node *node);
  void emitGeneric(Node *node, const std::string &op);
  void emit(const std::string &op, std::vector<std::string> arguments,
            const std::vector<std::pair<std::string, at::Tensor>> &outputs);
  void addParameter(Value *v, const at::Tensor &t);
  static std::string tensorArg(const std::string &name, const std::string &v) {
    return "{\"name\":" + jsonString(name) + ",\"value\":" + jsonString(v) + "}";
  }
  static std::string attrArg(const std::string &name, const std::string &attr) {
    return "{\"name\":" + jsonString(name) + ",\"attribute\":" + attr + "}";
  }
  at::Tensor tensorOf(Value *v) { return values.at(v).toTensor(); }

  // Rewrites of non-core ops; each returns false when it does not apply.
  bool rewriteLinear(Node *node);
  bool rewriteConvolution(Node *node);
  bool rewriteBatchNorm(Node *node);
  bool rewriteLayerNorm(Node *node);
  bool rewriteMatmul(Node *node);
  std::string viewAs(const std::string &name, const at::Tensor &shaped,
                     Node *node);

  std::string outDir;
  std::unordered_map<Value *, c10::IValue> values;
  std::unordered_map<Value *, std::string> names;
  std::unordered_map<Value *, std::vector<std::string>> tensorLists;
  // Non-tensor values that depend on shapes and constants only, never on
  // tensor data: an if on one of them is resolved here.
  std::unordered_set<Value *> staticValues;
  std::vector<std::string> inputs, parameters, nodes;
  int counter = 0;
};

} // namespace kiln::torchscript
