//===- main.cpp - kiln-agent-qemu -----------------------------------------===//
//
// This file implements the qemu agent's entry point: the shared agent main
// with a QemuBackend, configured by flags (or KILN_AGENT_* variables).
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/qemu/QemuBackend.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include <filesystem>

namespace {

/// Where the runner and plugin are installed: beside this binary.
std::string besideSelf(const char *name) {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path(name) : self.parent_path() / name)
      .string();
}

} // namespace

int main(int argc, char **argv) {
  std::string devices, vlen, qemu, sysroot, runner, plugin, runTimeout;
  std::vector<kiln::agent::AgentFlag> flags = {
      {"devices", "1", "simulated devices (one qemu process each)", &devices},
      {"vlen", "128",
       "vector register length in bits (0: rv64gc without the V extension)",
       &vlen},
      {"qemu", "qemu-riscv64", "the QEMU user-mode emulator", &qemu},
      {"sysroot", "/usr/riscv64-linux-gnu",
       "riscv64 Linux sysroot (qemu -L): the runner's libc and libm", &sysroot},
      {"runner", besideSelf("kiln-riscv64-runner"),
       "the riscv64 guest runner", &runner},
      {"plugin", besideSelf("libkiln-qemu-insn.so"),
       "the TCG plugin that counts instructions", &plugin},
      {"run-timeout", "300",
       "seconds one call may run before the device is restarted", &runTimeout},
  };
  return kiln::agent::agentMain(
      argc, argv, "riscv64",
      [&]() -> absl::StatusOr<std::unique_ptr<kiln::agent::DeviceBackend>> {
        kiln::agent::qemu::QemuBackendConfig config;
        int seconds = 0;
        if (!absl::SimpleAtoi(devices, &config.devices))
          return absl::InvalidArgumentError(
              absl::StrCat("--devices: '", devices, "' is not a number"));
        if (!absl::SimpleAtoi(vlen, &config.vlen))
          return absl::InvalidArgumentError(
              absl::StrCat("--vlen: '", vlen, "' is not a number"));
        if (!absl::SimpleAtoi(runTimeout, &seconds) || seconds <= 0)
          return absl::InvalidArgumentError(absl::StrCat(
              "--run-timeout: '", runTimeout, "' is not a positive number"));
        config.runner.qemu = qemu;
        config.runner.sysroot = sysroot;
        config.runner.runner = runner;
        config.runner.plugin = plugin;
        config.runner.runTimeout = std::chrono::seconds(seconds);
        auto backend = kiln::agent::qemu::QemuBackend::create(config);
        if (!backend.ok())
          return backend.status();
        return std::unique_ptr<kiln::agent::DeviceBackend>(std::move(*backend));
      },
      flags);
}
