/*===- kiln_rt_kernels.h - the kernel-library ABI of cpu artifacts --------===
 *
 * Code for the cpu target may call a kernel library for ops a library does
 * better than generated code (convolutions, through oneDNN). The artifact
 * does not link the library: the process that loads it installs a
 * `struct kiln_rt_kernel_library` through the artifact's exported
 * kiln_rt_set_kernel_library, and the artifact's runtime calls through it.
 * The manifest names the library an artifact needs (kernel_library), and a
 * loader that cannot provide it must refuse the artifact.
 *
 * This header is shared by the target runtime (kiln_rt_kernels.c) and the
 * loaders that implement the table (the cpu agent). Every field is plain C.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RT_KERNELS_H
#define KILN_RT_KERNELS_H

#include <stdint.h>

#define KILN_RT_KERNELS_ABI_VERSION 1

/* The geometry of one convolution call site, as the compiler writes it into
 * a constant array of int64 (kiln-convert-aten-to-kernel-calls). Tensors
 * are dense and row-major: input (batch, in_channels, spatial...), weight
 * (out_channels, in_channels / groups, kernel...), bias (out_channels),
 * output (batch, out_channels, output...). Unused spatial entries are 1 for
 * sizes and 0 for paddings. `dilation` is PyTorch's (1: none). */
struct kiln_rt_convolution {
  int64_t spatial_rank; /* 1, 2 or 3 */
  int64_t batch, in_channels, out_channels, groups, has_bias;
  int64_t input[3], kernel[3], output[3];
  int64_t stride[3], pad_begin[3], pad_end[3], dilation[3];
};

#define KILN_RT_CONVOLUTION_FIELDS 27

/* The geometry of one matrix-product call site:
 * c[batch, m, n] = a[batch, m, k] @ b[batch, k, n] (+ bias[n] when
 * has_bias). With a_transposed, a is stored (batch, k, m); with
 * b_transposed, b is stored (batch, n, k): nn.Linear's weight, attention's
 * keys. A 2-D product has batch 1. */
struct kiln_rt_matmul {
  int64_t batch, m, n, k, a_transposed, b_transposed, has_bias;
};

#define KILN_RT_MATMUL_FIELDS 7

/* A kernel library, as the loader installs it. `state` points at one
 * zero-initialised, pointer-sized slot per call site in the artifact: the
 * library may keep what it prepares for that site there (set it once,
 * atomically; several threads may call the same site at once) and owns it
 * until the artifact is unloaded. */
struct kiln_rt_kernel_library {
  uint64_t abi_version; /* KILN_RT_KERNELS_ABI_VERSION */
  void (*convolution_f32)(const struct kiln_rt_kernel_library *library,
                          const struct kiln_rt_convolution *geometry,
                          void **state, const float *input,
                          const float *weight, const float *bias,
                          float *output);
  void (*matmul_f32)(const struct kiln_rt_kernel_library *library,
                     const struct kiln_rt_matmul *geometry, void **state,
                     const float *a, const float *b, const float *bias,
                     float *c);
};

#endif /* KILN_RT_KERNELS_H */
