//===- CompilerService.h - kiln.v1.Compiler ---------------------*- C++ -*-===//
//
// This file declares CompilerService: request validation in front of the
// CompileCache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/api/AccessPolicy.h"
#include "kiln/server/store/CompileCache.h"
#include "kiln/server/compile/CompileSandbox.h"
#include "kiln/server/store/ContentStore.h"
#include "kiln/server/sched/DeviceRegistry.h"
#include "kiln/server/api/DrainGate.h"
#include "kiln/server/compile/PlacedCompile.h"
#include "kiln/server/api/ServerMetrics.h"
#include "kiln/v1/compiler.grpc.pb.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::server {

/// `compiler` with CompileOptions::debugMiscompileOps set to `ops` on every
/// call (kilnd --debug-miscompile, a testing aid); `compiler` itself when
/// `ops` is empty.
CompilerFn withDebugMiscompile(CompilerFn compiler,
                               std::vector<std::string> ops);

/// The compiler build id kilnd keys compiles under: `buildId`, plus the
/// miscompiled ops when there are any, so executables built with a
/// deliberately wrong lowering never share cache entries with real ones.
std::string debugMiscompileBuildId(const std::string &buildId,
                                   const std::vector<std::string> &ops);

/// Serves kiln.v1.Compiler.Compile. The request is parsed here (streamed
/// unary) so that unparsable bytes get INVALID_ARGUMENT with a message.
class CompilerService final
    : public v1::Compiler::WithStreamedUnaryMethod_Compile<v1::Compiler::Service> {
public:
  /// `supportedTargets` is what the linked compiler can build for;
  /// `nodeSupport` finds the ops a target lacks (null: nothing falls back).
  /// Requests enter through `gate` (UNAVAILABLE once kilnd drains); each is
  /// counted and timed in `metrics`. A cpu compile that names no CPU targets
  /// the one `registry`'s devices of the target kind share; `resolveOptions`
  /// then makes the options canonical before the compile key is taken.
  CompilerService(ContentStore &store, CompileCache &cache,
                  NodeSupportFn nodeSupport, OptionsResolverFn resolveOptions,
                  const DeviceRegistry &registry,
                  std::vector<std::string> supportedTargets, DrainGate &gate,
                  ServerMetrics &metrics, const AccessPolicy &access,
                  CompileLimits importLimits = {});

  grpc::Status StreamedCompile(
      grpc::ServerContext *context,
      grpc::ServerUnaryStreamer<v1::CompileRequest, v1::CompileResponse> *stream)
      override;

  /// Compile for a parsed request.
  grpc::Status compile(grpc::ServerContext *context,
                       const v1::CompileRequest *request,
                       v1::CompileResponse *response);

  /// The checks Compile makes before compiling: a supported target, an
  /// opt_level in 0..3, a valid placement policy, and every parameter
  /// digest valid and in the store.
  absl::Status validate(const v1::CompileRequest &request) const;

  /// The options a request compiles with: a cpu compile that names no CPU
  /// gets the devices' shared CPU, then everything is resolved and made
  /// canonical. INVALID_ARGUMENT naming a bad option.
  absl::StatusOr<v1::CompileOptions>
  effectiveOptions(const v1::CompileRequest &request) const;

private:
  ContentStore &store;
  CompileCache &cache;
  NodeSupportFn nodeSupport;
  OptionsResolverFn resolveOptions;
  const DeviceRegistry &registry;
  std::vector<std::string> targets;
  DrainGate &gate;
  ServerMetrics &metrics;
  const AccessPolicy &access;
  /// The sandbox TorchScript archives are converted in.
  CompileLimits importLimits;
};

} // namespace kiln::server
