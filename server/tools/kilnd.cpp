//===- kilnd.cpp - the Kiln daemon ----------------------------------------===//
//
// This file implements kilnd's main(): parse flags, then run the daemon with
// the real compiler from KilnCompiler.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler/Compile.h"
#include "kiln/common/HeapPolicy.h"
#include "kiln/common/Logging.h"
#include "kiln/common/Version.h"
#include "kiln/server/daemon/Daemon.h"
#include "kiln/server/daemon/DaemonFlags.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include <sys/resource.h>

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
  if (flags->version) {
    std::printf("kilnd %s (compiler %s)\n", kiln::kVersion,
                kiln::compiler::compilerBuildIdWithWorker(flags->compileWorker).c_str());
    return 0;
  }
  absl::StatusOr<kiln::LogFormat> format =
      kiln::parseLogFormat(flags->logFormat);
  absl::Status logging =
      format.ok() ? kiln::configureLogging("kilnd", flags->logLevel, *format)
                  : format.status();
  if (!logging.ok()) {
    std::fprintf(stderr, "kilnd: %s\n", std::string(logging.message()).c_str());
    return 2;
  }
  // Inline tensors in requests and replies reuse mapped heap memory.
  if (absl::Status heap = kiln::retainLargeBuffers(int64_t{256} << 20);
      !heap.ok())
    spdlog::warn("kilnd: {}; large messages will be mmap'ed per request",
                 std::string(heap.message()));
  // Descriptors in flight to local clients and agents count against the
  // open-file limit: take the hard limit, as servers do.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &files) != 0)
      spdlog::warn("kilnd: cannot raise the open-file limit");
  }
  return kiln::server::runDaemon(*flags,
                                 kiln::compiler::resolveCompileOptions,
                                 kiln::compiler::compilerBuildIdWithWorker(
                                     flags->compileWorker),
                                 kiln::compiler::supportedTargets());
}
