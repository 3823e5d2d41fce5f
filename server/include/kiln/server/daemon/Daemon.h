//===- Daemon.h - kilnd's lifecycle ----------------------------*- C++ -*-===//
//
// This file declares runDaemon, the whole life of kilnd after flag parsing:
// serve, announce the port, run local agents, and shut down on a signal.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln/server/store/CompileCache.h"
#include "kiln/server/compile/PlacedCompile.h"
#include "kiln/server/daemon/DaemonFlags.h"

#include <string>
#include <vector>

namespace kiln::server {

/// The address local agents dial for a server listening on `listen` and
/// bound to `port` ("0.0.0.0:0" -> "127.0.0.1:<port>").
std::string localDialAddress(const std::string &listen, int port);

/// Blocks SIGTERM and SIGINT in the calling thread (and the threads it later
/// starts) so runDaemon can sigwait() for them. Call first thing in main().
void blockShutdownSignals();

/// Runs kilnd until SIGTERM or SIGINT; returns the process exit code. Every
/// compile, and every per-node support check, runs in a --compile-worker
/// process (CompileWorker.h): kilnd itself never imports a client's graph.
int runDaemon(const DaemonFlags &flags, OptionsResolverFn resolveOptions,
              const std::string &compilerBuildId,
              const std::vector<std::string> &supportedTargets);

} // namespace kiln::server
