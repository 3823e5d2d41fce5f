/*===- kiln_riscv64_runner.c - runs Kiln executables inside qemu-riscv64 ---===
 *
 * A riscv64 Linux program the qemu agent starts once per device under
 * qemu-riscv64. It maps the agent's shared arena (fd given as argv[1]),
 * then serves requests on stdin: load a shared object (kept loaded until
 * unloaded, so executables stay warm), call its entry point on arena
 * buffers, and report the guest instructions the call retired, read from the
 * counter the TCG plugin keeps in the arena's control page.
 *
 *===----------------------------------------------------------------------===*/
#include "kiln/agent/qemu/RunnerProtocol.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_HANDLES 256
#define MAX_POINTERS 4096

typedef void (*entry_point)(void **);

struct loaded {
  uint64_t id;
  void *library;
  entry_point entry;
};

static struct loaded handles[MAX_HANDLES];
static int arena_fd = -1;
static unsigned char *arena = NULL;
static uint64_t arena_size = 0;

static int read_exact(int fd, void *buffer, size_t size) {
  unsigned char *p = buffer;
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    p += n;
    size -= (size_t)n;
  }
  return 0;
}

static int write_exact(int fd, const void *buffer, size_t size) {
  const unsigned char *p = buffer;
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    p += n;
    size -= (size_t)n;
  }
  return 0;
}

static void reply(int status, uint64_t instructions, const char *text) {
  struct kiln_runner_reply r;
  r.magic = KILN_RUNNER_MAGIC;
  r.status = status;
  r.instructions = instructions;
  r.size = text ? strlen(text) : 0;
  if (write_exact(STDOUT_FILENO, &r, sizeof r) != 0 ||
      (r.size && write_exact(STDOUT_FILENO, text, r.size) != 0))
    exit(3);
}

static struct loaded *find_handle(uint64_t id) {
  for (int i = 0; i < MAX_HANDLES; ++i)
    if (handles[i].library && handles[i].id == id)
      return &handles[i];
  return NULL;
}

static volatile uint64_t *counter(void) { return (volatile uint64_t *)arena; }

static void do_map(uint64_t size) {
  if (arena)
    munmap(arena, arena_size);
  arena = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, arena_fd, 0);
  if (arena == MAP_FAILED) {
    arena = NULL;
    arena_size = 0;
    reply(ENOMEM, 0, "cannot map the shared arena");
    return;
  }
  arena_size = size;
  reply(0, 0, NULL);
}

static void do_load(uint64_t id, const char *path) {
  struct loaded *slot = NULL;
  for (int i = 0; i < MAX_HANDLES && !slot; ++i)
    if (!handles[i].library)
      slot = &handles[i];
  if (!slot) {
    reply(ENOSPC, 0, "too many executables loaded in this runner");
    return;
  }
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    reply(ENOEXEC, 0, error ? error : "dlopen failed");
    return;
  }
  void *symbol = dlsym(library, "kiln_invoke");
  if (!symbol) {
    dlclose(library);
    reply(ENOENT, 0, "the artifact has no entry symbol 'kiln_invoke'");
    return;
  }
  slot->id = id;
  slot->library = library;
  slot->entry = (entry_point)symbol;
  reply(0, 0, NULL);
}

static void do_run(uint64_t id, const uint64_t *offsets, uint64_t count) {
  static void *pointers[MAX_POINTERS];
  struct loaded *loaded = find_handle(id);
  if (!loaded) {
    reply(ENOENT, 0, "no executable loaded under that handle");
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    if (offsets[i] < KILN_ARENA_CONTROL_BYTES || offsets[i] >= arena_size) {
      reply(EINVAL, 0, "buffer offset outside the arena");
      return;
    }
    pointers[i] = arena + offsets[i];
  }
  uint64_t before = *counter();
  loaded->entry(pointers);
  uint64_t after = *counter();
  reply(0, after - before, NULL);
}

static void do_unload(uint64_t id) {
  struct loaded *loaded = find_handle(id);
  if (loaded) {
    dlclose(loaded->library);
    memset(loaded, 0, sizeof *loaded);
  }
  reply(0, 0, NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s ARENA_FD\n", argv[0]);
    return 2;
  }
  arena_fd = atoi(argv[1]);
  /* Executables call libm; keep it in the global scope they resolve in. */
  volatile double keep_libm = exp(0.0);
  (void)keep_libm;

  static unsigned char payload[MAX_POINTERS * sizeof(uint64_t) + 4096];
  for (;;) {
    struct kiln_runner_request request;
    if (read_exact(STDIN_FILENO, &request, sizeof request) != 0)
      return 0; /* the agent closed the pipe: done */
    if (request.magic != KILN_RUNNER_MAGIC || request.size >= sizeof payload) {
      fprintf(stderr, "kiln runner: malformed request\n");
      return 3;
    }
    if (request.size && read_exact(STDIN_FILENO, payload, request.size) != 0)
      return 3;
    payload[request.size] = 0;
    switch (request.op) {
    case KILN_RUNNER_LOAD:
      do_load(request.arg, (const char *)payload);
      break;
    case KILN_RUNNER_RUN:
      do_run(request.arg, (const uint64_t *)payload, request.size / 8);
      break;
    case KILN_RUNNER_UNLOAD:
      do_unload(request.arg);
      break;
    case KILN_RUNNER_MAP:
      do_map(request.arg);
      break;
    default:
      reply(EINVAL, 0, "unknown request");
    }
  }
}
