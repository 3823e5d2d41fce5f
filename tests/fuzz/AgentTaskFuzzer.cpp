//===- AgentTaskFuzzer.cpp - fuzz the agent's task decoding ---------------===//
//
// libFuzzer target: bytes as a DaemonMessage (what an agent reads off
// Agent.Connect); a Task in it goes through what the agent does before it
// fetches or loads anything: the signature check against kilnd's key, then
// validation of the task against its manifest.
//
//===----------------------------------------------------------------------===//
#include "kiln/agent/TaskRunner.h"
#include "kiln/common/TaskSignature.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::v1::DaemonMessage message;
  if (!message.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  if (!message.has_task())
    return 0;
  static const kiln::TaskVerifier *verifier = [] {
    absl::StatusOr<kiln::TaskSigningKey> key = kiln::TaskSigningKey::generate();
    return new kiln::TaskVerifier(
        *kiln::TaskVerifier::fromPem(key->publicKeyPem()));
  }();
  const kiln::v1::Task &task = message.task();
  (void)kiln::taskSigningMessage(task);
  (void)verifier->verify(task);
  for (const char *kind : {"cpu", "riscv64"})
    (void)kiln::agent::validateTask(task, kind);
  return 0;
}
