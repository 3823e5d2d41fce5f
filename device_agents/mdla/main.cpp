//===- main.cpp - kiln-agent-mdla -----------------------------------------===//
//
// This file implements the mdla agent's entry point: the shared agent main
// with an MdlaBackend on Micron's library, or on Kiln's simulated device
// with --simulate.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/mdla/MdlaBackend.h"

#include "absl/strings/str_cat.h"

int main(int argc, char **argv) {
  bool simulate = false;
  std::string library, binCache, numericCheck;
  std::vector<kiln::agent::AgentFlag> flags = {
      {"simulate", "",
       "serve one simulated MDLA: Kiln's 16-bit fixed-point model of the "
       "device, run on the host (its properties say simulated=true); "
       "without it the agent serves the hardware, or no device",
       nullptr, &simulate},
      {"library", "libmicrondla.so",
       "Micron's DLA SDK library: a path, or a name the dynamic loader finds",
       &library},
      {"bin-cache", kiln::agent::defaultCacheDir("mdla") + "/mdla-bin",
       "where models compiled by ie_compile are kept, by the digest of the "
       "model with its weights",
       &binCache},
      {"numeric-check", "on",
       "on: compare every hardware run with an f32 evaluation on the host "
       "(the numeric_error counter); off: do not (simulated runs always do)",
       &numericCheck},
  };
  return kiln::agent::agentMain(
      argc, argv, "mdla",
      [&]() -> absl::StatusOr<std::unique_ptr<kiln::agent::DeviceBackend>> {
        if (numericCheck != "on" && numericCheck != "off")
          return absl::InvalidArgumentError(absl::StrCat(
              "--numeric-check must be on or off, got '", numericCheck, "'"));
        kiln::agent::mdla::MdlaBackendConfig config;
        config.simulate = simulate;
        config.library = library;
        config.binCache = binCache;
        config.numericCheck = numericCheck == "on";
        auto backend = kiln::agent::mdla::MdlaBackend::create(std::move(config));
        if (!backend.ok())
          return backend.status();
        return std::unique_ptr<kiln::agent::DeviceBackend>(*std::move(backend));
      },
      flags);
}
