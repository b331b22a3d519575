/* handle_calls.c: the handle API of a compiled layer (mha-gen, d_model 4,
 * 2 heads, dynamic batch and sequence, cross-attention): a handle made once
 * from the weights computes, call after call, the bits of layer_run and the
 * result of a plain C reference; it keeps its own copy of the weights; wrong
 * sizes to layer_create or layer_call are refused with a status and a
 * message, which this prints for the lit test to check. */
#include "layer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define D 4
#define HEADS 2

static void report(const char *what, int status) {
  printf("%s: status %d: %s\n", what, status, layer_last_error());
}

/* softmax((x Wq + bq)(kv Wk + bk)^T / sqrt(d)) (kv Wv + bv) per head, then
 * times Wo plus bo. */
static void reference(const float *x, const float *kv, const float w[4][16],
                      const float b[4][4], int B, int T, int S, float *y) {
  int dh = D / HEADS;
  for (int n = 0; n < B; ++n) {
    float q[8][D], k[8][D], v[8][D], o[8][D];
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < D; ++j) {
        q[t][j] = b[0][j];
        for (int i = 0; i < D; ++i)
          q[t][j] += x[(n * T + t) * D + i] * w[0][i * D + j];
      }
    for (int s = 0; s < S; ++s)
      for (int j = 0; j < D; ++j) {
        k[s][j] = b[1][j];
        v[s][j] = b[2][j];
        for (int i = 0; i < D; ++i) {
          k[s][j] += kv[(n * S + s) * D + i] * w[1][i * D + j];
          v[s][j] += kv[(n * S + s) * D + i] * w[2][i * D + j];
        }
      }
    for (int h = 0; h < HEADS; ++h)
      for (int t = 0; t < T; ++t) {
        float p[8], top = -INFINITY, sum = 0;
        for (int s = 0; s < S; ++s) {
          p[s] = 0;
          for (int j = 0; j < dh; ++j)
            p[s] += q[t][h * dh + j] * k[s][h * dh + j];
          p[s] /= sqrtf((float)dh);
          top = p[s] > top ? p[s] : top;
        }
        for (int s = 0; s < S; ++s)
          sum += p[s] = expf(p[s] - top);
        for (int j = 0; j < dh; ++j) {
          o[t][h * dh + j] = 0;
          for (int s = 0; s < S; ++s)
            o[t][h * dh + j] += p[s] / sum * v[s][h * dh + j];
        }
      }
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < D; ++j) {
        y[(n * T + t) * D + j] = b[3][j];
        for (int i = 0; i < D; ++i)
          y[(n * T + t) * D + j] += o[t][i] * w[3][i * D + j];
      }
  }
}

int main(void) {
  float x[2 * 3 * D], kv[2 * 5 * D], w[4][16], b[4][4];
  unsigned state = 7;
  for (int i = 0; i < 2 * 3 * D; ++i)
    x[i] = (float)((state = state * 1103515245u + 12345u) >> 16) / 65536.0f - .5f;
  for (int i = 0; i < 2 * 5 * D; ++i)
    kv[i] = (float)((state = state * 1103515245u + 12345u) >> 16) / 65536.0f - .5f;
  for (int m = 0; m < 4; ++m) {
    for (int i = 0; i < 16; ++i)
      w[m][i] = (float)((state = state * 1103515245u + 12345u) >> 16) / 65536.0f - .5f;
    for (int i = 0; i < 4; ++i)
      b[m][i] = (float)((state = state * 1103515245u + 12345u) >> 16) / 65536.0f - .5f;
  }
  int64_t x_shape[3] = {2, 3, D}, kv_shape[3] = {2, 5, D};
  int64_t w_shape[2] = {D, D}, b_shape[1] = {D}, wide[2] = {D, 8};
  int64_t kv_other_batch[3] = {3, 5, D};
  float by_run[24], by_handle[24], expected[24];
  int64_t out_shape[3] = {0};

#define WEIGHTS(wq_shape, wk)                                                  \
  w[0], wq_shape, wk, w_shape, w[2], w_shape, w[3], w_shape, b[0], b_shape,    \
      b[1], b_shape, b[2], b_shape, b[3], b_shape
  report("run", layer_run(x, x_shape, kv, kv_shape, WEIGHTS(w_shape, w[1]),
                          by_run, 24, out_shape));

  /* Wrong weights: no handle. */
  layer_handle *bad = layer_create(WEIGHTS(wide, w[1]));
  printf("create, w_q [4, 8]: %s: %s\n", bad ? "handle" : "NULL",
         layer_last_error());
  bad = layer_create(WEIGHTS(w_shape, NULL));
  printf("create, w_k null: %s: %s\n", bad ? "handle" : "NULL",
         layer_last_error());

  layer_handle *handle = layer_create(WEIGHTS(w_shape, w[1]));
  printf("create: %s: \"%s\"\n", handle ? "handle" : "NULL",
         layer_last_error());
  /* The handle has its own copy: the caller's weights may change. */
  float saved[4][16];
  memcpy(saved, w, sizeof w);
  memset(w, 0, sizeof w);
  for (int call = 0; call < 3; ++call) {
    memset(by_handle, 0, sizeof by_handle);
    int status = layer_call(handle, x, x_shape, kv, kv_shape, by_handle, 24,
                            out_shape);
    printf("call %d: status %d, shape [%lld, %lld, %lld], %s layer_run's\n",
           call, status, (long long)out_shape[0], (long long)out_shape[1],
           (long long)out_shape[2],
           memcmp(by_handle, by_run, sizeof by_run) ? "differs from"
                                                     : "bitwise equal to");
  }
  memcpy(w, saved, sizeof w);
  reference(x, kv, (const float(*)[16])w, (const float(*)[4])b, 2, 3, 5,
            expected);
  double worst = 0;
  for (int i = 0; i < 24; ++i)
    worst = fmax(worst, fabs((double)by_handle[i] - expected[i]));
  printf("reference: max abs error %s 1e-5\n", worst <= 1e-5 ? "<=" : ">");

  report("call, kv batch 3",
         layer_call(handle, x, x_shape, kv, kv_other_batch, by_handle, 24,
                    out_shape));
  report("call, small result",
         layer_call(handle, x, x_shape, kv, kv_shape, by_handle, 23,
                    out_shape));
  report("call, null x",
         layer_call(handle, NULL, x_shape, kv, kv_shape, by_handle, 24,
                    out_shape));
  report("call, null result",
         layer_call(handle, x, x_shape, kv, kv_shape, NULL, 24, out_shape));
  report("call, null handle",
         layer_call(NULL, x, x_shape, kv, kv_shape, by_handle, 24, out_shape));
  layer_destroy(handle);
  layer_destroy(NULL);
  layer_release_buffers();
  printf("destroyed\n");
  return 0;
}
