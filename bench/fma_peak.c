/* One-core f32 FMA peak, in GFLOP/s, for bench/bench_speed.py.
 *
 * bench_speed.py builds it at run time with `cc -O3 -march=native`, so every
 * vector width the host has is measured: AVX-512 (zmm) when __AVX512F__ is
 * defined, AVX2+FMA (ymm) when __FMA__ is. Each loop keeps enough independent
 * accumulator chains in registers to cover FMA latency times throughput (two
 * FMA ports x 4-5 cycles of latency needs 8-10 chains): 16 zmm (of 32) and
 * 12 ymm (of 16, two more hold the constants). Best of several trials, one
 * thread. Prints one line per width: "<name> <GFLOP/s>".
 *
 * Usage: fma_peak [seconds per trial]   (default 0.2)
 */
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIALS 5

static volatile float sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* acc = acc * 0.9999999 + 1e-7 converges to 1: values stay normal. The inner
 * loop has a constant trip count, so -O3 unrolls it and keeps acc[] in
 * registers. Returns GFLOP/s of `iters` iterations (2 flops per lane). */
#define DEFINE_PEAK(NAME, VEC, LANES, NACC, SET1, FMADD)                        \
  static double NAME(long iters) {                                             \
    VEC acc[NACC];                                                             \
    const VEC mul = SET1(0.9999999f), add = SET1(1e-7f);                       \
    for (int j = 0; j < NACC; ++j)                                             \
      acc[j] = SET1(1.0f + (float)j);                                          \
    double t0 = now();                                                         \
    for (long i = 0; i < iters; ++i)                                           \
      for (int j = 0; j < NACC; ++j)                                           \
        acc[j] = FMADD(acc[j], mul, add);                                      \
    double dt = now() - t0;                                                    \
    float lanes[LANES];                                                        \
    float sum = 0.0f;                                                          \
    for (int j = 0; j < NACC; ++j) {                                           \
      __builtin_memcpy(lanes, &acc[j], sizeof lanes);                          \
      for (int k = 0; k < LANES; ++k)                                          \
        sum += lanes[k];                                                       \
    }                                                                          \
    sink = sum;                                                                \
    return 2.0 * LANES * NACC * (double)iters / dt / 1e9;                      \
  }

#if defined(__AVX512F__)
DEFINE_PEAK(peak_avx512, __m512, 16, 16, _mm512_set1_ps, _mm512_fmadd_ps)
#endif
#if defined(__FMA__)
DEFINE_PEAK(peak_avx2, __m256, 8, 12, _mm256_set1_ps, _mm256_fmadd_ps)
#endif

/* Scalar FMA (one lane), for hosts with neither. */
typedef float scalar_t;
static scalar_t scalar_set1(float v) { return v; }
static scalar_t scalar_fma(scalar_t a, scalar_t b, scalar_t c) { return fmaf(a, b, c); }
DEFINE_PEAK(peak_scalar, scalar_t, 1, 8, scalar_set1, scalar_fma)

/* Best of TRIALS trials of about `seconds` each (iterations calibrated on a
 * short first run). */
static double best(double (*peak)(long), double seconds) {
  long iters = 100000;
  peak(iters); /* warm up: clocks, page faults */
  double t0 = now();
  peak(iters);
  double per_iter = (now() - t0) / (double)iters;
  long target = per_iter > 0 ? (long)(seconds / per_iter) : iters;
  if (target < iters)
    target = iters;
  double top = 0.0;
  for (int trial = 0; trial < TRIALS; ++trial) {
    double g = peak(target);
    if (g > top)
      top = g;
  }
  return top;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.2;
  if (!(seconds > 0))
    seconds = 0.2;
  int any = 0;
#if defined(__AVX512F__)
  printf("avx512 %.2f\n", best(peak_avx512, seconds));
  any = 1;
#endif
#if defined(__FMA__)
  printf("avx2 %.2f\n", best(peak_avx2, seconds));
  any = 1;
#endif
  if (!any)
    printf("scalar %.2f\n", best(peak_scalar, seconds));
  return 0;
}
