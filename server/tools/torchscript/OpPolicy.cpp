//===- OpPolicy.cpp - what a TorchScript archive may run ------------------===//
//
// This file implements the archive and op checks: a scan of the archive's
// code records with libtorch's own zip reader, and a walk over the graph.
//
//===----------------------------------------------------------------------===//
#include "OpPolicy.h"

#include "Converter.h"

#include <caffe2/serialize/inline_container.h>

#include <string_view>
#include <unordered_map>

namespace kiln::torchscript {
namespace {

/// Ops of the allowed namespaces that must not run, and why.
const std::unordered_map<std::string, std::string> &deniedOps() {
  static const std::unordered_map<std::string, std::string> denied = {
      {"aten::from_file", "it reads a file"},
      {"aten::save", "it writes a file"},
      {"aten::rpc_async", "it talks to the network (torch.distributed.rpc)"},
      {"aten::rpc_sync", "it talks to the network (torch.distributed.rpc)"},
      {"aten::rpc_remote", "it talks to the network (torch.distributed.rpc)"},
      {"prim::rpc_async", "it talks to the network (torch.distributed.rpc)"},
      {"prim::fork", "it starts concurrent work"},
      {"aten::fork", "it starts concurrent work"},
      {"aten::wait", "it waits on concurrent work"},
      {"prim::PythonOp", "it calls Python"},
      {"prim::CallFunction", "it calls a function the importer cannot inspect"},
      {"prim::CallMethod",
       "it calls a method of an object that is not a module (a custom class "
       "or an interface), which the importer cannot inspect"},
  };
  return denied;
}

void checkBlock(const torch::jit::Block *block) {
  for (const torch::jit::Node *node : block->nodes()) {
    c10::Symbol kind = node->kind();
    std::string name = kind.toQualString();
    std::string space = kind.ns().toUnqualString();
    if (space != "aten" && space != "prim")
      invalid("TorchScript op '" + name + "' is not allowed: Kiln runs only "
              "aten and prim ops from an archive (not the '" + space +
              "' namespace)");
    auto denied = deniedOps().find(name);
    if (denied != deniedOps().end())
      invalid("TorchScript op '" + name + "' is not allowed: " +
              denied->second);
    for (const torch::jit::Block *inner : node->blocks())
      checkBlock(inner);
  }
}

} // namespace

void checkArchiveLoadsNoCode(const std::string &archivePath) {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(archivePath);
  } catch (const std::exception &e) {
    std::string what = e.what();
    invalid("not a TorchScript archive libtorch can load: " +
            what.substr(0, what.find('\n')));
  }
  for (const std::string &record : reader->getAllRecords()) {
    if (record.rfind("code/", 0) != 0 ||
        record.size() < 3 || record.compare(record.size() - 3, 3, ".py") != 0)
      continue;
    auto [data, size] = reader->getRecord(record);
    std::string_view code(static_cast<const char *>(data.get()), size);
    if (code.find("def __setstate__") != std::string_view::npos)
      invalid("the archive defines __setstate__ (in " + record +
              "), which libtorch would run while loading it; Kiln converts "
              "only archives whose loading runs no code of theirs");
  }
}

void checkOpsAllowed(const torch::jit::Graph &graph) {
  checkBlock(graph.block());
}

} // namespace kiln::torchscript
