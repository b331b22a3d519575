/* time_layer.c: times a self-attention layer compiled ahead of time by
 * mha-compile, from plain C, through the handle API: the weights are checked,
 * copied and packed once (layer_create), then each call passes x alone
 * (layer_call). Prints the median time of a call with x and the result at
 * 64-byte-aligned addresses and at addresses 4 bytes past them (the calls
 * alternate, so both see the same machine), and of layer_run, which packs
 * the weights on every call. Before timing, it checks that the handle
 * computes the bits of layer_run, at both alignments.
 *
 *   mha-gen --seq 512 --d-model 512 --heads 8 -o layer.mlir
 *   mha-compile layer.mlir -o liblayer.so --header layer.h
 *   cc -std=c11 -O2 -I. time_layer.c -L. -llayer -Wl,-rpath,. -lm -o time_layer
 *   OMP_NUM_THREADS=2 ./time_layer 1 512 512 20
 *
 * Arguments: B T D (x is [B, T, D]; the weights [D, D], the biases [D]) and
 * the number of timed calls per kind. Exit status: 0, 1 if the results
 * differ, 2 on bad usage or a failed call.
 */
#define _POSIX_C_SOURCE 199309L
#include "layer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return time.tv_sec * 1e3 + time.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *times, int count) {
  qsort(times, count, sizeof *times, compare_doubles);
  return count % 2 ? times[count / 2]
                   : (times[count / 2 - 1] + times[count / 2]) / 2;
}

/* `count` floats at a 64-byte-aligned address plus `offset` bytes. */
static float *allocate(int64_t count, int offset, void **block) {
  *block =
      aligned_alloc(64, ((size_t)count * sizeof(float) + 64 + 63) / 64 * 64);
  return *block ? (float *)((char *)*block + offset) : NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: time_layer B T D CALLS\n");
    return 2;
  }
  int64_t B = atoll(argv[1]), T = atoll(argv[2]), D = atoll(argv[3]);
  int calls = atoi(argv[4]);
  if (B < 1 || T < 1 || D < 1 || calls < 1) {
    fprintf(stderr, "time_layer: error: B, T, D and CALLS must be positive\n");
    return 2;
  }
  int64_t count = B * T * D, x_shape[3] = {B, T, D};
  int64_t w_shape[2] = {D, D}, b_shape[1] = {D}, out_shape[3];
  void *blocks[16];
  float *w[4], *b[4], *x[2], *y[2], *y_run;
  for (int i = 0; i < 4; ++i) {
    w[i] = allocate(D * D, 0, &blocks[i]);
    b[i] = allocate(D, 0, &blocks[4 + i]);
  }
  /* [0]: 64-byte aligned, [1]: 4 bytes past that. */
  for (int i = 0; i < 2; ++i) {
    x[i] = allocate(count, 4 * i, &blocks[8 + i]);
    y[i] = allocate(count, 4 * i, &blocks[10 + i]);
  }
  y_run = allocate(count, 0, &blocks[12]);
  unsigned state = 1;
  for (int i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < D * D; ++j)
      w[i][j] = ((state = state * 1103515245u + 12345u) >> 16) / 65536.0f - .5f;
    for (int64_t j = 0; j < D; ++j)
      b[i][j] = ((state = state * 1103515245u + 12345u) >> 16) / 65536.0f - .5f;
  }
  for (int64_t j = 0; j < count; ++j)
    x[0][j] = ((state = state * 1103515245u + 12345u) >> 16) / 65536.0f - .5f;
  memcpy(x[1], x[0], count * sizeof(float));

#define WEIGHTS                                                                \
  w[0], w_shape, w[1], w_shape, w[2], w_shape, w[3], w_shape, b[0], b_shape,   \
      b[1], b_shape, b[2], b_shape, b[3], b_shape
  layer_handle *handle = layer_create(WEIGHTS);
  if (!handle) {
    fprintf(stderr, "time_layer: error: layer_create: %s\n",
            layer_last_error());
    return 2;
  }
  if (layer_run(x[0], x_shape, WEIGHTS, y_run, count, out_shape) != LAYER_OK) {
    fprintf(stderr, "time_layer: error: layer_run: %s\n", layer_last_error());
    return 2;
  }
  for (int i = 0; i < 2; ++i) {
    if (layer_call(handle, x[i], x_shape, y[i], count, out_shape) != LAYER_OK) {
      fprintf(stderr, "time_layer: error: layer_call: %s\n",
              layer_last_error());
      return 2;
    }
    if (memcmp(y[i], y_run, count * sizeof(float)) != 0) {
      printf("the handle's result (%s) differs from layer_run's\n",
             i ? "offset" : "aligned");
      return 1;
    }
  }
  printf("x [%lld, %lld, %lld]: the handle's results (aligned and offset) "
         "are bitwise equal to layer_run's\n",
         (long long)B, (long long)T, (long long)D);

  double *times[3];
  for (int kind = 0; kind < 3; ++kind)
    times[kind] = malloc(calls * sizeof(double));
  for (int call = 0; call < calls; ++call)
    for (int kind = 0; kind < 3; ++kind) {
      double start = now_ms();
      int status =
          kind < 2
              ? layer_call(handle, x[kind], x_shape, y[kind], count, out_shape)
              : layer_run(x[0], x_shape, WEIGHTS, y_run, count, out_shape);
      times[kind][call] = now_ms() - start;
      if (status != LAYER_OK) {
        fprintf(stderr, "time_layer: error: %s\n", layer_last_error());
        return 2;
      }
    }
  double aligned = median(times[0], calls), offset = median(times[1], calls);
  double run = median(times[2], calls);
  printf("layer_call, 64-byte aligned: median %.3f ms over %d calls\n", aligned,
         calls);
  printf("layer_call, offset 4 bytes:  median %.3f ms (%.2fx aligned)\n",
         offset, offset / aligned);
  printf("layer_run (packs the weights every call): median %.3f ms "
         "(%.2fx layer_call)\n",
         run, run / aligned);
  layer_destroy(handle);
  for (int i = 0; i < 13; ++i)
    free(blocks[i]);
  for (int kind = 0; kind < 3; ++kind)
    free(times[kind]);
  return 0;
}
