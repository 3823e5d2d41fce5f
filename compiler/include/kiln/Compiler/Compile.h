//===- Compile.h - Kiln's compiler entry point ----------------------------===//
//
// This file declares the one function the daemon and kiln-compile call to turn
// a kiln.v1.Graph into an executable artifact. It includes no MLIR headers, so
// callers build fast.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/v1/compiler.pb.h"
#include "kiln/v1/executable.pb.h"
#include "kiln/v1/graph.pb.h"

#include "absl/status/statusor.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::compiler {

/// LLVM optimisation level used when a request leaves opt_level at 0. Not 3:
/// MLIR has already tiled, unrolled and vectorized the hot loops, and LLVM's
/// O3 unrolling on top of that made an encoder block compile 8x slower (one
/// huge block for the instruction scheduler) with no measured speed-up.
inline constexpr int kDefaultOptLevel = 2;

/// Placement's request, for a graph the target may lack ops for: when the
/// graph does not compile whole for that reason (UNIMPLEMENTED), the same
/// call finds where each node runs and compiles the target segments
/// (compileTargetSegments in SegmentCompile.h), so the caller needs no
/// second compile. Only a compile worker (kiln-compile-worker) acts on it;
/// compileGraph itself ignores it.
struct PlacementRequest {
  /// The largest share of the graph's nodes that may run on the host CPU
  /// (placement.max_fallback_fraction); past it, no segment is compiled.
  double maxFallbackFraction = 1.0;
  /// No segment compile starts later than this after the call began
  /// (0: no limit): the segments left are the caller's to compile, so one
  /// call's many compiles stay inside the worker's limits.
  std::chrono::milliseconds segmentBudget{0};
};

/// What to compile for and how.
struct CompileOptions {
  /// Target name ("cpu").
  std::string target = "cpu";
  /// kiln.v1.CompileOptions as the client sent them.
  v1::CompileOptions options;
  /// When set, the module text after each pipeline stage is recorded.
  bool dumpStages = false;
  /// Testing aid (kilnd --debug-miscompile): ATen ops, as Node.op names them
  /// ("aten.gelu.default"), whose lowering is deliberately wrong: their
  /// floating-point results become r * 1.01 + 0.01 (kiln-debug-miscompile).
  /// Empty in production.
  std::vector<std::string> debugMiscompileOps;
  /// Called as each stage begins ("import", "aten-to-linalg", "codegen",
  /// "translate", "emit"): a compile worker reports where it crashed.
  std::function<void(const char *stage)> onStage;
  /// Set when the CPU may run what the target lacks (see PlacementRequest).
  std::optional<PlacementRequest> placement;
};

/// The module as it looked after one pipeline stage.
struct StageDump {
  std::string stage; // "aten", "linalg", "llvm-dialect", "llvm-ir", "asm"
  std::string text;
};

/// A compiled executable: artifact bytes plus its signature.
struct CompiledExecutable {
  /// The artifact (an ELF shared object for cpu).
  std::string artifact;
  /// Calling signature of the artifact's entry point.
  v1::ExecutableManifest manifest;
  /// Filled when CompileOptions::dumpStages is set.
  std::vector<StageDump> stages;
  /// Per-layer costs of the ATen-level module (kiln/Analysis/OpReport.h).
  v1::OpReport opReport;
};

/// Compiles `graph` for `options.target`. Never crashes on bad input:
/// INVALID_ARGUMENT for malformed graphs, unknown ops or targets (the message
/// names the node and op), INTERNAL when a pipeline stage fails on a valid
/// graph (the message carries MLIR's diagnostics).
absl::StatusOr<CompiledExecutable> compileGraph(const v1::Graph &graph,
                                                const CompileOptions &options);

/// `options` for `target` with the machine they select made concrete and
/// canonical (options.cpu "native" or empty resolved to a CPU name, its
/// feature list reduced to the smallest delta): what the compile key hashes,
/// so equal machines share cache entries and different ones never do.
/// INVALID_ARGUMENT naming the option for an unknown target, CPU or feature,
/// or an option the target does not take.
absl::StatusOr<v1::CompileOptions>
resolveCompileOptions(const std::string &target,
                      const v1::CompileOptions &options);

/// Identifies this compiler build (a hash of the running executable); part
/// of every compile key, so a new compiler never serves an old compiler's
/// executables.
const std::string &compilerBuildId();

/// The build id of a daemon whose compiles run in the `worker` executable
/// (kiln-compile-worker): the hash covers the worker's bytes as well as the
/// running executable's, since the importer and the passes are linked into
/// the worker, not the daemon. compilerBuildId() when the worker cannot be
/// read (the daemon then fails on its first compile).
std::string compilerBuildIdWithWorker(const std::string &worker);

/// Names of the targets this build can compile for.
std::vector<std::string> supportedTargets();

} // namespace kiln::compiler
