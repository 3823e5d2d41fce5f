//===- OpPolicy.h - what a TorchScript archive may run ----------*- C++ -*-===//
//
// This file declares the checks kiln-torchscript-import makes before libtorch
// executes anything of an archive: no class in it defines __setstate__ (code
// torch::jit::load would run while loading), and every op of its inlined
// forward graph is an aten or prim op that computes on tensors, not one that
// reads or writes files, talks to the network or calls code the importer
// cannot see.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <torch/csrc/jit/ir/ir.h>

#include <string>

namespace kiln::torchscript {

/// Refuses (INVALID_ARGUMENT) an archive whose code defines __setstate__.
void checkArchiveLoadsNoCode(const std::string &archivePath);

/// Refuses (INVALID_ARGUMENT, naming the op and why) the first op of
/// `graph`, blocks included, outside the aten and prim namespaces or on the
/// list of side-effecting ops.
void checkOpsAllowed(const torch::jit::Graph &graph);

} // namespace kiln::torchscript
