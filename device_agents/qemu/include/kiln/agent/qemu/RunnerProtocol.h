/*===- RunnerProtocol.h - the qemu agent <-> guest runner wire format ------===
 *
 * This header is shared by the agent (C++, host) and the guest runner (C,
 * riscv64 under qemu-riscv64). The agent writes requests to the runner's
 * stdin and reads replies from its stdout; tensors never travel on the pipe:
 * they live in a shared arena (a memfd both map), addressed by offset.
 *
 * Arena layout: the first page is control; its first 8 bytes are the guest
 * instruction counter the TCG plugin increments. Tensor data follows.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_AGENT_QEMU_RUNNERPROTOCOL_H
#define KILN_AGENT_QEMU_RUNNERPROTOCOL_H

#include <stdint.h>

#define KILN_RUNNER_MAGIC 0x4b524e31u /* "KRN1" */

/* Bytes of the arena's control page; tensor data starts here. */
#define KILN_ARENA_CONTROL_BYTES 4096u

enum kiln_runner_op {
  /* Load the shared object at the payload path (`size` bytes), find
   * `kiln_invoke`, and keep it under handle `arg`. */
  KILN_RUNNER_LOAD = 1,
  /* Call handle `arg` with `size` / 8 pointers whose arena offsets form the
   * payload (uint64 each). The reply carries the instructions counted. */
  KILN_RUNNER_RUN = 2,
  /* Forget handle `arg` (dlclose). */
  KILN_RUNNER_UNLOAD = 3,
  /* (Re)map the arena with `arg` bytes; the agent has grown the memfd. */
  KILN_RUNNER_MAP = 4,
};

struct kiln_runner_request {
  uint32_t magic;
  uint32_t op;
  uint64_t arg;
  uint64_t size; /* payload bytes that follow */
};

struct kiln_runner_reply {
  uint32_t magic;
  /* 0 on success; otherwise an errno-style code and `size` bytes of text. */
  int32_t status;
  uint64_t instructions;
  uint64_t size;
};

#endif /* KILN_AGENT_QEMU_RUNNERPROTOCOL_H */
