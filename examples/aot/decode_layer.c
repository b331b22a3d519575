/* decode_layer.c: decodes with a layer compiled ahead of time by mha-compile
 * from a graph with a key/value cache, in plain C with nothing of MLIR or
 * LLVM. It loads the weights and x [B, T, D] of a causal reference case,
 * prefills the first P tokens of every sequence in one call, then feeds the
 * remaining tokens one per step, and compares every output row with y.npy
 * (the causal layer over the whole sequence: row i of a causal layer depends
 * on rows 0 .. i only, so the decoder must give the same rows).
 *
 * With lengths l_0 .. l_{B-1} (each <= P) the batch is ragged: after the
 * prefill, sequence b keeps its first l_b tokens and its steps feed its
 * tokens l_b, l_b + 1, ... (one per sequence per step, T - max l_b steps);
 * the prefill's rows past l_b are overwritten by those steps.
 *
 *   mha-gen --d-model 64 --heads 4 --dynamic --kv-cache 64 -o layer.mlir
 *   mha-compile layer.mlir -o liblayer.so --header layer.h
 *   cc -std=c11 -I. decode_layer.c -L. -llayer -Wl,-rpath,. -lm -o decode
 *   ./decode test/vectors/causal 30          # prefill 30, then 7 steps
 *   ./decode test/vectors/causal 30 30,25    # ragged: 7 steps, to 37 and 32
 *
 * Exit status: 0 within tolerance (atol = rtol = 1e-4), 1 outside, 2 error.
 */
#include "layer.h"
#include "npy_float32.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compares `count` floats of `got` with `want`; updates the worst error
 * and the count of elements outside |got - want| <= 1e-4 + 1e-4 |want|. */
static void compare(const float *got, const float *want, int64_t count,
                    double *max_error, int64_t *outside) {
  for (int64_t i = 0; i < count; ++i) {
    double error = fabs((double)got[i] - want[i]);
    *max_error = error > *max_error ? error : *max_error;
    *outside += !(error <= 1e-4 + 1e-4 * fabs(want[i]));
  }
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: decode_layer CASE_DIR PREFILL [l0,l1,...] (a "
                    "causal case: x, w_q ... b_o and y .npy files)\n");
    return 2;
  }
  const char *names[] = {"x",   "w_q", "w_k", "w_v", "w_o",
                         "b_q", "b_k", "b_v", "b_o", "y"};
  Array a[10];
  for (int i = 0; i < 10; ++i)
    if (!load_npy("decode_layer", argv[1], names[i], &a[i]))
      return 2;
  const Array *x = &a[0], *y = &a[9];
  int64_t batch = x->shape[0], tokens = x->shape[1];
  int64_t width = LAYER_MODEL_DIM, out_width = LAYER_OUT_DIM;
  int64_t prefill = atoll(argv[2]);
  if (x->rank != 3 || x->shape[2] != width || y->shape[2] != out_width ||
      prefill < 1 || prefill > tokens) {
    fprintf(stderr,
            "decode_layer: error: x must be [B, T, %lld] and PREFILL "
            "between 1 and T\n",
            (long long)width);
    return 2;
  }
  int64_t *lengths = malloc(sizeof(int64_t) * batch);
  for (int64_t b = 0; b < batch; ++b)
    lengths[b] = prefill;
  if (argc == 4) {
    const char *p = argv[3];
    for (int64_t b = 0; b < batch; ++b) {
      char *end;
      lengths[b] = strtoll(p, &end, 10);
      if (end == p || lengths[b] < 0 || lengths[b] > prefill) {
        fprintf(stderr,
                "decode_layer: error: give %lld lengths between 0 "
                "and PREFILL\n",
                (long long)batch);
        return 2;
      }
      p = *end == ',' ? end + 1 : end;
    }
  }

  /* The session: weights packed once, caches allocated by the library. */
  layer_session *session = layer_session_create(
      batch, NULL, NULL, a[1].data, a[1].shape, a[2].data, a[2].shape,
      a[3].data, a[3].shape, a[4].data, a[4].shape, a[5].data, a[5].shape,
      a[6].data, a[6].shape, a[7].data, a[7].shape, a[8].data, a[8].shape);
  if (!session) {
    fprintf(stderr, "decode_layer: error: %s\n", layer_last_error());
    return 2;
  }

  /* The prefill: the first P tokens of every sequence in one call. */
  float *step_x = malloc(sizeof(float) * batch * prefill * width);
  float *step_y = malloc(sizeof(float) * batch * prefill * out_width);
  for (int64_t b = 0; b < batch; ++b)
    memcpy(step_x + b * prefill * width, x->data + b * tokens * width,
           sizeof(float) * prefill * width);
  int status = layer_session_step(session, step_x, prefill, step_y,
                                  batch * prefill * out_width);
  if (status == LAYER_OK)
    status = layer_session_set_lengths(session, lengths);
  if (status != LAYER_OK) {
    fprintf(stderr, "decode_layer: error: %s\n", layer_last_error());
    return 2;
  }
  double max_error = 0;
  int64_t outside = 0, compared = 0;
  for (int64_t b = 0; b < batch; ++b) {
    compare(step_y + b * prefill * out_width, y->data + b * tokens * out_width,
            lengths[b] * out_width, &max_error, &outside);
    compared += lengths[b] * out_width;
  }

  /* The steps: one token per sequence, sequence b's token lengths[b], as
   * long as every sequence has one (until the longest reaches T). */
  int64_t longest = 0;
  for (int64_t b = 0; b < batch; ++b)
    longest = lengths[b] > longest ? lengths[b] : longest;
  int64_t steps = tokens - longest;
  int64_t *now = malloc(sizeof(int64_t) * batch);
  for (int64_t step = 0; step < steps; ++step) {
    layer_session_lengths(session, now);
    for (int64_t b = 0; b < batch; ++b)
      memcpy(step_x + b * width, x->data + (b * tokens + now[b]) * width,
             sizeof(float) * width);
    status = layer_session_step(session, step_x, 1, step_y, batch * out_width);
    if (status != LAYER_OK) {
      fprintf(stderr, "decode_layer: error: step %lld: %s\n", (long long)step,
              layer_last_error());
      return 2;
    }
    for (int64_t b = 0; b < batch; ++b)
      compare(step_y + b * out_width,
              y->data + (b * tokens + now[b]) * out_width, out_width,
              &max_error, &outside);
    compared += batch * out_width;
  }
  printf("prefill %lld tokens, %lld steps of 1 token, %lld sequences: "
         "max abs error %.2e, %lld of %lld outside: %s\n",
         (long long)prefill, (long long)steps, (long long)batch, max_error,
         (long long)outside, (long long)compared, outside ? "FAILED" : "ok");
  layer_session_free(session);
  free(step_x);
  free(step_y);
  free(lengths);
  free(now);
  for (int i = 0; i < 10; ++i)
    free(a[i].data);
  return outside ? 1 : 0;
}
