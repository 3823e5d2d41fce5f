/*===- kiln_rt_kernels.c - calls from generated code into a kernel library -===
 *
 * Generated code calls kiln_rt_convolution_f32 and kiln_rt_matmul_f32 where
 * the compiler handed a convolution or a matrix product to a kernel library,
 * and kiln_rt_elementwise_f32 for an elementwise chain (acap's "aie" only)
 * (kiln_rt_kernels.h). The loader installs
 * the library right after loading, through the exported
 * kiln_rt_set_kernel_library, before any call into the artifact. Each
 * artifact keeps its own pointer (hidden symbols).
 *
 *===----------------------------------------------------------------------===*/
#include "kiln_rt_kernels.h"

_Static_assert(sizeof(struct kiln_rt_epilogue) ==
                   KILN_RT_EPILOGUE_FIELDS * sizeof(int64_t),
               "the compiler writes the epilogue as int64 fields");
_Static_assert(sizeof(struct kiln_rt_convolution) ==
                   KILN_RT_CONVOLUTION_FIELDS * sizeof(int64_t),
               "the compiler writes the geometry as a flat int64 array");
_Static_assert(sizeof(struct kiln_rt_matmul) ==
                   KILN_RT_MATMUL_FIELDS * sizeof(int64_t),
               "the compiler writes the geometry as a flat int64 array");

_Static_assert(sizeof(struct kiln_rt_elementwise) ==
                   KILN_RT_ELEMENTWISE_FIELDS * sizeof(int64_t),
               "the compiler writes the geometry as a flat int64 array");

static const struct kiln_rt_kernel_library *installed_library;

/* Installs `library` for every later call. Returns 1, or 0 (nothing
 * installed) when the library speaks another ABI version. */
__attribute__((visibility("default"))) int
kiln_rt_set_kernel_library(const struct kiln_rt_kernel_library *library) {
  if (!library || library->abi_version != KILN_RT_KERNELS_ABI_VERSION)
    return 0;
  __atomic_store_n(&installed_library, library, __ATOMIC_RELEASE);
  return 1;
}

/* Reached only when a loader ignored the manifest's kernel_library: stop
 * rather than compute nothing into the outputs. */
static const struct kiln_rt_kernel_library *library_or_trap(void) {
  const struct kiln_rt_kernel_library *library =
      __atomic_load_n(&installed_library, __ATOMIC_ACQUIRE);
  if (!library)
    __builtin_trap();
  return library;
}

__attribute__((visibility("hidden"))) void
kiln_rt_convolution_f32(const int64_t *geometry, void **state,
                        const float *input, const float *weight,
                        const float *bias, const float *scale,
                        const float *shift, const float *residual,
                        float *output) {
  const struct kiln_rt_kernel_library *library = library_or_trap();
  library->convolution_f32(library,
                           (const struct kiln_rt_convolution *)geometry, state,
                           input, weight, bias, scale, shift, residual, output);
}

__attribute__((visibility("hidden"))) void
kiln_rt_matmul_f32(const int64_t *geometry, void **state, const float *a,
                   const float *b, const float *bias, const float *scale,
                   const float *shift, const float *residual, float *c) {
  const struct kiln_rt_kernel_library *library = library_or_trap();
  library->matmul_f32(library, (const struct kiln_rt_matmul *)geometry, state,
                      a, b, bias, scale, shift, residual, c);
}

__attribute__((visibility("hidden"))) void
kiln_rt_elementwise_f32(const int64_t *geometry, void **state,
                        const float *input0, const float *input1,
                        const float *input2, const float *input3,
                        float *output) {
  const struct kiln_rt_kernel_library *library = library_or_trap();
  if (!library->elementwise_f32)
    __builtin_trap(); /* a library without chains: the manifest lied */
  library->elementwise_f32(library,
                           (const struct kiln_rt_elementwise *)geometry, state,
                           input0, input1, input2, input3, output);
}
