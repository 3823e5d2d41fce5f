//===- main.cpp - kiln-agent-cpu ------------------------------------------===//
//
// This file implements the cpu agent's entry point: the shared agent main
// with a CpuBackend.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/cpu/CpuBackend.h"

int main(int argc, char **argv) {
  return kiln::agent::agentMain(
      argc, argv, "cpu",
      []() -> absl::StatusOr<std::unique_ptr<kiln::agent::DeviceBackend>> {
        return std::make_unique<kiln::agent::CpuBackend>();
      });
}
