/* Calls the layer of `mha-gen --d-model 16 --heads 2 --causal --attn-bias
 * B,1,T,S --dynamic` (x [B, T, 16], attn_bias [?, 1, ?, ?]) with B = 3 and
 * T = 5, and a score bias of the full sizes, of batch 1 and of query length
 * 1. Only the first fits: a `?` dimension of a score bias is its full size.
 * Prints each call's status and message. */
#include "layer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 3, T = 5, D = 16 };

static void call(const char *what, int64_t biasBatch, int64_t biasQueries) {
  static float x[B * T * D], w[D * D], b[D], bias[B * T * T], y[B * T * D];
  for (int i = 0; i < B * T * D; ++i)
    x[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
  for (int i = 0; i < D * D; ++i)
    w[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
  int64_t x_shape[3] = {B, T, D}, w_shape[2] = {D, D}, b_shape[1] = {D};
  int64_t bias_shape[4] = {biasBatch, 1, biasQueries, T};
  int64_t result_shape[3];
  int status = layer_run(x, x_shape, w, w_shape, w, w_shape, w, w_shape, w,
                         w_shape, b, b_shape, b, b_shape, b, b_shape, b,
                         b_shape, bias, bias_shape, y, B * T * D, result_shape);
  printf("%s: status %d%s%s\n", what, status, status ? ": " : "",
         status ? layer_last_error() : "");
}

int main(void) {
  call("full", B, T);
  call("batch 1", 1, T);
  call("query length 1", B, 1);
  return 0;
}
