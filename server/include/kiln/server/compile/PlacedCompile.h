//===- PlacedCompile.h - compile with a placement policy --------*- C++ -*-===//
//
// This file declares compilePlaced(): the compile behind kiln.v1.Compiler.
// A graph the target compiles whole is one cached executable; otherwise the
// placement policy decides between an UNIMPLEMENTED error that names every
// op the target lacks and a partition into target executables and CPU runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/Compiler/NodeSupport.h"
#include "kiln/server/store/CompileCache.h"
#include "kiln/v1/compiler.pb.h"
#include "kiln/v1/placement.pb.h"
#include "kiln/worker/compile_job.pb.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::server {

/// The capability check; kiln::compiler::checkNodeSupport in production.
/// Null when the daemon's compiler cannot check nodes (then nothing falls
/// back).
using NodeSupportFn =
    std::function<absl::StatusOr<std::vector<compiler::NodeSupport>>(
        const v1::Graph &, const compiler::CompileOptions &)>;

/// What a compile produced, whole or partitioned.
struct PlacedOutcome {
  /// Whether some nodes run on the CPU (then `whole` is unset).
  bool partitioned = false;
  /// The executable, when the graph compiled whole.
  CompileOutcome whole;
  /// Where every node runs; target segments carry their executables.
  v1::PlacementReport placement;
  /// The whole graph's op report, or the target segments' layers merged.
  v1::OpReport opReport;
  /// Some executable came from the shared tier (--remote-cache).
  bool remoteHit = false;
  /// Nothing was compiled: every executable came from the cache.
  bool cacheHit = false;
  /// Hex compile key of the whole graph.
  std::string key;
  /// queue_us and compile_us, summed over the executables compiled.
  v1::Timings timings;
};

/// The status of a compile that failed with UNIMPLEMENTED can carry what
/// the compiler found about placement in the same call (kiln-compile-worker
/// does): `node_support`, and under a CPU fallback policy (CompileHints::
/// placement) the target segments it compiled, `segments`, in a
/// worker::CompileJobResult. compilePlaced then needs no second call:
/// neither a capability check nor a compile per segment. `attachPlacement`
/// adds it to `status`; `carriedPlacement` reads it back (nullopt when the
/// status carries none). `attachNodeSupport` attaches node support alone.
void attachPlacement(absl::Status &status,
                     const worker::CompileJobResult &carried);
std::optional<worker::CompileJobResult>
carriedPlacement(const absl::Status &status);
void attachNodeSupport(absl::Status &status,
                       const std::vector<compiler::NodeSupport> &support);

/// A worker that died (crash, memory, CPU time or wall clock) while it
/// compiled a graph's segments, after the graph itself had failed for ops
/// the target lacks: the segments shared one process's limits, and
/// compilePlaced asks again without placement, one segment per call.
void markDiedCompilingSegments(absl::Status &status);
bool diedCompilingSegments(const absl::Status &status);

/// The node support in a worker's result, one entry per node.
std::vector<compiler::NodeSupport>
nodeSupportFrom(const worker::CompileJobResult &result);

/// The executable in a worker's result (a whole graph's, or a segment's).
compiler::CompiledExecutable executableFrom(worker::CompileJobResult result);

/// INVALID_ARGUMENT naming the field when `policy` is out of range: an
/// unknown fallback value, or a max_fallback_fraction outside 0..1 or given
/// without FALLBACK_POLICY_CPU.
absl::Status validatePlacementPolicy(const v1::PlacementPolicy &policy);

/// Compiles `graph` for `target` through `cache`. When the whole graph fails
/// with UNIMPLEMENTED, what the compile's status carries (attachPlacement)
/// or else `nodeSupport` finds the nodes the target lacks; under
/// FALLBACK_POLICY_ERROR, or past max_fallback_fraction, the answer is
/// UNIMPLEMENTED listing them with their reasons; under FALLBACK_POLICY_CPU
/// the graph is partitioned (compiler::partitionGraph) and each target
/// segment cached as a graph of its own: the executable the compile carried
/// for it, or else a compile of its own. What the check found is stored
/// under the graph's compile key (CompileCache::storePlacement), so a
/// repeat, under either policy, neither compiles the whole graph again nor
/// checks its nodes.
absl::StatusOr<PlacedOutcome>
compilePlaced(CompileCache &cache, const NodeSupportFn &nodeSupport,
              const v1::Graph &graph, const std::string &target,
              const v1::CompileOptions &options,
              const v1::PlacementPolicy &policy);

} // namespace kiln::server
