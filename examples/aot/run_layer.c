/* run_layer.c: runs a layer compiled ahead of time by mha-compile, in plain
 * C with nothing of MLIR or LLVM: loads x and the weights of a reference case
 * from .npy files, calls layer_run() and compares the result with y.npy.
 *
 *   mha-gen --d-model 256 --heads 4 --dynamic -o layer.mlir
 *   mha-compile layer.mlir -o liblayer.so --header layer.h
 *   cc -std=c11 -I. run_layer.c -L. -llayer -Wl,-rpath,. -o run_layer
 *   ./run_layer test/vectors/batch_64x256x4
 *
 * Exit status: 0 within tolerance (atol = rtol = 1e-4), 1 outside, 2 error.
 */
#include "layer.h"
#include "npy_float32.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(
        stderr,
        "usage: run_layer CASE_DIR (with x, w_q ... b_o and y .npy files)\n");
    return 2;
  }
  const char *names[] = {"x",   "w_q", "w_k", "w_v", "w_o",
                         "b_q", "b_k", "b_v", "b_o", "y"};
  Array a[10];
  for (int i = 0; i < 10; ++i)
    if (!load_npy("run_layer", argv[1], names[i], &a[i]))
      return 2;

  Array *y = &a[9];
  float *out = malloc(sizeof(float) * y->count);
  int64_t out_shape[3];
  int status =
      layer_run(a[0].data, a[0].shape, a[1].data, a[1].shape, a[2].data,
                a[2].shape, a[3].data, a[3].shape, a[4].data, a[4].shape,
                a[5].data, a[5].shape, a[6].data, a[6].shape, a[7].data,
                a[7].shape, a[8].data, a[8].shape, out, y->count, out_shape);
  if (status != LAYER_OK) {
    fprintf(stderr, "run_layer: error: layer_run failed (%d): %s\n", status,
            layer_last_error());
    return 2;
  }
  double max_error = 0;
  int64_t outside = 0;
  for (int64_t i = 0; i < y->count; ++i) {
    double error = fabs((double)out[i] - y->data[i]);
    max_error = error > max_error ? error : max_error;
    outside += !(error <= 1e-4 + 1e-4 * fabs(y->data[i]));
  }
  printf("result [%lld, %lld, %lld]: max abs error %.2e, %lld of %lld outside: "
         "%s\n",
         (long long)out_shape[0], (long long)out_shape[1],
         (long long)out_shape[2], max_error, (long long)outside,
         (long long)y->count, outside ? "FAILED" : "ok");
  return outside ? 1 : 0;
}
