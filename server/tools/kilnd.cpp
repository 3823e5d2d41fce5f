//===- kilnd.cpp - the Kiln daemon ----------------------------------------===//
//
// This file implements kilnd's main(): parse flags, then run the daemon with
// the real compiler from KilnCompiler.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/Compile.h"
#include "kiln/server/Daemon.h"
#include "kiln/server/DaemonFlags.h"

#include <spdlog/spdlog.h>

#include <cstdio>

int main(int argc, char **argv) {
  kiln::server::blockShutdownSignals();
  absl::StatusOr<kiln::server::DaemonFlags> flags =
      kiln::server::parseDaemonFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "kilnd: %s\n",
                 std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(kiln::server::daemonFlagsHelp().c_str(), stdout);
    return 0;
  }
  spdlog::set_level(spdlog::level::from_str(flags->logLevel));
  return kiln::server::runDaemon(*flags, kiln::compiler::compileGraph,
                                 kiln::compiler::compilerBuildId(),
                                 kiln::compiler::supportedTargets());
}
