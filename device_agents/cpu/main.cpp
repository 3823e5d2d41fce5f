//===- main.cpp - kiln-agent-cpu ------------------------------------------===//
//
// This file implements the cpu agent's entry point: the shared agent main
// with a CpuBackend for the host's CPU, or the one --cpu names.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/AgentMain.h"
#include "kiln/agent/cpu/CpuBackend.h"
#include "kiln/common/HeapPolicy.h"
#include "kiln/common/ByteSize.h"

#include "absl/strings/str_cat.h"

int main(int argc, char **argv) {
  std::string cpu, retain, computeThreads;
  std::vector<kiln::agent::AgentFlag> flags = {
      {"heap-retain-bytes", "1GiB",
       "freed memory the agent keeps mapped for the next call (executables "
       "malloc and free their intermediate buffers on every call); 0 returns "
       "it to the system at once",
       &retain},
      {"compute-threads", "auto",
       "threads the code of one task runs its parallel loops on (the task's "
       "own thread included); auto: the CPUs this process may run on (its "
       "affinity mask)",
       &computeThreads},
      {"cpu", "native",
       "the CPU this agent reports and runs code for: 'native' (this host's), "
       "or an LLVM CPU name the host can run (e.g. x86-64-v2) to pin a pool "
       "of agents to a baseline",
       &cpu},
  };
  return kiln::agent::agentMain(
      argc, argv, "cpu",
      [&]() -> absl::StatusOr<std::unique_ptr<kiln::agent::DeviceBackend>> {
        absl::StatusOr<int64_t> bytes = kiln::parseByteSize(retain);
        if (!bytes.ok())
          return absl::InvalidArgumentError(absl::StrCat(
              "--heap-retain-bytes: ", bytes.status().message()));
        if (absl::Status heap = kiln::retainFreedMemory(*bytes);
            !heap.ok())
          return heap;
        absl::StatusOr<kiln::CpuModel> model =
            kiln::agent::CpuBackend::advertisedCpu(cpu);
        if (!model.ok())
          return model.status();
        absl::StatusOr<int> threads =
            kiln::agent::parseThreadCount(computeThreads);
        if (!threads.ok())
          return absl::InvalidArgumentError(absl::StrCat(
              "--compute-threads: ", threads.status().message()));
        return std::make_unique<kiln::agent::CpuBackend>(*std::move(model),
                                                         *threads);
      },
      flags);
}
