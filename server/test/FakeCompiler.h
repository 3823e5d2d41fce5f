//===- FakeCompiler.h - graphs and a counting fake compiler -----*- C++ -*-===//
//
// This file implements test helpers: a small linear-layer graph builder and a
// fake compiler whose manifest mirrors the graph and which counts its calls
// and can be held at a gate.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Compiler/Compile.h"
#include "kiln/server/store/CompileCache.h"

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace kiln::server::testing {

inline v1::TensorType f32(std::initializer_list<int64_t> shape) {
  v1::TensorType type;
  type.set_dtype(v1::DTYPE_F32);
  for (int64_t extent : shape)
    type.add_shape(extent);
  return type;
}

/// y = x @ w: input x[batch, in], parameter w[in, out] with digest `weight`.
inline v1::Graph linearGraph(int64_t batch, int64_t in, int64_t out,
                             const v1::Digest &weight,
                             const std::string &op = "aten.mm.default") {
  v1::Graph graph;
  graph.set_name("linear");
  v1::Value *x = graph.add_inputs();
  x->set_name("x");
  *x->mutable_type() = f32({batch, in});
  v1::Parameter *w = graph.add_parameters();
  w->mutable_value()->set_name("w");
  *w->mutable_value()->mutable_type() = f32({in, out});
  *w->mutable_digest() = weight;
  v1::Node *node = graph.add_nodes();
  node->set_op(op);
  v1::Argument *self = node->add_arguments();
  self->set_name("self");
  self->set_value("x");
  v1::Argument *mat2 = node->add_arguments();
  mat2->set_name("mat2");
  mat2->set_value("w");
  v1::Value *y = node->add_outputs();
  y->set_name("y");
  *y->mutable_type() = f32({batch, out});
  graph.add_outputs("y");
  return graph;
}

/// A compiler that "compiles" by serializing the graph, counts calls, and
/// optionally waits at a gate so tests can hold compiles in flight.
class FakeCompiler {
public:
  CompilerFn function() {
    return [this](const v1::Graph &graph,
                  const compiler::CompileOptions &options)
               -> absl::StatusOr<compiler::CompiledExecutable> {
      calls.fetch_add(1);
      {
        std::unique_lock<std::mutex> lock(mutex);
        opened.wait(lock, [this] { return gateOpen; });
      }
      if (!failWith.ok())
        return failWith;
      compiler::CompiledExecutable compiled;
      compiled.artifact = "FAKE-ELF " + graph.SerializeAsString() +
                          std::to_string(options.options.opt_level());
      v1::ExecutableManifest &manifest = compiled.manifest;
      manifest.set_entry_symbol("kiln_main");
      manifest.set_target(options.target);
      manifest.set_format("elf-shared-object");
      for (const v1::Parameter &parameter : graph.parameters()) {
        v1::ManifestArgument *arg = manifest.add_parameters();
        arg->set_name(parameter.value().name());
        *arg->mutable_type() = parameter.value().type();
      }
      for (const v1::Value &input : graph.inputs()) {
        v1::ManifestArgument *arg = manifest.add_inputs();
        arg->set_name(input.name());
        *arg->mutable_type() = input.type();
      }
      for (const std::string &name : graph.outputs())
        for (const v1::Node &node : graph.nodes())
          for (const v1::Value &value : node.outputs())
            if (value.name() == name) {
              v1::ManifestArgument *arg = manifest.add_outputs();
              arg->set_name(name);
              *arg->mutable_type() = value.type();
            }
      // One report layer per node, so tests can see the report travel; a
      // relu's names what runs it, the others' name nothing.
      for (const v1::Node &node : graph.nodes()) {
        v1::OpReportLayer *layer = compiled.opReport.add_layers();
        layer->set_name(node.outputs_size() ? node.outputs(0).name() : "");
        layer->set_op(node.op());
        layer->set_macs(7);
        if (node.op() == "aten.relu.default")
          layer->set_unit("generated");
      }
      compiled.opReport.mutable_totals()->set_macs(7 * graph.nodes_size());
      if (options.dumpStages) {
        compiled.stages.push_back({"aten", "module " + graph.name()});
        compiled.stages.push_back({"asm", "asm of " + graph.name()});
      }
      if (nondeterministic)
        compiled.artifact += std::to_string(calls.load());
      return compiled;
    };
  }

  void closeGate() {
    std::lock_guard<std::mutex> lock(mutex);
    gateOpen = false;
  }
  void openGate() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      gateOpen = true;
    }
    opened.notify_all();
  }

  std::atomic<int> calls{0};
  absl::Status failWith;
  /// Each call makes a different artifact (a nondeterministic compiler).
  bool nondeterministic = false;

private:
  std::mutex mutex;
  std::condition_variable opened;
  bool gateOpen = true;
};

} // namespace kiln::server::testing
