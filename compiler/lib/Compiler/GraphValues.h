//===- GraphValues.h - the values of a kiln.v1.Graph by name ----*- C++ -*-===//
//
// This file implements valueTypes(): every value a graph defines (parameters,
// inputs, node outputs) and its declared type, for the manifest and for the
// per-node capability check.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/graph.pb.h"

#include <string>
#include <unordered_map>

namespace kiln::compiler {

/// Name -> declared type of every value in `graph` (pointers into it).
using ValueTypes = std::unordered_map<std::string, const v1::TensorType *>;

inline ValueTypes valueTypes(const v1::Graph &graph) {
  ValueTypes types;
  for (const v1::Parameter &param : graph.parameters())
    types[param.value().name()] = &param.value().type();
  for (const v1::Value &input : graph.inputs())
    types[input.name()] = &input.type();
  for (const v1::Node &node : graph.nodes())
    for (const v1::Value &output : node.outputs())
      types[output.name()] = &output.type();
  return types;
}

} // namespace kiln::compiler
