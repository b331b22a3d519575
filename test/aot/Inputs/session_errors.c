/* Drives the session API of a compiled cache graph (d_model 8, 2 heads,
 * dynamic batch and tokens, capacity 6) with calls it must refuse, prints
 * each status and message for the lit test, and checks that a refused call
 * writes nothing: the borrowed caches sit between guard floats that must
 * keep their value, the lengths must not move, and NAME_call with lengths
 * out of range must leave the caches as they were. */
#include "layer.h"

#include <stdio.h>
#include <string.h>

#define GUARD 64
#define BATCH 2
#define KEYS (BATCH * LAYER_KV_HEADS * LAYER_CACHE_CAPACITY * LAYER_KEY_DIM)
#define VALUES (BATCH * LAYER_KV_HEADS * LAYER_CACHE_CAPACITY * LAYER_VALUE_DIM)

static void report(const char *what, int status) {
  printf("%s: status %d: %s\n", what, status, layer_last_error());
}

static void report_create(const char *what, layer_session *session) {
  printf("%s: %s: %s\n", what, session ? "created" : "NULL",
         layer_last_error());
  layer_session_free(session);
}

static void report_lengths(const char *what, const layer_session *session) {
  int64_t lengths[BATCH];
  layer_session_lengths(session, lengths);
  printf("%s: lengths %lld %lld\n", what, (long long)lengths[0],
         (long long)lengths[1]);
}

int main(void) {
  enum { D = LAYER_MODEL_DIM };
  float w[D * D], b[D];
  for (int i = 0; i < D * D; ++i)
    w[i] = (float)((i * 7) % 11 - 5) / 16;
  for (int i = 0; i < D; ++i)
    b[i] = (float)(i % 3) / 10;
  int64_t w_shape[2] = {D, D}, b_shape[1] = {D};
#define WEIGHTS                                                                \
  w, w_shape, w, w_shape, w, w_shape, w, w_shape, b, b_shape, b, b_shape, b,   \
      b_shape, b, b_shape
  /* The caches the session borrows, with guards on both sides. */
  static float keys[GUARD + KEYS + GUARD], values[GUARD + VALUES + GUARD];
  for (int i = 0; i < GUARD + KEYS + GUARD; ++i)
    keys[i] = -7;
  for (int i = 0; i < GUARD + VALUES + GUARD; ++i)
    values[i] = -7;
  float x[BATCH * LAYER_CACHE_CAPACITY * D],
      y[BATCH * LAYER_CACHE_CAPACITY * D];
  for (int i = 0; i < BATCH * LAYER_CACHE_CAPACITY * D; ++i)
    x[i] = (float)((i * 5) % 13 - 6) / 8;

  report_create("batch 0", layer_session_create(0, NULL, NULL, WEIGHTS));
  report_create("one cache",
                layer_session_create(BATCH, keys + GUARD, NULL, WEIGHTS));
  int64_t wide[2] = {D, 2 * D};
  report_create("wrong weight",
                layer_session_create(BATCH, NULL, NULL, w, wide, w, w_shape, w,
                                     w_shape, w, w_shape, b, b_shape, b,
                                     b_shape, b, b_shape, b, b_shape));
  report_create("own caches", layer_session_create(BATCH, NULL, NULL, WEIGHTS));

  layer_session *session =
      layer_session_create(BATCH, keys + GUARD, values + GUARD, WEIGHTS);
  printf("borrowed: %s\n", session ? "created" : layer_last_error());
  if (!session)
    return 1;
  report("no tokens", layer_session_step(session, x, 0, y, 16 * D));
  report("null x", layer_session_step(session, NULL, 1, y, 16 * D));
  report("null session", layer_session_step(NULL, x, 1, y, 16 * D));
  report("small y", layer_session_step(session, x, 5, y, BATCH * 5 * D - 1));
  report("too many", layer_session_step(session, x, 7, y, BATCH * 7 * D));
  report_lengths("after the refused calls", session);
  report("prefill 5", layer_session_step(session, x, 5, y, BATCH * 5 * D));
  report("two more", layer_session_step(session, x, 2, y, BATCH * 2 * D));
  report("step", layer_session_step(session, x, 1, y, BATCH * D));
  report("past the capacity", layer_session_step(session, x, 1, y, BATCH * D));
  report_lengths("full", session);

  int64_t negative[BATCH] = {3, -1}, past[BATCH] = {7, 0},
          ragged[BATCH] = {2, 6};
  report("negative length", layer_session_set_lengths(session, negative));
  report("length past the capacity", layer_session_set_lengths(session, past));
  report("null lengths", layer_session_set_lengths(session, NULL));
  report_lengths("unchanged", session);
  report("ragged", layer_session_set_lengths(session, ragged));
  report("ragged step", layer_session_step(session, x, 1, y, BATCH * D));
  layer_session_reset(session);
  report_lengths("reset", session);

  /* layer_call on its own: cache_lengths that would write past the cache
   * are refused before anything is written. */
  static float keys_before[KEYS], values_before[VALUES];
  memcpy(keys_before, keys + GUARD, sizeof keys_before);
  memcpy(values_before, values + GUARD, sizeof values_before);
  layer_handle *handle = layer_create(WEIGHTS);
  int64_t x_shape[3] = {BATCH, 2, D}, y_shape[3], lengths_shape[1] = {BATCH};
  int64_t k_shape[4] = {BATCH, LAYER_KV_HEADS, LAYER_CACHE_CAPACITY,
                        LAYER_KEY_DIM};
  int64_t v_shape[4] = {BATCH, LAYER_KV_HEADS, LAYER_CACHE_CAPACITY,
                        LAYER_VALUE_DIM};
  int64_t lengths[BATCH] = {0, 5};
  report("call past the capacity",
         layer_call(handle, x, x_shape, keys + GUARD, k_shape, values + GUARD,
                    v_shape, lengths, lengths_shape, y, BATCH * 2 * D,
                    y_shape));
  lengths[1] = -2;
  report("call with a negative length",
         layer_call(handle, x, x_shape, keys + GUARD, k_shape, values + GUARD,
                    v_shape, lengths, lengths_shape, y, BATCH * 2 * D,
                    y_shape));
  printf("caches unchanged by the refused calls: %s\n",
         memcmp(keys_before, keys + GUARD, sizeof keys_before) ||
                 memcmp(values_before, values + GUARD, sizeof values_before)
             ? "no"
             : "yes");
  int guards = 1;
  for (int i = 0; i < GUARD; ++i)
    guards &= keys[i] == -7 && keys[GUARD + KEYS + i] == -7 &&
              values[i] == -7 && values[GUARD + VALUES + i] == -7;
  printf("guards intact: %s\n", guards ? "yes" : "no");
  layer_destroy(handle);
  layer_session_free(session);
  layer_session_free(NULL);
  return 0;
}
