/*===- kiln_rt_half.c - half and bfloat16 conversions for every target -------===
 *
 * LLVM lowers f16/bf16 conversions the target has no instructions for
 * (rv64gc has none; x86 without F16C or AVX-512 BF16 lacks some) to the
 * compiler-rt routines below, which the hosts' libraries do not reliably
 * provide: glibc, libgcc 12 and picolibc lack the half ones for RISC-V, and
 * Debian 12's x86-64 libgcc_s lacks __truncsfbf2. Kiln compiles this file
 * for riscv64 and x86-64 at build time and links it into every artifact
 * (hidden: each artifact carries its own copy, nothing is interposed).
 *
 * Narrowing rounds to nearest, ties to even, from the exact double value, so
 * float -> half and double -> half each round once. NaNs stay NaNs (quiet),
 * overflow gives infinity, underflow gives subnormals or signed zero.
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>

#ifdef KILN_RT_TEST /* built for the host by the tests: no clash with libgcc */
#define KILN_RT static __attribute__((unused))
#else
#define KILN_RT __attribute__((visibility("hidden")))
#endif

static uint64_t bits_of_double(double value) {
  uint64_t bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  return bits;
}

static float float_of_bits(uint32_t bits) {
  float value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}

/* The 16-bit format with `exp_bits` exponent and `man_bits` mantissa bits
 * nearest to `value` (ties to even). */
static uint16_t narrow(double value, int exp_bits, int man_bits) {
  uint64_t d = bits_of_double(value);
  uint16_t sign = (uint16_t)((d >> 63) << (exp_bits + man_bits));
  int exponent = (int)((d >> 52) & 0x7ff);
  uint64_t mantissa = d & ((UINT64_C(1) << 52) - 1);
  uint16_t all_ones = (uint16_t)(((1u << exp_bits) - 1) << man_bits);
  if (exponent == 0x7ff) /* infinity, or NaN (kept quiet and non-zero) */
    return sign | all_ones |
           (mantissa ? (uint16_t)((1u << (man_bits - 1)) |
                                  (mantissa >> (52 - man_bits)))
                     : 0);
  if (exponent == 0) /* zero or a double subnormal: far below 16-bit range */
    return sign;
  int bias = (1 << (exp_bits - 1)) - 1;
  int unbiased = exponent - 1023;
  int min_exponent = 1 - bias;
  uint64_t significand = mantissa | (UINT64_C(1) << 52);
  int shift = 52 - man_bits;
  if (unbiased < min_exponent)
    shift += min_exponent - unbiased; /* subnormal in the target */
  if (shift > 63)
    return sign;
  uint64_t kept = significand >> shift;
  uint64_t rest = significand & ((UINT64_C(1) << shift) - 1);
  uint64_t half = UINT64_C(1) << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  uint64_t result;
  if (unbiased < min_exponent)
    result = kept; /* a carry into bit man_bits makes it the smallest normal */
  else
    result = ((uint64_t)(unbiased + bias) << man_bits) +
             (kept - (UINT64_C(1) << man_bits));
  if (result >= all_ones)
    return sign | all_ones; /* overflow: infinity */
  return sign | (uint16_t)result;
}

static float widen_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return float_of_bits(sign | 0x7f800000u | (mantissa << 13) |
                         (mantissa ? 0x00400000u : 0));
  if (exponent == 0) { /* zero or subnormal: mantissa * 2^-24, exact in float */
    float magnitude = (float)mantissa * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return float_of_bits(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

KILN_RT float __extendhfsf2(_Float16 value) {
  uint16_t h;
  __builtin_memcpy(&h, &value, sizeof h);
  return widen_half(h);
}

KILN_RT double __extendhfdf2(_Float16 value) {
  return (double)__extendhfsf2(value);
}

KILN_RT _Float16 __truncsfhf2(float value) {
  uint16_t h = narrow((double)value, 5, 10);
  _Float16 result;
  __builtin_memcpy(&result, &h, sizeof h);
  return result;
}

KILN_RT _Float16 __truncdfhf2(double value) {
  uint16_t h = narrow(value, 5, 10);
  _Float16 result;
  __builtin_memcpy(&result, &h, sizeof h);
  return result;
}

KILN_RT __bf16 __truncsfbf2(float value) {
  uint16_t b = narrow((double)value, 8, 7);
  __bf16 result;
  __builtin_memcpy(&result, &b, sizeof b);
  return result;
}

KILN_RT __bf16 __truncdfbf2(double value) {
  uint16_t b = narrow(value, 8, 7);
  __bf16 result;
  __builtin_memcpy(&result, &b, sizeof b);
  return result;
}

#ifdef KILN_RT_TEST
/* Bit-level entry points for tests on the build host. */
__attribute__((visibility("default"))) uint16_t kiln_rt_test_f32_to_f16(float v) {
  return narrow((double)v, 5, 10);
}
__attribute__((visibility("default"))) uint16_t kiln_rt_test_f64_to_f16(double v) {
  return narrow(v, 5, 10);
}
__attribute__((visibility("default"))) uint16_t kiln_rt_test_f32_to_bf16(float v) {
  return narrow((double)v, 8, 7);
}
__attribute__((visibility("default"))) float kiln_rt_test_f16_to_f32(uint16_t h) {
  return widen_half(h);
}
#endif
