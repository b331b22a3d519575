/* Calls a compiled layer (d_model 4, 2 heads, dynamic batch and sequence,
 * cross-attention) with arguments it must refuse, and prints each status
 * and message; the lit test checks them. */
#include "layer.h"

#include <stdio.h>

static void report(const char *what, int status) {
  printf("%s: status %d: %s\n", what, status, layer_last_error());
}

int main(void) {
  float x[2 * 3 * 4] = {0}, kv[2 * 5 * 4] = {0}, w[16] = {0}, b[4] = {0};
  float out[2 * 3 * 4];
  int64_t x_shape[3] = {2, 3, 4}, kv_shape[3] = {2, 5, 4};
  int64_t w_shape[2] = {4, 4}, b_shape[1] = {4}, out_shape[3];
  int64_t wide[2] = {4, 8}, kv_other_batch[3] = {3, 5, 4}, zero[3] = {0, 3, 4};

#define RUN(xs, kvs, wqs, result, capacity)                                    \
  layer_run(x, xs, kv, kvs, w, wqs, w, w_shape, w, w_shape, w, w_shape, b,     \
            b_shape, b, b_shape, b, b_shape, b, b_shape, result, capacity,     \
            out_shape)
  report("good", RUN(x_shape, kv_shape, w_shape, out, 24));
  report("static size", RUN(x_shape, kv_shape, wide, out, 24));
  report("batch mismatch", RUN(x_shape, kv_other_batch, w_shape, out, 24));
  report("zero size", RUN(zero, kv_shape, w_shape, out, 24));
  report("small result", RUN(x_shape, kv_shape, w_shape, out, 23));
  report("null result", RUN(x_shape, kv_shape, w_shape, NULL, 24));
  return 0;
}
