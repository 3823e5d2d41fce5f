//===- main.cpp - kiln-agent-null -----------------------------------------===//
//
// This file implements the skeleton agent's entry point: the shared agent
// main with a NullBackend. A real kind adds its flags (AgentFlag) here.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/null/NullBackend.h"

int main(int argc, char **argv) {
  std::vector<kiln::agent::AgentFlag> flags;
  return kiln::agent::agentMain(
      argc, argv, "null",
      []() -> absl::StatusOr<std::unique_ptr<kiln::agent::DeviceBackend>> {
        auto backend = kiln::agent::null::NullBackend::create({});
        if (!backend.ok())
          return backend.status();
        return std::unique_ptr<kiln::agent::DeviceBackend>(*std::move(backend));
      },
      flags);
}
