//===- PlacementGraphs.h - small graphs for placement tests -----*- C++ -*-===//
//
// This file implements a tiny graph builder for the partition and placement
// tests: f32[2, 4] values, unary and binary nodes, named outputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FakeCompiler.h"

#include <initializer_list>
#include <string>

namespace kiln::server::testing {

/// The op the placement tests' target "lacks".
inline constexpr const char *kLackedOp = "aten.cummax.default";

/// Builds graphs of f32[2, 4] values.
class GraphBuilder {
public:
  explicit GraphBuilder(const std::string &name = "g") { graph.set_name(name); }

  GraphBuilder &input(const std::string &name) {
    v1::Value *value = graph.add_inputs();
    value->set_name(name);
    *value->mutable_type() = f32({2, 4});
    return *this;
  }

  GraphBuilder &parameter(const std::string &name, const v1::Digest &digest) {
    v1::Parameter *param = graph.add_parameters();
    param->mutable_value()->set_name(name);
    *param->mutable_value()->mutable_type() = f32({2, 4});
    *param->mutable_digest() = digest;
    return *this;
  }

  /// `out = op(reads...)`, the reads passed as "self", "other", ...
  GraphBuilder &node(const std::string &out, const std::string &op,
                     std::initializer_list<std::string> reads) {
    static const char *kNames[] = {"self", "other", "third"};
    v1::Node *node = graph.add_nodes();
    node->set_op(op);
    int i = 0;
    for (const std::string &read : reads) {
      v1::Argument *arg = node->add_arguments();
      arg->set_name(kNames[i++]);
      arg->set_value(read);
    }
    v1::Value *value = node->add_outputs();
    value->set_name(out);
    *value->mutable_type() = f32({2, 4});
    return *this;
  }

  GraphBuilder &output(const std::string &name) {
    graph.add_outputs(name);
    return *this;
  }

  v1::Graph graph;
};

} // namespace kiln::server::testing
