//===- MdlaTarget.cpp - the Micron Deep Learning Accelerator target -------===//
//
// This file implements the `mdla` target. Its artifact is not machine code:
// it is an ONNX model of the graph (OnnxEmitter.h), the input Micron's own
// compiler (ie_compile) takes. The kiln-agent-mdla binds the parameters'
// bytes into it as initializers and compiles it on the device's side, once
// per set of weights. Graphs with ops the MDLA lacks are partitioned by the
// placement machinery into MDLA groups and CPU segments.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "OnnxEmitter.h"

#include "kiln/common/Status.h"

#include "absl/strings/str_cat.h"
#include "mlir/IR/BuiltinOps.h"

#include <google/protobuf/text_format.h>

namespace kiln::compiler {
namespace {

class MdlaTarget final : public Target {
public:
  std::string name() const override { return "mdla"; }

  absl::StatusOr<MachineSpec>
  machine(const v1::CompileOptions &options) const override {
    MachineSpec spec;
    spec.triple = "mdla";
    spec.cpu = "mdla";
    spec.artifactFormat = "onnx-model";
    return spec;
  }

  absl::StatusOr<std::string> emitArtifact(llvm::Module &, const MachineSpec &,
                                           int, std::string *) const override {
    return absl::InternalError("target 'mdla' emits ONNX, not machine code");
  }

  bool emitsFromAten() const override { return true; }

  absl::StatusOr<std::string> emitFromAten(mlir::ModuleOp module,
                                           const v1::Graph &graph,
                                           std::string *text) const override {
    ASSIGN_OR_RETURN(onnx::ModelProto model, mdla::emitOnnxModel(module, graph));
    if (text)
      google::protobuf::TextFormat::PrintToString(model, text);
    std::string bytes;
    if (!model.SerializeToString(&bytes))
      return absl::InternalError("the ONNX model did not serialize");
    return bytes;
  }
};

} // namespace

const Target &mdlaTarget() {
  static const MdlaTarget target;
  return target;
}

} // namespace kiln::compiler
