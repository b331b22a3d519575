/* bf16_decode.c: the session API of a bf16 cache graph (mha-gen --dtype bf16
 * --kv-cache, mha-compile): prefills PREFILL tokens of every sequence of a
 * causal reference case, then decodes the rest one token per step, with the
 * caches the session allocates (bf16, opaque to the caller), and writes every
 * output row to OUT ([B, T, D_out] float32, raw) for bf16_decode.py to
 * compare with NumPy's float64 reference. Also checks that caches the caller
 * gives are uint16_t bf16 bits the steps write in place.
 *
 *   bf16_decode CASE_DIR PREFILL OUT
 */
#include "layer.h"
#include "npy_float32.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bf16_decode CASE_DIR PREFILL OUT\n");
    return 2;
  }
  const char *names[] = {"x",   "w_q", "w_k", "w_v", "w_o",
                         "b_q", "b_k", "b_v", "b_o"};
  Array a[9];
  for (int i = 0; i < 9; ++i)
    if (!load_npy("bf16_decode", argv[1], names[i], &a[i]))
      return 2;
  const Array *x = &a[0];
  int64_t batch = x->shape[0], tokens = x->shape[1];
  int64_t width = LAYER_MODEL_DIM, out_width = LAYER_OUT_DIM;
  int64_t prefill = atoll(argv[2]);
  if (x->rank != 3 || x->shape[2] != width || prefill < 1 || prefill > tokens)
    return 2;

#define WEIGHTS                                                                \
  a[1].data, a[1].shape, a[2].data, a[2].shape, a[3].data, a[3].shape,         \
      a[4].data, a[4].shape, a[5].data, a[5].shape, a[6].data, a[6].shape,     \
      a[7].data, a[7].shape, a[8].data, a[8].shape
  layer_session *session = layer_session_create(batch, NULL, NULL, WEIGHTS);
  if (!session) {
    fprintf(stderr, "bf16_decode: error: %s\n", layer_last_error());
    return 2;
  }
  float *y = malloc(sizeof(float) * batch * tokens * out_width);
  float *step_x = malloc(sizeof(float) * batch * prefill * width);
  float *step_y = malloc(sizeof(float) * batch * prefill * out_width);
  for (int64_t b = 0; b < batch; ++b)
    memcpy(step_x + b * prefill * width, x->data + b * tokens * width,
           sizeof(float) * prefill * width);
  int status = layer_session_step(session, step_x, prefill, step_y,
                                  batch * prefill * out_width);
  if (status != LAYER_OK) {
    fprintf(stderr, "bf16_decode: error: %s\n", layer_last_error());
    return 2;
  }
  for (int64_t b = 0; b < batch; ++b)
    memcpy(y + b * tokens * out_width, step_y + b * prefill * out_width,
           sizeof(float) * prefill * out_width);
  for (int64_t t = prefill; t < tokens; ++t) {
    for (int64_t b = 0; b < batch; ++b)
      memcpy(step_x + b * width, x->data + (b * tokens + t) * width,
             sizeof(float) * width);
    status = layer_session_step(session, step_x, 1, step_y, batch * out_width);
    if (status != LAYER_OK) {
      fprintf(stderr, "bf16_decode: error: %s\n", layer_last_error());
      return 2;
    }
    for (int64_t b = 0; b < batch; ++b)
      memcpy(y + (b * tokens + t) * out_width, step_y + b * out_width,
             sizeof(float) * out_width);
  }
  /* Past the capacity: the same status and message as with float32
   * caches. */
  int64_t more = LAYER_CACHE_CAPACITY - tokens + 1;
  float *more_x = calloc((size_t)(batch * more * width), sizeof(float));
  float *more_y = calloc((size_t)(batch * more * out_width), sizeof(float));
  status = layer_session_step(session, more_x, more, more_y,
                              batch * more * out_width);
  printf("past the capacity: status %d: %s\n", status, layer_last_error());
  free(more_x);
  free(more_y);
  layer_session_free(session);
  FILE *out = fopen(argv[3], "wb");
  if (!out || fwrite(y, sizeof(float), batch * tokens * out_width, out) !=
                  (size_t)(batch * tokens * out_width))
    return 2;
  fclose(out);
  printf("prefill %lld tokens, %lld steps of 1 token, %lld sequences\n",
         (long long)prefill, (long long)(tokens - prefill), (long long)batch);

  /* Borrowed caches: bf16 bits, two bytes an element, written in place. */
  size_t count = (size_t)batch * LAYER_KV_HEADS * LAYER_CACHE_CAPACITY *
                 LAYER_KEY_DIM;
  uint16_t *keys = calloc(count, sizeof(uint16_t));
  uint16_t *values = calloc(count, sizeof(uint16_t));
  session = layer_session_create(batch, keys, values, WEIGHTS);
  if (!session ||
      layer_session_step(session, step_x, 1, step_y, batch * out_width))
    return 2;
  size_t written = 0;
  for (size_t i = 0; i < count; ++i)
    written += keys[i] != 0;
  printf("borrowed caches: %zu bytes each, %zu keys written by one step\n",
         count * sizeof(uint16_t), written);
  layer_session_free(session);
  free(keys);
  free(values);
  free(y);
  free(step_x);
  free(step_y);
  for (int i = 0; i < 9; ++i)
    free(a[i].data);
  return 0;
}
