//===- Target.h - what Kiln needs to know about a compile target ----------===//
//
// This file declares the Target interface: a target names its triple, CPU
// and features, builds its linalg-to-LLVM pipeline, and turns an LLVM module
// into its artifact format. Adding a target is implementing this interface.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/compiler.pb.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace kiln::compiler {

class Target {
public:
  virtual ~Target() = default;
  /// Name clients use ("cpu").
  virtual std::string name() const = 0;
  /// LLVM target triple of the artifacts.
  virtual std::string triple() const = 0;
  /// LLVM CPU name and feature string code is generated for.
  virtual std::string cpu() const = 0;
  virtual std::string features() const = 0;
  /// Manifest format string ("elf-shared-object").
  virtual std::string artifactFormat() const = 0;
  /// Adds the passes from linalg-on-tensors to the LLVM dialect.
  virtual void buildCodegenPipeline(mlir::OpPassManager &pm,
                                    const v1::CompileOptions &options) const = 0;
  /// Optimises `module` and produces the artifact bytes. When `assembly` is
  /// non-null it also receives the target assembly.
  virtual absl::StatusOr<std::string>
  emitArtifact(llvm::Module &module, const v1::CompileOptions &options,
               std::string *assembly) const = 0;
};

/// The target called `name`, or null.
const Target *lookupTarget(const std::string &name);

/// Names of every registered target.
std::vector<std::string> targetNames();

} // namespace kiln::compiler
