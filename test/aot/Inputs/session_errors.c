/* Drives the session API of a compiled cache graph (d_model 8, 2 heads,
 * dynamic batch and tokens, capacity 6) with calls it must refuse, prints
 * each status and message for the lit test, and checks that a refused call
 * writes nothing: the borrowed caches sit between guard floats that must
 * keep their value, the lengths must not move, and NAME_call with lengths
 * out of range, or with buffers it writes overlapping others, must leave
 * the caches as they were. */
#include "layer.h"

#include <stdio.h>
#include <string.h>

#define GUARD 64
#define D LAYER_MODEL_DIM
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

#define WEIGHTS                                                                \
  w, w_shape, w, w_shape, w, w_shape, w, w_shape, b, b_shape, b, b_shape, b,   \
      b_shape, b, b_shape

/* Borrowed caches that share bytes are refused at the create, to the byte:
 * the same array, one float apart, and (accepted) back to back. */
static void shared_caches(const float *w, const int64_t *w_shape,
                          const float *b, const int64_t *b_shape) {
  static float both[KEYS + VALUES];
  report_create("one array for both caches",
                layer_session_create(BATCH, both, both, WEIGHTS));
  report_create("v_cache one float into k_cache",
                layer_session_create(BATCH, both, both + KEYS - 1, WEIGHTS));
  report_create("k_cache one float into v_cache",
                layer_session_create(BATCH, both + VALUES - 1, both, WEIGHTS));
  report_create("caches back to back",
                layer_session_create(BATCH, both, both + KEYS, WEIGHTS));
}

/* A session's own caches hold, after a reset, only the rows its steps
 * wrote since: a length past them would attend the previous batch's rows. */
static void lengths_after_reset(const float *w, const int64_t *w_shape,
                                const float *b, const int64_t *b_shape,
                                const float *x, float *y) {
  layer_session *session = layer_session_create(BATCH, NULL, NULL, WEIGHTS);
  int64_t one[BATCH] = {1, 0}, three[BATCH] = {3, 2}, four[BATCH] = {4, 0};
  report("own caches, fresh: length 1",
         layer_session_set_lengths(session, one));
  report("prefill 3", layer_session_step(session, x, 3, y, BATCH * 3 * D));
  report("lengths 3 2", layer_session_set_lengths(session, three));
  report("length 4 after 3 written", layer_session_set_lengths(session, four));
  layer_session_reset(session);
  report("after reset: length 1", layer_session_set_lengths(session, one));
  report("step 1", layer_session_step(session, x, 1, y, BATCH * D));
  report("after reset and a step: length 1",
         layer_session_set_lengths(session, one));
  layer_session_free(session);
}

int main(void) {
  float w[D * D], b[D];
  for (int i = 0; i < D * D; ++i)
    w[i] = (float)((i * 7) % 11 - 5) / 16;
  for (int i = 0; i < D; ++i)
    b[i] = (float)(i % 3) / 10;
  int64_t w_shape[2] = {D, D}, b_shape[1] = {D};
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
  /* A refused step writes nothing, the new rows of a step whose y is too
     small included. */
  int changed = 0;
  for (int i = 0; i < GUARD + KEYS + GUARD; ++i)
    changed += keys[i] != -7;
  for (int i = 0; i < GUARD + VALUES + GUARD; ++i)
    changed += values[i] != -7;
  printf("caches after the refused calls: %d floats changed\n", changed);
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
  int64_t full[BATCH] = {6, 6};
  report("borrowed, after reset: lengths 6 6",
         layer_session_set_lengths(session, full));

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
  /* Buffers the call writes that share bytes with another argument: a
   * step would write its keys over x, or y over the cache. */
  lengths[1] = 0;
  report("x inside k_cache",
         layer_call(handle, keys + GUARD + 1, x_shape, keys + GUARD, k_shape,
                    values + GUARD, v_shape, lengths, lengths_shape, y,
                    BATCH * 2 * D, y_shape));
  report("result over x",
         layer_call(handle, x, x_shape, keys + GUARD, k_shape, values + GUARD,
                    v_shape, lengths, lengths_shape, x + 2 * D - 1,
                    BATCH * 2 * D, y_shape));
  report("result shape inside x",
         layer_call(handle, x, x_shape, keys + GUARD, k_shape, values + GUARD,
                    v_shape, lengths, lengths_shape, y, BATCH * 2 * D,
                    (int64_t *)x));
  report("run: result inside v_cache",
         layer_run(x, x_shape, WEIGHTS, keys + GUARD, k_shape, values + GUARD,
                   v_shape, lengths, lengths_shape, values + GUARD + VALUES - 1,
                   BATCH * 2 * D, y_shape));
  report("run: w_o inside k_cache",
         layer_run(x, x_shape, w, w_shape, w, w_shape, w, w_shape,
                   keys + GUARD + KEYS - 1, w_shape, b, b_shape, b, b_shape, b,
                   b_shape, b, b_shape, keys + GUARD, k_shape, values + GUARD,
                   v_shape, lengths, lengths_shape, y, BATCH * 2 * D, y_shape));
  layer_session_set_lengths(session, lengths);
  report("step: y over the borrowed k_cache",
         layer_session_step(session, x, 1, keys + GUARD, BATCH * D));
  report("step: y over x", layer_session_step(session, x, 1, x + 1, BATCH * D));
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
  shared_caches(w, w_shape, b, b_shape);
  lengths_after_reset(w, w_shape, b, b_shape, x, y);
  return 0;
}
