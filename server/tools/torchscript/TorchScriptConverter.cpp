//===- TorchScriptConverter.cpp - TorchScript -> kiln.v1.Graph JSON -------===//
//
// This file implements importArchive: it reads a TorchScript archive with
// libtorch, freezes and inlines its forward method, and hands the graph and
// example inputs of the stated types to Converter, which writes the graph
// (protobuf JSON) and the weights.
//
//===----------------------------------------------------------------------===//
#include "TorchScriptConverter.h"

#include "OpPolicy.h"
#include "Converter.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/script.h>

#include <fstream>
#include <map>
#include <sstream>

namespace kiln::torchscript {
namespace {

c10::ScalarType parseDtype(const std::string &s) {
  static const std::map<std::string, c10::ScalarType> names = {
      {"f32", c10::kFloat}, {"f64", c10::kDouble}, {"f16", c10::kHalf},
      {"bf16", c10::kBFloat16}, {"i8", c10::kChar}, {"i16", c10::kShort},
      {"i32", c10::kInt}, {"i64", c10::kLong}, {"u8", c10::kByte},
      {"bool", c10::kBool}};
  auto it = names.find(s);
  if (it == names.end())
    invalid("unknown input dtype '" + s + "'");
  return it->second;
}


at::Tensor exampleInput(const std::string &spec) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos)
    invalid("input type '" + spec + "' is not DTYPE:D0xD1x...");
  c10::ScalarType dtype = parseDtype(spec.substr(0, colon));
  std::vector<int64_t> shape;
  std::string dims = spec.substr(colon + 1);
  std::stringstream stream(dims);
  std::string dim;
  while (!dims.empty() && std::getline(stream, dim, 'x')) {
    try {
      size_t used = 0;
      int64_t d = std::stoll(dim, &used);
      if (used != dim.size() || d < 0)
        throw std::invalid_argument(dim);
      shape.push_back(d);
    } catch (const std::exception &) {
      invalid("input type '" + spec + "' has a bad extent '" + dim + "'");
    }
  }
  auto options = at::TensorOptions().dtype(dtype);
  if (at::isFloatingType(dtype))
    return at::randn(shape, options);
  return at::zeros(shape, options);
}

} // namespace

void importArchive(const std::string &archivePath, const std::string &outDir,
                   const std::vector<std::string> &inputSpecs) {
  std::vector<at::Tensor> examples;
  for (const std::string &spec : inputSpecs)
    examples.push_back(exampleInput(spec));
  at::NoGradGuard noGrad;
  // Nothing of the archive runs before these checks pass.
  checkArchiveLoadsNoCode(archivePath);
  torch::jit::Module module;
  try {
    module = torch::jit::load(archivePath);
  } catch (const std::exception &e) {
    std::string what = e.what();
    invalid("not a TorchScript archive libtorch can load: " +
            what.substr(0, what.find('\n')));
  }
  module.eval();
  if (!module.find_method("forward"))
    invalid("the TorchScript module has no forward method");
  std::string name =
      module.type()->name() ? module.type()->name()->name() : "torchscript";
  {
    // Freezing folds constants (running ops), so the ops are checked on the
    // inlined graph before it.
    std::shared_ptr<torch::jit::Graph> unfrozen =
        module.get_method("forward").graph()->copy();
    torch::jit::Inline(*unfrozen);
    checkOpsAllowed(*unfrozen);
  }
  // Freezing turns weights into constants, folds attribute reads and the
  // branches on them (training, inplace flags) and batch norms into the
  // convolutions before them.
  torch::jit::Module frozen = torch::jit::freeze(module);
  std::shared_ptr<torch::jit::Graph> graph =
      frozen.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  torch::jit::RemoveTensorMutation(graph);
  torch::jit::LowerSimpleTuples(graph);
  torch::jit::EliminateDeadCode(graph);
  Converter converter(outDir);
  std::string json = converter.run(*graph, examples, name);
  std::ofstream file(outDir + "/graph.json");
  file << json;
  if (!file)
    throw std::runtime_error("cannot write graph.json");
}


} // namespace kiln::torchscript
