/* stream_read.c - A STREAM-like read bandwidth: P threads sum a buffer.
 *
 * The bandwidth bound of a decode step (bench/decode_vs_bound.py) is the
 * bytes the step must read divided by what the machine can read per second.
 * This measures that rate the way STREAM does, for reads only: the buffer
 * (by default four times the last-level cache, so that no pass finds it in
 * a cache) is split between the OpenMP threads, each sums its part with
 * several independent vector accumulators, and the time of a pass over the
 * whole buffer is taken from the first thread's start to the last thread's
 * end. It prints the median over the passes (after one untimed pass that
 * also faults the pages in) and the best, on one line:
 *
 *   stream_read: 1920 MiB, 2 threads, 20 passes:
 *     median 12.34 GB/s, best 12.80 GB/s
 *
 * Usage: stream_read [--mib N] [--threads P] [--passes R]
 * Exit codes: 0 success, 2 bad usage or no memory.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The last-level cache in bytes, from sysfs (0 if unknown). */
static long long last_level_cache_bytes(void) {
  long long largest = 0;
  for (int index = 0; index < 8; ++index) {
    char path[128];
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *file = fopen(path, "r");
    if (!file)
      continue;
    long long size = 0;
    char unit = 0;
    if (fscanf(file, "%lld%c", &size, &unit) >= 1) {
      if (unit == 'K')
        size <<= 10;
      else if (unit == 'M')
        size <<= 20;
      if (size > largest)
        largest = size;
    }
    fclose(file);
  }
  return largest;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sums data[0..count): 8 independent accumulators of 16 floats, so that
 * the loads, not the adds' latency, limit the loop. */
static float sum_part(const float *data, int64_t count) {
  float acc[8][16];
  memset(acc, 0, sizeof acc);
  int64_t i = 0;
  for (; i + 128 <= count; i += 128)
    for (int a = 0; a < 8; ++a)
      for (int l = 0; l < 16; ++l)
        acc[a][l] += data[i + 16 * a + l];
  float total = 0;
  for (; i < count; ++i)
    total += data[i];
  for (int a = 0; a < 8; ++a)
    for (int l = 0; l < 16; ++l)
      total += acc[a][l];
  return total;
}

static int parse_positive(const char *text, long long *value) {
  char *end = NULL;
  long long parsed = strtoll(text, &end, 10);
  if (!*text || *end || parsed < 1)
    return 0;
  *value = parsed;
  return 1;
}

int main(int argc, char **argv) {
  long long mib = 0, threads = 2, passes = 20;
  for (int i = 1; i < argc; ++i) {
    long long *target = !strcmp(argv[i], "--mib")       ? &mib
                        : !strcmp(argv[i], "--threads") ? &threads
                        : !strcmp(argv[i], "--passes")  ? &passes
                                                        : NULL;
    if (!target || i + 1 >= argc || !parse_positive(argv[i + 1], target)) {
      fprintf(stderr, "stream_read: error: usage: stream_read [--mib N] "
                      "[--threads P] [--passes R] (positive integers)\n");
      return 2;
    }
    ++i;
  }
  if (threads > 1024 || passes > 10000 || mib > (1 << 20)) {
    fprintf(stderr, "stream_read: error: at most 1024 threads, 10000 passes "
                    "and 1048576 MiB\n");
    return 2;
  }
  if (!mib) {
    long long cache = last_level_cache_bytes();
    mib = cache > 0 ? 4 * ((cache + (1 << 20) - 1) >> 20) : 1024;
    if (mib < 256)
      mib = 256;
  }
  int64_t count = (int64_t)mib << 18; /* floats: 2^20 / 4 per MiB */
  float *data = aligned_alloc(64, (size_t)count * sizeof(float));
  if (!data) {
    fprintf(stderr, "stream_read: error: cannot allocate %lld MiB\n", mib);
    return 2;
  }
  omp_set_num_threads((int)threads);
  /* Each thread first touches the part it reads (first-touch placement). */
#pragma omp parallel
  {
    int t = omp_get_thread_num(), n = omp_get_num_threads();
    int64_t begin = count * t / n, end = count * (t + 1) / n;
    for (int64_t i = begin; i < end; ++i)
      data[i] = (float)(i & 7);
  }
  double *seconds = malloc(sizeof(double) * (size_t)passes);
  volatile float sink = 0;
  for (long long pass = -1; pass < passes; ++pass) {
    float total = 0;
    double start = now_seconds();
#pragma omp parallel reduction(+ : total)
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      int64_t begin = count * t / n, end = count * (t + 1) / n;
      total += sum_part(data + begin, end - begin);
    }
    double elapsed = now_seconds() - start;
    sink += total;
    if (pass >= 0)
      seconds[pass] = elapsed;
  }
  qsort(seconds, (size_t)passes, sizeof(double), compare_doubles);
  double median = passes % 2
                      ? seconds[passes / 2]
                      : (seconds[passes / 2 - 1] + seconds[passes / 2]) / 2;
  double bytes = (double)count * sizeof(float);
  printf("stream_read: %lld MiB, %lld threads, %lld passes: median %.2f GB/s, "
         "best %.2f GB/s\n",
         mib, threads, passes, bytes / median / 1e9, bytes / seconds[0] / 1e9);
  free(seconds);
  free(data);
  return sink == -1.0f ? 1 : 0;
}
