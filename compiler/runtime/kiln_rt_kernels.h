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

#define KILN_RT_KERNELS_ABI_VERSION 4

/* Activations an epilogue may end with (PyTorch's definitions). Only
 * activations whose library form returns NaN for NaN, as PyTorch's do, are
 * given to a library: oneDNN's relu and clip give 0 or a bound instead, so
 * for "onednn" those stay in generated code; the "aie" library's relu keeps
 * NaN, and only it is given RELU. */
enum kiln_rt_activation {
  KILN_RT_ACTIVATION_NONE = 0,
  KILN_RT_ACTIVATION_HARDSWISH = 1, /* y * min(max(y + 3, 0), 6) / 6 */
  KILN_RT_ACTIVATION_GELU = 2,      /* y * (1 + erf(y / sqrt 2)) / 2 */
  KILN_RT_ACTIVATION_GELU_TANH = 3, /* gelu, tanh-approximated */
  KILN_RT_ACTIVATION_RELU = 4,      /* max(y, 0), NaN for NaN ("aie" only) */
};

/* What the library does to a call's result before it stores it, in this
 * order (kiln-convert-aten-to-kernel-calls folds the ops that follow a
 * convolution or product into it):
 *   y = y * scale[c] + shift[c]  with has_scale_shift: per output channel
 *                                (a batch norm in eval; c is a convolution's
 *                                dim 1, a product's column);
 *   y = y + residual             with has_residual: a dense tensor of the
 *                                output's shape;
 *   y = activation(y). */
struct kiln_rt_epilogue {
  int64_t has_scale_shift, has_residual, activation;
};

#define KILN_RT_EPILOGUE_FIELDS 3

/* The geometry of one convolution call site, as the compiler writes it into
 * a constant array of int64 (kiln-convert-aten-to-kernel-calls). Tensors
 * are dense and row-major: input (batch, in_channels, spatial...), weight
 * (out_channels, in_channels / groups, kernel...), bias (out_channels),
 * output (batch, out_channels, output...). With `channels_last`, input,
 * output and the epilogue's residual are stored channels last instead:
 * (batch, spatial..., channels), PyTorch's channels_last memory format; the
 * weight keeps its layout. Unused spatial entries are 1 for sizes and 0 for
 * paddings. `dilation` is PyTorch's (1: none). */
struct kiln_rt_convolution {
  int64_t spatial_rank; /* 1, 2 or 3 */
  int64_t batch, in_channels, out_channels, groups, has_bias;
  int64_t input[3], kernel[3], output[3];
  int64_t stride[3], pad_begin[3], pad_end[3], dilation[3];
  struct kiln_rt_epilogue epilogue;
  int64_t channels_last; /* 0 or 1 */
};

#define KILN_RT_CONVOLUTION_FIELDS 31

/* The geometry of one matrix-product call site:
 * c[batch, m, n] = a[batch, m, k] @ b[batch, k, n] (+ bias[n] when
 * has_bias). With a_transposed, a is stored (batch, k, m); with
 * b_transposed, b is stored (batch, n, k): nn.Linear's weight, attention's
 * keys. A 2-D product has batch 1. */
struct kiln_rt_matmul {
  int64_t batch, m, n, k, a_transposed, b_transposed, has_bias;
  struct kiln_rt_epilogue epilogue;
};

#define KILN_RT_MATMUL_FIELDS 10

/* One step of an elementwise chain: register[inputs + i] = op(register[lhs],
 * register[rhs] or scalar). Registers 0 .. inputs-1 are the call's inputs;
 * the last step's register is the output. `scalar` is a double's bits;
 * unused fields are 0. Computed in f32 with PyTorch's definitions: relu,
 * maximum, minimum and clamp return NaN for NaN; clamp's NaN bounds mean
 * "none" (its bounds are `scalar` and the next step's, see below). */
enum kiln_rt_elementwise_op {
  KILN_RT_ELEMENTWISE_ADD = 1,        /* lhs + scalar * rhs (scalar: alpha) */
  KILN_RT_ELEMENTWISE_SUB = 2,        /* lhs - scalar * rhs (scalar: alpha) */
  KILN_RT_ELEMENTWISE_MUL = 3,        /* lhs * rhs */
  KILN_RT_ELEMENTWISE_DIV = 4,        /* lhs / rhs */
  KILN_RT_ELEMENTWISE_ADD_SCALAR = 5, /* lhs + scalar */
  KILN_RT_ELEMENTWISE_MUL_SCALAR = 6, /* lhs * scalar */
  KILN_RT_ELEMENTWISE_DIV_SCALAR = 7, /* lhs / scalar */
  KILN_RT_ELEMENTWISE_RSUB_SCALAR = 8, /* scalar - lhs */
  KILN_RT_ELEMENTWISE_RELU = 9,       /* max(lhs, 0) */
  KILN_RT_ELEMENTWISE_NEG = 10,       /* -lhs */
  KILN_RT_ELEMENTWISE_MAXIMUM = 11,   /* max(lhs, rhs) */
  KILN_RT_ELEMENTWISE_MINIMUM = 12,   /* min(lhs, rhs) */
  KILN_RT_ELEMENTWISE_CLAMP_MIN = 13, /* max(lhs, scalar); NaN scalar: lhs */
  KILN_RT_ELEMENTWISE_CLAMP_MAX = 14, /* min(lhs, scalar); NaN scalar: lhs */
};

struct kiln_rt_elementwise_step {
  int64_t op, lhs, rhs, scalar;
};

/* Whether a step of kind `op` reads its rhs register (else rhs is 0). */
static inline int kiln_rt_elementwise_reads_rhs(int64_t op) {
  return op == KILN_RT_ELEMENTWISE_ADD || op == KILN_RT_ELEMENTWISE_SUB ||
         op == KILN_RT_ELEMENTWISE_MUL || op == KILN_RT_ELEMENTWISE_DIV ||
         op == KILN_RT_ELEMENTWISE_MAXIMUM || op == KILN_RT_ELEMENTWISE_MINIMUM;
}

#define KILN_RT_ELEMENTWISE_MAX_INPUTS 4
#define KILN_RT_ELEMENTWISE_MAX_STEPS 8

/* The geometry of one elementwise-chain call site: `elements` f32 values in
 * each of `inputs` dense operands of the output's shape, through `steps`
 * steps. A clamp with both bounds is a CLAMP_MIN step then a CLAMP_MAX
 * step. */
struct kiln_rt_elementwise {
  int64_t elements, inputs, steps;
  struct kiln_rt_elementwise_step step[KILN_RT_ELEMENTWISE_MAX_STEPS];
};

#define KILN_RT_ELEMENTWISE_FIELDS 35

/* A kernel library, as the loader installs it. `state` points at one
 * zero-initialised, pointer-sized slot per call site in the artifact: the
 * library may keep what it prepares for that site there (set it once,
 * atomically; several threads may call the same site at once) and owns it
 * until the artifact is unloaded. `scale`, `shift` and `residual` are the
 * epilogue's operands (unused ones point at the output). */
struct kiln_rt_kernel_library {
  uint64_t abi_version; /* KILN_RT_KERNELS_ABI_VERSION */
  void (*convolution_f32)(const struct kiln_rt_kernel_library *library,
                          const struct kiln_rt_convolution *geometry,
                          void **state, const float *input,
                          const float *weight, const float *bias,
                          const float *scale, const float *shift,
                          const float *residual, float *output);
  void (*matmul_f32)(const struct kiln_rt_kernel_library *library,
                     const struct kiln_rt_matmul *geometry, void **state,
                     const float *a, const float *b, const float *bias,
                     const float *scale, const float *shift,
                     const float *residual, float *c);
  /* May be null: only the acap target's "aie" library takes elementwise
   * chains (kiln-convert-aten-to-kernel-calls emits them for it alone).
   * Unused inputs point at the output. */
  void (*elementwise_f32)(const struct kiln_rt_kernel_library *library,
                          const struct kiln_rt_elementwise *geometry,
                          void **state, const float *input0,
                          const float *input1, const float *input2,
                          const float *input3, float *output);
};

#endif /* KILN_RT_KERNELS_H */
