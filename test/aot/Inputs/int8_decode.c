/* int8_decode.c: the plain call of an int8 cache graph (mha-gen
 * --kv-cache C --cache-dtype int8, mha-compile): prefills PREFILL tokens of
 * every sequence of a causal reference case, then decodes the rest one token
 * per call, with int8 caches and float32 scales the caller owns (the scales
 * NaN at first, so a read of the unused capacity shows) and the lengths it
 * advances, and writes every output row to OUT ([B, T, D_out] float32, raw)
 * for int8_decode.py to compare with NumPy's float64 references. Then a call
 * past the capacity, which must fail and write nothing.
 *
 *   int8_decode CASE_DIR PREFILL OUT
 *
 * The layer's sizes come as macros (-DMODEL_DIM=... -DOUT_DIM -DKV_HEADS
 * -DCAPACITY -DKEY_DIM -DVALUE_DIM): the header names them only for the
 * session API, which int8 caches do not have yet.
 */
#include "layer.h"
#include "npy_float32.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: int8_decode CASE_DIR PREFILL OUT\n");
    return 2;
  }
  const char *names[] = {"x",   "w_q", "w_k", "w_v", "w_o",
                         "b_q", "b_k", "b_v", "b_o"};
  Array a[9];
  for (int i = 0; i < 9; ++i)
    if (!load_npy("int8_decode", argv[1], names[i], &a[i]))
      return 2;
  const Array *x = &a[0];
  int64_t batch = x->shape[0], tokens = x->shape[1];
  int64_t width = MODEL_DIM, out_width = OUT_DIM;
  int64_t heads = KV_HEADS, capacity = CAPACITY;
  int64_t prefill = atoll(argv[2]);
  if (x->rank != 3 || x->shape[2] != width || prefill < 1 || prefill > tokens)
    return 2;
  layer_handle *handle = layer_create(
      a[1].data, a[1].shape, a[2].data, a[2].shape, a[3].data, a[3].shape,
      a[4].data, a[4].shape, a[5].data, a[5].shape, a[6].data, a[6].shape,
      a[7].data, a[7].shape, a[8].data, a[8].shape);
  if (!handle) {
    fprintf(stderr, "int8_decode: error: %s\n", layer_last_error());
    return 2;
  }
  int64_t key_shape[4] = {batch, heads, capacity, KEY_DIM};
  int64_t value_shape[4] = {batch, heads, capacity, VALUE_DIM};
  int64_t scale_shape[3] = {batch, heads, capacity};
  size_t rows = (size_t)(batch * heads * capacity);
  int8_t *k_cache = calloc(rows * KEY_DIM, 1);
  int8_t *v_cache = calloc(rows * VALUE_DIM, 1);
  float *k_scales = malloc(rows * sizeof(float));
  float *v_scales = malloc(rows * sizeof(float));
  for (size_t i = 0; i < rows; ++i)
    k_scales[i] = v_scales[i] = NAN;
  int64_t *lengths = calloc((size_t)batch, sizeof(int64_t));
  int64_t lengths_shape[1] = {batch};

  float *y = malloc(sizeof(float) * batch * tokens * out_width);
  float *step_x = malloc(sizeof(float) * batch * prefill * width);
  float *step_y = malloc(sizeof(float) * batch * prefill * out_width);
  int64_t y_shape[3];
  for (int64_t t = 0; t < tokens;) {
    int64_t count = t == 0 ? prefill : 1;
    int64_t x_shape[3] = {batch, count, width};
    for (int64_t b = 0; b < batch; ++b)
      memcpy(step_x + b * count * width, x->data + (b * tokens + t) * width,
             sizeof(float) * count * width);
    int status = layer_call(handle, step_x, x_shape, k_cache, key_shape,
                            k_scales, scale_shape, v_cache, value_shape,
                            v_scales, scale_shape, lengths, lengths_shape,
                            step_y, batch * count * out_width, y_shape);
    if (status != LAYER_OK) {
      fprintf(stderr, "int8_decode: error: %s\n", layer_last_error());
      return 2;
    }
    for (int64_t b = 0; b < batch; ++b) {
      memcpy(y + (b * tokens + t) * out_width, step_y + b * count * out_width,
             sizeof(float) * count * out_width);
      lengths[b] += count;
    }
    t += count;
  }
  FILE *out = fopen(argv[3], "wb");
  if (!out || fwrite(y, sizeof(float), batch * tokens * out_width, out) !=
                  (size_t)(batch * tokens * out_width))
    return 2;
  fclose(out);
  printf("prefill %lld tokens, %lld calls of 1 token, %lld sequences\n",
         (long long)prefill, (long long)(tokens - prefill), (long long)batch);

  /* Past the capacity (sequence 0 full): an error, and no code or scale
   * of any sequence changes. */
  int8_t *codes_before = malloc(rows * KEY_DIM);
  memcpy(codes_before, k_cache, rows * KEY_DIM);
  float *scales_before = malloc(rows * sizeof(float));
  memcpy(scales_before, k_scales, rows * sizeof(float));
  lengths[0] = capacity;
  int64_t one_shape[3] = {batch, 1, width};
  int status =
      layer_call(handle, step_x, one_shape, k_cache, key_shape, k_scales,
                 scale_shape, v_cache, value_shape, v_scales, scale_shape,
                 lengths, lengths_shape, step_y, batch * out_width, y_shape);
  int same = !memcmp(codes_before, k_cache, rows * KEY_DIM) &&
             !memcmp(scales_before, k_scales, rows * sizeof(float));
  printf("past the capacity: status %d: %s; caches unchanged: %s\n", status,
         layer_last_error(), same ? "yes" : "no");
  layer_destroy(handle);
  free(codes_before);
  free(scales_before);
  free(k_cache);
  free(v_cache);
  free(k_scales);
  free(v_scales);
  free(lengths);
  free(y);
  free(step_x);
  free(step_y);
  for (int i = 0; i < 9; ++i)
    free(a[i].data);
  return 0;
}
