//===- TorchScriptConverter.h - TorchScript -> kiln.v1.Graph JSON -*- C++ -*-===//
//
// The conversion behind kiln-torchscript-import. Compiled with the torch
// wheel's pre-C++11 ABI: nothing here may include Kiln's protobuf headers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace kiln::torchscript {

/// A conversion failure: exit code 2 (invalid input: INVALID_ARGUMENT) or 3
/// (unsupported construct: UNIMPLEMENTED), with a message naming the node.
struct ImportError {
  int code;
  std::string message;
};

/// Loads the TorchScript archive at `archivePath`, freezes it in eval mode,
/// converts its forward method for inputs of the types in `inputSpecs`
/// ("f32:2x3x16x16"; "f32:" is a scalar) and writes `outDir`/graph.json (a
/// kiln.v1.Graph in the protobuf JSON mapping, parameter digests left out)
/// and `outDir`/param_<i>.bin (parameter i's bytes, dense row-major). Throws
/// ImportError; other exceptions are internal failures.
void importArchive(const std::string &archivePath, const std::string &outDir,
                   const std::vector<std::string> &inputSpecs);

} // namespace kiln::torchscript
