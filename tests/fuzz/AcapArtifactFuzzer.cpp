//===- AcapArtifactFuzzer.cpp - fuzz the acap agent's artifact reader ------===//
//
// libFuzzer target: bytes as an acap artifact (an xclbin), through what
// kiln-agent-acap does with one before running any of its code: XRT reads
// the container (behind Kiln's own size checks), Kiln takes the host code
// and the AI Engine plan out of it, and checks the plan against the array.
// Every step must answer with a status, never crash or read past the file.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/acap/AcapArtifact.h"
#include "kiln/common/AieArray.h"
#include "kiln/common/AtomicFile.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

using namespace kiln;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The reader takes a path (XRT's parser reads files): a memfd's.
  int fd = ::memfd_create("fuzz-xclbin", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (!writeAll(fd, std::string_view(reinterpret_cast<const char *>(data), size), path)
           .ok()) {
    ::close(fd);
    return 0;
  }
  auto artifact = agent::acap::readAcapArtifact(path);
  ::close(fd);
  if (!artifact.ok())
    return 0;
  (void)aie::checkPlanFits(artifact->plan, *aie::lookupArray(aie::kDefaultArray));
  return 0;
}
