/* bf16_calls.c: calls a bf16 layer compiled by mha-compile (bf16.test:
 * mha-gen --dtype bf16 --dynamic --cross --mask, D = 16, Dkv = 12, 4 heads,
 * 2 kv heads) on float32 arrays, which the library rounds to bf16.
 *
 *   bf16_calls DIR
 *
 * reads DIR/NAME.bin (raw float32; the mask raw bytes) as bf16_layer.py
 * wrote them for B = 2, T = 9, S = 7, and writes the results of layer_run
 * and of the handle API (layer_create, layer_call) to DIR/y_run.bin and
 * DIR/y_call.bin for bf16_layer.py to compare with its float64 reference.
 * It checks here what needs no reference: the handle gives layer_run's
 * bits, keeps its own rounded weights, serves two threads at once, and
 * rounds a call's arguments into a scratch block that it keeps: calls of a
 * size it has had allocate no more blocks than the graph's own. */
#include "layer.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, T = 9, S = 7, D = 16, DKV = 12, DOUT = 16 };

/* aligned_alloc, counted: the library allocates its bf16 blocks (and the
 * compiled code its 64-byte aligned buffers) with it. The executable's
 * definition takes the library's calls; memalign is glibc's own. */
static long aligned_allocs;
void *aligned_alloc(size_t alignment, size_t bytes) {
  __atomic_add_fetch(&aligned_allocs, 1, __ATOMIC_RELAXED);
  return memalign(alignment, bytes);
}

static float x[B * T * D], kv[B * S * DKV], w_q[D * D], w_k[DKV * 8],
    w_v[DKV * 8], w_o[D * DOUT], b_q[D], b_k[8], b_v[8], b_o[DOUT];
static uint8_t mask[B * T * S];
static const int64_t w_q_shape[2] = {D, D}, w_k_shape[2] = {DKV, 8},
                     w_v_shape[2] = {DKV, 8}, w_o_shape[2] = {D, DOUT},
                     b_q_shape[1] = {D}, b_k_shape[1] = {8}, b_v_shape[1] = {8},
                     b_o_shape[1] = {DOUT};

static void load(const char *dir, const char *name, void *data, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *file = fopen(path, "rb");
  if (!file || fread(data, 1, bytes, file) != bytes) {
    fprintf(stderr, "bf16_calls: error: cannot read %zu bytes from %s\n", bytes,
            path);
    exit(2);
  }
  fclose(file);
}

static void save(const char *dir, const char *name, const float *data,
                 size_t count) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *file = fopen(path, "wb");
  if (!file || fwrite(data, sizeof(float), count, file) != count ||
      fclose(file) != 0) {
    fprintf(stderr, "bf16_calls: error: cannot write %s\n", path);
    exit(2);
  }
}

/* One handle call on the first `batch` sequences and their first `tokens`
 * queries (x, kv and the mask of batch 0 are prefixes of theirs). */
static int call(layer_handle *handle, int64_t batch, int64_t tokens, float *y) {
  static float part_x[T * D];
  static uint8_t part_mask[T * S];
  const float *xs = x;
  const uint8_t *masks = mask;
  if (batch == 1) {
    memcpy(part_x, x, sizeof(float) * tokens * D);
    memcpy(part_mask, mask, (size_t)tokens * S);
    xs = part_x;
    masks = part_mask;
  }
  int64_t x_shape[3] = {batch, tokens, D}, kv_shape[3] = {batch, S, DKV},
          mask_shape[3] = {batch, tokens, S}, y_shape[3];
  return layer_call(handle, xs, x_shape, kv, kv_shape, masks, mask_shape, y,
                    B * T * DOUT, y_shape);
}

static layer_handle *shared_handle;
static float y_run[B * T * DOUT];
static int thread_mismatches[2];

static void *calls_in_a_thread(void *arg) {
  int thread = (int)(size_t)arg;
  float y[B * T * DOUT];
  for (int i = 0; i < 20; ++i)
    if (call(shared_handle, B, T, y) != LAYER_OK ||
        memcmp(y, y_run, sizeof y) != 0)
      ++thread_mismatches[thread];
  return NULL;
}

/* How many more blocks `calls` handle calls of these sizes allocate, each,
 * than the last of them. */
static void count_calls(layer_handle *handle, int64_t tokens, int calls,
                        long *more) {
  float y[B * T * DOUT];
  long counts[4];
  for (int i = 0; i < calls; ++i) {
    long before = __atomic_load_n(&aligned_allocs, __ATOMIC_RELAXED);
    if (call(handle, 1, tokens, y) != LAYER_OK) {
      fprintf(stderr, "bf16_calls: error: layer_call: %s\n",
              layer_last_error());
      exit(2);
    }
    counts[i] = __atomic_load_n(&aligned_allocs, __ATOMIC_RELAXED) - before;
  }
  for (int i = 0; i < calls; ++i)
    more[i] = counts[i] - counts[calls - 1];
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bf16_calls DIR\n");
    return 2;
  }
  const char *dir = argv[1];
  load(dir, "x", x, sizeof x);
  load(dir, "kv", kv, sizeof kv);
  load(dir, "mask", mask, sizeof mask);
  load(dir, "w_q", w_q, sizeof w_q);
  load(dir, "w_k", w_k, sizeof w_k);
  load(dir, "w_v", w_v, sizeof w_v);
  load(dir, "w_o", w_o, sizeof w_o);
  load(dir, "b_q", b_q, sizeof b_q);
  load(dir, "b_k", b_k, sizeof b_k);
  load(dir, "b_v", b_v, sizeof b_v);
  load(dir, "b_o", b_o, sizeof b_o);
  int64_t x_shape[3] = {B, T, D}, kv_shape[3] = {B, S, DKV},
          mask_shape[3] = {B, T, S}, y_shape[3];

  int status = layer_run(
      x, x_shape, kv, kv_shape, mask, mask_shape, w_q, w_q_shape, w_k,
      w_k_shape, w_v, w_v_shape, w_o, w_o_shape, b_q, b_q_shape, b_k, b_k_shape,
      b_v, b_v_shape, b_o, b_o_shape, y_run, B * T * DOUT, y_shape);
  printf("layer_run: status %d, shape [%lld, %lld, %lld]%s%s\n", status,
         (long long)y_shape[0], (long long)y_shape[1], (long long)y_shape[2],
         status ? ": " : "", layer_last_error());
  if (status != LAYER_OK)
    return 1;
  save(dir, "y_run", y_run, B * T * DOUT);

  layer_handle *handle = layer_create(
      w_q, w_q_shape, w_k, w_k_shape, w_v, w_v_shape, w_o, w_o_shape, b_q,
      b_q_shape, b_k, b_k_shape, b_v, b_v_shape, b_o, b_o_shape);
  if (!handle) {
    printf("layer_create: %s\n", layer_last_error());
    return 1;
  }
  /* The handle rounded the weights into its own block: changing the
     caller's arrays afterwards changes nothing. */
  float saved_w_q[D * D];
  memcpy(saved_w_q, w_q, sizeof w_q);
  memset(w_q, 0, sizeof w_q);
  float y_call[B * T * DOUT];
  status = call(handle, B, T, y_call);
  printf("layer_call: status %d, %s layer_run's bits\n", status,
         memcmp(y_call, y_run, sizeof y_call) == 0 ? "equal to" : "NOT");
  memcpy(w_q, saved_w_q, sizeof w_q);
  save(dir, "y_call", y_call, B * T * DOUT);

  /* Two threads on one handle: each call takes a scratch block of its own
     (a second one is made when both call at once). */
  shared_handle = handle;
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i)
    pthread_create(&threads[i], NULL, calls_in_a_thread, (void *)(size_t)i);
  for (int i = 0; i < 2; ++i)
    pthread_join(threads[i], NULL);
  printf("two threads, 20 calls each: %d and %d results differ from "
         "layer_run's\n",
         thread_mismatches[0], thread_mismatches[1]);
  layer_destroy(handle);

  /* A new handle, its scratch list empty. Batch 1: the graph's buffers are
     small (under the 128 KiB from which the library keeps them), so each
     call of one size allocates the same blocks but for the scratch. */
  handle = layer_create(w_q, w_q_shape, w_k, w_k_shape, w_v, w_v_shape, w_o,
                        w_o_shape, b_q, b_q_shape, b_k, b_k_shape, b_v,
                        b_v_shape, b_o, b_o_shape);
  long more[4];
  count_calls(handle, 5, 3, more);
  printf("T=5, a new handle: %ld, %ld more blocks than the third call\n",
         more[0], more[1]);
  count_calls(handle, 9, 2, more);
  printf("T=9, more tokens: %ld more than the second call\n", more[0]);
  count_calls(handle, 3, 2, more);
  printf("T=3, fewer tokens: %ld more than the second call\n", more[0]);
  layer_destroy(handle);
  return 0;
}
