//===- Target.h - what Kiln needs to know about a compile target ----------===//
//
// This file declares the Target interface: from a request's options a target
// derives the machine it generates code for (triple, CPU, features, ABI,
// artifact format), builds its linalg-to-LLVM pipeline, and turns an LLVM
// module into its artifact. Adding a target is implementing this interface
// and listing it in Targets.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/compiler.pb.h"
#include "kiln/v1/graph.pb.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace kiln::compiler {

/// The machine one compile generates code for.
struct MachineSpec {
  /// LLVM target triple of the artifact.
  std::string triple;
  /// LLVM CPU name and feature string.
  std::string cpu;
  std::string features;
  /// The ISA features the code may use ("+avx,+avx2,..."), for the manifest;
  /// empty when `features` already lists exactly those.
  std::string requiredFeatures;
  /// LLVM target ABI name ("lp64d"); empty for the triple's default.
  std::string abi;
  /// Manifest format string ("elf-shared-object").
  std::string artifactFormat;
  /// Position-independent code for a shared object; false for static code
  /// (which on RISC-V also selects the medany code model).
  bool pic = true;
  /// Matmul register tile (rows x columns of accumulators), sized to the
  /// vector register file; 0 leaves the pipeline's default.
  int registerTileM = 0;
  int registerTileN = 0;
  /// Outer parallel loops call kiln_rt_parallel_for, which the artifact's
  /// runtime provides and the loading agent backs with its thread pool.
  bool parallelLoops = false;
  /// Temporary buffers share one arena at offsets planned at compile time
  /// (kiln-plan-buffers): no allocation in the steady state of a call.
  bool planBuffers = false;
  /// Side of the register blocks innermost-dim transposes are done in (one
  /// vector register per row); 0 leaves them to LLVM.
  int transposeTile = 0;
  /// The kernel library the loader provides to the artifact
  /// (compiler/runtime/kiln_rt_kernels.h), which gets the ops it does best:
  /// "onednn", or empty for generated code only.
  std::string kernelLibrary;
  /// With a kernel library: the convolution algorithms its calls may use
  /// ("auto" or "direct", CompileOptions.convolution_algorithm).
  std::string convolutionAlgorithm;
  /// The AI Engine array the acap target plans the library's calls for
  /// (kiln/common/AieArray.h), and the tiles the plan may use (0: all);
  /// empty and 0 for other targets.
  std::string aieArray;
  int aieTiles = 0;
  /// Kernel call sites the loader can hold (acap: the tiles the plan may
  /// use, one kernel per tile); 0: any number.
  int kernelCallLimit = 0;
};

class Target {
public:
  virtual ~Target() = default;
  /// Name clients use ("cpu", "riscv64", "mdla", "acap").
  virtual std::string name() const = 0;
  /// `options` with everything that selects the machine made concrete and
  /// canonical (e.g. "native" resolved to this host's CPU), so that equal
  /// machines give equal options and the compile key can hash them.
  /// INVALID_ARGUMENT naming the option when they are not valid for this
  /// target. By default: options.cpu and options.cpu_features are refused.
  virtual absl::StatusOr<v1::CompileOptions>
  resolveOptions(const v1::CompileOptions &options) const;
  /// The machine `options` ask for, given options resolveOptions returned;
  /// INVALID_ARGUMENT naming the option when they are not valid for this
  /// target.
  virtual absl::StatusOr<MachineSpec>
  machine(const v1::CompileOptions &options) const = 0;
  /// Adds the passes from linalg-on-tensors to the LLVM dialect. By default
  /// the CPU-style pipeline (Pipelines.h) with the machine's register tile
  /// (its own default when the spec leaves the tile at 0); cpu and riscv64
  /// both use it.
  virtual void buildCodegenPipeline(mlir::OpPassManager &pm,
                                    const MachineSpec &machine) const;
  /// Optimises `module` at `optLevel` and produces the artifact bytes. When
  /// `assembly` is non-null it also receives the target assembly.
  virtual absl::StatusOr<std::string>
  emitArtifact(llvm::Module &module, const MachineSpec &machine, int optLevel,
               std::string *assembly) const = 0;

  /// Whether this target makes its artifact straight from the ATen-level
  /// module (emitFromAten) rather than through linalg and LLVM. mdla does:
  /// its artifact is an ONNX model that the device's own compiler takes.
  /// Such a target runs a fixed set of ops, and the capability check asks
  /// its emitter rather than the linalg lowering.
  virtual bool emitsFromAten() const { return false; }
  /// The artifact of `module`, the ATen-level import of `graph`:
  /// UNIMPLEMENTED naming the op for one this target does not run. `text`,
  /// when non-null, receives a readable form of the artifact.
  virtual absl::StatusOr<std::string>
  emitFromAten(mlir::ModuleOp module, const v1::Graph &graph,
               std::string *text) const;
};

/// The `cpu`, `riscv64`, `mdla` and `acap` targets.
const Target &cpuTarget();
const Target &riscv64Target();
const Target &mdlaTarget();
const Target &acapTarget();

/// The target called `name`, or null.
const Target *lookupTarget(const std::string &name);

/// Names of every registered target.
std::vector<std::string> targetNames();

} // namespace kiln::compiler
