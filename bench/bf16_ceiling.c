/* bf16_ceiling.c - The bf16 arithmetic ceilings of this CPU, in GFLOP/s.
 *
 * The bf16 counterpart of bench/gemm_ceiling.py's float32 GEMM: what the
 * bf16 instructions can do per second on P threads, register-resident (no
 * memory traffic), so that the bf16 layer's GFLOP/s can be read against
 * the instructions' peak as the float32 layer's is against the GEMM's.
 *
 *   amx     TDPBF16PS: 4 independent 16x16 f32 accumulator tiles, each
 *           += a 16x32 bf16 tile times a 32x16 bf16 tile (16·16·32·2 FLOP
 *           per instruction), the 2 A x 2 B blocking of mha-bf16-amx, on
 *           random values (fill_random_bf16);
 *   amx-l1, amx-l2  the same blocking with its 4 tiles loaded per step
 *           from a buffer in L1 (32 KiB) or in L2 (1 MiB) per thread: what
 *           mha-bf16-amx's blocks can reach from each level;
 *   avx512  vdpbf16ps zmm: 16 independent accumulators, 16 lanes x 2
 *           products (64 FLOP per instruction), mha-bf16-dot's;
 *   fma32   vfmadd231ps zmm, f32, for comparison (32 FLOP per instruction).
 *
 * Each thread runs its own loop; the rate is the sum of FLOP over the wall
 * time from the first thread's start to the last one's end, the median of
 * the passes (after one untimed pass). One line each, e.g.:
 *
 *   bf16_ceiling: amx 2 threads, 5 passes: median 6512.3 GFLOP/s, best ...
 *
 * A rate the CPU lacks (no AMX-BF16, or Linux refuses the AMX tile data:
 * ARCH_REQ_XCOMP_PERM) is printed as "unavailable" with the reason.
 *
 * Usage: bf16_ceiling [--threads P] [--passes R] [--millis M]
 * Exit codes: 0 success, 2 bad usage.
 */
#include <errno.h>
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Fills `count` bf16 values with numbers of magnitude 2^-8 to 2^-7 and
 * random signs and mantissas (a fixed xorshift sequence): operands like a
 * layer's rather than one repeated value, whose sums also stay finite. */
static void fill_random_bf16(uint16_t *values, size_t count) {
  uint32_t state = 2463534242u;
  for (size_t i = 0; i < count; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    /* Sign, exponent 2^-8 (119), 7 random mantissa bits. */
    values[i] =
        (uint16_t)(((state >> 8) & 0x8000u) | (119u << 7) | (state & 0x7fu));
  }
}

/* The tile configuration of palette 1: 8 tiles of 16 rows x 64 bytes. */
typedef struct {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config;

/* Configures the 8 tiles as 16 rows of 64 bytes, every loop's shape. */
__attribute__((target("amx-tile,amx-bf16"))) static void
load_tile_config(void) {
  tile_config config;
  memset(&config, 0, sizeof config);
  config.palette = 1;
  for (int i = 0; i < 8; ++i) {
    config.colsb[i] = 64;
    config.rows[i] = 16;
  }
  _tile_loadconfig(&config);
}

__attribute__((target("amx-tile,amx-bf16"))) static double
amx_loop(long iterations) {
  load_tile_config();
  static uint16_t a[4][16 * 32] __attribute__((aligned(64)));
  fill_random_bf16(&a[0][0], 4 * 16 * 32);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, a[0], 64);
  _tile_loadd(5, a[1], 64);
  _tile_loadd(6, a[2], 64);
  _tile_loadd(7, a[3], 64);
  for (long i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  float c[16 * 16] __attribute__((aligned(64)));
  _tile_stored(0, c, 64);
  _tile_release();
  /* Keep the result live. */
  if (c[0] < 0)
    fprintf(stderr, "%g\n", c[0]);
  return 4.0 * 16 * 16 * 32 * 2 * (double)iterations;
}

/* The same 2 A x 2 B blocking with its operands loaded as mha-bf16-amx's
 * projections load them, 4 tile loads (1 KiB each) per 4 TDPBF16PS, from a
 * per-thread buffer of `bytes` read in order: 32 KiB stays in L1, 1 MiB in
 * L2. What the kernel's blocks can reach with their tiles at that level. */
__attribute__((target("amx-tile,amx-bf16"))) static double
amx_loads_loop(long iterations, size_t bytes) {
  uint16_t *data = aligned_alloc(64, bytes);
  if (!data)
    return 0;
  fill_random_bf16(data, bytes / sizeof *data);
  load_tile_config();
  size_t tiles = bytes / 1024, t = 0;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long i = 0; i < iterations; ++i) {
    const char *base = (const char *)data + t * 1024;
    _tile_loadd(4, base, 64);
    _tile_loadd(5, base + 1024, 64);
    _tile_loadd(6, base + 2048, 64);
    _tile_loadd(7, base + 3072, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
    t = t + 4 < tiles ? t + 4 : 0;
  }
  float c[16 * 16] __attribute__((aligned(64)));
  _tile_stored(0, c, 64);
  _tile_release();
  free(data);
  if (c[0] != c[0])
    fprintf(stderr, "NaN\n");
  return 4.0 * 16 * 16 * 32 * 2 * (double)iterations;
}

static double amx_l1_loop(long iterations) {
  return amx_loads_loop(iterations, (size_t)32 << 10);
}

static double amx_l2_loop(long iterations) {
  return amx_loads_loop(iterations, (size_t)1 << 20);
}

#define ACCUMULATORS 16

__attribute__((target("avx512f,avx512bf16"))) static double
avx512_loop(long iterations) {
  __m512 acc[ACCUMULATORS];
  for (int i = 0; i < ACCUMULATORS; ++i)
    acc[i] = _mm512_setzero_ps();
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3c00);
  __m512bh y = (__m512bh)_mm512_set1_epi16(0x3c00);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < ACCUMULATORS; ++j)
      acc[j] = _mm512_dpbf16_ps(acc[j], x, y);
    __asm__ volatile("" : "+v"(x));
  }
  __m512 sum = acc[0];
  for (int i = 1; i < ACCUMULATORS; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  if (_mm512_reduce_add_ps(sum) < 0)
    fprintf(stderr, "negative\n");
  return (double)ACCUMULATORS * 64 * (double)iterations;
}

__attribute__((target("avx512f,fma"))) static double
fma32_loop(long iterations) {
  __m512 acc[ACCUMULATORS];
  for (int i = 0; i < ACCUMULATORS; ++i)
    acc[i] = _mm512_setzero_ps();
  __m512 x = _mm512_set1_ps(1e-3f), y = _mm512_set1_ps(1e-3f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < ACCUMULATORS; ++j)
      acc[j] = _mm512_fmadd_ps(x, y, acc[j]);
    __asm__ volatile("" : "+v"(x));
  }
  __m512 sum = acc[0];
  for (int i = 1; i < ACCUMULATORS; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  if (_mm512_reduce_add_ps(sum) < 0)
    fprintf(stderr, "negative\n");
  return (double)ACCUMULATORS * 32 * (double)iterations;
}

typedef double (*loop_fn)(long);

/* GFLOP/s of `loop` on `threads` threads: the median and best of `passes`
 * passes of about `millis` ms each. */
static void measure(const char *name, loop_fn loop, int threads, int passes,
                    double millis) {
  /* Iterations per pass from a short calibration on one thread. */
  long iterations = 1000;
  for (;;) {
    double start = now_seconds();
    loop(iterations);
    double seconds = now_seconds() - start;
    if (seconds > 0.01 || iterations > (1L << 40)) {
      iterations = (long)(iterations * (millis / 1e3) / seconds) + 1;
      break;
    }
    iterations *= 4;
  }
  double *rates = calloc((size_t)passes, sizeof *rates);
  for (int pass = -1; pass < passes; ++pass) {
    double flop = 0, start = now_seconds();
#pragma omp parallel num_threads(threads) reduction(+ : flop)
    flop += loop(iterations);
    double seconds = now_seconds() - start;
    if (pass >= 0)
      rates[pass] = flop / seconds / 1e9;
  }
  qsort(rates, (size_t)passes, sizeof *rates, compare_doubles);
  printf("bf16_ceiling: %s %d threads, %d passes: median %.1f GFLOP/s, "
         "best %.1f GFLOP/s\n",
         name, threads, passes, rates[passes / 2], rates[passes - 1]);
  free(rates);
}

int main(int argc, char **argv) {
  int threads = 2, passes = 5;
  double millis = 200;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--threads"))
      threads = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--passes"))
      passes = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--millis"))
      millis = atof(argv[++i]);
    else {
      fprintf(stderr,
              "bf16_ceiling: error: unknown argument '%s'\n"
              "usage: bf16_ceiling [--threads P] [--passes R] "
              "[--millis M]\n",
              argv[i]);
      return 2;
    }
  }
  if (threads < 1 || threads > 1024 || passes < 1 || passes > 1000 ||
      !(millis >= 1 && millis <= 60000)) {
    fprintf(stderr, "bf16_ceiling: error: --threads must be in [1, 1024], "
                    "--passes in [1, 1000] and --millis in [1, 60000]\n");
    return 2;
  }
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    measure("fma32", fma32_loop, threads, passes, millis);
  else
    printf("bf16_ceiling: fma32 unavailable (no AVX-512F)\n");
  if (__builtin_cpu_supports("avx512bf16"))
    measure("avx512", avx512_loop, threads, passes, millis);
  else
    printf("bf16_ceiling: avx512 unavailable (no AVX512_BF16)\n");
  if (!__builtin_cpu_supports("amx-bf16"))
    printf("bf16_ceiling: amx unavailable (no AMX-BF16)\n");
  else if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                   18 /* XFEATURE_XTILEDATA */) != 0)
    printf("bf16_ceiling: amx unavailable (Linux refuses the AMX tile data: "
           "%s)\n",
           strerror(errno));
  else {
    measure("amx", amx_loop, threads, passes, millis);
    measure("amx-l1", amx_l1_loop, threads, passes, millis);
    measure("amx-l2", amx_l2_loop, threads, passes, millis);
  }
  return 0;
}
