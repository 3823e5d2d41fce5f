//===- main.cpp - kiln-agent-cpu ------------------------------------------===//
//
// This file implements the cpu agent's entry point: the shared agent main
// with a CpuBackend for the host's CPU, or the one --cpu names.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/cpu/CpuBackend.h"

int main(int argc, char **argv) {
  std::string cpu;
  std::vector<kiln::agent::AgentFlag> flags = {
      {"cpu", "native",
       "the CPU this agent reports and runs code for: 'native' (this host's), "
       "or an LLVM CPU name the host can run (e.g. x86-64-v2) to pin a pool "
       "of agents to a baseline",
       &cpu},
  };
  return kiln::agent::agentMain(
      argc, argv, "cpu",
      [&]() -> absl::StatusOr<std::unique_ptr<kiln::agent::DeviceBackend>> {
        absl::StatusOr<kiln::CpuModel> model =
            kiln::agent::CpuBackend::advertisedCpu(cpu);
        if (!model.ok())
          return model.status();
        return std::make_unique<kiln::agent::CpuBackend>(*std::move(model));
      },
      flags);
}
