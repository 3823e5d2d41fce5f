//===- OnnxEmitter.h - the ATen-level module as an ONNX model ---*- C++ -*-===//
//
// This file declares emitOnnxModel(): the translation of an imported graph's
// ATen-level module into the ONNX model that Micron's ie_compile takes. It
// covers the ops the MDLA runs (the seed's torchMDLA fusion groups); any
// other op is UNIMPLEMENTED, naming it, so placement puts it on the CPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/graph.pb.h"

#include "absl/status/statusor.h"

#include <onnx/onnx_pb.h>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln::compiler::mdla {

/// The ONNX opset the models use (Debian 12's onnx 1.12 checks up to 17).
inline constexpr int kOnnxOpset = 13;
/// The ONNX IR version the models declare (onnx 1.12 reads up to 8).
inline constexpr int kOnnxIrVersion = 8;

/// The ops the mdla target runs, as one line for messages and docs.
inline constexpr const char *kMdlaOps =
    "convolution (1-d, 2-d), linear (mm, addmm, a 2-d transpose), "
    "batch norm (inference), cat, add/sub/mul, relu/tanh/sigmoid, "
    "max/avg pooling (1-d, 2-d), global average pooling (mean over H, W), "
    "view; f32 tensors only";

/// `module` (the ATen-level import of `graph`, static shapes) as an ONNX
/// model. Graph inputs are the manifest's parameters and then its inputs
/// that the graph reads, by their graph names; graph outputs are named after graph.outputs. The
/// parameters stay graph inputs: their bytes are bound on the device, never
/// in the compile. UNIMPLEMENTED naming the op for one the MDLA does not run.
absl::StatusOr<onnx::ModelProto> emitOnnxModel(mlir::ModuleOp module,
                                               const v1::Graph &graph);

} // namespace kiln::compiler::mdla
