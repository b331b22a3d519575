/* reuse_buffers.c: the library keeps the compiled code's large buffers
 * between calls (the wrapper's cache behind _mlir_memref_to_llvm_alloc):
 * once warm, calls of a layer with buffers of several hundred KiB fault no
 * new pages in; after layer_release_buffers the next calls map (and fault)
 * them again (run it with glibc's mmap threshold fixed, see handle.test).
 * Counts minor page faults with getrusage.
 *
 *   reuse_buffers T D (x is [1, T, D], the weights [D, D]) */
#define _DEFAULT_SOURCE
#include "layer.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static long minor_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int64_t T = atoll(argv[1]), D = atoll(argv[2]);
  int64_t x_shape[3] = {1, T, D}, w_shape[2] = {D, D}, b_shape[1] = {D};
  int64_t out_shape[3];
  float *x = calloc(T * D, sizeof(float)), *y = calloc(T * D, sizeof(float));
  float *w = calloc(D * D, sizeof(float)), *b = calloc(D, sizeof(float));
  layer_handle *handle = layer_create(w, w_shape, w, w_shape, w, w_shape, w,
                                      w_shape, b, b_shape, b, b_shape, b,
                                      b_shape, b, b_shape);
  if (!handle)
    return 2;
  /* A call's buffers hold this many pages at least: x's Q, K and V. */
  long pages = 3 * T * D * (long)sizeof(float) / 4096;
  for (int i = 0; i < 3; ++i)
    layer_call(handle, x, x_shape, y, T * D, out_shape);
  long before = minor_faults();
  for (int i = 0; i < 10; ++i)
    layer_call(handle, x, x_shape, y, T * D, out_shape);
  long warm = minor_faults() - before;
  printf("10 warm calls: %s new page faults than one call's buffers hold\n",
         warm < pages ? "fewer" : "no fewer");
  before = minor_faults();
  for (int i = 0; i < 10; ++i) {
    layer_release_buffers();
    layer_call(handle, x, x_shape, y, T * D, out_shape);
  }
  long released = minor_faults() - before;
  printf("10 calls after layer_release_buffers: %s page faults than 10 "
         "calls' buffers hold\n",
         released >= 10 * pages ? "at least as many" : "fewer");
  layer_destroy(handle);
  free(x);
  free(y);
  free(w);
  free(b);
  return 0;
}
