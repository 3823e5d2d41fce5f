//===- CompileWorker.h - compiles in processes of their own ----*- C++ -*-===//
//
// This file declares the CompilerFn kilnd compiles with, and the node
// support check placement uses: each runs in a kiln-compile-worker process with CPU-time, address-space and wall-clock
// limits and a minimal environment, so a compiler crash, runaway or
// out-of-memory fails that one request and kilnd keeps serving.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/compile/CompileSandbox.h"
#include "kiln/server/compile/PlacedCompile.h"
#include "kiln/server/store/CompileCache.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace kiln::server {

struct CompileWorkerSettings {
  /// The kiln-compile-worker binary.
  std::filesystem::path binary;
  /// Where each job gets a private folder (job, result, log, the linker's
  /// temporary files), removed when the job ends.
  std::filesystem::path scratchDir;
  CompileLimits limits;
  /// Testing aid (--debug-compile-fault): "crash:OP" or "oom:OP", a fault
  /// on entering codegen in graphs with OP; empty in production.
  std::string debugFault;
};

/// Runs each compile in a worker process. The compile's own errors pass
/// through unchanged; the worker dying becomes INTERNAL naming the stage (a
/// crash), RESOURCE_EXHAUSTED (memory) or DEADLINE_EXCEEDED (CPU time or
/// wall clock), each naming the limit's flag.
CompilerFn compileInWorkerProcess(CompileWorkerSettings settings);

/// Placement's capability check (kiln::compiler::checkNodeSupport) in a
/// worker process, under the same limits and with the same failure mapping:
/// it imports and lowers every node of a client's graph, so it does not run
/// in kilnd either.
NodeSupportFn checkSupportInWorkerProcess(CompileWorkerSettings settings);

/// Checks that the worker binary is executable and empties the scratch
/// folder (jobs of an earlier kilnd that died). FAILED_PRECONDITION naming
/// --compile-worker when the binary is missing.
absl::Status prepareCompileWorkers(const CompileWorkerSettings &settings);

/// The stage a worker's log says it was in ("" when none).
std::string lastWorkerStage(const std::string &log);

} // namespace kiln::server
