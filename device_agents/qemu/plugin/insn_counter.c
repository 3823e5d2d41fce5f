/*===- insn_counter.c - QEMU TCG plugin: count guest instructions -----------===
 *
 * Loaded into qemu-riscv64 by the qemu agent:
 *   -plugin libkiln-qemu-insn.so,counter_fd=N
 * It maps the first page of file descriptor N (the agent's shared arena) and
 * adds each translation block's instruction count to the uint64 at offset 0
 * every time the block executes, with an inline TCG add (no helper call).
 * The guest runner reads that counter before and after each call.
 *
 * Debian ships qemu with plugin support but not qemu-plugin.h, so the few
 * entry points used here are declared below, as QEMU's plugin API
 * (version 1, QEMU 7.x) documents them.
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KILN_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* only passed through */
struct qemu_plugin_tb;

enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_outs(const char *string);

KILN_PLUGIN_EXPORT int qemu_plugin_version = 1;

static uint64_t *counter;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           counter, qemu_plugin_tb_n_insns(tb));
}

KILN_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info, int argc,
                                           char **argv) {
  (void)info;
  int fd = -1;
  for (int i = 0; i < argc; ++i)
    if (strncmp(argv[i], "counter_fd=", 11) == 0)
      fd = atoi(argv[i] + 11);
  if (fd < 0) {
    qemu_plugin_outs("kiln insn counter: counter_fd=N is required\n");
    return -1;
  }
  void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) {
    qemu_plugin_outs("kiln insn counter: cannot map counter_fd\n");
    return -1;
  }
  counter = (uint64_t *)page;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  return 0;
}
