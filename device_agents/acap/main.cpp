//===- main.cpp - kiln-agent-acap -----------------------------------------===//
//
// This file implements the acap agent's entry point: the shared agent main
// with an AcapBackend on the Versal boards XRT finds, or on Kiln's
// simulated AI Engine array with --simulate.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/acap/AcapBackend.h"

#include "absl/strings/str_cat.h"


int main(int argc, char **argv) {
  bool simulate = false;
  std::string array(kiln::aie::kDefaultArray), threads = "auto", numericCheck = "on";
  std::vector<kiln::agent::AgentFlag> flags = {
      {"simulate", "",
       "serve one simulated AI Engine array: Kiln's functional model of the "
       "array on host threads, with the executable's host code run on this "
       "machine (its properties say simulated=true); without it the agent "
       "serves the boards XRT finds, or no device",
       nullptr, &simulate},
      {"array", array, "the simulated array (aie-ml-304)", &array},
      {"sim-threads", threads,
       "host threads standing in for the array's tiles: a number, or auto "
       "(the CPUs this process may run on: its affinity mask)",
       &threads},
      {"numeric-check", numericCheck,
       "on: run every call a second time in f32 for the numeric_error "
       "counter; off: do not",
       &numericCheck},
  };
  return kiln::agent::agentMain(
      argc, argv, "acap",
      [&]() -> absl::StatusOr<std::unique_ptr<kiln::agent::DeviceBackend>> {
        if (numericCheck != "on" && numericCheck != "off")
          return absl::InvalidArgumentError(absl::StrCat(
              "--numeric-check must be on or off, got '", numericCheck, "'"));
        kiln::agent::acap::AcapBackendConfig config;
        config.simulate = simulate;
        config.array = array;
        config.numericCheck = numericCheck == "on";
        absl::StatusOr<int> count = kiln::agent::parseThreadCount(threads);
        if (!count.ok())
          return absl::InvalidArgumentError(
              absl::StrCat("--sim-threads: ", count.status().message()));
        config.threads = *count;
        auto backend = kiln::agent::acap::AcapBackend::create(std::move(config));
        if (!backend.ok())
          return backend.status();
        return std::unique_ptr<kiln::agent::DeviceBackend>(*std::move(backend));
      },
      flags);
}
